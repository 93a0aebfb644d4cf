import * as net from 'node:net';
import type { Readable, Writable } from 'node:stream';
import { Emitter, type Event } from '../../core/base/lifecycle';
import type { ClientDeclaration } from '../../core/io/caller';
import type { ControlParamsOf, MethodName, ResultOf } from '../../core/methods/table';
import { DEFAULT_MAX_LINE_BYTES, LineReader } from '../base/line-reader';
import { parseAddress, type Endpoint } from '../base/address';
import { JsonRpcPeer } from '../rpc/json-rpc-peer';
import { LineWire } from '../rpc/line-wire';
import type { Notification } from '../rpc/messages';

// What a call's answer can be lives with the peer (src/transport/rpc), which both ends share; the CLI and the editor import it from here.
export { ConnectionClosedError, RequestCancelledError, RpcCallError, type Notification } from '../rpc/messages';

/** What `RpcClient.call` takes for method `M`: its params on a control endpoint, and who calls. */
export type CallParams<M extends MethodName> = ControlParamsOf<M> & { client?: ClientDeclaration };

/**
 * Longest line the client reads from a host: 16 times a host's own limit, because an answer can
 * carry a whole screen, a scrollback or a ring read (`pty/output` of 1 MiB of raw output is more
 * once JSON-escaped). A longer one ends the connection with an error that says so.
 */
export const CLIENT_MAX_LINE_BYTES = 16 * DEFAULT_MAX_LINE_BYTES;

/** The two ends of a byte stream to a server: a socket, or a child process's stdout and stdin (a bridge). */
export interface RpcStream {
  /** What the server sends. */
  input: Readable;
  /** What we send it. */
  output: Writable;
  /** Ends the stream at once (closes the socket, ends the process's stdin). */
  destroy(): void;
}

/**
 * A JSON-RPC 2.0 client over a Unix or TCP socket, or over any byte stream (a `shared-pty
 * bridge` reached by ssh or exec): used by the CLI, `shared-pty mcp`, the editor and tests. It is
 * the one JSON-RPC peer (src/transport/rpc) as a client, on a line wire: it serves nothing,
 * matches answers to its calls, and reads a host's lines leniently (a socket-pty host's too).
 * Once the connection is gone every pending call fails with `ConnectionClosedError`, and the
 * client's listeners are let go.
 */
export class RpcClient {
  private readonly _peer: JsonRpcPeer;
  /** Notifications from the host (subscriptions' output, events), in the order they came. */
  readonly onNotification: Event<Notification>;
  private readonly _onClose = new Emitter<void>();
  /** Fires once, when the connection is gone (the host went away, or `close` was called). */
  readonly onClose = this._onClose.event;

  private constructor(private readonly _stream: RpcStream) {
    this._peer = new JsonRpcPeer(new LineWire(_stream.input, _stream.output));
    this.onNotification = this._peer.onNotification;
    const reader = new LineReader(
      CLIENT_MAX_LINE_BYTES,
      // As text, invalid UTF-8 replaced: a stray byte in a host's output costs a character, not the answer.
      (line) => this._peer.receive(line.toString('utf8')),
      () => this._lose(`the host sent a line longer than ${CLIENT_MAX_LINE_BYTES} bytes, the most this client reads`),
    );
    _stream.input.on('data', (c: Buffer) => reader.push(c));
    // A stream ends in one of these ways; any of them is the end of the connection. A last line
    // without its newline still counts, as the host takes one from a client.
    _stream.input.on('end', () => {
      reader.end();
      this._lose();
    });
    _stream.input.on('close', () => this._lose());
    _stream.input.on('error', () => this._lose());
    _stream.output.on('error', () => this._lose());
  }

  /** A client over an open byte stream (a bridge's stdout and stdin). */
  static overStream(stream: RpcStream): RpcClient {
    return new RpcClient(stream);
  }

  /** Connects to `unix:/path`, `tcp:host:port`, or an Endpoint. */
  static connect(address: string | Endpoint): Promise<RpcClient> {
    const ep = typeof address === 'string' ? parseAddress(address) : address;
    return new Promise((resolve, reject) => {
      const socket = ep.type === 'unix' ? net.connect(ep.path) : net.connect(ep.port, ep.host);
      socket.once('connect', () => {
        socket.off('error', reject);
        resolve(new RpcClient({ input: socket, output: socket, destroy: () => socket.destroy() }));
      });
      socket.once('error', reject);
    });
  }

  get closed(): boolean {
    return this._peer.isDisposed;
  }

  /**
   * Calls a method of the table on a control endpoint, typed by the table's params and result
   * (`client` says who calls: see caller.ts).
   */
  call<M extends MethodName>(method: M, params: CallParams<M>): Promise<ResultOf<M>> {
    return this.request<ResultOf<M>>(method, params as Record<string, unknown>);
  }

  /**
   * Calls any method by name (per-session sockets, where the session is implied, and tests). When
   * `signal` aborts first, the host is told to cancel the call (docs/protocol.md#cancelling-a-request).
   */
  request<T = unknown>(method: string, params: Record<string, unknown> = {}, signal?: AbortSignal): Promise<T> {
    return this._peer.request<T>(method, params, signal);
  }

  /** Sends what was asked so far, then closes the connection: pending calls fail with ConnectionClosedError. */
  close(): void {
    this._peer.flush();
    this._stream.output.end();
    this._stream.destroy();
    this._lose();
  }

  /** The connection is gone (`reason`, when it is more than a close): fails pending calls, lets listeners go. */
  private _lose(reason?: string): void {
    if (this._peer.isDisposed) return;
    if (reason) this._peer.lose(reason);
    else this._peer.dispose();
    this._stream.destroy();
    this._onClose.fire();
    // Nothing comes after the close: listeners are let go with it.
    this._onClose.dispose();
  }
}
