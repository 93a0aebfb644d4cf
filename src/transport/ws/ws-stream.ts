import type WebSocket from 'ws';
import { beforeMessageTooLong } from '../base/internals/ws';
import { tooLongError } from '../base/line-reader';
import { ErrorCode, invalidParams, RpcError, streamErrorFrame, toRpcError } from '../../core/base/errors';
import { reachSession } from '../../core/methods/access';
import { invoke } from '../../core/methods/dispatch';
import type { Session } from '../../core/session/session';
import { ClientLink } from '../../core/io/client-link';
import type { Grant } from '../../core/io/caller';
import type { NotificationSink } from '../../core/io/subscription';
import type { HostServices } from '../../core/methods/types';
import { wsCongested, wsWhenDrained } from './ws-sink';
import { DEFAULT_SNAPSHOT_SCROLLBACK } from '../../core/methods/screen-methods';
import { STREAM_CLOSE, writeFrame, type StreamServerFrame } from '../../core/methods/stream-frames';
import type { NotificationParams } from '../../core/methods/notifications';

/** What a read-only stream answers to input (the browser view shows it). */
const READ_ONLY = 'read-only: input is not accepted';

/** How a stream was opened. */
export interface StreamOptions {
  /**
   * What the client may do: input is accepted from `input` and `control` (not the view token,
   * not `?readonly=1`, not a `view` scoped token); a scoped token reaches its session only.
   */
  grant: Grant;
  /**
   * `?resync=1` (docs/guarantees.md#output-under-load, the browser view): where output was lost, send one
   * `{type:"snapshot", data, cols, rows}` that redraws the terminal, and go on from its cursor,
   * instead of closing with 4008. Clients of docs/protocol.md#websocket-get-sessionsidstream never ask, so never see it.
   */
  resync: boolean;
  /** The server's `maxPayload`: a longer message is answered with an `error` frame, then ws closes with 1009. */
  maxMessageBytes: number;
}

/**
 * `GET /sessions/:id/stream` (docs/protocol.md#websocket-get-sessionsidstream): replays retained output, then pushes
 * `{type:"data"}` and a final `{type:"exit"}`; takes `{type:"write"}`, `{type:"resize"}` and raw text.
 * Its messages are those of `core/methods/stream-frames.ts`.
 */
export function serveStream(services: HostServices, ws: WebSocket, selector: string, options: StreamOptions): void {
  const { grant } = options;
  const canWrite = grant.scope !== 'view';
  // A protocol error (a message over maxPayload: 1009, a bad frame) is reported here and then the
  // socket closes; without a listener the 'error' event would be thrown and end the whole host.
  ws.on('error', () => {});
  const send = (frame: StreamServerFrame) => ws.send(JSON.stringify(frame));
  // Said before ws's close frame, as /rpc says it: a client learns why its stream ended.
  beforeMessageTooLong(ws, () => send(streamErrorFrame(tooLongError(options.maxMessageBytes, 'message'))));
  let session: Session;
  try {
    // The upgrade was refused (403) for a session out of the token's reach: what is left is unknown.
    session = reachSession(services.registry, grant, selector);
  } catch (e) {
    // Its own words (an ambiguous prefix is not an unknown session), as REST and /rpc say them.
    ws.close(STREAM_CLOSE.unknownSession.code, closeReason(toRpcError(e).message));
    return;
  }
  const abort = new AbortController();
  let replayed = false;
  /** True from a gap until the picture that replaces it is out: the old subscription's leftovers are not sent. */
  let resyncing = false;
  const sink: NotificationSink = {
    // The params are the host's own pty/output and pty/exit, made by the subscription (core/io/subscription.ts).
    notify(method, params) {
      if (resyncing) return;
      if (method === 'pty/output') {
        // With the opt-in, even the first replay resyncs: a replay cut by the ring may start mid-sequence.
        if (params.dropped && options.resync) return void resync();
        if (params.dropped && replayed) {
          ws.close(STREAM_CLOSE.tooSlow.code, 'client too slow: output was dropped');
          return;
        }
        replayed = true;
        send({ type: 'data', data: (params as NotificationParams<'pty/output'>).data });
      } else if (method === 'pty/exit') {
        send({ type: 'exit', exitCode: (params as NotificationParams<'pty/exit'>).exitCode });
        ws.close(STREAM_CLOSE.exited.code, 'session exited');
      }
    },
    congested: () => wsCongested(ws),
    whenDrained: (fn) => wsWhenDrained(ws, fn),
  };
  // The browser view is this endpoint's client, so its input is the human's ('user'), unless its
  // token is one an agent holds (the link then says 'agent'); its writes and resizes go through
  // the method table, which checks them against the token's scope and the agent guards.
  const link = new ClientLink({ origin: 'user', transport: 'ws-stream', ...grant, sink });
  const call = (method: string, params: Record<string, unknown>) =>
    invoke(method, { session: session.id, ...params }, { mode: { kind: 'control' }, services, caller: link, signal: abort.signal }).catch((e: Error) => {
      if (ws.readyState === ws.OPEN) send(streamErrorFrame(e));
    });

  ws.on('message', (raw, isBinary) => {
    // A socket being closed (its token revoked) takes no more input, even if the client keeps sending.
    if (ws.readyState !== ws.OPEN) return;
    const text = isBinary ? Buffer.from(raw as Buffer).toString('utf8') : raw.toString();
    // A JSON object with a string `type` is a message; its fields are read through its schema.
    let msg: { type: string; cols?: unknown; rows?: unknown } | undefined;
    try {
      const v = JSON.parse(text);
      if (v && typeof v === 'object' && !Array.isArray(v) && typeof v.type === 'string') msg = v;
    } catch {
      // not JSON: raw input, as the stream protocol says (docs/protocol.md#websocket-get-sessionsidstream)
    }
    if (!canWrite) {
      if (!msg || msg.type !== 'resize') send(streamErrorFrame(new RpcError(ErrorCode.Forbidden, READ_ONLY)));
      return;
    }
    if (!msg) return void call('pty/write', { action: { text } });
    const write = msg.type === 'write' ? writeFrame.schema.safeParse(msg) : undefined;
    if (write?.success) {
      const { data, submit } = write.data;
      return void call('pty/write', { action: { text: submit === true && !/[\r\n]$/.test(data) ? data + '\n' : data } });
    }
    // The size is pty/resize's to check (its message names the param), as for every other client.
    if (msg.type === 'resize') return void call('pty/resize', { cols: msg.cols, rows: msg.rows });
    // A write whose fields are wrong says which, rather than that `write` is unknown.
    const why = write?.error.issues.map((i) => `${i.path.join('.') || 'message'}: ${i.message}`).join('; ');
    send(streamErrorFrame(invalidParams(why ? `invalid write message: ${why}` : `unknown message type: ${msg.type}`)));
  });
  ws.on('close', () => {
    abort.abort();
    link.dispose();
  });

  /** Replaces the lossy subscription with one that starts from a fresh picture, sent first. */
  function resync(): void {
    resyncing = true;
    subscribe({ snapshot: true, scrollback: DEFAULT_SNAPSHOT_SCROLLBACK }).then(
      ({ answer, starts }) => {
        resyncing = false;
        if (ws.readyState !== ws.OPEN) return;
        const { snapshot } = answer as { snapshot: string };
        send({ type: 'snapshot', data: snapshot, cols: session.cols, rows: session.rows });
        for (const start of starts) start();
      },
      () => ws.close(STREAM_CLOSE.tooSlow.code, 'output was dropped and the terminal could not be redrawn'),
    );
  }
  // The replay and the live output come from pty/subscribe, through the method table as any client's.
  subscribe({ since: 0 }).then(
    ({ starts }) => starts.forEach((start) => start()),
    (e: unknown) => ws.readyState === ws.OPEN && ws.close(STREAM_CLOSE.unknownSession.code, closeReason(toRpcError(e).message)),
  );

  /** Subscribes the link through the table; resolves with its answer and what starts the notifications (after the answer). */
  async function subscribe(params: Record<string, unknown>): Promise<{ answer: unknown; starts: Array<() => void> }> {
    const starts: Array<() => void> = [];
    const opts = { mode: { kind: 'control' as const }, services, caller: link, signal: abort.signal, afterResponse: (fn: () => void) => starts.push(fn) };
    const answer = await invoke('pty/subscribe', { session: session.id, ...params }, opts);
    return { answer, starts };
  }
}

/** A WebSocket close reason is at most 123 bytes (ws throws on more): a longer message is cut, never inside a character. */
const MAX_CLOSE_REASON_BYTES = 123;

function closeReason(message: string): string {
  const bytes = Buffer.from(message);
  if (bytes.length <= MAX_CLOSE_REASON_BYTES) return message;
  let end = MAX_CLOSE_REASON_BYTES - 3; // room for "..."
  while (end > 0 && (bytes[end] & 0xc0) === 0x80) end--; // back to a character's first byte
  return `${bytes.subarray(0, end).toString('utf8')}...`;
}
