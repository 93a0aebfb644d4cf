import { z } from 'zod';
import { invalidParams } from '../base/errors';
import { keyToBytes, KeyNameError } from '../io/keys';
import {
  DEFAULT_SEND_IDLE_MS,
  DEFAULT_SEND_MAX_BYTES,
  DEFAULT_SEND_TIMEOUT_MS,
  oneSendAtATime,
  outcomeOf,
  send,
  sendWaitReason,
  type SendResult,
} from '../io/send';
import { DEFAULT_SIGNAL_TIMEOUT_MS, inSize, MAX_WAIT_MS } from '../base/param-limits';
import { signalForegroundGroup } from '../process/proc-state';
import { admitWrite, agentCall } from '../agent/agent-write';
import { whenHumanPaused } from '../agent/typing-arbitration';
import { DEFAULT_APPROVAL_WAIT_MS, DEFAULT_ARBITRATION_WAIT_MS } from '../base/param-limits';
import { byDefault, cols, commandRecord, int, millis, rows, sessionStatus, signalName } from './schemas';
import { method, type TableCall } from './spec';
import { truncationNote, waitedOutputBudget } from './waited-output-budget';
import { requireSession } from './context';
import type { MethodContext } from './types';
import type { Session } from '../session/session';
import type { InputSource } from '../session/input/input-source';

const writeAction = z.object({ text: z.string().optional(), key: z.string().optional() }).strict();
type WriteAction = z.infer<typeof writeAction>;

/** Every problem of a `pty/write` action list, found at the edge (before anything is written). */
function actionProblem(action: WriteAction | WriteAction[]): { message: string; key?: string } | undefined {
  const list = Array.isArray(action) ? action : [action];
  if (list.length === 0) return { message: 'action must not be an empty array' };
  for (const a of list) {
    if (a.text !== undefined && a.key !== undefined) return { message: 'An action takes text or key, not both' };
    if (a.text === undefined && a.key === undefined) return { message: 'An action needs text or key' };
    if (a.key !== undefined) {
      try {
        keyToBytes(a.key);
      } catch (e) {
        if (e instanceof KeyNameError) return { message: e.message, key: a.key };
        throw e;
      }
    }
  }
  return undefined;
}

/** Output bytes an agent's call that waits asks for: as many as a send returns, so the budget sees it all. */
const MCP_OUTPUT_BYTES = 16 * DEFAULT_SEND_MAX_BYTES;

/** The params of a call that may wait for the outcome of what it did, as `pty/send` does. */
function waitParams(defaultTimeout: number) {
  return {
    wait: byDefault(false, z.boolean().optional().describe('Then wait as pty/send does, and answer with the outcome (default false: answer at once).')),
    timeout: byDefault(defaultTimeout, millis(1).max(MAX_WAIT_MS).optional().describe(`With wait: milliseconds to wait at most (default ${defaultTimeout}).`)),
    idleMs: byDefault(
      DEFAULT_SEND_IDLE_MS,
      millis(1)
        .max(MAX_WAIT_MS)
        .optional()
        .describe(`With wait: silence that counts as ready where the program state cannot be read (default ${DEFAULT_SEND_IDLE_MS}).`),
    ),
    maxBytes: byDefault(
      DEFAULT_SEND_MAX_BYTES,
      int(1)
        .max(16 * DEFAULT_SEND_MAX_BYTES)
        .optional()
        .describe(`With wait: most output bytes returned (default ${DEFAULT_SEND_MAX_BYTES}; the end is kept).`),
    ),
  };
}

/** What such a call adds to its answer when it waited: `pty/send`'s answer. */
function outcomeFields() {
  return {
    output: z.string().optional().describe('With wait: what appeared after it, as rendered (as pty/send).'),
    waitReason: sendWaitReason.optional(),
    status: sessionStatus.optional(),
    truncated: z
      .boolean()
      .optional()
      .describe(
        'True when output lost its start: cut at maxBytes (its end kept), or its first rows had left the scrollback. (Over MCP, what maxChars leaves out is counted by elidedChars; truncated stays false when nothing was cut before that budget.)',
      ),
    waitedMs: z.number().optional(),
    exitCode: z.number().nullable().optional().describe('With wait and shell integration, once the command ended: its exit code.'),
    command: commandRecord.optional().describe('With wait and shell integration: the command that ended, or runs.'),
    ...outputCursorFields(),
  };
}

/**
 * `cursors`: a waiting call also answers `since` and `cursor` (outputCursorFields). Asked for by
 * the MCP tools, whose budget reads the whole of what the call saw; left out by default, so a
 * socket-pty client's `pty/send` answer keeps exactly its fields.
 */
const cursorsParam = {
  cursors: byDefault(false, z.boolean().optional().describe('With wait: also answer since and cursor, the output cursors of what the call saw.')),
};

/** `r` without the output cursors, unless the caller asked for them (`cursors`). */
function withCursorsIf<T extends { since?: number; cursor?: number }>(r: T, asked: boolean | undefined): T {
  if (asked) return r;
  const { since: _since, cursor: _cursor, ...rest } = r;
  return rest as T;
}

/** The output cursors of what a waiting call saw (pty/output since=since maxBytes=cursor-since reads it raw). */
function outputCursorFields() {
  return {
    since: z.number().optional().describe('The output cursor when the call acted: what it saw starts there (pty/output since).'),
    cursor: z.number().optional().describe('The output cursor when it returned: what it saw ends there.'),
  };
}

const writeParams = z
  .object({
    action: z.union([writeAction, z.array(writeAction)]).describe('{text} or {key}, or a list of them, written in order.'),
    ...waitParams(DEFAULT_SEND_TIMEOUT_MS),
    ...cursorsParam,
  })
  .superRefine((p, ctx) => {
    const problem = actionProblem(p.action);
    if (problem) ctx.addIssue({ code: 'custom', message: problem.message, params: problem.key === undefined ? undefined : { key: problem.key } });
  });

/** Whether `value` is a plain object whose only own key is `key` (as JSON.parse makes them). */
function onlyKey(value: unknown, key: string): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  for (const k in value) if (k !== key) return false;
  return Object.hasOwn(value, key);
}

/**
 * A key as most clients send it, `{action: {text}}` and nothing else, is valid as it is: the
 * schema would make the same of it (nothing is defaulted), so it is taken without the schema.
 */
function quickWriteParams(raw: Record<string, unknown>): { action: { text: string } } | undefined {
  if (!onlyKey(raw, 'action')) return undefined;
  const action = raw.action;
  if (!onlyKey(action, 'text') || typeof action.text !== 'string') return undefined;
  return { action: { text: action.text } };
}

/**
 * Turns a valid `pty/write` action (or list of them) into the bytes to write; the arrows, Home and
 * End as the terminal's cursor-key mode has them (`applicationCursor`: `ESC O A`).
 */
export function actionBytes(action: WriteAction | WriteAction[], applicationCursor = false): string {
  const problem = actionProblem(action);
  if (problem) throw invalidParams(problem.message, problem.key === undefined ? undefined : { key: problem.key });
  let out = '';
  for (const a of Array.isArray(action) ? action : [action]) out += a.text ?? keyToBytes(a.key as string, applicationCursor);
  return out;
}

type WriteParams = z.infer<typeof writeParams>;

/** Writes an admitted write that does not wait; its answer may leave with its echo. */
function writeNow(ctx: MethodContext, session: Session, bytes: string, from: InputSource): { written: number } {
  const written = session.write(bytes, from);
  // Its echo is on the way: the answer may leave with it. A write with `wait` answers after the output anyway.
  if (written > 0) ctx.answerMayRideWith(session);
  return { written };
}

/** A write that waits: for its admission (an agent's), or for the outcome (`wait`). */
async function writeWhenAdmitted(
  ctx: MethodContext,
  session: Session,
  bytes: string,
  p: WriteParams,
  admitted: ReturnType<typeof admitWrite>,
  since: number,
): Promise<{ written: number } & Partial<SendResult>> {
  const { from } = await admitted;
  if (!p.wait) return writeNow(ctx, session, bytes, from);
  const timeout = p.timeout ?? DEFAULT_SEND_TIMEOUT_MS;
  let written = 0;
  // The screen is looked at before the keys go: the human may start a line meanwhile, never typed into.
  const outcome = await oneSendAtATime(session, ctx.signal, () =>
    whenHumanPaused(session, from, since + timeout, ctx.signal, (guard) =>
      outcomeOf(
        session,
        () => {
          guard();
          written = session.write(bytes, from);
        },
        { timeout, idleMs: p.idleMs, maxBytes: p.maxBytes, since },
        from,
        ctx.signal,
      ),
    ),
  );
  return { written, ...withCursorsIf(outcome, p.cursors) };
}

export const writeMethod = method({
  name: 'pty/write',
  target: 'session',
  scope: 'input',
  summary: 'Write text and/or named keys; returns the UTF-8 bytes written (with wait, then waits as pty/send does and answers with the outcome too).',
  params: writeParams,
  quickParams: quickWriteParams,
  result: z.object({ written: z.number(), ...outcomeFields() }),
  needsRunning: true,
  handler(ctx, p) {
    const since = Date.now();
    const session = requireSession(ctx);
    const bytes = actionBytes(p.action, session.applicationCursorKeys);
    const typing = agentCall(ctx.services, session, ctx.caller);
    let admitted: ReturnType<typeof admitWrite>;
    try {
      const timeout = p.timeout ?? DEFAULT_SEND_TIMEOUT_MS;
      // Without wait, a timeout the caller gives still bounds the wait for the human's pause (the call's timeout).
      const wait = p.wait ? { askMs: timeout, pauseMs: timeout } : { askMs: DEFAULT_APPROVAL_WAIT_MS, pauseMs: p.timeout ?? DEFAULT_ARBITRATION_WAIT_MS };
      admitted = admitWrite(ctx.services, session, ctx.caller, bytes, wait, ctx);
    } catch (err) {
      typing.dispose();
      throw err;
    }
    // A key from anyone but an agent is admitted at once: it is written and answered in this turn.
    if (admitted instanceof Promise || p.wait) return writeWhenAdmitted(ctx, session, bytes, p, admitted, since).finally(() => typing.dispose());
    typing.dispose();
    return writeNow(ctx, session, bytes, admitted.from);
  },
  mcp: {
    tool: 'send_keys',
    // It types into a shell, or starts a program: anything may follow.
    destructive: true,
    openWorld: true,
    title: 'Press keys',
    description:
      'Press named keys in order: Enter, Tab, Escape, Backspace, ArrowUp/Down/Left/Right, Home, End, PageUp, PageDown, F1..F12, combinations such as Ctrl+C, Ctrl+D, Alt+X, Shift+Tab, or any single character such as "q" or ":" (for pagers, editors and TUIs). By default it does not wait: then use read_screen or wait_for to see the effect. wait:true waits as send does (until the program is ready for input again, the command finished, or timeout) and returns the output, waitReason and exitCode as send does. Refused while the program asks for a password (secret_input): only the user types that.',
    input: {
      shape: {
        keys: z.array(z.string()).min(1).describe('Key names, case-sensitive.'),
        wait: z.boolean().optional().describe('Wait as send does and return the outcome (default false).'),
        timeout: millis(1)
          .max(MAX_WAIT_MS)
          .optional()
          .describe(
            `With wait: milliseconds to wait at most (default ${DEFAULT_SEND_TIMEOUT_MS}). Without: how long to wait for the user to pause typing at most (default ${DEFAULT_ARBITRATION_WAIT_MS}).`,
          ),
      },
      toParams: (a) => ({
        action: (a.keys as string[]).map((key) => ({ key })),
        ...(a.wait ? { wait: true, maxBytes: MCP_OUTPUT_BYTES, cursors: true } : {}),
        ...(a.timeout ? { timeout: a.timeout } : {}),
      }),
    },
    // With wait, as send's: the command's whole output when its rows lost their start.
    budget: { ...waitedOutputBudget, optional: true },
    text: async (r, a, call) => {
      const pressed = `Pressed ${(a.keys as string[]).join(' ')} (${r.written} bytes).`;
      return r.waitReason === undefined ? pressed : `${pressed}\n${await outcomeText(r as SendResult, a, call)}`;
    },
  },
  rest: {
    verb: 'POST',
    path: '/sessions/:id/write',
    from: 'body',
    input: {
      schema: z.object({ data: z.string(), submit: z.boolean().optional() }),
      // As pty-session-mcp: submit (default true) appends a newline unless one is there.
      toParams: (b) => {
        const data = b.data as string;
        return { action: { text: b.submit !== false && !/[\r\n]$/.test(data) ? data + '\n' : data } };
      },
    },
    respond: (r, route) => ({ id: route.id, bytes: r.written }),
  },
});

export const sendMethod = method({
  name: 'pty/send',
  target: 'session',
  scope: 'control',
  summary: 'Type a command (Enter appended unless submit is false) and wait until the program is ready for input again.',
  params: z.object({
    text: z.string().describe('The text to type.'),
    submit: byDefault(true, z.boolean().optional().describe('Press Enter after the text (default true).')),
    timeout: byDefault(
      DEFAULT_SEND_TIMEOUT_MS,
      millis(1).max(MAX_WAIT_MS).optional().describe(`Milliseconds to wait at most (default ${DEFAULT_SEND_TIMEOUT_MS}).`),
    ),
    idleMs: byDefault(
      DEFAULT_SEND_IDLE_MS,
      millis(1).max(MAX_WAIT_MS).optional().describe(`Silence that counts as ready where the program state cannot be read (default ${DEFAULT_SEND_IDLE_MS}).`),
    ),
    maxBytes: byDefault(
      DEFAULT_SEND_MAX_BYTES,
      int(1)
        .max(16 * DEFAULT_SEND_MAX_BYTES)
        .optional()
        .describe(`Most output bytes returned (default ${DEFAULT_SEND_MAX_BYTES}; the end is kept).`),
    ),
    ...cursorsParam,
  }),
  result: z.object({
    output: z.string(),
    waitReason: sendWaitReason,
    status: sessionStatus,
    truncated: z
      .boolean()
      .describe(
        'True when output lost its start: cut at maxBytes (its end kept), or its first rows had left the scrollback. (Over MCP, what maxChars leaves out is counted by elidedChars; truncated stays false when nothing was cut before that budget.)',
      ),
    waitedMs: z.number(),
    exitCode: z.number().nullable().optional().describe('With shell integration, once the command finished: its exit code.'),
    command: commandRecord.optional().describe('With shell integration: the (last) command the send ran, finished or still running.'),
    ...outputCursorFields(),
  }),
  // Nothing can be typed into an exited session: refused as pty/write is (a program that ends
  // during the send is its session_exit). A send that types nothing only waits on: on an ended
  // session it answers at once that the session ended (a task that waited for the person).
  needsRunning: (p) => !(p.text === '' && p.submit === false),
  async handler(ctx, p) {
    // The call's whole wait (the user's answer, their pause, the outcome) is within its timeout and in waitedMs.
    const since = Date.now();
    const session = requireSession(ctx);
    // The human's pause is waited for within the call's own timeout (docs/protocol.md#typing-arbitration).
    const timeout = p.timeout ?? DEFAULT_SEND_TIMEOUT_MS;
    const typing = agentCall(ctx.services, session, ctx.caller);
    try {
      // What the user approves is what will be typed, Enter included.
      const typed = p.text + (p.submit === false ? '' : '\r');
      const { from } = await admitWrite(ctx.services, session, ctx.caller, typed, { askMs: timeout, pauseMs: timeout }, ctx);
      // The send waits (for the first prompt, for the screen) before it types: the human may start a line meanwhile, never typed into.
      // A send that types nothing (it only waits on: a task waiting for the person) types over no one: it is not held.
      const sent =
        typed === ''
          ? await send(session, { ...p, timeout, since }, from, ctx.signal)
          : await whenHumanPaused(session, from, since + timeout, ctx.signal, (guard) =>
              send(session, { ...p, timeout, since, beforeWrite: guard }, from, ctx.signal),
            );
      return withCursorsIf(sent, p.cursors);
    } finally {
      typing.dispose();
    }
  },
  mcp: {
    tool: 'send',
    // It types into a shell, or starts a program: anything may follow.
    destructive: true,
    openWorld: true,
    title: 'Run a command',
    app: 'shows',
    description:
      "Type text into the terminal and press Enter (submit:false to type without Enter), then wait until the program is ready for input again, and return what it printed as rendered on screen. Use this for shell commands and REPL lines. waitReason says why it returned: command_done = the shell reports the command finished (exitCode has its exit status; shells with integration); stdin_read = the program waits for input (done, or a command asks for input); secret_input = it asks for a password or passphrase, which only the user may type (ask them; do not send it); user_input = the user typed into the terminal meanwhile (look at read_screen before going on); inferred_idle = no output for idleMs (state unknown); timeout = still running (use read_screen / wait_for later, or signal SIGINT); session_exit = the program ended. If truncated, the line after the output says what was not kept and where the rest is. Output longer than maxChars (default 20000) keeps its head and tail; the line between says where the rest is (read_scrollback, read_output, or read_command_output for a command's whole output). For keys like Ctrl+C, arrows or q use send_keys instead.",
    // Nothing is cut before the budget: the rows are returned up to the most a send returns, and
    // where what it saw is in the ring (cursors), for output whose rows lost their start.
    // maxChars is the agent's size of the answer (the budget); maxBytes is not an argument.
    defaults: { maxBytes: MCP_OUTPUT_BYTES },
    omit: ['cursors', 'maxBytes'],
    fixed: { cursors: true },
    budget: waitedOutputBudget,
    text: (r, a, call) => outcomeText(r, a, call),
  },
});

/** The line after a waiting call's output that says why it returned, and what to do next. */
async function outcomeText(r: SendResult, a: Record<string, unknown>, call: TableCall): Promise<string> {
  const tail = [`[waitReason: ${r.waitReason}`];
  if (r.exitCode !== undefined && r.exitCode !== null) tail.push(`exit code ${r.exitCode}`);
  tail.push(r.status.kind === 'exited' ? `session exited with ${r.status.exitCode}` : 'running');
  if (r.truncated) tail.push(await truncationNote(r, a, call));
  if (r.waitReason === 'secret_input') tail.push('the program asks for a secret: ask the user to type it in the terminal');
  if (r.waitReason === 'user_input') tail.push('the user typed into the terminal meanwhile: read the screen before going on');
  return `${r.output}\n${tail.join('; ')}]`;
}

export const signalMethod = method({
  name: 'pty/signal',
  target: 'session',
  scope: 'control',
  summary:
    "Send a signal to the terminal's foreground process group (Ctrl+C even when the program ignores the key); with wait, then wait as pty/send does and answer with the outcome too (the interrupted command's exit code, the screen after it).",
  params: z.object({ signal: signalName, ...waitParams(DEFAULT_SIGNAL_TIMEOUT_MS), ...cursorsParam }),
  result: z.object({ signal: z.string(), pgid: z.number(), ...outcomeFields() }),
  needsRunning: true,
  async handler(ctx, p) {
    const session = requireSession(ctx);
    if (!p.wait) return { signal: p.signal, pgid: signalForegroundGroup(session.pid, p.signal).pgid };
    // The command it interrupts ends after the call began: the outcome names it, with its exit code.
    let pgid = 0;
    const act = () => (pgid = signalForegroundGroup(session.pid, p.signal).pgid);
    const outcome = await outcomeOf(
      session,
      act,
      { timeout: p.timeout ?? DEFAULT_SIGNAL_TIMEOUT_MS, idleMs: p.idleMs, maxBytes: p.maxBytes, actsOnRunning: true },
      ctx.caller,
      ctx.signal,
    );
    return { signal: p.signal, pgid, ...withCursorsIf(outcome, p.cursors) };
  },
  mcp: {
    tool: 'signal',
    title: 'Signal the foreground program',
    description:
      'Send a signal to the program in the foreground of the terminal: SIGINT is Ctrl+C (stop a running command), SIGTSTP suspends, SIGCONT resumes, SIGTERM/SIGKILL end it. Works even when the program ignores the Ctrl+C key. Then waits as send does (up to timeout, default 5000 ms) until the interrupted command has finished, the program waits for input, or the session exits, and returns the outcome as send does: output (what appeared after the signal), waitReason, exitCode (130 for SIGINT in bash) and the command.',
    destructive: true,
    omit: ['wait', 'maxBytes', 'cursors'],
    // With the output cursors, as send's: where what it saw is in the ring.
    fixed: { wait: true, cursors: true },
    defaults: { maxBytes: MCP_OUTPUT_BYTES },
    // As send_keys' with wait: what appeared after the signal, counted from the ring (the command
    // it interrupts began before the call), not the screen rows, which may start before it.
    budget: waitedOutputBudget,
    text: async (r, a, call) => `Sent ${r.signal} to process group ${r.pgid}.\n${await outcomeText(r as SendResult, a, call)}`,
  },
});

export const resizeMethod = method({
  name: 'pty/resize',
  target: 'session',
  scope: 'input',
  summary: 'Resize the terminal.',
  params: z.object({ cols: cols(), rows: rows() }),
  result: z.object({}),
  needsRunning: true,
  handler(ctx, p) {
    const size = inSize(p);
    requireSession(ctx).resize(size.cols, size.rows);
    return {};
  },
  mcp: {
    tool: 'resize',
    title: 'Resize the terminal',
    description: 'Change the terminal size in columns and rows.',
    output: { schema: z.object({ cols: z.number(), rows: z.number() }), fromResult: (_r, a) => inSize({ cols: a.cols as number, rows: a.rows as number }) },
    text: (_r, a) => {
      const size = inSize({ cols: a.cols as number, rows: a.rows as number });
      return `Resized to ${size.cols}x${size.rows}.`;
    },
  },
  rest: {
    verb: 'POST',
    path: '/sessions/:id/resize',
    from: 'body',
    // The SessionInfo of pty-session-mcp's shape, as every REST answer gives it (without pty/info's lastInput and agentApproval).
    respond: async (_r, route) => {
      const {
        lastInput: _who,
        agentApproval: _policy,
        ...info
      } = (await route.call('pty/info', { session: route.id })) as { lastInput: unknown; agentApproval: unknown } & Record<string, unknown>;
      return info;
    },
  },
});
