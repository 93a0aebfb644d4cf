import { limitReached, type RpcError } from '../../core/base/errors';

/* What the host's JSON-RPC peers (a session's socket, the control socket, /rpc over WebSocket) share. */

/** Unsent bytes above which a client counts as slow: its subscriptions wait for it to drain. */
export const CLIENT_HIGH_WATER_BYTES = 1024 * 1024;
/**
 * Unsent bytes above which a client's further requests wait (and we stop reading its input) until
 * it drains: a client that pipelines requests without reading the answers (a 1 MiB `pty/output`
 * each) would otherwise make the host buffer every answer. Above the subscriptions' mark, so a
 * subscriber's own stream never holds up its requests (an attached terminal's Ctrl+C).
 */
export const REQUEST_HIGH_WATER_BYTES = 4 * CLIENT_HIGH_WATER_BYTES;

/** The answer to a request past the in-flight limit (on every JSON-RPC transport). */
export function tooManyInFlight(max: number): RpcError {
  return limitReached(`Too many requests in flight on this connection: the limit is ${max}; wait for some answers`, 'inFlightRequests', max);
}

/** The id of a JSON-RPC request (null when it is not a usable one), undefined for a notification. */
export function requestId(message: unknown): string | number | null | undefined {
  if (typeof message !== 'object' || message === null || Array.isArray(message)) return null;
  if (!('id' in message)) return undefined;
  const id = (message as { id: unknown }).id;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}
