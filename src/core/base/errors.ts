/** JSON-RPC 2.0 error codes used on every transport (docs/protocol.md#4-error-codes). */
export const enum ErrorCode {
  ParseError = -32700,
  InvalidRequest = -32600,
  MethodNotFound = -32601,
  InvalidParams = -32602,
  InternalError = -32603,
  ServerError = -32000,
  UnknownSession = -32001,
  SessionBusy = -32002,
  /** The caller's token does not allow this call: its scope is too small, or it names another session (docs/protocol.md#scoped-tokens). */
  Forbidden = -32004,
}

/** One error code as the protocol reference lists it (docs/protocol.md#4-error-codes). */
export interface ErrorCodeDoc {
  code: ErrorCode;
  /** Its short name (the JSON-RPC specification's for the standard ones). */
  name: string;
  /** When a call gets it. */
  when: string;
}

/**
 * Every error code a call can get, with what it means: the one list docs/protocol.md's table is
 * generated from (scripts/protocol-tables.ts). A new code is a new row here.
 */
export const ERROR_CODES: readonly ErrorCodeDoc[] = [
  { code: ErrorCode.ParseError, name: 'Parse error', when: 'the line is not valid JSON or not valid UTF-8 (`id: null`)' },
  {
    code: ErrorCode.InvalidRequest,
    name: 'Invalid Request',
    when: 'not a single request object (batches included), `jsonrpc` is not `"2.0"`, `method` is not a string, `id` is missing, `params` is not an object, the legacy `{op}` protocol, or a line over the limit (after which the connection is closed)',
  },
  { code: ErrorCode.MethodNotFound, name: 'Method not found', when: 'unknown method, or a host method (`session/list`, `session/create`, `host/info`) on a per-session socket' },
  {
    code: ErrorCode.InvalidParams,
    name: 'Invalid params',
    when: 'schema violations (the message names the param), mutually exclusive params, an unknown key name (`data: {key}`), an invalid regex, a missing `session` on the control socket, a duplicate session name',
  },
  { code: ErrorCode.InternalError, name: 'Internal error', when: 'an unexpected failure in the host' },
  { code: ErrorCode.ServerError, name: 'Server error', when: 'the session has exited (`pty/write`, `pty/signal`, `pty/resize`), the program cannot be started' },
  { code: ErrorCode.UnknownSession, name: 'Unknown session', when: 'no session matches the selector, or more than one does (`data: {session}`)' },
  { code: ErrorCode.SessionBusy, name: 'Session busy', when: 'another `pty/send` is running in this session' },
  {
    code: ErrorCode.Forbidden,
    name: 'Forbidden',
    when: 'the caller\'s scoped token does not allow the call: the method needs a larger scope (the message names it), or another session, or a host method (see [Scoped tokens](#scoped-tokens))',
  },
];

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

  toJSON(): { code: number; message: string; data?: unknown } {
    return this.data === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, data: this.data };
  }
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

/** A call outside the caller's token (docs/protocol.md#scoped-tokens: HTTP 403, JSON-RPC -32004, MCP isError). */
export function forbidden(message: string): RpcError {
  return new RpcError(ErrorCode.Forbidden, `Forbidden: ${message}`);
}

/** What the `data` of an error over one of the host's limits says: which limit, and its value. */
export interface LimitData {
  limit: 'sessions' | 'connections' | 'inFlightRequests' | 'regexTime';
  max: number;
}

/**
 * A call or connection over one of the host's limits (README "Reliability"): -32000 with the limit
 * in `data`, so every transport can tell it apart (REST and `/mcp` answer it 429).
 */
export function limitReached(message: string, limit: LimitData['limit'], max: number): RpcError {
  return new RpcError(ErrorCode.ServerError, message, { limit, max } satisfies LimitData);
}

/** Whether `e` is a limitReached error. */
export function isLimitReached(e: RpcError): boolean {
  const data = e.data as Partial<LimitData> | undefined;
  return e.code === ErrorCode.ServerError && typeof data?.limit === 'string' && typeof data.max === 'number';
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
