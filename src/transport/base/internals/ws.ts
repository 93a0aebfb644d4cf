import type { EventEmitter } from 'node:events';
import type * as net from 'node:net';
import type WebSocket from 'ws';

/*
 * What ws (8) keeps private and the WebSocket endpoints need: the socket under a WebSocket
 * (`_socket`), to pause reading it and to hear it drain (back-pressure); and its frame reader
 * (`_receiver`), to answer a message over the size limit before ws closes the connection. Undefined
 * or false when the shape is not the expected one (the callers then do without).
 * test/unit/transport/base/internals/ws.test.ts fails when a new ws changes it.
 */

/** The TCP socket under a WebSocket. */
export function socketOf(ws: WebSocket): net.Socket | undefined {
  const socket = (ws as unknown as { _socket?: net.Socket })._socket;
  return socket && typeof socket.pause === 'function' && typeof socket.resume === 'function' && typeof socket.on === 'function' ? socket : undefined;
}

/** The error codes of ws's frame reader for a message over `maxPayload` (or over 2^53 bytes, past any limit). */
const MESSAGE_TOO_LONG = new Set(['WS_ERR_UNSUPPORTED_MESSAGE_LENGTH', 'WS_ERR_UNSUPPORTED_DATA_PAYLOAD_LENGTH']);

/**
 * Calls `fn` when a message over the server's `maxPayload` starts to come, while the WebSocket is
 * still open: ws learns it from the frame's header (so it never holds more than `maxPayload`), then
 * closes with 1009 at once, before any public event, and nothing can be sent after its close frame.
 * Its reader reports the error first to its own listener, which sends that close frame; `fn` is put
 * before it. False when the reader is not where ws 8 keeps it: the message still closes with 1009.
 */
export function beforeMessageTooLong(ws: WebSocket, fn: () => void): boolean {
  const receiver = (ws as unknown as { _receiver?: EventEmitter | null })._receiver;
  if (!receiver || typeof receiver.prependListener !== 'function') return false;
  receiver.prependListener('error', (err: { code?: unknown }) => {
    if (typeof err?.code === 'string' && MESSAGE_TOO_LONG.has(err.code)) fn();
  });
  return true;
}
