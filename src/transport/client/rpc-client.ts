import * as net from 'node:net';
import { Emitter } from '../../core/base/lifecycle';
import type { ClientDeclaration } from '../../core/io/caller';
import type { ControlParamsOf, MethodName, ResultOf } from '../../core/methods/table';
import { DEFAULT_MAX_LINE_BYTES, LineReader } from '../socket/line-reader';
import { parseAddress, type Endpoint } from '../socket/address';
import { ConnectionClosedError, RpcCallError, type Notification } from '../rpc/messages';

// What a call's answer can be lives with the peer (src/transport/rpc), which both ends share; the CLI and the editor import it from here.
export { ConnectionClosedError, RpcCallError, type Notification } from '../rpc/messages';

/** What `RpcClient.call` takes for method `M`: its params on a control endpoint, and who calls. */
export type CallParams<M extends MethodName> = ControlParamsOf<M> & { client?: ClientDeclaration };

/** The two ends of a byte stream to a server: a socket, or a child process's stdout and stdin (a bridge). */
export interface RpcStream {
  /** What the server sends. */
  input: NodeJS.ReadableStream & { on(event: 'close' | 'error' | 'end', listener: (...args: unknown[]) => void): unknown };
  /** What we send it. */
  output: NodeJS.WritableStream & { on(event: 'error', listener: (...args: unknown[]) => void): unknown };
  /** Ends the stream at once (closes the socket, ends the process's stdin). */
  destroy(): void;
}

/**
 * A small JSON-RPC 2.0 client over a Unix or TCP socket, or over any byte stream (a `shared-pty
 * bridge` reached by ssh or exec): used by the CLI, `shared-pty mcp`, the editor and tests.
 */
export class RpcClient {
  private _nextId = 1;
  private readonly _pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  private readonly _onNotification = new Emitter<Notification>();
  readonly onNotification = this._onNotification.event;
  private readonly _onClose = new Emitter<void>();
  readonly onClose = this._onClose.event;
  private _closed = false;

  private constructor(private readonly _stream: RpcStream) {
    const reader = new LineReader(
      // Responses can carry a whole screen or ring read; allow generous lines.
      16 * DEFAULT_MAX_LINE_BYTES,
      (line) => this._handle(line),
      () => _stream.destroy(),
    );
    _stream.input.on('data', (c: Buffer) => reader.push(c));
    // A stream ends in one of these ways; any of them is the end of the connection.
    _stream.input.on('end', () => this._handleClose());
    _stream.input.on('close', () => this._handleClose());
    _stream.input.on('error', () => this._handleClose());
    _stream.output.on('error', () => this._handleClose());
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
    return this._closed;
  }

  /**
   * Calls a method of the table on a control endpoint, typed by the table's params and result
   * (`client` says who calls: see caller.ts).
   */
  call<M extends MethodName>(method: M, params: CallParams<M>): Promise<ResultOf<M>> {
    return this.request<ResultOf<M>>(method, params as Record<string, unknown>);
  }

  /** Calls any method by name (per-session sockets, where the session is implied, and tests). */
  request<T = unknown>(method: string, params: Record<string, unknown> = {}): Promise<T> {
    if (this._closed) return Promise.reject(new ConnectionClosedError());
    const id = this._nextId++;
    return new Promise<T>((resolve, reject) => {
      this._pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this._stream.output.write(JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n');
    });
  }

  close(): void {
    this._stream.output.end();
    this._stream.destroy();
  }

  private _handle(line: Buffer): void {
    let msg: { id?: unknown; method?: string; params?: Record<string, unknown>; result?: unknown; error?: { code: number; message: string; data?: unknown } };
    try {
      msg = JSON.parse(line.toString('utf8'));
    } catch {
      return;
    }
    if (typeof msg.method === 'string' && msg.id === undefined) {
      this._onNotification.fire({ method: msg.method, params: msg.params ?? {} });
      return;
    }
    const pending = typeof msg.id === 'number' ? this._pending.get(msg.id) : undefined;
    if (!pending) return;
    this._pending.delete(msg.id as number);
    if (msg.error) pending.reject(new RpcCallError(msg.error.code, msg.error.message, msg.error.data));
    else pending.resolve(msg.result);
  }

  private _handleClose(): void {
    if (this._closed) return;
    this._closed = true;
    for (const p of this._pending.values()) p.reject(new ConnectionClosedError());
    this._pending.clear();
    this._onClose.fire();
    // Nothing comes after the close: listeners are let go with it.
    this._onNotification.dispose();
    this._onClose.dispose();
  }
}
