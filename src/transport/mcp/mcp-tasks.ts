import { setTimeout as delay } from 'node:timers/promises';
import {
  CLIENT_CAPABILITIES_META_KEY,
  PROTOCOL_VERSION_META_KEY,
  inputRequired,
  ProtocolError,
  type InputRequiredResult,
  type McpServer,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { z } from 'zod';
import { ErrorCode, mcpErrorText, RpcError } from '../../core/base/errors';
import { DEFAULT_MAX_CHARS } from '../../core/io/output-budget';
import { MAX_WAIT_MS } from '../../core/base/param-limits';
import { sendMethod } from '../../core/methods/input-methods';
import type { PersonPrompt } from './mcp-elicit';
import { offerSecretPage } from './secret-offer';
import { type RunPrompt, type RunStore, type ToolCallResult, type ToolRun } from './tool-run';

// MCP Tasks whose status is the program's (docs/protocol.md#tasks-and-input-rounds), and the
// 2026-07-28 multi-round-trip requests that ask the person in the middle of a tool call.

/** The Tasks extension of the 2026-07-28 revision. */
export const TASKS_EXTENSION_ID = 'io.modelcontextprotocol/tasks';

/** The tools that may wait long enough to be worth a task: the ones that wait for the program. */
export const TASK_TOOLS: ReadonlySet<string> = new Set(['send', 'wait_for', 'wait_event', 'signal', 'send_keys']);

/**
 * How often a client should poll a task: the program's state is read every 25 ms while a send
 * waits, but a person answering a prompt is the usual wait, and a second is quick for a person.
 */
const POLL_INTERVAL_MS = 1000;

/** How often a task looks whether the person has typed the secret the program asked for. */
const SECRET_CHECK_MS = 250;
/** How long a task waits for the person to type a secret: as long as the secret page lives (5 minutes). */
const SECRET_WAIT_MS = 5 * 60_000;

/** What a task needs of the server: how to run a tool (as one call does) and how to reach sessions. */
export interface TaskTools {
  /** Runs the named tool once, as tools/call does, asking through `prompt`. */
  call(name: string, args: Record<string, unknown>, prompt: PersonPrompt, signal: AbortSignal): Promise<ToolCallResult>;
  /** A method of the table (pty/info, pty/secretPage). */
  method(method: string, params: Record<string, unknown>, signal: AbortSignal): Promise<unknown>;
}

/** Whether the request is of the 2026-07-28 revision (its revision in its `_meta`). */
export function isModern(ctx: ServerContext): boolean {
  return (ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[PROTOCOL_VERSION_META_KEY] !== undefined;
}

/**
 * The `tasks` capability of the 2025-11-25 revision: tasks of `tools/call`, listed and cancelled.
 * The SDK leaves it out of what a 2026-07-28 client is told (that revision moved Tasks to the
 * extension).
 */
export const LEGACY_TASKS_CAPABILITY = { list: {}, cancel: {}, requests: { tools: { call: {} } } };

/** Where the 2025-11-25 revision names the task a message belongs to (its `_meta`). */
const RELATED_TASK_KEY = 'io.modelcontextprotocol/related-task';

/** What a client declared it can answer, in the request's `_meta` (2026-07-28). */
export interface Declared {
  form: boolean;
  url: boolean;
  tasks: boolean;
}

/** What the client of a 2026-07-28 request declared in its `_meta`. */
export function declaredBy(ctx: ServerContext): Declared {
  const caps = (ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[CLIENT_CAPABILITIES_META_KEY] as
    { elicitation?: { form?: object; url?: object }; extensions?: Record<string, unknown> } | undefined;
  const e = caps?.elicitation;
  return {
    form: e !== undefined && (e.form !== undefined || Object.keys(e).length === 0),
    url: e?.url !== undefined,
    tasks: caps?.extensions?.[TASKS_EXTENSION_ID] !== undefined,
  };
}

/** What a task's work can ask of its client (what it declared), and how it says it waits for input given elsewhere. */
export type TaskPrompt = PersonPrompt & { askText?: RunPrompt['askText']; awaitInput?: RunPrompt['awaitInput'] };

/** The run's prompt cut to what the client can answer: a question it cannot take is not put. */
export function within(prompt: RunPrompt, can: Declared): TaskPrompt {
  return {
    openUrl: can.url ? prompt.openUrl : undefined,
    choose: can.form ? prompt.choose : undefined,
    askText: can.form ? prompt.askText : undefined,
    awaitInput: prompt.awaitInput,
  };
}

/** What both revisions say of a run; they name its lifetime and poll interval differently. */
function runFields(run: ToolRun): Record<string, unknown> {
  return {
    taskId: run.id,
    status: run.status,
    ...(run.statusMessage ? { statusMessage: run.statusMessage } : {}),
    createdAt: run.createdAt.toISOString(),
    lastUpdatedAt: run.lastUpdatedAt.toISOString(),
  };
}

/** The task fields every answer about a run carries. */
function taskOf(run: ToolRun): Record<string, unknown> {
  return { ...runFields(run), ttlMs: run.ttlMs, pollIntervalMs: POLL_INTERVAL_MS };
}

/** The task with what its status carries: the questions, the result, or the error (2026-07-28). */
export function detailedTask(run: ToolRun): Record<string, unknown> {
  const task = taskOf(run);
  if (run.status === 'input_required') return { ...task, inputRequests: run.inputRequests };
  // The result as the tools/call of this revision would have answered it, discriminator included.
  if (run.status === 'completed') return { ...task, result: { ...run.result, resultType: 'complete' } };
  if (run.status === 'failed') return { ...task, error: run.error };
  return task;
}

/**
 * The task as the 2025-11-25 revision shows it (`ttl`: the one granted, and `pollInterval`; no
 * questions in it). That revision counts a tool call whose result has `isError` as `failed` (its
 * result, the tool error, is still what tasks/result answers); 2026-07-28 counts it `completed`.
 */
export function legacyTask(run: ToolRun): Record<string, unknown> {
  const fields = { ...runFields(run), ttl: run.ttlMs, pollInterval: POLL_INTERVAL_MS };
  if (run.status !== 'completed' || run.result?.isError !== true) return fields;
  const text = (run.result.content as Array<{ type?: string; text?: string }> | undefined)?.find((c) => c.type === 'text')?.text;
  return { ...fields, status: 'failed', ...(text ? { statusMessage: text } : {}) };
}

/** What a 2025-11-25 client that initialized its connection declared it can answer (none known: nothing). */
export function declaredAtInitialize(server: McpServer): Declared {
  const e = server.server.getClientCapabilities()?.elicitation as { form?: object; url?: object } | undefined;
  return { form: e !== undefined && (e.form !== undefined || Object.keys(e).length === 0), url: e?.url !== undefined, tasks: true };
}

/** The answer to a tools/call that became a task (2026-07-28: `resultType: "task"`). */
export function createTaskResult(run: ToolRun): ToolCallResult {
  // content: the SDK's tools/call seam adds an empty one to a result without; said here so it is ours.
  return { resultType: 'task', ...taskOf(run), content: [] };
}

/**
 * The answer to one round of a 2026-07-28 tools/call run apart from its request: once it is over,
 * its result; while it asks, `input_required` with its questions and the run's id as
 * `requestState`, for the client to retry with the answers.
 */
export async function roundOf(run: ToolRun, signal: AbortSignal): Promise<ToolCallResult | InputRequiredResult> {
  await run.settled(signal);
  if (run.status === 'input_required') return inputRequired({ inputRequests: run.inputRequests as never, requestState: run.id });
  if (run.status === 'completed' && run.result) return run.result;
  if (run.status === 'working') return toolError(ErrorCode.ServerError, 'The client went away before the call ended');
  return toolError(run.error?.code ?? ErrorCode.ServerError, run.error?.message ?? 'The call was cancelled');
}

function toolError(code: number, message: string): ToolCallResult {
  return { isError: true, content: [{ type: 'text', text: mcpErrorText(new RpcError(code, message)) }] };
}

/** The last line of the output that says something: what the program asks. */
function asked(output: unknown): string {
  const lines = String(output ?? '')
    .split('\n')
    .map((l) => l.trimEnd())
    .filter((l) => l.trim() !== '');
  return lines.at(-1) ?? '';
}

/** Whether the command a send ran is still running (with shell integration: it has not ended). */
function commandRuns(data: Record<string, unknown>): boolean {
  const command = data.command as { endCursor?: unknown; exitCode?: unknown } | undefined;
  return command !== undefined && (command.endCursor === null || command.endCursor === undefined) && data.exitCode === undefined;
}

/**
 * A task's work: the tool's call, then, while the program is not done, what it needs. At a prompt
 * for input (with shell integration: the command runs and reads the terminal) the client is asked
 * for the line and it is typed; at a password prompt the person is offered the secret page and the
 * task waits until they have typed it; a wait that timed out waits on. Each step is a call of its
 * own; the task's result is the last one's, with the command's record and exit code once it ended.
 */
export async function taskWork(
  tools: TaskTools,
  name: string,
  args: Record<string, unknown>,
  prompt: TaskPrompt,
  signal: AbortSignal,
): Promise<ToolCallResult> {
  const started = Date.now();
  const r = await followProgram(tools, name, args, prompt, signal);
  // Its steps each timed their own wait: the result's is the whole task's, the person's answers included.
  const data = r.structuredContent;
  if (typeof data?.waitedMs !== 'number') return r;
  return { ...r, structuredContent: { ...data, waitedMs: Date.now() - started } };
}

/** The tool's call, then each step the program needs (see taskWork); the last step's result. */
async function followProgram(tools: TaskTools, name: string, args: Record<string, unknown>, prompt: TaskPrompt, signal: AbortSignal): Promise<ToolCallResult> {
  if (WAITS_ONLY.has(name) && typeof args.session === 'string' && prompt.awaitInput)
    return whileWaiting(tools, args.session, prompt.awaitInput, () => tools.call(name, args, prompt, signal), signal);
  let r = await tools.call(name, args, prompt, signal);
  const session = args.session;
  // Only the tools that type and wait as send does have a program to follow.
  if (!['send', 'send_keys', 'signal'].includes(name) || typeof session !== 'string') return r;
  const timeout = typeof args.timeout === 'number' ? args.timeout : undefined;
  // Waiting on types nothing: its answer says what the program did meanwhile.
  const maxChars = typeof args.maxChars === 'number' ? args.maxChars : undefined;
  const goOn = async () =>
    withCommand(
      tools,
      session,
      await tools.call('send', { session, text: '', submit: false, ...(timeout ? { timeout } : {}), ...(maxChars ? { maxChars } : {}) }, prompt, signal),
      commandId,
      signal,
      maxChars,
    );
  let commandId: number | undefined;
  // Whether the command the task ran still runs: its result says so, or a wait that typed nothing
  // (which sees no command of its own) did not find it ended (withCommand).
  const stillRuns = (data: Record<string, unknown>) =>
    commandRuns(data) || (data.command === undefined && commandId !== undefined && (data.status as { kind?: unknown } | undefined)?.kind === 'running');
  for (;;) {
    const data = r.structuredContent;
    if (signal.aborted || r.isError || !data) return r;
    commandId ??= (data.command as { id?: number } | undefined)?.id;
    const reading = data.waitReason === 'stdin_read' && stillRuns(data);
    if (reading && prompt.askText) {
      const line = await prompt.askText(
        `The program in the terminal waits for input: ${asked(data.output) || '(no prompt shown)'}\nWhat should be typed? (Enter is pressed after it.)`,
        signal,
      );
      if (line === undefined) return r;
      // Its answer's wait sees the command's end, not its start: the result is the command's whole output.
      const answered = await tools.call('send', { session, text: line, ...(timeout ? { timeout } : {}), ...(maxChars ? { maxChars } : {}) }, prompt, signal);
      r = await withCommand(tools, session, answered, commandId, signal, maxChars);
    } else if (reading && prompt.awaitInput && typeof data.cursor === 'number' && commandId !== undefined) {
      // A client that cannot be asked: the answer is typed by the agent's next call or the person.
      r = await answeredElsewhere(tools, session, r, commandId, prompt.awaitInput, goOn, maxChars, signal);
      // The person typing the answer in the terminal is the input awaited: the task waits on.
      while (!signal.aborted && !r.isError && r.structuredContent?.waitReason === 'user_input') r = await goOnWhenFree(goOn, signal);
    } else if (data.waitReason === 'secret_input' && !prompt.openUrl && prompt.awaitInput) {
      // No page to offer: only the person types a secret, in the terminal; the task waits for it.
      const typed = await awaitingInput(prompt.awaitInput, secretElsewhere(asked(data.output)), () => secretTyped(tools, session, signal, Infinity));
      if (!typed) return r;
      r = await goOnWhenFree(goOn, signal);
    } else if (data.waitReason === 'timeout') {
      // (A password prompt was offered to the person by the call itself: throughSecretPage.)
      r = await goOn();
    } else return r;
  }
}

/** The tools that only wait (they type nothing): while one runs as a task, the task follows the session's input waits. */
const WAITS_ONLY: ReadonlySet<string> = new Set(['wait_for', 'wait_event']);

/**
 * How often a task whose call only waits looks at the session's input waits when nothing woke it:
 * the host sees a wait 100 ms after the output goes quiet, and tells a wait that began before a
 * pty/waitEvent only to a look at its events (below); clients poll a task every second.
 */
const INPUT_LOOK_MS = 500;
/** How many of the host's latest events a task looks back over for a wait already up when it starts. */
const EVENTS_LOOKBACK = 256;
/** The events that say whether the program waits for input: the last of them is where it stands. */
const WAIT_EVENTS: ReadonlySet<string> = new Set(['input_wait', 'secret_input', 'command_started', 'command_finished']);

/** An event of the session, as pty/events and pty/waitEvent give it (the fields read here). */
interface SeenEvent {
  seq: number;
  at: string;
  type: string;
}

/** What pty/info says that a task following input waits reads. */
interface InfoNow {
  running: boolean;
  secretInput: boolean;
  integration: boolean;
  lastInput: { at: string } | null;
}

/**
 * A call that only waits (`wait_for`, `wait_event`), run as it is, its result unchanged. While it
 * runs, the task is `input_required` (awaitInput) whenever the program in the session waits for
 * input (with shell integration: a command that runs; without: any wait) or asks for a secret,
 * and `working` again once its output moves on (or the secret is typed). Nothing is typed and no
 * send is held: the agent types the answer with send or send_keys, or the person in the terminal.
 */
async function whileWaiting(
  tools: TaskTools,
  session: string,
  awaitInput: RunPrompt['awaitInput'],
  call: () => Promise<ToolCallResult>,
  signal: AbortSignal,
): Promise<ToolCallResult> {
  const over = new AbortController();
  const stop = () => over.abort();
  signal.addEventListener('abort', stop, { once: true });
  const following = followInputWaits(tools, session, awaitInput, over.signal);
  try {
    return await call();
  } finally {
    signal.removeEventListener('abort', stop);
    stop();
    await following;
  }
}

/**
 * Says the task waits for input (awaitInput) while the program in `session` does, until `signal`
 * aborts. Where it stands is read from the session's events (pty/events: the last of WAIT_EVENTS;
 * a wait that began before the look is in them too, which pty/waitEvent leaves out), pty/info (a
 * secret prompt: `secretInput`; who typed last) and pty/commands (with integration: does a command
 * run?). A wait holds from its `input_wait` until someone types or the output moves on from where
 * it was when the wait was seen. Between looks it sleeps on pty/waitEvent (woken by a new wait) or,
 * while a wait holds, on pty/output (woken by the output moving on).
 */
async function followInputWaits(tools: TaskTools, session: string, awaitInput: RunPrompt['awaitInput'], signal: AbortSignal): Promise<void> {
  const ask = (m: string, p: Record<string, unknown> = {}) => tools.method(m, { session, ...p }, signal);
  let said: { key: string; release: () => void } | undefined;
  const say = (key: string, message: () => Promise<string>) =>
    said?.key === key
      ? Promise.resolve()
      : message().then((m) => {
          said?.release();
          said = signal.aborted ? undefined : { key, release: awaitInput(m) };
        });
  const unsay = () => {
    said?.release();
    said = undefined;
  };
  const promptLine = async () => asked(((await ask('pty/read')) as { screen: string }).screen);
  try {
    // The events from a little before the call began, so a wait already up is seen.
    let since = Math.max(0, ((await ask('pty/events')) as { seq: number }).seq - EVENTS_LOOKBACK);
    let last: SeenEvent | undefined;
    // The input wait seen and the output cursor then; a wait the output has moved on from (its seq).
    let seen: { seq: number; cursor: number } | undefined;
    let passed = -1;
    while (!signal.aborted) {
      const info = (await ask('pty/info')) as InfoNow;
      if (!info.running) return;
      const told = (await ask('pty/events', { since })) as { seq: number; events?: SeenEvent[] };
      for (const e of told.events ?? []) if (WAIT_EVENTS.has(e.type)) last = e;
      since = told.seq;
      if (info.secretInput) {
        await say('secret', async () => secretElsewhere(await promptLine()));
        // (Aborted, it throws: the follow is over.)
        await delay(SECRET_CHECK_MS, undefined, { signal });
        continue;
      }
      const wait = last?.type === 'input_wait' && last.seq !== passed ? last : undefined;
      // Someone typed since the wait was seen (the answer, or its first keys), or the shell waits
      // at its prompt with no command running: no wait of a command's holds.
      const holds =
        wait !== undefined && !(info.lastInput && Date.parse(info.lastInput.at) > Date.parse(wait.at)) && (!info.integration || (await commandRunning(ask)));
      if (!holds) {
        if (wait) passed = wait.seq;
        unsay();
        await ask('pty/waitEvent', { types: ['input_wait', 'secret_input'], timeoutMs: INPUT_LOOK_MS });
        continue;
      }
      if (seen?.seq !== wait.seq) seen = { seq: wait.seq, cursor: await endCursor(ask) };
      await say(`input-${wait.seq}`, async () => typeElsewhere(session, (await promptLine()) || '(no prompt shown)'));
      const out = (await ask('pty/output', { since: seen.cursor, waitMs: INPUT_LOOK_MS, maxBytes: 1 })) as { cursor: number };
      if (out.cursor > seen.cursor) passed = wait.seq;
    }
  } catch {
    // The session is gone, or the call is over: nothing more to follow.
  } finally {
    unsay();
  }
}

/** Whether the newest command of the shell (shell integration) still runs. */
async function commandRunning(ask: (m: string, p?: Record<string, unknown>) => Promise<unknown>): Promise<boolean> {
  const { commands } = (await ask('pty/commands', { limit: 1 })) as { commands: Array<{ endCursor: number | null }> };
  return commands.length > 0 && commands[0].endCursor === null;
}

/** The session's output cursor now (a cursor past the end is answered with the end). */
async function endCursor(ask: (m: string, p?: Record<string, unknown>) => Promise<unknown>): Promise<number> {
  return ((await ask('pty/output', { since: Number.MAX_SAFE_INTEGER, maxBytes: 0 })) as { cursor: number }).cursor;
}

/** The tools whose calls type and wait as send does: they may end at a password prompt. */
const FOLLOWS_PROGRAM: ReadonlySet<string> = new Set(['send', 'send_keys', 'signal']);

/**
 * A call that ended at a password prompt (`secret_input`), for a client that can open a URL
 * (docs/protocol.md#secret-pages): the person is asked to open the one-time secret page; once they
 * have typed the secret there, the call waits on as it began and answers what the program did
 * next (the command's record, exit code and output once it ended; a prompt that asks again is
 * offered again). Not opened: the answer says so. Any other result is returned as it is.
 */
export async function throughSecretPage(
  tools: TaskTools,
  name: string,
  args: Record<string, unknown>,
  r: ToolCallResult,
  prompt: PersonPrompt,
  signal: AbortSignal,
): Promise<ToolCallResult> {
  const data = r.structuredContent;
  const session = args.session;
  if (!FOLLOWS_PROGRAM.has(name) || !prompt.openUrl || r.isError || data?.waitReason !== 'secret_input' || typeof session !== 'string') return r;
  const offer = await offerSecretPage({ call: (m, p) => tools.method(m, p, signal) }, prompt, session, asked(data.output) || undefined);
  if (!/and opened it/.test(offer)) return { ...r, content: [{ type: 'text', text: `${r.content.map((c) => c.text).join('')}${offer}` }] };
  // A task still waits for input while the person types the secret on the page.
  const onPage = `The person opened the secret page; the program asks for the secret${asked(data.output) ? `: ${asked(data.output)}` : ''}. The task goes on once it is typed.`;
  if (!(await awaitingInput((prompt as TaskPrompt).awaitInput, onPage, () => secretTyped(tools, session, signal)))) return r;
  const timeout = typeof args.timeout === 'number' ? args.timeout : undefined;
  const maxChars = typeof args.maxChars === 'number' ? args.maxChars : undefined;
  // Waiting on types nothing: its answer says what the program did once the secret was typed.
  const on = await tools.call('send', { session, text: '', submit: false, ...(timeout ? { timeout } : {}), ...(maxChars ? { maxChars } : {}) }, prompt, signal);
  return withCommand(tools, session, on, (data.command as { id?: number } | undefined)?.id, signal, maxChars);
}

/**
 * A wait that typed nothing sees no command start of its own, and of an end only what came after
 * it began: when the command the task ran has ended, before or during it, the result is that
 * command's, with its record, exit code and whole output (from its log, within the budget as send
 * keeps it: head, tail, exact counts; with echo off the secret was never in it).
 */
async function withCommand(
  tools: TaskTools,
  session: string,
  r: ToolCallResult,
  commandId: number | undefined,
  signal: AbortSignal,
  maxChars: number | undefined,
): Promise<ToolCallResult> {
  const data = r.structuredContent;
  if (commandId === undefined || !data || !sawOnlyTail(data, commandId)) return r;
  try {
    const { commands } = (await tools.method('pty/commands', { session }, signal)) as {
      commands: Array<{ id: number; exitCode: number | null; startCursor: number; endCursor: number | null }>;
    };
    const command = commands.find((c) => c.id === commandId);
    if (!command) return r;
    // Still running: the result names it, as a send's names the command it ran.
    if (command.endCursor === null) return data.command === undefined ? { ...r, structuredContent: { ...data, command } } : r;
    // The rows of the wait are not the command's output: its whole output is budgeted, as send does.
    const whole = await sendMethod.mcp!.budget!.whole!(
      { output: '', truncated: true, command, since: command.startCursor, cursor: command.endCursor } as never,
      { session },
      (m, p) => tools.method(m, p, signal),
      maxChars ?? DEFAULT_MAX_CHARS,
    );
    if (!whole) return r;
    const output = whole.text.trimEnd(); // (not /\s+$/: it backtracks on a long run of spaces)
    const status = await statusNow(tools, session, data.status, signal, command.endCursor);
    const exit = command.exitCode === null ? '' : `; exit code ${command.exitCode}`;
    return {
      content: [{ type: 'text', text: `${output}\n[waitReason: command_done${exit}; the command's output, from its log]` }],
      structuredContent: {
        ...data,
        ...whole.fields,
        output,
        waitReason: 'command_done',
        status,
        command,
        exitCode: command.exitCode,
        totalChars: whole.totalChars,
        elidedChars: whole.elidedChars,
        since: command.startCursor,
        cursor: command.endCursor,
      },
    };
  } catch {
    return r; // the session or its log went away: what the wait saw is what there is
  }
}

/**
 * The session's status now, for a result built from the log, which would otherwise say what an
 * older wait saw (a command that ended the shell: `exit 7`).
 */
async function statusNow(tools: TaskTools, session: string, seen: unknown, signal: AbortSignal, commandEnd: number | null): Promise<unknown> {
  if ((seen as { kind?: unknown } | undefined)?.kind !== 'running') return seen;
  // The shell reports the command's end a moment before it exits (`exit 7`): until it prints
  // anything after the command (its next prompt), it may be on its way out.
  for (const until = Date.now() + SHELL_EXIT_SEEN_WITHIN_MS; ;) {
    const now = (await tools.method('pty/status', { session }, signal)) as { running: boolean };
    if (!now.running) break;
    if (commandEnd === null || Date.now() >= until) return seen;
    const after = (await tools.method('pty/output', { session, since: commandEnd, maxBytes: 1 }, signal)) as { cursor: number };
    if (after.cursor > commandEnd) return seen;
    await new Promise((resolve) => setTimeout(resolve, SHELL_EXIT_CHECK_MS));
  }
  // An exited session's send that types nothing answers at once, with how it ended (its signal too).
  const ended = await tools.call('send', { session, text: '', submit: false }, {}, signal);
  return ended.structuredContent?.status ?? seen;
}

/** How long a shell that printed nothing after its command's end may take to be seen exited, and how often it is looked at. */
const SHELL_EXIT_SEEN_WITHIN_MS = 1000;
const SHELL_EXIT_CHECK_MS = 25;

/** Whether a wait's result lacks the start of the task's command: it names none, or saw it end after it began. */
function sawOnlyTail(data: Record<string, unknown>, commandId: number): boolean {
  const seen = data.command as { id?: unknown; startCursor?: unknown } | undefined;
  if (seen === undefined) return true;
  return seen.id === commandId && typeof data.since === 'number' && typeof seen.startCursor === 'number' && data.since > seen.startCursor;
}

/** Waits until the program no longer asks for the secret (the person typed it), the session ended or `forMs` passed (the page's life). */
async function secretTyped(tools: TaskTools, session: string, signal: AbortSignal, forMs = SECRET_WAIT_MS): Promise<boolean> {
  const until = Date.now() + forMs;
  while (!signal.aborted && Date.now() < until) {
    const info = (await tools.method('pty/info', { session }, signal)) as { running?: boolean; secretInput?: boolean };
    if (!info.running || !info.secretInput) return true;
    await new Promise((resolve) => setTimeout(resolve, SECRET_CHECK_MS));
  }
  return false;
}

/** How long one look for output waits while a task waits for input given elsewhere (then it looks whether the session still runs). */
const ELSEWHERE_LOOK_MS = 5000;
/** How long a task waits before it looks again when another call's send holds the session (one send at a time). */
const BUSY_RETRY_MS = 250;

/** The task's status message while a line is awaited from the agent's next call or the person. */
function typeElsewhere(session: string, prompted: string): string {
  return (
    `The program in the terminal waits for input: ${prompted}\n` +
    `Type the answer into session ${session} (send, or send_keys), or the person types it in the terminal (an agent's write waits while they type); the task goes on once the program has it.`
  );
}

/** The task's status message while the person is to type a secret in the terminal. */
function secretElsewhere(prompted: string): string {
  return (
    `The program in the terminal asks for a secret${prompted ? `: ${prompted}` : ''}\n` +
    'Only the person types it, in the terminal (an agent never handles a secret); the task goes on once it is typed.'
  );
}

/** Runs `work` while the task says it waits for input (`input_required`, `message`); a call that is no task runs it as it is. */
async function awaitingInput<T>(awaitInput: RunPrompt['awaitInput'] | undefined, message: string, work: () => Promise<T>): Promise<T> {
  const release = awaitInput?.(message);
  try {
    return await work();
  } finally {
    release?.();
  }
}

/**
 * Waits until the program's output moves on from `since`, where the wait that met the prompt ended
 * (the answer's echo, what the program did next), or the session ends (then: its exit event). It
 * holds no send: the agent's `send` of the answer is not refused as busy.
 */
async function outputMovesOn(tools: TaskTools, session: string, since: number, signal: AbortSignal): Promise<ExitEvent | undefined> {
  // The session's end as its exit event tells it (exit code and signal): a session closed meanwhile
  // is gone before anything else could be asked of it.
  const stop = new AbortController();
  const stopIt = () => stop.abort();
  signal.addEventListener('abort', stopIt, { once: true });
  const exit = tools.method('pty/waitEvent', { session, types: ['exit'], timeoutMs: MAX_WAIT_MS }, stop.signal).then(
    (r) => (r as { event: ExitEvent | null }).event ?? undefined,
    () => undefined,
  );
  try {
    let from = since;
    while (!signal.aborted) {
      const out = (await tools.method('pty/output', { session, since: from, waitMs: ELSEWHERE_LOOK_MS, maxBytes: 1 }, signal)) as {
        cursor: number;
        running: boolean;
      };
      if (!out.running) return await Promise.race([exit, new Promise<undefined>((resolve) => setTimeout(resolve, EXIT_TOLD_MS))]);
      if (out.cursor > from) return undefined;
      from = out.cursor;
    }
    return undefined;
  } finally {
    signal.removeEventListener('abort', stopIt);
    stopIt();
  }
}

/** A session's exit event: its exit code and the signal that ended it. */
interface ExitEvent {
  type: 'exit';
  exitCode: number | null;
  signal?: string | null;
}

/** How long a task waits for the exit event of a session it saw end. */
const EXIT_TOLD_MS = 2000;

/**
 * The result of a task whose session ended while it waited for input, when the session is gone
 * too (closed: nothing more can be asked of it): the last output, and how it ended.
 */
function endedWhileWaiting(data: Record<string, unknown>, exit: ExitEvent): ToolCallResult {
  const status = { kind: 'exited', exitCode: exit.exitCode, signal: exit.signal ?? null };
  const output = String(data.output ?? '');
  return {
    content: [
      { type: 'text', text: `${output}\n[waitReason: session_exit; session exited with ${exit.exitCode}; it was closed while the task waited for input]` },
    ],
    structuredContent: { ...data, waitReason: 'session_exit', status, command: undefined, exitCode: undefined },
  };
}

/** How long a task that saw the program's output move on waits to be told its state by an event before it looks as a send does. */
const STATE_TOLD_MS = 1000;

/**
 * A prompt whose answer is typed elsewhere (the agent's next call, or the person): the task says
 * it waits for input until the program's output moves on, then follows the program by its events,
 * holding no send, so the agent's send of the answer, or of its next command, is never refused as
 * busy. At the next prompt it waits again; once the command has ended, the result is the
 * command's. Any other state (a password prompt, the session's end, nothing told within a second)
 * is looked at as a send does (`goOn`).
 */
async function answeredElsewhere(
  tools: TaskTools,
  session: string,
  r: ToolCallResult,
  commandId: number,
  awaitInput: RunPrompt['awaitInput'],
  goOn: () => Promise<ToolCallResult>,
  maxChars: number | undefined,
  signal: AbortSignal,
): Promise<ToolCallResult> {
  const data = r.structuredContent!;
  let cursor = data.cursor as number;
  let prompted = asked(data.output);
  for (;;) {
    const waiting = typeElsewhere(session, prompted || '(no prompt shown)');
    const exited = await awaitingInput(awaitInput, waiting, () => outputMovesOn(tools, session, cursor, signal));
    if (signal.aborted) return r;
    if (exited) {
      // An exited session stays to be read (its send answers session_exit); a closed one is gone.
      const last = await goOnWhenFree(goOn, signal);
      return last.isError ? endedWhileWaiting(data, exited) : last;
    }
    const types = ['input_wait', 'secret_input', 'command_finished', 'exit'];
    const { event } = (await tools.method('pty/waitEvent', { session, types, timeoutMs: STATE_TOLD_MS }, signal)) as { event: { type: string } | null };
    if (event?.type === 'input_wait' || event?.type === 'command_finished') {
      // A wait that saw nothing: the command's result from its log, once it has ended.
      const ended = await withCommand(tools, session, { content: [], structuredContent: { ...data, command: undefined } }, commandId, signal, maxChars);
      if (ended.structuredContent?.waitReason === 'command_done') return ended;
      if (event.type === 'input_wait') {
        // The command still runs and reads again: the next prompt.
        const next = await outputAfter(tools, session, cursor, signal);
        cursor = next.cursor;
        prompted = asked(`${prompted}${next.text}`) || prompted;
        continue;
      }
    }
    return goOnWhenFree(goOn, signal);
  }
}

/** The output after `since` (escape sequences removed) and the cursor at its end. */
async function outputAfter(tools: TaskTools, session: string, since: number, signal: AbortSignal): Promise<{ text: string; cursor: number }> {
  let text = '';
  let cursor = since;
  // A few reads at most: a program that waits for input again has printed little since.
  for (let i = 0; i < 8; i++) {
    const out = (await tools.method('pty/output', { session, since: cursor, strip: true }, signal)) as { data: string; cursor: number };
    if (out.cursor <= cursor) break;
    text = (text + out.data).slice(-4096);
    cursor = out.cursor;
  }
  return { text, cursor };
}

/** The task's next wait, once no other call's send holds the session (the agent's answer may be one). */
async function goOnWhenFree(goOn: () => Promise<ToolCallResult>, signal: AbortSignal): Promise<ToolCallResult> {
  for (;;) {
    const r = await goOn();
    if (!r.isError || signal.aborted || !isBusy(r)) return r;
    await new Promise((resolve) => setTimeout(resolve, BUSY_RETRY_MS));
  }
}

/** Whether a tool error is the session's one send being taken. */
function isBusy(r: ToolCallResult): boolean {
  return r.content.some((c) => c.text.startsWith(`Error ${ErrorCode.SessionBusy}:`));
}

/** `-32602` for a task id that is unknown or dropped, as the specification says. */
function unknownTask(taskId: unknown): Error {
  return new ProtocolError(
    ErrorCode.InvalidParams,
    `Failed to retrieve task: no task ${JSON.stringify(taskId)} (unknown, or expired: a task is kept for its ttl after it was created)`,
  );
}

/** The code of an answer to a client that did not declare what the request needs (2026-07-28). */
const MISSING_CAPABILITY = -32021;

/** `-32021` for a client that did not declare the Tasks extension on its request. */
function missingCapability(): Error {
  return new ProtocolError(MISSING_CAPABILITY, 'Missing required client capability', { requiredCapabilities: { extensions: { [TASKS_EXTENSION_ID]: {} } } });
}

const taskIdParams = z.object({ taskId: z.string() }).passthrough();
const listParams = z.object({ cursor: z.string().optional() }).passthrough().optional();

/** `-32601` for a method the request's revision does not have. */
function notInRevision(method: string): Error {
  return new ProtocolError(ErrorCode.MethodNotFound, `Method not found: ${method} (not a method of this protocol revision's tasks)`);
}

/**
 * `tasks/result` of the 2025-11-25 revision: waits until the run is over, and meanwhile puts each
 * question of the run to the client as an `elicitation/create` of this request (the specification
 * routes a task's questions through it), its status changes as `notifications/tasks/status`. The
 * answer is what `tools/call` would have answered, naming the task in its `_meta`.
 */
async function legacyResult(run: ToolRun, ctx: ServerContext): Promise<unknown> {
  const related = { [RELATED_TASK_KEY]: { taskId: run.id } };
  const asked = new Set<string>();
  const signal = ctx.mcpReq.signal;
  const status = () => void ctx.mcpReq.notify({ method: 'notifications/tasks/status', params: legacyTask(run) } as never).catch(() => undefined);
  const stop = run.onChange(status);
  // Where the task stands now first (it may be waiting for input since before this request, or be over), then each change.
  status();
  try {
    while (!run.terminal && !signal.aborted) {
      for (const [key, request] of Object.entries(run.inputRequests)) {
        if (asked.has(key)) continue;
        asked.add(key);
        // URL mode names its elicitation by an id unique within the server: the question brings a
        // random one (ToolRun), never its key, which is unique only within its run.
        const params = { ...request.params, _meta: related };
        ctx.mcpReq.elicitInput(params as never, { signal, relatedRequestId: ctx.mcpReq.id }).then(
          (answer) => run.answer({ [key]: answer }),
          () => run.answer({ [key]: { action: 'cancel' } }),
        );
      }
      await new Promise<void>((resolve) => {
        const off = run.onChange(() => {
          off();
          resolve();
        });
        signal.addEventListener('abort', () => resolve(), { once: true });
      });
    }
  } finally {
    stop();
  }
  if (run.status === 'completed' && run.result) return { ...run.result, _meta: { ...(run.result._meta as object | undefined), ...related } };
  // An expired run is failed with the specification's -32602 for an expired task.
  if (run.status === 'failed') throw new ProtocolError(run.error?.code ?? ErrorCode.ServerError, run.error?.message ?? 'The task failed');
  if (run.status === 'cancelled') throw new ProtocolError(ErrorCode.InvalidParams, `Task ${run.id} was cancelled: it has no result`);
  throw new ProtocolError(ErrorCode.ServerError, 'The client went away before the task ended');
}

/**
 * `tasks/get`, `tasks/update` and `tasks/cancel` of the Tasks extension (2026-07-28) over `runs`.
 * A request must declare the extension in its `_meta` (-32021 otherwise); an unknown task id is
 * -32602. The task id is the key: it is random, and only the client that started the task got it;
 * a task is `owner`'s (the caller's token), and another token's is as unknown as none.
 */
export function registerTasks(server: McpServer, runs: RunStore, owner: object): void {
  registerLegacyTasks(server, runs, owner);
  const low = server.server;
  const set = low.setRequestHandler.bind(low) as unknown as (
    method: string,
    schemas: { params: z.ZodType },
    handler: (params: Record<string, unknown>, ctx: ServerContext) => Promise<unknown>,
  ) => void;
  const find = (params: Record<string, unknown>, ctx: ServerContext): ToolRun => {
    if (!isModern(ctx)) return legacyFind(runs, params, owner);
    if (!declaredBy(ctx).tasks) throw missingCapability();
    const run = runs.get(params.taskId, owner);
    if (!run) throw unknownTask(params.taskId);
    return run;
  };
  set('tasks/get', { params: taskIdParams }, async (params, ctx) => (isModern(ctx) ? detailedTask : legacyTask)(find(params, ctx)));
  // The SDK lifts `inputResponses` out of the params, as for a retried round: read where it puts them.
  set('tasks/update', { params: taskIdParams }, async (params, ctx) => {
    // 2025-11-25 has no tasks/update: its tasks ask through tasks/result.
    if (!isModern(ctx)) throw notInRevision('tasks/update');
    find(params, ctx).answer(ctx.mcpReq.inputResponses ?? (params.inputResponses as Record<string, unknown> | undefined));
    return {};
  });
  set('tasks/cancel', { params: taskIdParams }, async (params, ctx) => {
    const run = find(params, ctx);
    if (isModern(ctx)) {
      run.cancel();
      return {};
    }
    // 2025-11-25: a task already over cannot be cancelled (-32602), and the answer is the task.
    if (run.terminal) throw new ProtocolError(ErrorCode.InvalidParams, `Cannot cancel task ${run.id}: it is already ${run.status}`);
    run.cancel();
    return legacyTask(run);
  });
}

/** The run a 2025-11-25 request names (-32602 when unknown or another token's). */
function legacyFind(runs: RunStore, params: Record<string, unknown>, owner: object): ToolRun {
  const run = runs.get(params.taskId, owner);
  if (!run) throw unknownTask(params.taskId);
  return run;
}

/** `tasks/result` and `tasks/list`, which only the 2025-11-25 revision has (-32601 to a 2026-07-28 request). */
function registerLegacyTasks(server: McpServer, runs: RunStore, owner: object): void {
  const low = server.server;
  const set = low.setRequestHandler.bind(low) as unknown as (
    method: string,
    schemas: { params: z.ZodType },
    handler: (params: Record<string, unknown> | undefined, ctx: ServerContext) => Promise<unknown>,
  ) => void;
  set('tasks/result', { params: taskIdParams }, async (params, ctx) => {
    if (isModern(ctx)) throw notInRevision('tasks/result');
    return legacyResult(legacyFind(runs, params ?? {}, owner), ctx);
  });
  // The caller's tasks a page at a time, oldest first (TASKS_PAGE_SIZE), with `nextCursor` while
  // there are more; a cursor this server did not give is -32602, as the specification says.
  set('tasks/list', { params: listParams }, async (params, ctx) => {
    if (isModern(ctx)) throw notInRevision('tasks/list');
    const page = runs.page(owner, params?.cursor as string | undefined);
    if (!page)
      throw new ProtocolError(
        ErrorCode.InvalidParams,
        `Invalid cursor ${JSON.stringify(params?.cursor)}: not one this server gave (pass a nextCursor of tasks/list as it is, or none for the first page)`,
      );
    return { tasks: page.runs.map(legacyTask), ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) };
  });
}
