import type { z } from 'zod';
import type { Session } from '../session/session';
import type { Budgeted, Elision } from '../io/output-budget';
import type { MethodContext } from './types';

/**
 * Who a method is about: one session (implied by a session socket, or named by `session`), the
 * host, or either (`session-or-host`: on a control endpoint `session` is optional, and without it
 * the call is about every session of the host, as `pty/events` is).
 */
export type MethodTarget = 'session' | 'host' | 'session-or-host';

/**
 * What a caller must be allowed to do to call a method (the token scopes of docs/protocol.md#scoped-tokens): `read`
 * reads and subscribes, `input` also writes and resizes, `control` also sends, signals, opens and closes.
 */
export type MethodScope = 'read' | 'input' | 'control';

/** The scopes in order: each one allows everything the ones before it allow. */
export const SCOPES: readonly MethodScope[] = ['read', 'input', 'control'];

/** Calls another method of the table as the same caller (an MCP tool's text may need a second look). */
export type TableCall = (method: string, params: Record<string, unknown>) => Promise<unknown>;

/**
 * How a method appears as an MCP tool (docs/protocol.md#6-mcp). By default the tool takes the method's params
 * (plus `session` for session methods) and returns the method's result; a tool that differs says how.
 */
export interface McpProjection<S extends z.ZodObject = z.ZodObject, R extends z.ZodType = z.ZodType> {
  tool: string;
  title: string;
  description: string;
  /** Param fields the tool does not offer (set by the tool itself, or not for agents). */
  omit?: readonly (keyof z.infer<S> & string)[];
  /** Params the tool always sets (`open_session` opens with `origin: "agent"`). */
  fixed?: Partial<z.infer<S>>;
  /** Params the tool sets when the agent did not (a model's context is precious: smaller reads). */
  defaults?: Partial<z.infer<S>>;
  /** A tool whose input is not the method's params: its own fields, and how they become params. */
  input?: { shape: z.ZodRawShape; toParams(args: Record<string, unknown>): Record<string, unknown> };
  /** A tool whose structured result is not the method's result: its schema, and how it is made. */
  output?: { schema: z.ZodObject; fromResult(result: z.infer<R>, args: Record<string, unknown>): Record<string, unknown> };
  /** The tool's text: what a model reads. */
  text(data: z.infer<R> & Record<string, unknown>, args: Record<string, unknown>, call: TableCall): string | Promise<string>;
  /**
   * A tool that returns output (docs/guarantees.md#output-budget-for-agents): it takes `maxChars`, keeps `field` within it (head
   * and tail, one line between), and adds `totalChars` and `elidedChars` to its structured result.
   * `locate` says, for what was left out, how to read it (it may look things up first).
   */
  budget?: {
    field: keyof z.infer<R> & string;
    locate(result: z.infer<R> & Record<string, unknown>, args: Record<string, unknown>, call: TableCall): ElisionPointer | Promise<ElisionPointer>;
    /**
     * When `field` is not the whole output (a send's screen rows, cut to the scrollback) and the
     * whole is kept elsewhere (the command's log): the whole within `maxChars`, read from there.
     * undefined: `field` is budgeted as it is.
     */
    whole?(result: z.infer<R> & Record<string, unknown>, args: Record<string, unknown>, call: TableCall, maxChars: number): Promise<WholeBudget | undefined>;
    /** The field may be absent (a call that did not wait): then nothing is budgeted or counted. */
    optional?: boolean;
  };
  /**
   * May change or end things for good (closing a session, SIGKILL, anything typed into a shell,
   * which may be `rm -rf`): MCP's destructiveHint. Its default there is true: a tool that writes
   * says false only when it cannot.
   */
  destructive?: boolean;
  /** Reaches beyond the host (a command typed into a shell may reach any machine): MCP's openWorldHint. */
  openWorld?: boolean;
  /**
   * The tool's part in the terminal view of MCP Apps (docs/guarantees.md#the-terminal-in-the-agents-chat): `shows`, a host that renders
   * MCP Apps shows the session live beside the result (its structured result names the session);
   * `feeds`, only the view calls it (hidden from the model by such hosts).
   */
  app?: 'shows' | 'feeds';
}

/** The whole output within a budget, read from where it is kept, and the result's fields that change with it. */
export interface WholeBudget extends Budgeted {
  /** Fields of the result to set (a send's `truncated`: its rows were cut, the whole was not). */
  fields?: Record<string, unknown>;
}

/** How to read a part of a tool's output that was left out: the end of the line that says so. */
export type ElisionPointer = (elision: Elision) => string;

/** A REST route's path (docs/protocol.md#rest); `:id` is a session selector. */
export type RestPath = '/sessions' | '/sessions/:id' | '/sessions/:id/write' | '/sessions/:id/resize' | '/sessions/:id/commands';

/** How a REST request becomes the method's params, and its result the envelope's `data`. */
export interface RestProjection<S extends z.ZodObject = z.ZodObject, R extends z.ZodType = z.ZodType> {
  verb: 'GET' | 'POST' | 'DELETE';
  path: RestPath;
  /** Where the params come from: the query string (typed by the schema) or the JSON body. */
  from: 'query' | 'body';
  /** A route whose input is not the method's params: its own schema, and how it becomes params. */
  input?: { schema: z.ZodObject; toParams(input: Record<string, unknown>): Record<string, unknown> };
  /** Params the route sets when the request did not (`POST /sessions` opens with `origin: "script"`). */
  defaults?: Partial<z.infer<S>>;
  /** Params the route sets whatever the request said (`POST /sessions` pins the locale), given the params it makes. */
  pinned?(params: Record<string, unknown>): Record<string, unknown>;
  /** Runs before the method (`DELETE ?signal=` signals first). */
  before?(route: RestCall): Promise<void>;
  /** The envelope's `data` (default: the result itself). */
  respond?(result: z.infer<R>, route: RestCall): unknown;
}

/** What a REST route's answer may use beyond the method's result. */
export interface RestCall {
  /** The session's canonical id (session methods). */
  id: string;
  /** The session itself, resolved before the call (it may leave the registry during it). */
  session?: Session;
  /** The request's input, validated. */
  input: Record<string, unknown>;
  call: TableCall;
}

/** One entry of the method table: every transport serves it, none re-implements it. */
export interface MethodSpec<
  N extends string = string,
  S extends z.ZodObject = z.ZodObject,
  R extends z.ZodType = z.ZodType,
  T extends MethodTarget = MethodTarget,
> {
  name: N;
  target: T;
  scope: MethodScope;
  /** One sentence for the protocol reference (and the tool's description when it has none of its own). */
  summary: string;
  params: S;
  /**
   * Optional: the commonest params of the method, recognised without walking the schema, and
   * exactly what the schema makes of them; undefined leaves the params to the schema. For calls
   * made per key (`pty/write {action: {text}}`): zod's walk was a fifth of a typed key's request
   * path on a host gone cold between keys (bench/README.md, "Issue 25: echo, this round").
   */
  quickParams?(raw: Record<string, unknown>): z.infer<S> | undefined;
  result: R;
  /**
   * What a scoped token (one session, docs/protocol.md#scoped-tokens) may do with it beyond its scope check: by
   * default a session method is allowed on the token's own session and a host method is refused;
   * `filtered` lets a host method through, its answer showing only the token's session
   * (`session/list`); `never` refuses it even on that session (it would hand out a stronger link).
   */
  scopedToken?: 'filtered' | 'never';
  /**
   * A host method an agent's token for every session (`host/agentToken`) may call too: one its MCP
   * tools need (`session/create`). Other host methods (tokens, the agent policy) are the user's.
   */
  agentToken?: 'allowed';
  /**
   * Refused with -32000 "The session has exited" once the program has ended (writes, signals,
   * resizes); a function says it for the call's params.
   */
  needsRunning?: boolean | ((params: z.infer<S>) => boolean);
  handler(ctx: MethodContext, params: z.infer<S>): z.infer<R> | Promise<z.infer<R>>;
  mcp?: McpProjection<S, R>;
  rest?: RestProjection<S, R>;
}

/** Declares one entry, keeping its name, params and result types for the typed client. */
export function method<N extends string, S extends z.ZodObject, R extends z.ZodType, T extends MethodTarget>(
  spec: MethodSpec<N, S, R, T>,
): MethodSpec<N, S, R, T> {
  return spec;
}
