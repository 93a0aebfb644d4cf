import { z } from 'zod';
import { invalidParams, serverError } from '../base/errors';
import { CALLER_GONE } from '../base/call-end';
import { boundedRegexTest } from './bounded-regex';
import type { RegexBudget } from './regex-budget';
import { DisposableStore, disposableTimeout, Emitter, MutableDisposable } from '../base/lifecycle';
import { whenFirst, type First } from '../base/when-first';
import { DEFAULT_WAIT_TIMEOUT_MS, MAX_WAIT_MS } from '../base/param-limits';
import type { CursorPos, ScreenSize } from '../mirror/screen';
import { AnsiStripper } from '../base/ansi';
import { screenText } from '../mirror/screen-text';
import type { Session } from '../session/session';

/** Default `pty/wait` timeout (docs/protocol.md#ptywait), beside the other bounds the CLI reads. */
export { DEFAULT_WAIT_TIMEOUT_MS };
/**
 * While output keeps coming, the screen (or the output since a cursor) is looked at no more often
 * than this: each look waits for the parser and reads the text again, and during a flood one look
 * per parsed batch slowed the program 2x (bench/README.md).
 */
const CHECK_INTERVAL_MS = 10;
/** How far past its timeout a wait whose first look at the screen never ends is ended anyway. */
const FIRST_LOOK_GRACE_MS = 5000;
/**
 * And no more often than this many times the last look took: a look at a long output (a regex over
 * a megabyte) then takes at most a fifth of the host's thread while the output flows.
 */
const CHECK_COST_FACTOR = 4;
/**
 * The output since a cursor is kept stripped up to this many characters, as much as the ring keeps
 * of it in bytes (1 MiB): a wait over a longer output looks at its last megabyte, as it did when it
 * read it back from the ring.
 */
const SINCE_TEXT_MAX_UNITS = 1 << 20;

/** The text of a screen look, made once however many waits test it (looks are shared: MirrorProxy.watchScreen). */
const lookTexts = new WeakMap<object, string>();
function lookText(snap: Parameters<typeof screenText>[0]): string {
  let text = lookTexts.get(snap);
  if (text === undefined) lookTexts.set(snap, (text = screenText(snap)));
  return text;
}

/** The output after a cursor, escapes removed, read from the ring a piece at a time as it comes. */
class OutputSince {
  private readonly _stripper = new AnsiStripper();

  constructor(
    private readonly _session: Session,
    private _cursor: number,
  ) {}

  /** The text so far, reading only what came since the last call. */
  text(): string {
    const r = this._session.ring.read(this._cursor);
    if (r.text) this._stripper.feed(r.text);
    this._cursor = r.cursor;
    return this._stripper.text(SINCE_TEXT_MAX_UNITS);
  }
}

export interface WaitOptions {
  match?: string;
  regex?: string;
  since?: number;
  timeout?: number;
  idleMs?: number;
}

/** Why a `pty/wait` returned (docs/protocol.md#ptywait). */
export const waitReason = z.enum(['matched', 'timeout', 'idle', 'session_exit']);
/** Why a wait returned (see `waitReason`). */
export type WaitReason = z.infer<typeof waitReason>;

export interface WaitResult {
  matched: boolean;
  screen: string;
  cursor: CursorPos;
  size: ScreenSize;
  waitedMs: number;
  reason: WaitReason;
}

/**
 * Waits until the screen (or, with `since`, the output after that cursor, escapes removed)
 * contains `match` / matches `regex`, the output goes quiet for `idleMs`, the program exits,
 * or `timeout` passes. Without a pattern or idleMs it simply waits `timeout`. Each regex test is
 * charged to `budgets` (the caller's connection and token): once they are spent the wait ends
 * with their error.
 */
export async function waitFor(session: Session, opts: WaitOptions, signal?: AbortSignal, budgets: readonly RegexBudget[] = []): Promise<WaitResult> {
  const started = Date.now();
  const timeout = opts.timeout ?? DEFAULT_WAIT_TIMEOUT_MS;
  let pattern: RegExp | undefined;
  if (opts.regex !== undefined) {
    try {
      pattern = new RegExp(opts.regex, 'm');
    } catch (e) {
      throw invalidParams(`Invalid regex: ${(e as Error).message}`);
    }
  }
  const hasPattern = pattern !== undefined || opts.match !== undefined;
  const since = hasPattern && opts.since !== undefined ? new OutputSince(session, opts.since) : undefined;
  const test = (text: string) => (pattern ? boundedRegexTest(pattern, text, budgets) : opts.match !== undefined && text.includes(opts.match));

  const matchesNow = async (): Promise<boolean> => {
    if (!hasPattern) return false;
    if (since) return test(since.text());
    // A look, not a read a client waits on: it leaves the backlog bound as it is (MirrorProxy.watchScreen).
    return test(lookText(await session.mirror.watchScreen()));
  };

  // Every way the wait can end but the timeout and the caller leaving: what a look at the screen,
  // the exit or the quiet found (or the error a look ran into).
  const watch = new DisposableStore();
  const found = watch.add(new Emitter<{ reason: WaitReason } | { error: unknown }>());
  const limit = Math.min(timeout, MAX_WAIT_MS);
  // The time runs out at the timeout, but never before the first look at the screen is done
  // (below): text already on screen is found however short the timeout, even 0, and a slow first
  // look (a parser behind a flood) does not add the timeout after it. This one ends a first look
  // that never ends.
  const first = whenFirst(found.event, limit + FIRST_LOOK_GRACE_MS, signal);
  let checking = false;
  let recheck = false;
  let lastCheckAt = 0;
  let lastCheckMs = 0;
  const later = watch.add(new MutableDisposable());
  const check = async () => {
    if (watch.isDisposed) return;
    if (checking) {
      recheck = true;
      return;
    }
    checking = true;
    try {
      do {
        recheck = false;
        lastCheckAt = Date.now();
        const matched = await matchesNow();
        // What a look at the output since a cursor costs is the host's own work (a look at the
        // screen mostly waits for the parser, which is paced apart).
        if (since) lastCheckMs = Date.now() - lastCheckAt;
        if (matched) return found.fire({ reason: 'matched' });
      } while (recheck && !watch.isDisposed);
    } catch (e) {
      // A regex over its budget (or a screen read that failed) ends the call with its error.
      return found.fire({ error: e });
    } finally {
      checking = false;
    }
    if (!session.running) found.fire({ reason: 'session_exit' });
  };
  /** New output: look again, at most every CHECK_INTERVAL_MS (or CHECK_COST_FACTOR looks' time). */
  const onChange = () => {
    const wait = lastCheckAt + Math.max(CHECK_INTERVAL_MS, CHECK_COST_FACTOR * lastCheckMs) - Date.now();
    if (wait <= 0) return void check();
    if (later.value) return;
    later.value = disposableTimeout(() => {
      later.clear();
      void check();
    }, wait);
  };
  if (since) watch.add(session.onOutput(onChange));
  else if (hasPattern) {
    watch.add(session.mirror.onParsed(onChange));
    // The screen is looked at as output is parsed: it is not left waiting for a trickle batch.
    watch.add(session.mirror.keepPrompt());
  }
  watch.add(session.onExit(() => void check()));
  if (opts.idleMs !== undefined) {
    const idleMs = opts.idleMs;
    const idle = watch.add(new MutableDisposable());
    const armIdle = () => {
      const quietFor = Date.now() - Math.max(session.lastOutputAt, started);
      if (quietFor >= idleMs) return found.fire({ reason: 'idle' });
      idle.value = disposableTimeout(armIdle, idleMs - quietFor);
    };
    armIdle();
  }
  let firstLookDone = false;
  let timeUp = false;
  void check().then(() => {
    firstLookDone = true;
    if (timeUp) found.fire({ reason: 'timeout' });
  });
  watch.add(
    disposableTimeout(() => {
      timeUp = true;
      if (firstLookDone) found.fire({ reason: 'timeout' });
    }, limit),
  );
  let outcome: First<{ reason: WaitReason } | { error: unknown }>;
  try {
    outcome = await first;
  } finally {
    watch.dispose();
  }
  if (outcome.kind === 'event' && 'error' in outcome.value) throw outcome.value.error;
  // A caller that has gone reads no screen: thousands of waits of clients that closed at once each
  // asked the mirror for one.
  if (signal?.reason === CALLER_GONE) throw serverError('The wait ended: its caller went away');
  const reason = outcome.kind === 'event' && 'reason' in outcome.value ? outcome.value.reason : 'timeout';

  const snap = await session.mirror.watchScreen();
  return {
    matched: reason === 'matched',
    screen: screenText(snap),
    cursor: snap.cursor,
    size: snap.size,
    waitedMs: Date.now() - started,
    reason,
  };
}
