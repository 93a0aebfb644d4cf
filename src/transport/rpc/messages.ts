// What either end of a JSON-RPC connection sees of the other: its error answers, its notifications, its going away.

/** An error answer from the other end, with its JSON-RPC code. */
export class RpcCallError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = 'RpcCallError';
  }
}

/**
 * The connection closed before the answer came (the other end went away, or we closed it);
 * `reason` says why, when that is known (a line over the limit, the other end's refusal).
 */
export class ConnectionClosedError extends Error {
  readonly code = 'CONNECTION_CLOSED';
  constructor(reason?: string) {
    super(reason ? `Connection closed: ${reason}` : 'Connection closed');
    this.name = 'ConnectionClosedError';
  }
}

/** A notification from the other end (no id, no answer). */
export interface Notification {
  method: string;
  params: Record<string, unknown>;
}
