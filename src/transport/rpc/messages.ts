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
  /**
   * `refusal`: what the other end said, with id null, before it closed (a limit reached: "Too
   * many connections"), for a client to tell its user rather than only that it closed.
   */
  constructor(
    reason?: string,
    readonly refusal?: string,
  ) {
    super(reason ? `Connection closed: ${reason}` : 'Connection closed');
    this.name = 'ConnectionClosedError';
  }
}

/** A notification from the other end (no id, no answer). */
export interface Notification {
  method: string;
  params: Record<string, unknown>;
}

/**
 * The notification that cancels a request of the sender still in flight: `{ id }` names it
 * (docs/protocol.md#cancelling-a-request). The call ends as if its caller had gone away (a wait
 * answers as its timeout would) and its answer still comes; nothing else of the connection changes.
 */
export const CANCEL_REQUEST = '$/cancelRequest';

/** The call was cancelled by its caller (`request`'s signal aborted): its answer, if any comes, is dropped. */
export class RequestCancelledError extends Error {
  readonly code = 'REQUEST_CANCELLED';
  constructor(method: string) {
    super(`Cancelled: ${method}`);
    this.name = 'RequestCancelledError';
  }
}
