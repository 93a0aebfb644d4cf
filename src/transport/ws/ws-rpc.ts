import type WebSocket from 'ws';
import type { IDisposable } from '../../core/base/lifecycle';
import { FULL_GRANT, type Grant } from '../../core/io/caller';
import type { HostServices } from '../../core/methods/types';
import { MAX_IN_FLIGHT_REQUESTS } from '../../core/base/limits';
import type { MessageWire } from '../rpc/json-rpc-peer';
import { TablePeer } from '../rpc/table-peer';
import { wsUnsentBytes, wsWhenDrained } from './ws-sink';
import { beforeMessageTooLong } from '../base/internals/ws';
import { DEFAULT_MAX_LINE_BYTES, tooLongError } from '../base/line-reader';

/** A WebSocket as a peer's wire: one message per frame; each frame is its own write (ws sends at once). */
class WebSocketWire implements MessageWire {
  constructor(private readonly _ws: WebSocket) {}

  get writable(): boolean {
    return this._ws.readyState === this._ws.OPEN;
  }

  get unsentBytes(): number {
    return wsUnsentBytes(this._ws);
  }

  send(text: string): void {
    this._ws.send(text);
  }

  cork(): void {}

  uncork(): void {}

  whenDrained(fn: () => void): IDisposable {
    return wsWhenDrained(this._ws, fn);
  }

  pauseInput(): void {
    this._ws.pause();
  }

  resumeInput(): void {
    this._ws.resume();
  }

  /** A WebSocket has no half-close: the peer never ends it (it closes whole, and disposes the peer). */
  end(): void {}
}

/**
 * `GET /rpc` (WebSocket): the control socket's JSON-RPC, one message per frame, on the same peer
 * as the sockets (its limits, its back-pressure); the peer is disposed when the socket closes.
 * `ws` comes from a server whose `maxPayload` is `maxMessageBytes`, the host's line limit: a longer
 * message is answered as a longer line is on a socket (-32600, `id: null`), then ws closes with 1009.
 */
export function serveRpcWebSocket(
  services: HostServices,
  ws: WebSocket,
  grant: Grant = FULL_GRANT,
  maxInFlight = MAX_IN_FLIGHT_REQUESTS,
  maxMessageBytes = DEFAULT_MAX_LINE_BYTES,
): TablePeer {
  // A protocol error (a message over maxPayload: 1009, a bad frame) is reported here and then the
  // socket closes; without a listener the 'error' event would be thrown and end the whole host.
  ws.on('error', () => {});
  const peer = new TablePeer(new WebSocketWire(ws), {
    mode: { kind: 'control' },
    services,
    maxInFlightRequests: maxInFlight,
    link: { origin: 'script', transport: 'ws-rpc', ...grant },
  });
  // ws knows a message is too long from its frame's header, before holding it: the error goes out
  // then, ahead of ws's close frame, so memory stays bounded by the limit itself.
  beforeMessageTooLong(ws, () => peer.refuse(tooLongError(maxMessageBytes, 'message')));
  ws.on('message', (raw) => {
    // A socket being closed (its token revoked) takes no more calls, even if the client keeps sending.
    if (ws.readyState !== ws.OPEN) return;
    // A text frame is UTF-8 (ws checks it); a binary one is read as text as it always was.
    peer.receive(raw.toString());
  });
  ws.on('close', () => peer.dispose());
  return peer;
}
