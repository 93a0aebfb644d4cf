import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { foregroundStateOf, readinessOf, shellHasEnded } from '../process/proc-state';
import type { Session, SessionStatus } from '../session/session';
import { isAgentCall, type InputSource } from '../session/input/input-source';
import { serverError, sessionBusy } from '../base/errors';
import { DEFAULT_SEND_TIMEOUT_MS } from '../base/param-limits';
import { DisposableStore, disposableTimeout, Emitter, MutableDisposable, type Event } from '../base/lifecycle';
import { anyEvent, mapEvent, whenFirst } from '../base/when-first';
import type { CommandRecord } from '../commands/command-tracker';

/** Timing of `pty/send`'s readiness detection. */
export const enum SendTuning {
  /** How often /proc is read while a send waits; only while a send is active (idle sessions cost nothing). */
  PollMs = 25,
  /**
   * With no output and no busy state seen since the write, readiness is trusted only after this
   * long: right after the write the program may not have woken up to read it yet.
   */
  MinSettleMs = 150,
  /**
   * A session this young may not have shown its first prompt yet: a send waits up to this long
   * (from the session's start) for the program to wait for input, so the text is not typed
   * ahead and echoed twice.
   */
  StartupGraceMs = 3000,
  /** Consecutive "waiting for input" polls, with no new output between them, that make the program ready. */
  StablePolls = 2,
  /**
   * While a setuid program (sudo) sleeps out of /proc's sight, the terminal's mode (a spawn of
   * stty, ~3 ms, where tcgetattr cannot be used) is read at most this often to see whether it asks
   * for a password.
   */
  HiddenModeCheckMs = 250,
  /** A shell that let its terminal go as its command ended (`exit 7`) is given this long to exit. */
  ShellExitGraceMs = 500,
  /**
   * A send within this long of a Ctrl+C waits (at most until then) for the program to have
   * handled it: to read again with nothing new on the screen between two looks.
   */
  InterruptSettleMs = 1000,
  /** ...and never types sooner than this after the Ctrl+C (the signal may not have been delivered yet). */
  InterruptMinMs = 50,
}

export { DEFAULT_SEND_TIMEOUT_MS };
export const DEFAULT_SEND_IDLE_MS = 500;
/** Most text a send returns (docs/guarantees.md#send-output-limit); the end is kept, the rest stays in the scrollback. */
export const DEFAULT_SEND_MAX_BYTES = 65536;

export interface SendOptions extends OutcomeOptions {
  text: string;
  submit?: boolean;
  /**
   * Called in the same turn as the write, just before it; it may throw, and nothing is written
   * (typing arbitration: the human started a line while the send waited for the first prompt).
   */
  beforeWrite?: () => void;
}

/** Why a send returned: docs/protocol.md#ptysend lists each reason. */
export const sendWaitReason = z.enum(['command_done', 'stdin_read', 'secret_input', 'user_input', 'inferred_idle', 'timeout', 'session_exit']);
/** Why a send returned (see `sendWaitReason`). */
export type SendWaitReason = z.infer<typeof sendWaitReason>;

export interface SendResult {
  output: string;
  waitReason: SendWaitReason;
  status: SessionStatus;
  truncated: boolean;
  waitedMs: number;
  /** With shell integration, once the command the send ran has finished: its exit code. */
  exitCode?: number | null;
  /** With shell integration: the record of the (last) command the send ran, finished or not. */
  command?: CommandRecord;
  /** The output cursor when the call acted: `pty/output since` from here reads what it saw, raw. */
  since?: number;
  /** The output cursor when it returned (the end of what it saw). */
  cursor?: number;
}

/** How long a call waits for the outcome of what it did, and how much of it it returns. */
export interface OutcomeOptions {
  timeout?: number;
  idleMs?: number;
  maxBytes?: number;
  /**
   * When the call began (default: now). `timeout` and `waitedMs` count from then, so they hold the
   * whole time the caller waited: for the user's approval, for the user to pause typing, for the
   * first prompt, and for the outcome.
   */
  since?: number;
  /**
   * The text the act types (a send's), when it types one: a command that ends counts as the
   * send's own early (while the shell still runs its prompt hooks) only if it is that text's.
   */
  typed?: string;
  /**
   * The act types nothing, only acts on what runs (a signal): the command running then is the one
   * the outcome is about once it ended, not a line typed ahead that the shell ran after it.
   */
  actsOnRunning?: boolean;
}

/**
 * Writes `text` (plus Enter when `submit`) on behalf of `from`, then waits until the program is
 * ready for input again, and returns what the send produced as rendered on screen and in the
 * scrollback. With shell integration, a send that ran a command returns once the shell reports it
 * finished and waits at its prompt again (`command_done`, with the exit code); a command that
 * itself waits for input returns `stdin_read`, as without integration.
 */
export async function send(session: Session, opts: SendOptions, from: InputSource, signal?: AbortSignal): Promise<SendResult> {
  const since = opts.since ?? Date.now();
  return oneSendAtATime(session, signal, async () => {
    const callDeadline = since + (opts.timeout ?? DEFAULT_SEND_TIMEOUT_MS);
    await waitForFirstPrompt(session, callDeadline, signal);
    await settleAfterInterrupt(session, callDeadline, signal);
    // A caller gone meanwhile types nothing: the session is already free for the next send, and
    // text typed now would land after whatever came since (a person's Ctrl+C).
    if (signal?.aborted) throw serverError('Cancelled before the text was typed: the caller went away');
    const typed = opts.text + (opts.submit === false ? '' : '\r');
    const act = () => {
      opts.beforeWrite?.();
      return session.running && session.write(typed, from);
    };
    return outcomeOf(session, act, { ...opts, since, typed: opts.text }, from, signal);
  });
}

/**
 * Runs `body` as the session's one send (docs/guarantees.md#error-codes-beyond-json-rpc: a second one is refused as busy); a caller
 * gone mid-way frees the session at once (what is left of the call only reads).
 */
export async function oneSendAtATime<T>(session: Session, signal: AbortSignal | undefined, body: () => Promise<T>): Promise<T> {
  if (session.sendInProgress) throw sessionBusy();
  const owner = {};
  session.sendOwner = owner;
  const release = () => {
    if (session.sendOwner === owner) session.sendOwner = undefined;
  };
  signal?.addEventListener('abort', release, { once: true });
  try {
    return await body();
  } finally {
    signal?.removeEventListener('abort', release);
    release();
  }
}

/**
 * Does `act` (types text, presses keys, signals the program), then waits as a send does until
 * the program is ready for input again (with shell integration: the command ended and the shell
 * waits at its prompt), the user typed (an agent's call), the session ended or `timeout` passed;
 * returns what appeared meanwhile as rendered on screen, and the command that ended or runs.
 */
export async function outcomeOf(session: Session, act: () => unknown, opts: OutcomeOptions, from: InputSource, signal?: AbortSignal): Promise<SendResult> {
  const started = opts.since ?? Date.now();
  const timeout = opts.timeout ?? DEFAULT_SEND_TIMEOUT_MS;
  const idleMs = opts.idleMs ?? DEFAULT_SEND_IDLE_MS;
  const maxBytes = opts.maxBytes ?? DEFAULT_SEND_MAX_BYTES;
  const start = await session.mirror.query('watchRows');
  const startCursor = session.cursor;
  // Every command that starts from now on was started by this call (one send at a time); one
  // that ends meanwhile may have been running before (`exit` typed into a nested shell ends
  // `bash`, SIGINT ends the command it interrupts).
  const firstCommand = session.commands.nextId;
  let lastFinished: CommandRecord | undefined;
  const finishedSub = session.commands.onDidFinishCommand((r) => (lastFinished = r));
  // The shell reported that a command ended, with its status, and none runs. More lines of the
  // text may still be queued: the send is done once the shell also waits for input (or cannot be
  // seen). A command ended without a status (a shell with marks of its own, started by it, drew
  // its prompt) is a program waiting for input.
  const commandsDone = () => lastFinished !== undefined && lastFinished.exitCode !== null && !session.commands.running;
  // A command that ran before the act ended: the text may still wait for the shell to read it
  // (typed ahead), so only the shell waiting for input at its prompt says the send is done. So
  // too for one typed earlier that the shell started only after the act: it is not the text's.
  const ownCommandsDone = () => commandsDone() && lastFinished!.id >= firstCommand && isLineOf(lastFinished!.command, opts.typed);
  // Keys and a signal act on what runs: a command running when they come is the one they answer
  // about, still running when the wait ends without its end (a program that ignores SIGINT).
  const runningAtAct = opts.typed === undefined && session.commands.running ? session.commands.latestSince(0)?.id : undefined;
  // …and once it has ended, that is their outcome, even while something else of the shell's still
  // runs in the foreground (fish's first run generating completions): no text of theirs is queued.
  const actedOnDone = () => runningAtAct !== undefined && commandsDone() && lastFinished!.id >= runningAtAct;
  let waitReason: SendWaitReason;
  // Readiness is judged from the moment of the act; the timeout counts from the call's start.
  const actedAt = Date.now();
  try {
    act();
    waitReason = session.running
      ? await readyAfterAct(session, from, signal, {
          started,
          actedAt,
          startCursor,
          timeout,
          idleMs,
          commandsDone,
          ownCommandsDone: () => ownCommandsDone() || actedOnDone(),
        })
      : 'session_exit';
  } finally {
    finishedSub.dispose();
  }
  // The shell said the command ended and has let its terminal go (no foreground group): a command
  // that ended the shell (`exit 7`), which goes a moment later. Its end is the answer, not "running".
  if (waitReason === 'command_done' && process.platform === 'linux' && session.running && foregroundStateOf(session.pid) === 'unknown') {
    const ended = await Promise.race([session.exited.then(() => true), sleep(SendTuning.ShellExitGraceMs, undefined, { ref: false }).then(() => false)]);
    if (ended) waitReason = 'session_exit';
  }
  if (waitReason === 'session_exit') await session.exited;
  // What the send saw is the session's state too (SessionInfo.secretInput, the input_wait event).
  if (waitReason === 'secret_input' || waitReason === 'stdin_read') session.inputWatch.observe(waitReason === 'secret_input' ? 'secret_input' : 'input_wait');
  // The command is over and the shell reads its prompt: a secret the command asked for is asked no
  // more (the watch's next look would say so only a probe later, and refuse the agent meanwhile).
  else if (waitReason === 'command_done' && session.inputWatch.state === 'secret') session.inputWatch.observe('input_wait');
  const { output, truncated } = await renderedSince(session, start, maxBytes);
  const result: SendResult = {
    output,
    waitReason,
    status: session.status,
    truncated,
    waitedMs: Date.now() - started,
    since: startCursor,
    cursor: session.cursor,
  };
  // A signal's outcome is the command it acted on, once that ended, not a line typed ahead that the
  // shell ran after it (SIGINT to `sleep 30` with `echo next` queued). Keys may type a line of their
  // own: the command they started, if any, is theirs.
  const acted = runningAtAct === undefined ? undefined : session.commands.get(runningAtAct);
  const endedActed = opts.actsOnRunning && acted && acted.endCursor !== null ? acted : undefined;
  const command = endedActed ?? session.commands.latestSince(firstCommand) ?? lastFinished ?? acted;
  if (command) {
    result.command = command;
    if (command.endCursor !== null) result.exitCode = command.exitCode;
  }
  return result;
}

/**
 * Whether a command the shell reported can be the last line of `typed`: its text ends the typed
 * text, blanks aside. Without either (keys, a signal, a shell that did not say) it may be.
 * A shell that reports a loop typed over several lines as one line (bash's `cmdhist`) is not
 * matched; the send then ends once the shell waits at its prompt, as for a command typed ahead.
 */
function isLineOf(command: string, typed: string | undefined): boolean {
  if (typed === undefined || command === '') return true;
  const words = (text: string) => text.trim().replace(/\s+/g, ' ');
  const [all, last] = [words(typed), words(command)];
  return all === last || all.endsWith(` ${last}`);
}

/** What `readyAfterAct` judges by: when the call and the act began, and the send's limits. */
interface ReadinessWatch {
  started: number;
  actedAt: number;
  startCursor: number;
  timeout: number;
  idleMs: number;
  /** Whether the shell has reported the commands the act started finished (shell integration). */
  commandsDone(): boolean;
  /**
   * The same, for a command the act started (not one that ran before it and ended meanwhile), or
   * for the command a signal or keys acted on.
   */
  ownCommandsDone(): boolean;
}

/**
 * After an act, waits until the program is ready for input again (polling /proc), the session
 * exits, the user types during an agent's call, `timeout` (counted from the call's start) passes,
 * or the caller goes away (answered as `timeout`).
 */
async function readyAfterAct(session: Session, from: InputSource, signal: AbortSignal | undefined, w: ReadinessWatch): Promise<SendWaitReason> {
  const { started, actedAt, startCursor, idleMs } = w;
  const watch = new DisposableStore();
  /** What the polls concluded. */
  const ready = watch.add(new Emitter<SendWaitReason>());
  const ends: Array<Event<SendWaitReason>> = [ready.event, mapEvent(session.onExit, () => 'session_exit' as const)];
  // The user typing into the terminal during an agent's send takes over (docs/protocol.md#typing-arbitration).
  if (isAgentCall(from)) ends.push((listener) => session.onInput((i) => i.from.origin === 'user' && listener('user_input')));
  const first = whenFirst(anyEvent(...ends), started + w.timeout - Date.now(), signal);
  let sawBusy = false;
  let stable = 0;
  let lastCursor = session.cursor;
  let modeCheckedAt = 0;
  const next = watch.add(new MutableDisposable());
  const poll = async () => {
    const now = Date.now();
    const state = foregroundStateOf(session.pid);
    const newOutput = session.cursor !== lastCursor;
    lastCursor = session.cursor;
    const commandsDone = w.commandsDone();
    const quiet = now - Math.max(session.lastOutputAt, actedAt) >= idleMs;
    if (state === 'unknown') {
      // fish reports `exit` finished before it ends: the send ended the session, as in bash and zsh.
      if (shellHasEnded(session.pid)) return ready.fire('session_exit');
      if (w.ownCommandsDone() || (commandsDone && quiet)) return ready.fire('command_done');
      // We cannot see the program's state: fall back to silence.
      if (quiet) return ready.fire('inferred_idle');
    } else if (state === 'busy') {
      sawBusy = true;
      stable = 0;
      // The shell said the command ended, yet something in its foreground still runs (a first
      // fish run generating completions): once output has been quiet, the shell's word wins. Not
      // for a command from before the act: the shell may be running the user's slow prompt hook
      // with the text still queued, and the command the text makes is the answer.
      if (w.ownCommandsDone() && quiet) return ready.fire('command_done');
    } else {
      const progressed = sawBusy || session.cursor !== startCursor || now - actedAt >= SendTuning.MinSettleMs;
      stable = progressed && !newOutput ? stable + 1 : 0;
      if (state === 'waiting_for_input' && stable >= SendTuning.StablePolls) {
        if (commandsDone) return ready.fire('command_done');
        // Ready: for a password prompt (docs/protocol.md#secret-input) the answer says so, at once.
        return ready.fire((await asksForSecret(session)) ? 'secret_input' : 'stdin_read');
      }
      if (state === 'asleep_hidden' || state === 'relaying') {
        if (stable >= SendTuning.StablePolls && now - modeCheckedAt >= SendTuning.HiddenModeCheckMs) {
          // sudo hides its system call, ssh relays to a program out of sight: a password prompt
          // still shows (the terminal's mode, the line at the cursor).
          modeCheckedAt = now;
          if (await asksForSecret(session)) return ready.fire('secret_input');
        }
        // We cannot see what it waits for (a relay waits on the terminal whatever the program
        // behind it does, docs/guarantees.md#send-readiness): fall back to silence.
        if (quiet) return ready.fire('inferred_idle');
      }
    }
    // Once the wait is over the holder is disposed, and a timer set in it is cleared at once.
    next.value = disposableTimeout(() => void poll(), SendTuning.PollMs);
  };
  next.value = disposableTimeout(() => void poll(), SendTuning.PollMs);
  try {
    const outcome = await first;
    return outcome.kind === 'event' ? outcome.value : 'timeout';
  } finally {
    watch.dispose();
  }
}

/** Whether the program asks for a password (echo off, and lines read or a prompt that asks: SecretJudge). */
function asksForSecret(session: Session): Promise<boolean> {
  return session.secretJudge.asksNow();
}

/** Sessions whose program a send has seen wait for input (or could not tell): their first prompt is behind them. */
const pastFirstPrompt = new WeakSet<Session>();

/**
 * For a session that just started: waits until its program first waits for input, at most until
 * the session is StartupGraceMs old and never past the call's own deadline. Once seen, never
 * again: a command the user started meanwhile (a `sleep 30`) is not a first prompt to wait for.
 */
async function waitForFirstPrompt(session: Session, callDeadline: number, signal?: AbortSignal): Promise<void> {
  if (pastFirstPrompt.has(session)) return;
  const deadline = Math.min(session.createdAt.getTime() + SendTuning.StartupGraceMs, callDeadline);
  while (Date.now() < deadline && session.running && !signal?.aborted) {
    const state = readinessOf(session.pid);
    if (state !== 'busy') {
      pastFirstPrompt.add(session); // ready, or we cannot tell: type now
      return;
    }
    await new Promise((r) => setTimeout(r, SendTuning.PollMs));
  }
  if (Date.now() >= session.createdAt.getTime() + SendTuning.StartupGraceMs) pastFirstPrompt.add(session);
}

/**
 * Right after a Ctrl+C (Session.interruptedAt): waits until the program reads again with the
 * output unchanged between two looks, at most InterruptSettleMs after the Ctrl+C and never past
 * the call's deadline. A shell at its prompt throws away what it has read of the next line when it
 * handles the interrupt, so text typed in that moment lost its first characters (`echo` ran as
 * `cho`: under `set -e` that ended the shell).
 */
async function settleAfterInterrupt(session: Session, callDeadline: number, signal?: AbortSignal): Promise<void> {
  const at = session.interruptedAt;
  const end = Math.min(at + SendTuning.InterruptSettleMs, callDeadline);
  let seen: number | undefined; // the output cursor at the last look that found the program reading
  while (Date.now() < end && session.running && !signal?.aborted) {
    const cursor = session.cursor;
    const reading = readinessOf(session.pid) !== 'busy';
    if (reading && seen === cursor && Date.now() >= at + SendTuning.InterruptMinMs) return;
    seen = reading ? cursor : undefined;
    await sleep(SendTuning.PollMs);
  }
}

/**
 * The rendered rows from where the send began (its start row, or the topmost row the output
 * changed since: a `clear`) to the end of the retained buffer, bounded to `maxBytes` (end kept).
 */
async function renderedSince(session: Session, start: { watch: number; row: number }, maxBytes: number): Promise<{ output: string; truncated: boolean }> {
  // With a full-screen program on the alternate screen, what it shows is the answer.
  const rendered = await session.mirror.query('renderedSince', start.row, start.watch);
  const rows = rendered.rows;
  let truncated = rendered.truncated;
  while (rows.length > 0 && rows[rows.length - 1] === '') rows.pop();
  let output = rows.join('\n');
  if (Buffer.byteLength(output, 'utf8') > maxBytes) {
    const buf = Buffer.from(output, 'utf8');
    let cut = buf.length - maxBytes;
    while (cut < buf.length && (buf[cut] & 0xc0) === 0x80) cut++;
    output = buf.subarray(cut).toString('utf8');
    truncated = true;
  }
  return { output, truncated };
}
