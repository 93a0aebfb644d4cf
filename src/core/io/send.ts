import { foregroundStateOf, readinessOf } from '../process/proc-state';
import { isSecretMode, lineModeOf } from '../process/terminal-mode';
import type { Session, SessionStatus } from '../session/session';
import { isAgentCall, type InputSource } from '../session/input-source';
import { sessionBusy } from '../base/errors';
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
   * stty, ~3 ms) is read at most this often to see whether it asks for a password.
   */
  HiddenModeCheckMs = 250,
}

export const DEFAULT_SEND_TIMEOUT_MS = 30000;
export const DEFAULT_SEND_IDLE_MS = 500;
/** Most text a send returns (docs/guarantees.md#send-output-limit); the end is kept, the rest stays in the scrollback. */
export const DEFAULT_SEND_MAX_BYTES = 65536;

export interface SendOptions {
  text: string;
  submit?: boolean;
  timeout?: number;
  idleMs?: number;
  maxBytes?: number;
}

export type SendWaitReason = 'command_done' | 'stdin_read' | 'secret_input' | 'user_input' | 'inferred_idle' | 'timeout' | 'session_exit';

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
}

/**
 * Writes `text` (plus Enter when `submit`) on behalf of `from`, then waits until the program is
 * ready for input again, and returns what the send produced as rendered on screen and in the
 * scrollback. With shell integration, a send that ran a command returns once the shell reports it
 * finished and waits at its prompt again (`command_done`, with the exit code); a command that
 * itself waits for input returns `stdin_read`, as without integration.
 */
export async function send(session: Session, opts: SendOptions, from: InputSource, signal?: AbortSignal): Promise<SendResult> {
  if (session.sendInProgress) throw sessionBusy();
  const owner = {};
  session.sendOwner = owner;
  // A caller gone mid-send frees the session at once: what is left of this send only reads.
  const release = () => {
    if (session.sendOwner === owner) session.sendOwner = undefined;
  };
  signal?.addEventListener('abort', release, { once: true });
  try {
    return await runSend(session, opts, from, signal);
  } finally {
    signal?.removeEventListener('abort', release);
    release();
  }
}

async function runSend(session: Session, opts: SendOptions, from: InputSource, signal?: AbortSignal): Promise<SendResult> {
  const started = Date.now();
  const timeout = opts.timeout ?? DEFAULT_SEND_TIMEOUT_MS;
  const idleMs = opts.idleMs ?? DEFAULT_SEND_IDLE_MS;
  const maxBytes = opts.maxBytes ?? DEFAULT_SEND_MAX_BYTES;
  await waitForFirstPrompt(session, signal);
  const startRow = await session.mirror.query('cursorRow');
  const startCursor = session.cursor;
  // Every command that starts from now on was started by this send (one send at a time); one
  // that ends meanwhile may have been running before (`exit` typed into a nested shell ends `bash`).
  const firstCommand = session.commands.nextId;
  let lastFinished: CommandRecord | undefined;
  const finishedSub = session.commands.onDidFinishCommand((r) => (lastFinished = r));
  let waitReason: SendWaitReason;
  try {
    if (session.running) session.write(opts.text + (opts.submit === false ? '' : '\r'), from);
    waitReason = await new Promise<SendWaitReason>((resolve) => {
      let sawBusy = false;
      let stable = 0;
      let lastCursor = session.cursor;
      let timer: NodeJS.Timeout | undefined;
      let done = false;
      const finish = (r: SendWaitReason) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        exitSub.dispose();
        humanSub?.dispose();
        signal?.removeEventListener('abort', onAbort);
        resolve(r);
      };
      const onAbort = () => finish('timeout');
      signal?.addEventListener('abort', onAbort);
      const exitSub = session.onExit(() => finish('session_exit'));
      // The user typing into the terminal during an agent's send takes over (docs/protocol.md#typing-arbitration).
      const humanSub = isAgentCall(from) ? session.onInput((i) => i.from.origin === 'user' && finish('user_input')) : undefined;
      if (!session.running) return finish('session_exit');
      let modeCheckedAt = 0;
      const poll = async () => {
        const now = Date.now();
        if (now - started >= timeout) return finish('timeout');
        const state = foregroundStateOf(session.pid);
        const newOutput = session.cursor !== lastCursor;
        lastCursor = session.cursor;
        // The shell reported that a command ended, with its status, and none runs. More lines of
        // the text may still be queued: the send is done once the shell also waits for input (or
        // cannot be seen). A command ended without a status (a shell with marks of its own, started
        // by it, drew its prompt) is a program waiting for input.
        const commandsDone = lastFinished !== undefined && lastFinished.exitCode !== null && !session.commands.running;
        if (state === 'unknown') {
          if (commandsDone) return finish('command_done');
          // We cannot see the program's state: fall back to silence.
          if (now - Math.max(session.lastOutputAt, started) >= idleMs) return finish('inferred_idle');
        } else if (state === 'busy') {
          sawBusy = true;
          stable = 0;
          // The shell said the command ended, yet something in its foreground still runs (a first
          // fish run generating completions): once output has been quiet, the shell's word wins.
          if (commandsDone && now - Math.max(session.lastOutputAt, started) >= idleMs) return finish('command_done');
        } else {
          const progressed = sawBusy || session.cursor !== startCursor || now - started >= SendTuning.MinSettleMs;
          stable = progressed && !newOutput ? stable + 1 : 0;
          if (state === 'waiting_for_input' && stable >= SendTuning.StablePolls) {
            if (commandsDone) return finish('command_done');
            // Ready: for a password prompt (docs/protocol.md#secret-input) the answer says so, at once.
            return finish((await asksForSecret(session)) ? 'secret_input' : 'stdin_read');
          }
          if (state === 'asleep_hidden') {
            if (stable >= SendTuning.StablePolls && now - modeCheckedAt >= SendTuning.HiddenModeCheckMs) {
              // sudo hides its system call; a terminal set for a password says what it waits for.
              modeCheckedAt = now;
              if (await asksForSecret(session)) return finish('secret_input');
            }
            // We cannot see what it waits for: fall back to silence.
            if (now - Math.max(session.lastOutputAt, started) >= idleMs) return finish('inferred_idle');
          }
        }
        if (!done) timer = setTimeout(() => void poll(), SendTuning.PollMs);
      };
      timer = setTimeout(() => void poll(), SendTuning.PollMs);
    });
  } finally {
    finishedSub.dispose();
  }
  if (waitReason === 'session_exit') await session.exited;
  // What the send saw is the session's state too (SessionInfo.secretInput, the input_wait event).
  if (waitReason === 'secret_input' || waitReason === 'stdin_read') session.inputWatch.observe(waitReason === 'secret_input' ? 'secret_input' : 'input_wait');
  const { output, truncated } = await renderedSince(session, startRow, maxBytes);
  const result: SendResult = { output, waitReason, status: session.status, truncated, waitedMs: Date.now() - started };
  const command = session.commands.latestSince(firstCommand) ?? lastFinished;
  if (command) {
    result.command = command;
    if (command.endCursor !== null) result.exitCode = command.exitCode;
  }
  return result;
}

/** Whether the terminal is set for a password (echo off, lines): the program waits for a secret. */
async function asksForSecret(session: Session): Promise<boolean> {
  const tty = session.ttyPath;
  const mode = tty ? await lineModeOf(tty) : null;
  return mode !== null && isSecretMode(mode);
}

/** For a session that just started: waits (bounded) until its program first waits for input. */
async function waitForFirstPrompt(session: Session, signal?: AbortSignal): Promise<void> {
  const deadline = session.createdAt.getTime() + SendTuning.StartupGraceMs;
  while (Date.now() < deadline && session.running && !signal?.aborted) {
    const state = readinessOf(session.pid);
    if (state !== 'busy') return; // ready, or we cannot tell: type now
    await new Promise((r) => setTimeout(r, SendTuning.PollMs));
  }
}

/** The rendered rows from `startRow` to the end of the retained buffer, bounded to `maxBytes` (end kept). */
async function renderedSince(session: Session, startRow: number, maxBytes: number): Promise<{ output: string; truncated: boolean }> {
  // With a full-screen program on the alternate screen, what it shows is the answer.
  const rendered = await session.mirror.query('renderedSince', startRow);
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
