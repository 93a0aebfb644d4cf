import type * as net from 'node:net';
import type WebSocket from 'ws';

/*
 * What ws (8) keeps private and the WebSocket endpoints need for back-pressure: the socket under a
 * WebSocket (`_socket`), to pause reading it and to hear it drain. Undefined when the shape is not
 * the expected one (the callers then do without). test/unit/transport/base/internals/ws.test.ts fails
 * when a new ws changes it.
 */

/** The TCP socket under a WebSocket. */
export function socketOf(ws: WebSocket): net.Socket | undefined {
  const socket = (ws as unknown as { _socket?: net.Socket })._socket;
  return socket && typeof socket.pause === 'function' && typeof socket.resume === 'function' && typeof socket.on === 'function' ? socket : undefined;
}
