import {
  McpServer,
  PROTOCOL_VERSION_META_KEY,
  ProtocolError,
  ProtocolErrorCode,
  SUPPORTED_PROTOCOL_VERSIONS,
  specTypeSchemas,
  type JSONRPCMessage,
  type ServerContext,
  type Transport,
} from '@modelcontextprotocol/server';
import { z } from 'zod';
import { ErrorCode, invalidParams, mcpErrorText, RpcError, toRpcError } from '../../core/base/errors';
import { FULL_GRANT, type Grant } from '../../core/io/caller';
import { refusal } from '../../core/methods/access';
import { selector } from '../../core/methods/schemas';
import { applyBudget, DEFAULT_MAX_CHARS, MIN_MAX_CHARS } from '../../core/io/output-budget';
import type { MethodSpec, McpProjection, TableCall } from '../../core/methods/spec';
import { METHODS } from '../../core/methods/table';
import { VERSION } from '../../version';
import { personKeysTrusted } from './apps-declarations';
import { reportProgress } from './mcp-progress';
import { clientDeclaresApps, personPrompt, type PersonPrompt } from './mcp-elicit';
import { offerSecretPage } from './secret-offer';
import { shortQuote, withShortEchoes } from './short-echo';
import {
  createTaskResult,
  declaredAtInitialize,
  declaredBy,
  isModern,
  LEGACY_TASKS_CAPABILITY,
  legacyTask,
  registerTasks,
  roundOf,
  TASK_TOOLS,
  TASKS_EXTENSION_ID,
  taskWork,
  throughSecretPage,
  within,
  type TaskTools,
} from './mcp-tasks';
import { grantedTtl, RunStore, ToolRun, type ToolCallResult } from './tool-run';
import { APP_KEY_ARG, APPS_EXTENSION_CAPABILITY, APPS_EXTENSION_ID, isAppKey, registerTerminalApp, TERMINAL_APP_URI } from './terminal-app';

/** How an MCP server reaches sessions: in the host itself, or through the sockets of every host (stdio). */
export interface ToolBackend {
  /**
   * Calls a method of the table; session-scoped methods carry `session` in params. `via`: a call
   * made apart from its MCP request (a task, a 2026-07-28 round) asks the person through
   * `via.prompt` (the approval of an agent's write) and stops waiting on `via.signal`.
   */
  call(method: string, params: Record<string, unknown>, via?: CallVia): Promise<unknown>;
}

/** How one call asks the person and when it stops (see ToolBackend.call). */
export interface CallVia {
  prompt?: PersonPrompt;
  signal?: AbortSignal;
}

/** One MCP tool, generated from its method's entry in the table. */
export interface ToolDef {
  name: string;
  method: MethodSpec;
  title: string;
  description: string;
  input: z.ZodRawShape;
  /** `input` as one schema, as tools/list shows it and tools/call checks it. */
  inputSchema: z.ZodObject;
  output: z.ZodObject;
  annotations: { readOnlyHint: boolean; destructiveHint: boolean; openWorldHint: boolean };
  /** The tool's `_meta`: where MCP Apps hosts find the terminal view (docs/guarantees.md#the-terminal-in-the-agents-chat). */
  meta?: Record<string, unknown>;
  run(backend: ToolBackend, args: Record<string, unknown>, via?: CallVia): Promise<{ data: Record<string, unknown>; text: string }>;
}

/** `shape` with the defaults the tool sets in place of the method's in their descriptions (the model reads them). */
function describedDefaults(shape: z.ZodRawShape, defaults: Record<string, unknown> | undefined): z.ZodRawShape {
  if (!defaults) return shape;
  const out = { ...shape } as Record<string, z.ZodType>;
  for (const [key, value] of Object.entries(defaults)) {
    const field = out[key];
    const text = field?.description;
    if (field && text) out[key] = field.describe(text.replace(/\(default [^;)]*/, `(default ${String(value)}`));
  }
  return out;
}

/**
 * `shape` without the condition "With wait: " in its descriptions where the tool always waits (its
 * `wait` fixed true and not an argument): the model reads what each argument does, unconditionally.
 */
function describedFixed(shape: z.ZodRawShape, fixed: Record<string, unknown> | undefined): z.ZodRawShape {
  if (fixed?.wait !== true || 'wait' in shape) return shape;
  const out = { ...shape } as Record<string, z.ZodType>;
  for (const [key, field] of Object.entries(out)) {
    const text = field.description;
    if (text?.startsWith('With wait: ')) out[key] = field.describe(text.charAt(11).toUpperCase() + text.slice(12));
  }
  return out;
}

/** The tool a method projects to (docs/protocol.md#6-mcp): its input, output and text all come from the entry. */
export function toolOf(spec: MethodSpec, mcp: McpProjection): ToolDef {
  const described = describedFixed(describedDefaults(omit(spec.params.shape, mcp.omit ?? []), mcp.defaults), mcp.fixed);
  const own = { ...(mcp.input?.shape ?? described), ...(mcp.budget ? BUDGET_INPUT : {}) };
  const input: z.ZodRawShape =
    spec.target === 'session' ? { session: selector, ...own } : spec.target === 'session-or-host' ? { session: selector.optional(), ...own } : own;
  const output = mcp.output?.schema ?? (spec.result as z.ZodObject);
  const shows = mcp.app === 'shows';
  return {
    name: mcp.tool,
    method: spec,
    title: mcp.title,
    description: mcp.description,
    input,
    inputSchema: z.object(input),
    output: withSession(mcp.budget ? output.extend(mcp.budget.optional ? OPTIONAL_BUDGET_OUTPUT : BUDGET_OUTPUT) : output, shows),
    annotations: { readOnlyHint: spec.scope === 'read', destructiveHint: mcp.destructive === true, openWorldHint: mcp.openWorld === true },
    meta: mcp.app ? appMeta(mcp.app) : undefined,
    async run(backend, args, via) {
      const { session, maxChars, ...rest } = args;
      const own = mcp.input ? mcp.input.toParams(rest) : { ...mcp.defaults, ...rest, ...mcp.fixed };
      const params = spec.target !== 'host' && session !== undefined ? { session, ...own } : own;
      const call = (m: string, p: Record<string, unknown>) => backend.call(m, p, via);
      // The view needs the session's id, not the name or prefix the agent gave: asked alongside.
      const id = shows && session !== undefined ? idOf(backend, String(session)) : undefined;
      let result = (await backend.call(spec.name, params, via)) as Record<string, unknown>;
      if (mcp.budget) result = await withinBudget(result, mcp.budget, args, (maxChars as number | undefined) ?? DEFAULT_MAX_CHARS, call);
      const data = mcp.output ? mcp.output.fromResult(result, args) : result;
      const text = await mcp.text(result, args, call);
      if (shows) return { data: { ...data, session: id ? await id : String(result.id) }, text };
      return { data, text };
    },
  };
}

/** What every tool that returns output takes (docs/guarantees.md#output-budget-for-agents). */
const BUDGET_INPUT: z.ZodRawShape = {
  maxChars: z
    .number()
    .min(MIN_MAX_CHARS)
    .int()
    .optional()
    .describe(
      `Most characters of output returned (default ${DEFAULT_MAX_CHARS}); longer output keeps its head and tail, and one line between says what was left out and how to read it.`,
    ),
};
/** …and what its structured result adds. */
const BUDGET_OUTPUT: z.ZodRawShape = {
  totalChars: z.number().describe('Characters of the whole output.'),
  elidedChars: z.number().describe('Characters left out of the middle (0: nothing was).'),
};

/** …when the tool returns output only sometimes (send_keys with wait). */
const OPTIONAL_BUDGET_OUTPUT: z.ZodRawShape = Object.fromEntries(Object.entries(BUDGET_OUTPUT).map(([k, v]) => [k, (v as z.ZodNumber).optional()]));

/** The result with its output field kept within `maxChars`, and the counts added. */
async function withinBudget(
  result: Record<string, unknown>,
  budget: NonNullable<McpProjection['budget']>,
  args: Record<string, unknown>,
  maxChars: number,
  call: TableCall,
): Promise<Record<string, unknown>> {
  const value = result[budget.field];
  if (typeof value !== 'string') return result; // a call that returns no output this time
  const whole = budget.whole && (await budget.whole(result, args, call, maxChars));
  if (whole) return { ...result, ...whole.fields, [budget.field]: whole.text, totalChars: whole.totalChars, elidedChars: whole.elidedChars };
  if (value.length <= maxChars) return { ...result, totalChars: value.length, elidedChars: 0 };
  const where = await budget.locate(result, args, call);
  const kept = applyBudget(value, maxChars, where);
  return { ...result, [budget.field]: kept.text, totalChars: kept.totalChars, elidedChars: kept.elidedChars };
}

/** The `_meta` of a tool with a part in the terminal view: the spec's key, and the flat one older hosts read. */
function appMeta(part: 'shows' | 'feeds'): Record<string, unknown> {
  const ui = part === 'shows' ? { resourceUri: TERMINAL_APP_URI } : { resourceUri: TERMINAL_APP_URI, visibility: ['app'] };
  return { ui, 'ui/resourceUri': TERMINAL_APP_URI };
}

/** The id of the session `selector` names (the selector itself should the session be gone by now). */
async function idOf(backend: ToolBackend, selector: string): Promise<string> {
  try {
    return String(((await backend.call('pty/info', { session: selector })) as { id: string }).id);
  } catch {
    return selector;
  }
}

/** A shown session's result also names it (docs/guarantees.md#the-terminal-in-the-agents-chat). */
function withSession(output: z.ZodObject, shows: boolean): z.ZodObject {
  return shows ? output.extend({ session: z.string().describe('The id of the session shown.') }) : output;
}

function omit(shape: z.ZodRawShape, keys: readonly string[]): z.ZodRawShape {
  return Object.fromEntries(Object.entries(shape).filter(([k]) => !keys.includes(k)));
}

/** Every MCP tool, in the table's order. */
export const TOOLS: readonly ToolDef[] = (METHODS as readonly MethodSpec[]).flatMap((m) => (m.mcp ? [toolOf(m, m.mcp)] : []));

/** The names of the MCP tools (docs/protocol.md#6-mcp). */
export const TOOL_NAMES = TOOLS.map((t) => t.name);

/** What an MCP server offers beyond one host's tools. */
export interface McpServerOptions {
  /**
   * The remote hosts `shared-pty mcp` reaches (docs/hosts.md#remote-hosts): `open_session` then
   * takes `host`, which the backend routes by (the tool's method has no such param). Given (even
   * empty: no hosts.json), `host` is taken, so a name hosts.json lacks is refused, never dropped
   * into a session on this machine; undefined (a host's own `/mcp`): no `host`.
   */
  remoteHosts?: readonly string[];
  /**
   * Where tool calls that run apart from their request are kept (tasks, 2026-07-28 rounds): one
   * store per host's `/mcp` or per `shared-pty mcp`, as every request of a client may reach a
   * fresh server. Without it, 2026-07-28 calls neither ask nor become tasks.
   */
  runs?: RunStore;
  /**
   * Whether the client declared MCP Apps where its requests carry no capabilities (a 2025-11-25
   * client of `/mcp`, from its `initialize`: AppsDeclarations); undefined: not known.
   */
  appsDeclared?: () => boolean | undefined;
}

/** The tool that opens a session: the one that takes `host` when there are remote hosts. */
const OPEN_TOOL = 'open_session';

/** `open_session`'s `host` input, naming the hosts there are. */
function hostInput(names: readonly string[]): z.ZodRawShape {
  const which = names.length ? names.join(', ') : 'none is configured in hosts.json';
  return {
    host: z
      .string()
      .min(1)
      .optional()
      .describe(`The remote host to open it on (${which}; "local" or none: this machine). Its sessions are then selected as HOST:ID.`),
  };
}

/** `app_input`'s key input: the terminal view sends the key its page was served with. */
const APP_KEY_INPUT: z.ZodRawShape = {
  [APP_KEY_ARG]: z.string().optional().describe('The key of the terminal view that sends these keys (in its page); other callers have none.'),
};

/** Whether the tool carries the person's keys from the terminal view (app_input). */
function isPersonsKeys(method: MethodSpec): boolean {
  return method.mcp?.app === 'feeds' && method.scope !== 'read';
}

/**
 * An MCP server exposing the tools over `backend`; failures come back as tool errors (isError).
 * Only the tools `grant` may call are listed (a `view` token sees the reading tools); one called
 * anyway says which scope it needs. The same server answers clients of both protocol revisions
 * (docs/protocol.md#6-mcp): the SDK's serving entries pick the revision per request or connection.
 */
export function createMcpServer(backend: ToolBackend, grant: Grant = FULL_GRANT, options: McpServerOptions = {}): McpServer {
  // logging: clients of 2025-11-25 may set a level (the conformance suite's logging-set-level); the host sends no log messages.
  // tools and resources: declared by the first tool and resource registered, after the scope check is in place.
  // The Tasks extension (2026-07-28) where runs can be kept (a 2025-11-25 client has no use for its name).
  const extensions = { [APPS_EXTENSION_ID]: APPS_EXTENSION_CAPABILITY, ...(options.runs ? { [TASKS_EXTENSION_ID]: {} } : {}) };
  // The 2025-11-25 revision's tasks likewise where runs can be kept (the SDK tells a 2026-07-28 client none).
  const capabilities = { logging: {}, extensions, ...(options.runs ? { tasks: LEGACY_TASKS_CAPABILITY } : {}) };
  const server = new McpServer({ name: 'shared-pty', version: VERSION }, { capabilities });
  const runs = options.runs;
  // A run is its caller's: the token's holder (one per token), or the host's own grant.
  const owner: object = grant.holder ?? grant;
  // A long call of a client that speaks the Tasks extension becomes a task (answered before the
  // SDK's tool seam, which would hold a task to the tool's output schema).
  // The arguments each listed tool takes, as this server lists it (checkCalls refuses any other).
  const accepted = new Map<string, ToolArguments>();
  checkCalls(server, grant, accepted, (tool, args, ctx, task) => {
    // 2025-11-25: a call with `params.task` becomes a task, its questions asked through tasks/result.
    if (runs && !isModern(ctx) && task !== undefined) {
      if (!TASK_TOOLS.has(tool.name))
        throw new ProtocolError(ErrorCode.MethodNotFound, `${tool.name} does not run as a task (its execution.taskSupport is forbidden)`);
      const can = declaredAtInitialize(server);
      // The ttl asked for, within the bounds; the task says the one it got.
      const ttlMs = grantedTtl((task as { ttl?: unknown }).ttl);
      const run = runs.add(new ToolRun((prompt, signal) => taskWork(taskTools, tool.name, args, within(prompt, can), signal), ttlMs), owner);
      // content: the SDK's tools/call seam holds a result that carries `task` to have one; said here so it is ours.
      return { task: legacyTask(run), content: [] };
    }
    if (!runs || !isModern(ctx) || !TASK_TOOLS.has(tool.name) || ctx.mcpReq.requestState() !== undefined) return undefined;
    const can = declaredBy(ctx);
    if (!can.tasks) return undefined;
    return createTaskResult(runs.add(new ToolRun((prompt, signal) => taskWork(taskTools, tool.name, args, within(prompt, can), signal)), owner));
  });
  registerTerminalApp(server);
  if (runs) registerTasks(server, runs, owner);
  /**
   * One tool call as tools/call answers it: failures as tool errors; a password prompt (met, or
   * refusing a write) offers the person the secret page.
   */
  const callTool = async (name: string, args: Record<string, unknown>, prompt: PersonPrompt, signal?: AbortSignal): Promise<ToolCallResult> => {
    const tool = TOOLS.find((t) => t.name === name)!;
    try {
      const started = Date.now();
      const { data, text } = await tool.run(backend, args, { prompt, signal });
      const r: ToolCallResult = { content: [{ type: 'text' as const, text }], structuredContent: data };
      const followed = await throughSecretPage(taskTools, name, args, r, prompt, signal ?? new AbortController().signal);
      if (followed === r || typeof followed.structuredContent?.waitedMs !== 'number') return followed;
      // The person's time on the page is part of the call's wait.
      return { ...followed, structuredContent: { ...followed.structuredContent, waitedMs: Date.now() - started } };
    } catch (e) {
      const err = namedForTool(toRpcError(e), name);
      const why = err.data as { secretInput?: unknown; session?: unknown } | undefined;
      // A write refused because the program asks for a secret: the person may type it on a page of the host.
      const offer =
        why?.secretInput === true && typeof why.session === 'string'
          ? await offerSecretPage({ call: (m, p) => backend.call(m, p, { signal }) }, prompt, why.session)
          : '';
      return toolError(err, offer);
    }
  };
  const taskTools: TaskTools = { call: callTool, method: (m, p, signal) => backend.call(m, p, { signal }) };
  for (const tool of TOOLS) {
    if (refusal(grant, tool.method)) continue;
    const inputSchema =
      tool.name === OPEN_TOOL && options.remoteHosts !== undefined
        ? tool.inputSchema.extend(hostInput(options.remoteHosts))
        : isPersonsKeys(tool.method)
          ? tool.inputSchema.extend(APP_KEY_INPUT)
          : tool.inputSchema;
    accepted.set(tool.name, toolArguments(tool, inputSchema));
    const registered = server.registerTool(
      tool.name,
      {
        title: tool.title,
        description: tool.description,
        inputSchema,
        outputSchema: tool.output,
        annotations: tool.annotations,
        ...(tool.meta ? { _meta: tool.meta } : {}),
      },
      async (args: Record<string, unknown>, ctx: ServerContext) => {
        // The person's keys come only from a view a chat host renders: a client known to render none
        // (it declared no MCP Apps) shows its tools to the model, and app_input would be the agent's.
        if (isPersonsKeys(tool.method)) {
          if (!isAppKey(args?.[APP_KEY_ARG])) {
            return toolError(
              new RpcError(
                ErrorCode.Forbidden,
                `${tool.name} is for the terminal view of MCP Apps, and the call does not carry the key of a terminal view this server served; nothing was written. Agents type with send and send_keys.`,
              ),
            );
          }
          args = { ...args };
          delete args[APP_KEY_ARG];
          // The person's keys only from a client that declared MCP Apps (it hides app-only tools
          // from its model). Any other may list app_input to its model, and the model may read
          // the view's page: the keys are its own write, through the agent guards. (Some chat
          // hosts render MCP Apps without declaring it: their view still types, as the agent.)
          // Nor with a session's scoped token, an agent's whatever its client declares: any client
          // can declare anything. The host's token and the agent's token the editor mints for its
          // chat are held by the editor alone (personKeysTrusted).
          const declared = clientDeclaresApps(server, ctx, APPS_EXTENSION_ID) ?? options.appsDeclared?.();
          if (!personKeysTrusted(grant)) {
            const why = grant.everySession ? "an agent's token writes as the agent" : "a session's scoped token writes as an agent";
            return writeAsCaller(backend, args, ctx.mcpReq.signal, why);
          }
          if (declared !== true) return writeAsCaller(backend, args, ctx.mcpReq.signal, 'it has not declared MCP Apps');
        }
        // 2026-07-28: the call runs apart from its request, so the client can be asked in the
        // middle (input_required rounds), or it becomes a task (docs/protocol.md#tasks-and-input-rounds).
        if (runs && isModern(ctx)) {
          const state = ctx.mcpReq.requestState();
          if (state !== undefined) {
            const run = runs.get(state, owner);
            if (!run)
              return toolError(invalidParams('The requestState of this retry names no call in progress (unknown, or over): call the tool again without it'));
            // A round's state answers the call it came from, retried as it was: not another tool
            // (a read-only one would run the pending write), nor the same one with other arguments.
            if (roundCalls.get(run) !== callKey(tool.name, args ?? {}))
              return toolError(
                invalidParams(
                  'The requestState of this retry was issued for another call: retry that call with the same tool and arguments, or call this one without it',
                ),
              );
            run.answer(ctx.mcpReq.inputResponses);
            return lastRound(runs, run, ctx.mcpReq.signal);
          }
          const can = declaredBy(ctx);
          const a = args ?? {};
          const progress = reportProgress(ctx);
          const run = runs.add(new ToolRun((prompt, signal) => callTool(tool.name, a, within(prompt, can), signal)), owner);
          roundCalls.set(run, callKey(tool.name, a));
          try {
            return await lastRound(runs, run, ctx.mcpReq.signal);
          } finally {
            progress.dispose();
          }
        }
        const progress = reportProgress(ctx);
        try {
          // A request the client cancels (notifications/cancelled) stops its call's wait, on this host or a remote one.
          return await callTool(tool.name, args ?? {}, personPrompt(server, ctx), ctx.mcpReq.signal);
        } finally {
          progress.dispose();
        }
      },
    );
    // 2025-11-25: the tools that wait for the program may run as tasks (the SDK's registerTool takes no
    // execution; it lists what the registered tool holds, and leaves it out for 2026-07-28 clients).
    if (runs && TASK_TOOLS.has(tool.name)) (registered as unknown as { execution?: object }).execution = { taskSupport: 'optional' };
  }
  return server;
}

/**
 * `app_input` from a client that has not declared MCP Apps, or with a session's scoped token
 * (`why` says which): nothing vouches that a person at the view typed the keys, so they go in as
 * the caller's own write, through the agent guards (deny rules, the approval policy, secret input,
 * typing arbitration), as send_keys's would.
 */
async function writeAsCaller(backend: ToolBackend, args: Record<string, unknown>, signal: AbortSignal, why: string): Promise<ToolCallResult> {
  try {
    const { written } = (await backend.call('pty/write', { session: args.session, action: { text: args.data } }, { signal })) as { written: number };
    // Refused during secret input, so none was asked for when the keys went in.
    return {
      content: [{ type: 'text', text: `Typed ${written} bytes as this client's own write (${why}).` }],
      structuredContent: { written, secretInput: false },
    };
  } catch (e) {
    return toolError(e);
  }
}

/** The call each 2026-07-28 round's run came from: its tool and arguments, as `callKey` writes them. */
const roundCalls = new WeakMap<ToolRun, string>();

/** A tool call as one string: its name and its arguments, keys in order at every depth. */
function callKey(name: string, args: Record<string, unknown>): string {
  const sorted = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(sorted)
      : v !== null && typeof v === 'object'
        ? Object.fromEntries(
            Object.keys(v)
              .sort()
              .map((k) => [k, sorted((v as Record<string, unknown>)[k])]),
          )
        : v;
  return JSON.stringify([name, sorted(args)]);
}

/** A round of a call; once the client has the call's result, the run is dropped (a task's is kept: it is fetched again). */
async function lastRound(runs: RunStore, run: ToolRun, signal: AbortSignal): Promise<Awaited<ReturnType<typeof roundOf>>> {
  // The request ended before its round was answered (notifications/cancelled, or the client closed
  // its stream, which 2026-07-28 counts as a cancel): the call stops, as a 2025-11-25 one does, and
  // its session takes the next send at once. A round answered (input_required) keeps its run.
  const cancel = () => {
    if (run.terminal) return;
    run.cancel();
    runs.delete(run);
  };
  if (signal.aborted) cancel();
  signal.addEventListener('abort', cancel, { once: true });
  try {
    const answer = await roundOf(run, signal);
    if (run.terminal) runs.delete(run);
    return answer;
  } finally {
    signal.removeEventListener('abort', cancel);
  }
}

/** What `tools/call` is handed by the SDK: the validated request, and the handler's context. */
type CallHandler = (request: { params: { name: string; arguments?: Record<string, unknown>; task?: object } }, ctx: ServerContext) => Promise<unknown>;

/** The opening of an invalid-params error a method of the table gives (`Invalid params for pty/write: `). */
const METHOD_PARAMS = /^Invalid params for [\w/]+: /;

/** An agent is told about the tool it called, not the method behind it: `Invalid arguments for send_keys: …`. */
function namedForTool(err: RpcError, tool: string): RpcError {
  if (err.code !== ErrorCode.InvalidParams || !METHOD_PARAMS.test(err.message)) return err;
  return new RpcError(err.code, err.message.replace(METHOD_PARAMS, `Invalid arguments for ${tool}: `), err.data);
}

/**
 * A tool error result, its text starting with the error's code as every tool error's does
 * (mcpErrorText), a value of the caller it repeats shortened (withShortEchoes); `more` follows it.
 */
function toolError(err: unknown, more = ''): { isError: true; content: Array<{ type: 'text'; text: string }> } {
  return { isError: true, content: [{ type: 'text', text: mcpErrorText(withShortEchoes(err)) + more }] };
}

/**
 * Checks in front of the SDK's own `tools/call` handler, so each answer is shaped for the
 * revision the client speaks, as every other result is. A tool that does not exist is the protocol
 * error -32602. The others are tool errors the model can read and act on, their code first: a tool
 * the token may not call (not listed; called anyway it says which scope it needs), and arguments
 * that do not fit the tool's input (one line naming the argument, -32602 as on every other
 * surface). `answer` may answer a call itself (a task; `task`: the 2025-11-25 request's
 * `params.task`); undefined leaves it to the tool.
 */
function checkCalls(
  server: McpServer,
  grant: Grant,
  accepted: ReadonlyMap<string, ToolArguments>,
  answer: (tool: ToolDef, args: Record<string, unknown>, ctx: ServerContext, task: object | undefined) => unknown,
): void {
  const low = server.server;
  const original = low.setRequestHandler.bind(low) as (...args: unknown[]) => void;
  const set = original as (method: string, handler: CallHandler) => void;
  (low as unknown as { setRequestHandler: (...args: unknown[]) => void }).setRequestHandler = (...args: unknown[]) => {
    // Every other method as registered (with its schemas, when it brings them: the tasks/* methods).
    if (args[0] !== 'tools/call') return original(...args);
    const [method, handler] = args as [string, CallHandler];
    set(method, async (request, ctx) => {
      const tool = TOOLS.find((t) => t.name === request.params.name);
      // A tool that does not exist is a protocol error on every revision (the MCP specification's
      // tools, "Error Handling"); arguments that do not fit a tool are a tool error the model can
      // correct (2025-11-25, SEP-1303), and so is a tool the token may not call (docs/protocol.md).
      if (!tool) throw new ProtocolError(ErrorCode.InvalidParams, `Unknown tool ${shortQuote(request.params.name)}`);
      const refused = refusal(grant, tool.method);
      if (refused) return toolError(refused);
      const unknown = unknownArgument(tool.name, request.params.arguments, accepted.get(tool.name));
      if (unknown) return toolError(unknown);
      const parsed = tool.inputSchema.safeParse(request.params.arguments ?? {});
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        const where = issue.path.length ? `${issue.path.map(String).join('.')}: ` : '';
        return toolError(invalidParams(`Invalid arguments for ${tool.name}: ${where}${issue.message}`));
      }
      return answer(tool, parsed.data as Record<string, unknown>, ctx, request.params.task) ?? handler(request, ctx);
    });
  };
}

/**
 * What a tool takes: `listed`, its input as tools/list shows it, and `set`, the method's own params
 * the tool sets itself (`send`'s cursors, `open_session`'s origin), ignored as before. Any other
 * argument is misspelt or invented, and would otherwise be dropped unseen: `wait_for { text }`
 * waited its whole timeout for nothing.
 */
interface ToolArguments {
  listed: readonly string[];
  set: ReadonlySet<string>;
}

function toolArguments(tool: ToolDef, listed: z.ZodObject): ToolArguments {
  // A tool with an output budget is sized by maxChars alone: the method's maxBytes, unlisted, would
  // be dropped unseen (an agent asking for 100 bytes got 9 KB), so it is refused as unknown.
  const replaced = tool.method.mcp?.budget ? ['maxBytes'] : [];
  // Only what the tool sets itself (open_session's origin, send's cursors) is taken and ignored; a
  // param of the method it leaves out (open_session's uid) would be dropped unseen: refused too.
  const mcp = tool.method.mcp;
  const setByTool = new Set([...Object.keys(mcp?.fixed ?? {}), ...Object.keys(mcp?.defaults ?? {})]);
  return { listed: Object.keys(listed.shape), set: new Set([...setByTool].filter((k) => !replaced.includes(k))) };
}

/** The -32602 error for the first argument the tool does not take, naming those it does; undefined if none. */
function unknownArgument(name: string, args: Record<string, unknown> | undefined, takes: ToolArguments | undefined): RpcError | undefined {
  if (!args || !takes) return undefined;
  const key = Object.keys(args).find((k) => !takes.listed.includes(k) && !takes.set.has(k));
  if (key === undefined) return undefined;
  const which = takes.listed.length ? `it takes ${takes.listed.join(', ')}` : 'it takes no arguments';
  return invalidParams(`Invalid arguments for ${name}: unknown argument ${shortQuote(key)}; ${which}`);
}

/** The schema of a request of the protocol, by method (both revisions' requests, as the SDK parses them). */
type RequestSchema = {
  '~standard': {
    validate(v: unknown): { issues?: ReadonlyArray<{ path?: ReadonlyArray<PropertyKey | { key: PropertyKey }>; message: string }> } | Promise<unknown>;
  };
};
const REQUEST_SCHEMAS: ReadonlyMap<string, RequestSchema> = new Map(
  Object.entries(specTypeSchemas as unknown as Record<string, RequestSchema & { shape?: { method?: { value?: unknown } } }>).flatMap(([name, schema]) => {
    const method = name.endsWith('Request') ? schema.shape?.method?.value : undefined;
    return typeof method === 'string' ? [[method, schema] as const] : [];
  }),
);

/** Requests of both revisions, of the same shape in each, whose params are checked here. */
const CHECKED_IN_BOTH: ReadonlySet<string> = new Set([
  'tools/list',
  'tools/call',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'prompts/list',
  'prompts/get',
]);

/** The lists the server answers whole, in one page (tasks/list pages, and checks its own cursors). */
const ONE_PAGE_LISTS: ReadonlySet<string> = new Set(['tools/list', 'resources/list', 'resources/templates/list', 'prompts/list']);

/**
 * The -32602 Invalid params answer to a request whose params do not fit its method (`tools/call`
 * with `arguments: 0`), one line naming where; undefined for anything else. The SDK would answer
 * such a request with its whole validation report.
 */
export function misfitParams(message: unknown): JSONRPCMessage | undefined {
  const m = message as { id?: unknown; method?: unknown; params?: { _meta?: Record<string, unknown> } } | null;
  if (typeof m?.id !== 'string' && typeof m?.id !== 'number') return undefined;
  // A 2026-07-28 request (its revision in _meta) of a method that revision dropped (initialize) is
  // the SDK's to answer (-32601); those it kept are checked as the older revision's are (the SDK
  // answered their misfits -32603 with its whole validation report).
  const modern = m.params?._meta?.[PROTOCOL_VERSION_META_KEY] !== undefined;
  // The SDK lifts inputResponses out of the params and keeps only the entries that are objects, so
  // `inputResponses: 5` reached the handler as none: checked here, as the extension's schema has it.
  if (modern && m.method === 'tasks/update') return misfitOf(m.id, m.method, UPDATE_TASK_REQUEST.safeParse(message).error?.issues[0]);
  if (modern && !(typeof m.method === 'string' && CHECKED_IN_BOTH.has(m.method))) return undefined;
  // These lists have one page: any cursor is one the server never gave (the specification: -32602).
  if (typeof m.method === 'string' && ONE_PAGE_LISTS.has(m.method) && (m.params as { cursor?: unknown } | undefined)?.cursor !== undefined) {
    return { jsonrpc: '2.0', id: m.id, error: { code: -32602, message: `Invalid params for ${m.method}: cursor: no such cursor (the list has one page)` } };
  }
  const schema = typeof m.method === 'string' ? REQUEST_SCHEMAS.get(m.method) : undefined;
  const checked = schema?.['~standard'].validate(message);
  return misfitOf(m.id, m.method, checked && !(checked instanceof Promise) ? checked.issues?.[0] : undefined);
}

/** One issue a schema found in a request, where it is in the message (`params.arguments`). */
interface RequestIssue {
  path?: ReadonlyArray<PropertyKey | { key: PropertyKey }>;
  message: string;
}

/** The -32602 answer to request `id` of `method` for `issue`, in one line naming where; undefined for no issue. */
function misfitOf(id: string | number, method: unknown, issue: RequestIssue | undefined): JSONRPCMessage | undefined {
  if (!issue) return undefined;
  const path = (issue.path ?? []).map((p) => String(typeof p === 'object' ? p.key : p));
  const where = path.length ? `${path.join('.')}: ` : '';
  return { jsonrpc: '2.0', id, error: { code: -32602, message: `Invalid params for ${String(method)}: ${where}${issue.message}` } };
}

/**
 * The Tasks extension's `tasks/update` (2026-07-28) as its `UpdateTaskRequest` has it: the task,
 * and `inputResponses`, a record of answers, each an object (an elicitation's `{ action, content? }`).
 */
const UPDATE_TASK_REQUEST = z.object({
  params: z.object({ taskId: z.string(), inputResponses: z.record(z.string(), z.object({}).passthrough()) }).passthrough(),
});

/** The revision a request names without `initialize` (its `_meta`, docs/protocol.md#protocol-revisions). */
const MODERN_REVISION = '2026-07-28';

/**
 * The -32022 refusal of a request naming a revision this server does not speak (in its
 * `MCP-Protocol-Version` header, or its `_meta`), naming every revision it does; undefined for one
 * it speaks. The SDK's own refusal leaves out 2026-07-28.
 */
export function unsupportedRevision(asked: unknown): RpcError | undefined {
  if (typeof asked !== 'string' || asked === MODERN_REVISION || SUPPORTED_PROTOCOL_VERSIONS.includes(asked)) return undefined;
  const supported = [MODERN_REVISION, ...SUPPORTED_PROTOCOL_VERSIONS];
  return new RpcError(
    ProtocolErrorCode.UnsupportedProtocolVersion,
    `Unsupported protocol version: ${asked} (this server speaks ${MODERN_REVISION}, and after initialize ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`,
    { supported, requested: asked },
  );
}

/**
 * A request whose `_meta` names a revision other than 2026-07-28 (the one revision a request names
 * there), answered -32022 as `/mcp` answers it; undefined for anything else. Over stdio the SDK
 * checks only the connection's first message, and served later ones naming any revision.
 */
function unsupportedInMeta(message: unknown): JSONRPCMessage | undefined {
  const m = message as { id?: unknown; method?: unknown; params?: { _meta?: Record<string, unknown> } } | null;
  // `initialize` agrees on a revision by its own params (as `/mcp` takes it), whatever its `_meta` says.
  if ((typeof m?.id !== 'string' && typeof m?.id !== 'number') || m.method === 'initialize') return undefined;
  const asked = m.params?._meta?.[PROTOCOL_VERSION_META_KEY];
  if (asked === undefined || asked === MODERN_REVISION) return undefined;
  const requested = typeof asked === 'string' ? asked : JSON.stringify(asked);
  return {
    jsonrpc: '2.0',
    id: m.id,
    error: {
      code: ProtocolErrorCode.UnsupportedProtocolVersion,
      message: `Unsupported protocol version: ${requested}`,
      data: { supported: [MODERN_REVISION], requested },
    },
  };
}

/**
 * The transport with requests whose params do not fit their method answered -32602 by
 * `misfitParams`, and those naming a revision not spoken -32022, before the SDK sees them;
 * everything else passes through.
 */
export function guardParams(inner: Transport): Transport {
  const outer: Transport = {
    start: async () => {
      inner.onclose = () => outer.onclose?.();
      inner.onerror = (e) => outer.onerror?.(e);
      inner.onmessage = (message, extra) => {
        const misfit = unsupportedInMeta(message) ?? misfitParams(message);
        if (misfit) void inner.send(misfit).catch((e: Error) => outer.onerror?.(e));
        else outer.onmessage?.(message, extra);
      };
      await inner.start();
    },
    send: (message, options) => inner.send(message, options),
    close: () => inner.close(),
  };
  return outer;
}
