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
