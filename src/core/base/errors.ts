/** JSON-RPC 2.0 error codes used on every transport (docs/protocol.md#4-error-codes; each one described in ERROR_CODES). */
export const enum ErrorCode {
  ParseError = -32700,
  InvalidRequest = -32600,
  MethodNotFound = -32601,
  InvalidParams = -32602,
  InternalError = -32603,
  ServerError = -32000,
  UnknownSession = -32001,
  SessionBusy = -32002,
  // SessionExited, LimitReached, Declined and HostGone are the host's own kinds of failure: each is
  // answered as ServerError with a `reason` in its data (ERROR_CODES), never by its number here.
  /** The session's program has ended: it takes no more input, signals or resizes. */
  SessionExited = -32003,
  /** The caller's token does not allow this call: its scope is too small, or it names another session (docs/protocol.md#scoped-tokens). */
  Forbidden = -32004,
  /** One of the host's limits is reached (sessions, connections, requests in flight, regex time). */
  LimitReached = -32005,
  /** The user declined an agent's write or command (an approval answered no, or a deny rule or policy of theirs). */
  Declined = -32006,
  /** The host (or remote host) that held the session went away under the call. */
  HostGone = -32007,
}

/**
 * The REST envelope's error codes (docs/protocol.md#rest): those of the REST seed, and ours: 413 for a
 * body over the limit, 429 for one of the host's limits reached, 502 for a host gone.
 */
export type RestErrorCode = 'UNAUTHORIZED' | 'BAD_REQUEST' | 'NOT_FOUND' | 'FORBIDDEN' | 'PAYLOAD_TOO_LARGE' | 'TOO_MANY_REQUESTS' | 'INTERNAL' | 'BAD_GATEWAY';

/** The HTTP status of each REST error code. */
export const REST_STATUS: Readonly<Record<RestErrorCode, number>> = {
  UNAUTHORIZED: 401,
  BAD_REQUEST: 400,
  NOT_FOUND: 404,
  FORBIDDEN: 403,
  PAYLOAD_TOO_LARGE: 413,
  TOO_MANY_REQUESTS: 429,
  INTERNAL: 500,
  BAD_GATEWAY: 502,
};

/**
 * When REST answers a code for a reason of HTTP's own, before any method runs; the JSON-RPC codes
 * each one also stands for are those of `ERROR_CODES` (docs/protocol.md#rest lists both).
 */
export const REST_MEANINGS: Readonly<Partial<Record<RestErrorCode, string>>> = {
  UNAUTHORIZED: 'missing or wrong token, or a link or page cookie that is not (or no longer) valid',
  BAD_REQUEST: 'a session in the path whose percent-encoding is malformed (`/sessions/%zz`); a WebSocket endpoint (`/rpc`, a stream) asked without the upgrade',
  NOT_FOUND: 'unknown route, replay link or view asset',
  FORBIDDEN: '`Host` or `Origin` refused; a link or page cookie for another page',
  PAYLOAD_TOO_LARGE: 'a body over 1 MiB (the connection then closes)',
  INTERNAL: 'an unexpected failure while answering',
};

/** One error code as every surface answers it (docs/protocol.md#4-error-codes is written from this list). */
export interface ErrorCodeInfo {
  code: ErrorCode;
  /** Its name in the docs' table. */
  name: string;
  /** When a call gets it. */
  when: string;
  /** What its `data` carries, if anything. */
  data?: string;
  /** The REST envelope's code (and through it the HTTP status) of a REST call that fails with it. */
  rest: RestErrorCode;
  /**
   * Kinds of failure the host tells apart inside, answered on every surface as -32000 ("the server
   * could not do it") with this `reason` in `data`: the interface names the seed's codes, -32001,
   * -32002 and -32004, and no other (docs/protocol.md#4-error-codes).
   */
  reason?: string;
  /**
   * Whether a REST error adds `rpcCode` and `data` to the envelope: for the codes REST's own table
   * cannot tell apart (an exited session is a 400 as a bad body is); the others keep the envelope
   * `{code, message}` REST clients know.
   */
  restTells?: true;
}

/** Every error code, once: the mapping of every surface and the docs' table come from here. */
export const ERROR_CODES: readonly ErrorCodeInfo[] = [
  { code: ErrorCode.ParseError, name: 'Parse error', rest: 'BAD_REQUEST', when: 'the line (or body) is not valid JSON or not valid UTF-8 (`id: null`)' },
  {
    code: ErrorCode.InvalidRequest,
    name: 'Invalid Request',
    rest: 'BAD_REQUEST',
    when: 'not a single request object (batches included), `jsonrpc` is not `"2.0"`, `method` is not a string, `id` is missing, `params` is not an object, the legacy `{op}` protocol, or a line over the limit (after which the connection is closed)',
  },
  {
    code: ErrorCode.MethodNotFound,
    name: 'Method not found',
    rest: 'NOT_FOUND',
    when: 'unknown method, or a host method (`session/list`, `session/create`, `host/info`) on a per-session socket',
  },
  {
    code: ErrorCode.InvalidParams,
    name: 'Invalid params',
    rest: 'BAD_REQUEST',
    when: 'schema violations (the message names the param), mutually exclusive params, an unknown key name (`data: {key}`), an invalid regex, a missing `session` on the control socket, a duplicate session name',
  },
  { code: ErrorCode.InternalError, name: 'Internal error', rest: 'INTERNAL', when: 'an unexpected failure in the host' },
  {
    code: ErrorCode.ServerError,
    name: 'Server error',
    rest: 'BAD_REQUEST',
    when: 'the host could not do it, and the message says why: the program cannot be started, a recording cannot be written, a command log was dropped, the user is typing, an approval is pending',
  },
  {
    code: ErrorCode.UnknownSession,
    name: 'Unknown session',
    rest: 'NOT_FOUND',
    data: '`{ session }`: the selector',
    when: 'no session matches the selector, or more than one does',
  },
  { code: ErrorCode.SessionBusy, name: 'Session busy', rest: 'BAD_REQUEST', when: 'another `pty/send` is running in this session' },
  {
    code: ErrorCode.SessionExited,
    restTells: true,
    name: 'Session exited',
    rest: 'BAD_REQUEST',
    reason: 'session_exited',
    data: '`{ session }`: its id',
    when: 'the session has exited: `pty/write`, `pty/signal`, `pty/resize`, `pty/appInput`, `pty/secretPage`, `pty/record`; an agent write whose session ended while the user was asked',
  },
  {
    code: ErrorCode.Forbidden,
    name: 'Forbidden',
    rest: 'FORBIDDEN',
    when: "the caller's scoped token does not allow the call: the method needs a larger scope (the message names it), or another session, or a host method (see [Scoped tokens](#scoped-tokens))",
  },
  {
    code: ErrorCode.LimitReached,
    restTells: true,
    name: 'Limit reached',
    rest: 'TOO_MANY_REQUESTS',
    reason: 'limit_reached',
    data: '`{ limit, max }`: `limit` is `sessions`, `connections`, `inFlightRequests` or `regexTime`; `max` its value',
    when: 'one of the host\'s limits is reached (README "Reliability"); HTTP answers it 429',
  },
  {
    code: ErrorCode.Declined,
    restTells: true,
    name: 'Declined',
    rest: 'FORBIDDEN',
    reason: 'declined',
    data: '`{ session?, denied: true, approval? }`: `approval` is `denied` or `unanswered` when the user was asked',
    when: "the user declined an agent's write or command: they answered no, nobody answered in time, a deny rule matched (or took too long to judge), or the agent policy is `deny`; nothing was written",
  },
  {
    code: ErrorCode.HostGone,
    restTells: true,
    name: 'Host gone',
    rest: 'BAD_GATEWAY',
    reason: 'host_gone',
    data: "`{ host }`: the host id, or the remote host's name",
    when: 'the host (or remote host) that holds the session went away under the call (`shared-pty mcp`)',
  },
];

const BY_CODE: ReadonlyMap<number, ErrorCodeInfo> = new Map(ERROR_CODES.map((e) => [e.code, e]));

/** An error that travels to the client as a JSON-RPC error object. */
export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = 'RpcError';
  }

  toJSON(): JsonRpcErrorObject {
    return this.data === undefined ? { code: this.code, message: this.message } : { code: this.code, message: this.message, data: this.data };
  }
}

/** A JSON-RPC error object. */
export interface JsonRpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

export function invalidParams(message: string, data?: unknown): RpcError {
  return new RpcError(ErrorCode.InvalidParams, message, data);
}

export function unknownSession(session: string): RpcError {
  return new RpcError(ErrorCode.UnknownSession, `Unknown session: ${session}`, { session });
}

/** The error a second concurrent send gets (docs/guarantees.md#error-codes-beyond-json-rpc). */
export function sessionBusy(): RpcError {
  return new RpcError(ErrorCode.SessionBusy, 'Session is busy with another send; wait for it to finish');
}

/** A call that needs the session's program running, once it has ended. */
export function sessionExited(sessionId: string, message = 'The session has exited', data?: Record<string, unknown>): RpcError {
  return new RpcError(ErrorCode.SessionExited, message, { session: sessionId, ...data });
}

/** A call outside the caller's token (docs/protocol.md#scoped-tokens: HTTP 403, JSON-RPC -32004, MCP isError). */
export function forbidden(message: string): RpcError {
  return new RpcError(ErrorCode.Forbidden, `Forbidden: ${message}`);
}

/** The user said no to an agent (docs/protocol.md#agent-write-approval); nothing was written. */
export function declined(message: string, data: Record<string, unknown>): RpcError {
  return new RpcError(ErrorCode.Declined, message, { ...data, denied: true });
}

/** The host that held the session went away under the call (`host`: its id, or the remote host's name). */
export function hostGone(message: string, host: string): RpcError {
  return new RpcError(ErrorCode.HostGone, message, { host });
}

/** What the `data` of an error over one of the host's limits says: which limit, and its value. */
export interface LimitData {
  limit: 'sessions' | 'connections' | 'inFlightRequests' | 'regexTime';
  max: number;
}

/**
 * A call or connection over one of the host's limits (README "Reliability"): answered -32000 with
 * the limit and `reason: "limit_reached"` in `data` (REST and `/mcp` answer it 429).
 */
export function limitReached(message: string, limit: LimitData['limit'], max: number): RpcError {
  return new RpcError(ErrorCode.LimitReached, message, { limit, max } satisfies LimitData);
}

/** Whether `e` is a limitReached error. */
export function isLimitReached(e: RpcError): boolean {
  return e.code === ErrorCode.LimitReached;
}

export function serverError(message: string, data?: unknown): RpcError {
  return new RpcError(ErrorCode.ServerError, message, data);
}

/** Maps anything thrown by a handler to an RpcError; unexpected errors become -32603 without leaking stacks. */
export function toRpcError(err: unknown): RpcError {
  if (err instanceof RpcError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new RpcError(ErrorCode.InternalError, `Internal error: ${message}`);
}

// ---- The answers: one per surface, all from ERROR_CODES (docs/protocol.md#4-error-codes). ----

/**
 * The JSON-RPC error object of `err` as every surface answers it: a kind of failure the host tells
 * apart inside (ErrorCodeInfo.reason) is -32000, with that reason in `data`.
 */
export function jsonRpcErrorOf(err: unknown): JsonRpcErrorObject {
  const e = toRpcError(err);
  const reason = BY_CODE.get(e.code)?.reason;
  if (reason === undefined) return e.toJSON();
  const data = e.data !== null && typeof e.data === 'object' ? { ...(e.data as Record<string, unknown>), reason } : { reason };
  return { code: ErrorCode.ServerError, message: e.message, data };
}

/** A JSON-RPC request's id as it is answered (null when the request had none usable). */
export type JsonRpcId = string | number | null;

/** A JSON-RPC response: a result or an error. */
export interface JsonRpcResponse {
  jsonrpc: '2.0';
  id: JsonRpcId;
  result?: unknown;
  error?: JsonRpcErrorObject;
}

/**
 * A JSON-RPC error response. Here, beside the codes, rather than with the dispatch: a client's peer
 * answers errors too, and must not load the method table to do it (docs/architecture.md#the-cli).
 */
export function errorResponse(id: JsonRpcId, err: unknown): JsonRpcResponse {
  return { jsonrpc: '2.0', id, error: jsonRpcErrorOf(err) };
}

/** The REST code of `err`, and so its HTTP status. */
export function restCodeOf(err: unknown): RestErrorCode {
  return BY_CODE.get(toRpcError(err).code)?.rest ?? 'BAD_REQUEST';
}

/** The envelope of a REST error. */
export interface RestError {
  code: RestErrorCode;
  message: string;
  /** The JSON-RPC code as answered (-32000, `data.reason` saying which), for the errors whose REST code is shared (ErrorCodeInfo.restTells). */
  rpcCode?: number;
  data?: unknown;
}

/**
 * The REST answer of `err`: its HTTP status and the envelope `{ok:false, error:{code, message}}`; for
 * an exited session, a limit, a refusal by the user and a host gone also `rpcCode` (-32000) and `data`
 * with its `reason`, so a REST client tells an exited session from a bad body (both 400).
 */
export function restErrorOf(err: unknown): { status: number; body: { ok: false; error: RestError } } {
  const e = toRpcError(err);
  const code = restCodeOf(e);
  const error: RestError = { code, message: e.message };
  if (BY_CODE.get(e.code)?.restTells) {
    const answered = jsonRpcErrorOf(e);
    error.rpcCode = answered.code;
    if (answered.data !== undefined) error.data = answered.data;
  }
  return { status: REST_STATUS[code], body: { ok: false, error } };
}

/** The text of an MCP tool error (`isError`): `Error <code>: <message>`, the code as JSON-RPC says it. */
export function mcpErrorText(err: unknown): string {
  const e = jsonRpcErrorOf(err);
  return `Error ${e.code}: ${e.message}`;
}

/** The error frame of the WebSocket stream: `{type:"error", code, message, data?}`. */
export function streamErrorFrame(err: unknown): { type: 'error'; code: number; message: string; data?: unknown } {
  return { type: 'error', ...jsonRpcErrorOf(err) };
}
