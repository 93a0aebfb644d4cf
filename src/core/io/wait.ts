import { z } from 'zod';
import { invalidParams } from '../base/errors';
import { boundedRegexTest } from './bounded-regex';
import type { RegexBudget } from './regex-budget';
import type { IDisposable } from '../base/lifecycle';
import type { CursorPos, ScreenSize } from '../mirror/screen';
import { stripAnsi } from '../base/ansi';
import { screenText } from '../mirror/screen-text';
import type { Session } from '../session/session';

/** Default `pty/wait` timeout (docs/protocol.md#ptywait). */
export const DEFAULT_WAIT_TIMEOUT_MS = 10000;
/** Longest wait a client may ask for: a day; longer is a mistake, not a plan. */
export const MAX_WAIT_MS = 24 * 60 * 60 * 1000;
/**
 * While output keeps coming, the screen (or the output since a cursor) is looked at no more often
 * than this: each look waits for the parser and reads the text again, and during a flood one look
 * per parsed batch slowed the program 2x (bench/README.md).
 */
const CHECK_INTERVAL_MS = 10;

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
  const test = (text: string) => (pattern ? boundedRegexTest(pattern, text, budgets) : opts.match !== undefined && text.includes(opts.match));

  const matchesNow = async (): Promise<boolean> => {
    if (!hasPattern) return false;
    if (opts.since !== undefined) {
      return test(stripAnsi(session.ring.read(opts.since).text));
    }
    return test(screenText(await session.mirror.screen()));
  };

  const reason = await new Promise<WaitReason>((resolve, reject) => {
    const disposables: IDisposable[] = [];
    const timers: NodeJS.Timeout[] = [];
    let settled = false;
    let checking = false;
    let recheck = false;
    let lastCheckAt = 0;
    let later: NodeJS.Timeout | undefined;
    const settle = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      for (const d of disposables) d.dispose();
      for (const t of timers) clearTimeout(t);
      clearTimeout(later);
      signal?.removeEventListener('abort', onAbort);
      outcome();
    };
    const finish = (r: WaitReason) => settle(() => resolve(r));
    const check = async () => {
      if (settled) return;
      if (checking) {
        recheck = true;
        return;
      }
      checking = true;
      try {
        do {
          recheck = false;
          lastCheckAt = Date.now();
          if (await matchesNow()) return finish('matched');
        } while (recheck && !settled);
      } catch (e) {
        // A regex over its budget (or a screen read that failed) ends the call with its error.
        return settle(() => reject(e));
      } finally {
        checking = false;
      }
      if (!session.running) finish('session_exit');
    };
    /** New output: look again, at most every CHECK_INTERVAL_MS. */
    const onChange = () => {
      const wait = lastCheckAt + CHECK_INTERVAL_MS - Date.now();
      if (wait <= 0) return void check();
      later ??= setTimeout(() => {
        later = undefined;
        void check();
      }, wait);
    };
    const onAbort = () => finish('timeout');
    signal?.addEventListener('abort', onAbort);
    if (hasPattern) {
      const source = opts.since !== undefined ? session.onOutput : session.mirror.onParsed;
      disposables.push(source(onChange));
    }
    disposables.push(session.onExit(() => void check()));
    timers.push(setTimeout(() => finish('timeout'), Math.min(timeout, MAX_WAIT_MS)));
    if (opts.idleMs !== undefined) {
      const idleMs = opts.idleMs;
      const armIdle = () => {
        const quietFor = Date.now() - Math.max(session.lastOutputAt, started);
        if (quietFor >= idleMs) return finish('idle');
        timers.push(setTimeout(armIdle, idleMs - quietFor));
      };
      armIdle();
    }
    void check();
  });

  const snap = await session.mirror.screen();
  return {
    matched: reason === 'matched',
    screen: screenText(snap),
    cursor: snap.cursor,
    size: snap.size,
    waitedMs: Date.now() - started,
    reason,
  };
}
