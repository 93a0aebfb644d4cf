import { ErrorCode, errorResponse, RpcError, sessionExited, type JsonRpcId, type JsonRpcResponse } from '../base/errors';
import { METHOD_INDEX, parseParams } from './table';
import type { Session } from '../session/session';
import { parseClientDeclaration, type Caller } from '../io/caller';
import { ClientLink } from '../io/client-link';
import type { HostServices, MethodContext } from './types';
import { checkReach, namesSession, reachSession, refusal } from './access';
import type { IDisposable } from '../base/lifecycle';
import { MAX_NESTING, nestsDeeperThan } from '../base/nesting';

/** Where a call arrives: a per-session socket (session implied) or a host control endpoint. */
export type DispatchMode = { kind: 'session'; session: Session } | { kind: 'control' };

export interface DispatchOptions {
  mode: DispatchMode;
  services: HostServices;
  /** The connection's link, or a one-shot caller's identity. */
  caller: ClientLink | Caller;
  /** May be a getter (a peer makes a call's AbortController only when it is looked at): read it only when needed. */
  readonly signal: AbortSignal;
}

/** A call's answer, what runs once it is sent, and the session whose output it may leave with (MethodContext.answerMayRideWith). */
export interface DispatchAnswer {
  response: JsonRpcResponse;
  afterSend: Array<() => void>;
  ridesWith?: string;
}

/**
 * Validates one parsed JSON-RPC message and runs it against the method table. Never throws (nor
 * rejects): every failure becomes an error response. The answer is returned as it is when the
 * method answered in the same turn, else as a promise. `afterSend` callbacks run once the caller
 * has written the response (so a subscription's replay follows its `{cursor}` answer).
 */
export function dispatch(message: unknown, opts: DispatchOptions): DispatchAnswer | Promise<DispatchAnswer> {
  const msg = message as Record<string, unknown>;
  const rawId = msg && typeof msg === 'object' && !Array.isArray(msg) ? msg.id : undefined;
  const id: JsonRpcId = typeof rawId === 'string' || typeof rawId === 'number' ? rawId : null;
  try {
    const req = checkEnvelope(message);
    const call = new DispatchedCall(opts);
    const result = invokeNow(req.method, req.params, call);
    if (!isPromise(result)) return call.answer(id, result);
    return result.then(
      (value) => call.answer(id, value),
      (err: unknown) => failedCall(id, err),
    );
  } catch (err) {
    return failedCall(id, err);
  }
}

function failedCall(id: JsonRpcId, err: unknown): DispatchAnswer {
  return { response: errorResponse(id, err), afterSend: [] };
}

export interface InvokeOptions extends DispatchOptions {
  afterResponse?: (fn: () => void) => void;
  answerMayRideWith?: (session: Session) => void;
}

/*
 * The objects a call is made of are instances of classes whose `signal` is a getter of the
 * prototype, never object literals with a getter of their own: such a literal kept every
 * request's objects alive through two young-generation collections, so ~1.5 KB a request reached
 * the old generation, each collection copied ~200 KB (about 1 ms) and the heap grew by ~35 MB
 * every 20,000 keys until a full collection (bench/README.md, "Issue 25: echo, CPU per key").
 */

/** No follow-ups (shared: a call that adds one gets its own list). */
const NO_FOLLOW_UPS: ReadonlyArray<() => void> = Object.freeze([]);

/** What `dispatch` gives `invoke`: the caller's options, and what the call adds to its answer. */
class DispatchedCall implements InvokeOptions {
  readonly mode: DispatchMode;
  readonly services: HostServices;
  readonly caller: ClientLink | Caller;
  /** Runs once the caller has written the response. */
  afterSend = NO_FOLLOW_UPS as Array<() => void>;
  /** The session whose output the answer may leave with. */
  ridesWith: string | undefined;

  constructor(private readonly _opts: DispatchOptions) {
    this.mode = _opts.mode;
    this.services = _opts.services;
    this.caller = _opts.caller;
  }

  /** Read only when the method looks (the caller's may be made on first use). */
  get signal(): AbortSignal {
    return this._opts.signal;
  }

  afterResponse(fn: () => void): void {
    if (this.afterSend === NO_FOLLOW_UPS) this.afterSend = [];
    this.afterSend.push(fn);
  }

  answerMayRideWith(session: Session): void {
    this.ridesWith = session.id;
  }

  /** The JSON-RPC answer to the call that returned `result`. */
  answer(id: JsonRpcId, result: unknown): DispatchAnswer {
    return { response: { jsonrpc: '2.0', id, result: result ?? {} }, afterSend: this.afterSend, ridesWith: this.ridesWith };
  }
}

/**
 * The context a method's handler runs with (MethodContext). Its follow-ups go to the caller's
 * `afterResponse` when it has one (a connection sends the answer first), else run once the
 * handler is done (`runFollowUps`).
 */
class CallContext implements MethodContext {
  private _followUps: Array<() => void> | undefined;

  constructor(
    readonly services: HostServices,
    readonly session: Session | undefined,
    readonly caller: ClientLink | Caller,
    private readonly _opts: InvokeOptions,
  ) {}

  get signal(): AbortSignal {
    return this._opts.signal;
  }

  afterResponse(fn: () => void): void {
    if (this._opts.afterResponse) this._opts.afterResponse(fn);
    else (this._followUps ??= []).push(fn);
  }

  answerMayRideWith(session: Session): void {
    // One-shot callers answer once the call is done: nothing to ride with.
    this._opts.answerMayRideWith?.(session);
  }

  /** One-shot callers (REST, MCP) have no response to wait for: their follow-ups run now. */
  runFollowUps(): void {
    if (this._followUps) for (const fn of this._followUps) setImmediate(fn);
  }
}

/**
 * Runs one method of the table by name, for every transport: resolves the session (implied by
 * the endpoint, or `params.session` on a control endpoint), validates params, calls the handler.
 * Throws RpcError on failure.
 */
export async function invoke(method: string, rawParams: Record<string, unknown>, opts: InvokeOptions): Promise<unknown> {
  return invokeNow(method, rawParams, opts);
}

/**
 * `invoke` for a caller that takes an answer ready at once as it is: a method whose handler
 * answers in the same turn (a key's `pty/write`, `pty/status`) costs no promise and no microtask
 * on the way (bench/README.md, "Issue 25: a key's request without promises"). Throws what
 * `invoke` rejects with.
 */
function invokeNow(method: string, rawParams: Record<string, unknown>, opts: InvokeOptions): unknown {
  const spec = METHOD_INDEX.get(method);
  if (!spec || (spec.target === 'host' && opts.mode.kind === 'session')) {
    throw new RpcError(ErrorCode.MethodNotFound, `Method not found: ${method}`);
  }
  // The caller's token first (docs/protocol.md#scoped-tokens): a refused call learns nothing, not even about its params.
  const refused = refusal(opts.caller, spec);
  if (refused) throw refused;
  if (nestsDeeperThan(rawParams)) throw new RpcError(ErrorCode.InvalidParams, `Invalid params for ${method}: params nest deeper than ${MAX_NESTING} levels`);
  // `client` says who calls (an optional addition any call may carry, see caller.ts); a link
  // adopts it, a one-shot caller's identity is fixed by its endpoint. No method sees the field.
  let params = rawParams;
  if ('client' in rawParams) {
    const { client, ...ownParams } = rawParams;
    if (opts.caller instanceof ClientLink) {
      const declared = parseClientDeclaration(client);
      if (declared) opts.caller.declare(declared);
    }
    params = ownParams;
  }
  let session: Session | undefined;
  if (spec.target !== 'host') {
    if (opts.mode.kind === 'session') {
      session = opts.mode.session;
      // The socket implies its session; one named in params must be that one, or a call copied
      // from the control socket would act on this session instead of the one it names. (Checked
      // only when present: a socket-pty client's key costs no copy of its params.)
      if ('session' in params) {
        const { session: selector, ...rest } = params;
        params = rest;
        if (!namesSession(selector, session, opts.services.registry))
          throw new RpcError(
            ErrorCode.InvalidParams,
            `Invalid params for ${method}: this socket serves session ${session.name} (${session.id}) only, not ${JSON.stringify(selector)}; other sessions are reached through the control socket`,
            { session: selector },
          );
      }
    } else {
      const { session: selector, ...rest } = params;
      params = rest;
      if (typeof selector === 'string' && selector !== '') session = reachSession(opts.services.registry, opts.caller, selector);
      else if (opts.caller.onlySession !== undefined && selector === undefined) {
        // A scoped token's "every session" is its own session (pty/events without a session).
        session = reachSession(opts.services.registry, opts.caller, opts.caller.onlySession);
      } else if (spec.target === 'session' || selector !== undefined) {
        throw new RpcError(ErrorCode.InvalidParams, `${method} needs a session selector (id, name or id prefix) in params.session`);
      }
    }
    checkReach(opts.caller, session);
  }
  const ctx = new CallContext(opts.services, session, opts.caller, opts);
  // A session killed meanwhile is kept until this call has answered (see SessionRegistry.remove).
  const call = session?.beginCall();
  let result: unknown;
  try {
    const valid = parseParams(spec, params);
    const needsRunning = typeof spec.needsRunning === 'function' ? spec.needsRunning(valid as never) : spec.needsRunning;
    if (needsRunning && !session?.running) throw sessionExited(session?.id ?? '');
    result = spec.handler(ctx, valid as never);
  } catch (err) {
    call?.dispose();
    throw err;
  }
  if (!isPromise(result)) return handlerDone(ctx, call, result);
  return result.then(
    (value) => handlerDone(ctx, call, value),
    (err: unknown) => {
      call?.dispose();
      throw err;
    },
  );
}

/** A handler's result once it has one: the call ends, the follow-ups of a one-shot caller run. */
function handlerDone(ctx: CallContext, call: IDisposable | undefined, result: unknown): unknown {
  call?.dispose();
  ctx.runFollowUps();
  return result ?? {};
}

function isPromise(value: unknown): value is Promise<unknown> {
  return value instanceof Promise;
}

function checkEnvelope(message: unknown): { method: string; params: Record<string, unknown> } {
  if (!message || typeof message !== 'object' || Array.isArray(message)) {
    throw new RpcError(ErrorCode.InvalidRequest, 'Invalid Request: expected one JSON-RPC 2.0 request object');
  }
  const m = message as Record<string, unknown>;
  if (m.method === undefined && 'op' in m) {
    throw new RpcError(ErrorCode.InvalidRequest, 'Invalid Request: the legacy {op} protocol is not supported; send JSON-RPC 2.0');
  }
  if (m.jsonrpc !== '2.0') throw new RpcError(ErrorCode.InvalidRequest, 'Invalid Request: jsonrpc must be "2.0"');
  if (typeof m.method !== 'string') throw new RpcError(ErrorCode.InvalidRequest, 'Invalid Request: method must be a string');
  if (typeof m.id !== 'string' && typeof m.id !== 'number') {
    // The one notification a host takes, without the id of the request it cancels.
    if (m.method === '$/cancelRequest' && m.id === undefined)
      throw new RpcError(ErrorCode.InvalidRequest, 'Invalid Request: $/cancelRequest needs params.id, the id (string or number) of the request to cancel');
    throw new RpcError(ErrorCode.InvalidRequest, 'Invalid Request: id (string or number) is required; notifications are not accepted');
  }
  // 1e400 parses to Infinity, which JSON writes back as null: an answer its caller could not match.
  if (typeof m.id === 'number' && !Number.isFinite(m.id)) throw new RpcError(ErrorCode.InvalidRequest, 'Invalid Request: id is a number too large to echo');
  // Missing means {}; anything else must be an object, as JSON-RPC 2.0 and socket-pty have it (null is none).
  const params = m.params === undefined ? {} : m.params;
  if (typeof params !== 'object' || params === null || Array.isArray(params)) {
    throw new RpcError(ErrorCode.InvalidRequest, 'Invalid Request: params must be an object');
  }
  return { method: m.method, params: params as Record<string, unknown> };
}
