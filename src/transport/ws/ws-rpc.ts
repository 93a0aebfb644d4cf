import type WebSocket from 'ws';
import { dispatch, errorResponse } from '../../core/methods/dispatch';
import { ErrorCode, RpcError } from '../../core/base/errors';
import type { IDisposable } from '../../core/base/lifecycle';
import { ClientLink } from '../../core/io/client-link';
import { FULL_GRANT, type Grant } from '../../core/io/caller';
import type { HostServices } from '../../core/methods/types';
import { MAX_IN_FLIGHT_REQUESTS } from '../../core/base/limits';
import { REQUEST_HIGH_WATER_BYTES, requestId, tooManyInFlight } from '../base/json-rpc';
import { socketOf } from '../base/internals/ws';
import { wsCongested, wsWhenDrained } from './ws-sink';

/** `GET /rpc` (WebSocket): the control socket's JSON-RPC, one message per frame. */
export function serveRpcWebSocket(services: HostServices, ws: WebSocket, grant: Grant = FULL_GRANT, maxInFlight = MAX_IN_FLIGHT_REQUESTS): void {
  // A protocol error (a message over maxPayload: 1009, a bad frame) is reported here and then the
  // socket closes; without a listener the 'error' event would be thrown and end the whole host.
  ws.on('error', () => {});
  const abort = new AbortController();
  const link = new ClientLink({
    origin: 'script',
    transport: 'ws-rpc',
    scope: grant.scope,
    onlySession: grant.onlySession,
    holder: grant.holder,
    sink: {
      notify: (method, params) => send({ jsonrpc: '2.0', method, params }),
      congested: () => wsCongested(ws),
      whenDrained: (fn) => wsWhenDrained(ws, fn),
    },
  });
  /** Requests started and not yet answered (bounded: maxInFlight). */
  let inFlight = 0;
  function send(msg: unknown) {
    if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(msg));
  }
  ws.on('message', async (raw) => {
    // A socket being closed (its token revoked) takes no more calls, even if the client keeps sending.
    if (ws.readyState !== ws.OPEN) return;
    let message: unknown;
    try {
      message = JSON.parse(raw.toString());
    } catch {
      return send(errorResponse(null, new RpcError(ErrorCode.ParseError, 'Parse error: invalid JSON')));
    }
    if (inFlight >= maxInFlight) {
      // Answered at once and not run, as on the sockets; a notification gets nothing.
      const id = requestId(message);
      if (id !== undefined) send(errorResponse(id, tooManyInFlight(maxInFlight)));
      return;
    }
    inFlight++;
    let answer: Awaited<ReturnType<typeof dispatch>>;
    try {
      answer = await dispatch(message, { mode: { kind: 'control' }, services, caller: link, signal: abort.signal });
    } finally {
      inFlight--;
    }
    const { response, afterSend } = answer;
    send(response);
    for (const fn of afterSend) fn();
    throttle();
  });
  // A client that sends requests without reading the answers: stop reading it until it catches up,
  // so its unsent answers stay bounded (as on the stream sockets).
  const socket = socketOf(ws);
  let waiting: IDisposable | undefined;
  function throttle() {
    if (waiting || !socket || ws.bufferedAmount <= REQUEST_HIGH_WATER_BYTES) return;
    socket.pause();
    waiting = wsWhenDrained(ws, () => {
      waiting = undefined;
      socket.resume();
    });
  }
  ws.on('close', () => {
    waiting?.dispose();
    abort.abort();
    link.dispose();
  });
}
