import type { Duplex } from 'node:stream';
import { dispatch, errorResponse, type DispatchMode, type JsonRpcResponse } from '../core/dispatch';
import { ErrorCode, RpcError } from '../core/errors';
import { toDisposable, type IDisposable } from '../core/lifecycle';
import type { Connection, HostServices } from '../core/types';
import { DEFAULT_MAX_LINE_BYTES, LineReader } from './line-reader';

/** Unsent bytes above which a client counts as slow: its subscriptions wait for it to drain. */
export const CLIENT_HIGH_WATER_BYTES = 1024 * 1024;

const utf8 = new TextDecoder('utf-8', { fatal: true });

export interface RpcConnectionOptions {
  mode: DispatchMode;
  services: HostServices;
  maxLineBytes?: number;
}

/**
 * One JSON-RPC client on a stream socket: newline framing, validation at the edge, calls run
 * concurrently (a long `pty/wait` does not block a `pty/read`), notifications out.
 */
export class RpcConnection implements Connection {
  readonly subscriptions = new Map<string, IDisposable>();
  private readonly _abort = new AbortController();
  private _closed = false;

  constructor(
    private readonly _socket: Duplex,
    private readonly _options: RpcConnectionOptions,
  ) {
    const reader = new LineReader(
      _options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES,
      (line) => void this._handleLine(line),
      () => this._rejectOversizedLine(),
    );
    _socket.on('data', (chunk: Buffer) => reader.push(chunk));
    _socket.on('close', () => this._close());
    _socket.on('error', () => this._close());
  }

  notify(method: string, params: Record<string, unknown>): void {
    this._write({ jsonrpc: '2.0', method, params });
  }

  congested(): boolean {
    return this._socket.writableLength > CLIENT_HIGH_WATER_BYTES;
  }

  whenDrained(fn: () => void): IDisposable {
    const once = () => {
      this._socket.off('drain', once);
      this._socket.off('close', once);
      if (!this._closed) fn();
    };
    this._socket.on('drain', once);
    this._socket.on('close', once);
    return toDisposable(() => {
      this._socket.off('drain', once);
      this._socket.off('close', once);
    });
  }

  private async _handleLine(raw: Buffer): Promise<void> {
    if (raw.length > 0 && raw[raw.length - 1] === 0x0d) raw = raw.subarray(0, -1); // tolerate CRLF
    if (raw.length === 0) return;
    let message: unknown;
    try {
      message = JSON.parse(utf8.decode(raw));
    } catch (e) {
      const what = e instanceof SyntaxError ? 'invalid JSON' : 'invalid UTF-8';
      this._write(errorResponse(null, new RpcError(ErrorCode.ParseError, `Parse error: ${what}`)));
      return;
    }
    const { response, afterSend } = await dispatch(message, {
      mode: this._options.mode,
      services: this._options.services,
      connection: this,
      signal: this._abort.signal,
    });
    if (this._closed) return;
    this._write(response);
    for (const fn of afterSend) fn();
  }

  private _rejectOversizedLine(): void {
    const limit = this._options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
    this._write(errorResponse(null, new RpcError(ErrorCode.InvalidRequest, `Invalid Request: line longer than ${limit} bytes; closing the connection`)));
    this._socket.end();
    // A client that keeps sending must not keep the socket open for ever.
    setTimeout(() => this._socket.destroy(), 1000).unref();
  }

  private _write(msg: JsonRpcResponse | Record<string, unknown>): void {
    if (this._closed || this._socket.destroyed || !this._socket.writable) return;
    this._socket.write(JSON.stringify(msg) + '\n');
  }

  private _close(): void {
    if (this._closed) return;
    this._closed = true;
    this._abort.abort();
    for (const s of this.subscriptions.values()) s.dispose();
    this.subscriptions.clear();
  }
}
