import type WebSocket from 'ws';
import { toDisposable, type IDisposable } from '../../core/base/lifecycle';
import { CLIENT_HIGH_WATER_BYTES } from '../rpc/json-rpc-peer';

/** Backpressure helpers shared by the WebSocket endpoints: a slow client waits on the ring, not in our memory. */
export function wsCongested(ws: WebSocket): boolean {
  return wsUnsentBytes(ws) > CLIENT_HIGH_WATER_BYTES;
}

/** Bytes sent on `ws` and not yet taken by its client. */
export function wsUnsentBytes(ws: WebSocket): number {
  return ws.bufferedAmount;
}

export function wsWhenDrained(ws: WebSocket, fn: () => void): IDisposable {
  const socket = (ws as unknown as { _socket?: NodeJS.EventEmitter })._socket;
  let done = false;
  const once = () => {
    if (done) return;
    done = true;
    cleanup();
    if (ws.readyState === ws.OPEN) fn();
  };
  const cleanup = () => {
    socket?.off('drain', once);
    ws.off('close', once);
  };
  socket?.on('drain', once);
  ws.on('close', once);
  return toDisposable(() => {
    done = true;
    cleanup();
  });
}
