import type { Duplex } from 'node:stream';
import { dialectOf, dispatch, errorResponse, type DispatchMode, type JsonRpcResponse } from '../../core/methods/dispatch';
import { ErrorCode, limitReached, RpcError } from '../../core/base/errors';
import { toDisposable, type IDisposable } from '../../core/base/lifecycle';
import type { HostServices } from '../../core/methods/types';
import type { NotificationSink } from '../../core/io/subscription';
import { ClientLink } from '../../core/io/client-link';
import { FrameWriter } from './frame-writer';
import { DEFAULT_MAX_LINE_BYTES, LineReader } from './line-reader';
import { firstByteFitsJsonRpc, isBlankLine, isJsonRpcLine, NOT_JSON_RPC_MESSAGE } from './first-line';
import { MAX_IN_FLIGHT_REQUESTS } from '../../core/base/limits';

/** Unsent bytes above which a client counts as slow: its subscriptions wait for it to drain. */
export const CLIENT_HIGH_WATER_BYTES = 1024 * 1024;
/**
 * Unsent bytes above which a client's further requests wait (and we stop reading its input) until
 * it drains: a client that pipelines requests without reading the answers (a 1 MiB `pty/output`
 * each) would otherwise make the host buffer every answer. Above the subscriptions' mark, so a
 * subscriber's own stream never holds up its requests (an attached terminal's Ctrl+C).
 */
export const REQUEST_HIGH_WATER_BYTES = 4 * CLIENT_HIGH_WATER_BYTES;
/** Requests started per event-loop turn from one client's queue; their answers are written before the next batch. */
const REQUESTS_PER_TURN = 16;
/**
 * After a client ends its input, how often we check it is still there to read. An end of input
 * looks the same whether the client half-closed (`nc -N`: it waits for the answer) or closed
 * altogether (it was killed): only a write tells them apart, failing once nobody reads. So a
 * half-closed connection that still has something coming gets one space every so often: JSON
 * allows whitespace before a value, so it is part of the next line to any parser, and a client
 * that is gone is found within about this long (its send lock and client count released).
 */
const HALF_CLOSED_PROBE_MS = 500;

/** How long a refused connection may take to read its one error line before it is cut. */
const REFUSED_LINGER_MS = 1000;

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

const utf8 = new TextDecoder('utf-8', { fatal: true });

export interface RpcConnectionOptions {
  mode: DispatchMode;
  services: HostServices;
  maxLineBytes?: number;
  /** Requests started and not yet answered, at most (default MAX_IN_FLIGHT_REQUESTS). */
  maxInFlightRequests?: number;
  /**
   * Close the connection, acting on nothing in it, unless its first line is a JSON-RPC message
   * (see first-line.ts): set on TCP ports, which any web page can make a browser send HTTP to.
   */
  jsonRpcFirst?: boolean;
}

/**
 * One JSON-RPC client on a stream socket: newline framing, validation at the edge, calls run
 * concurrently (a long `pty/wait` does not block a `pty/read`), notifications out. Who the client
 * is and what it holds lives in its ClientLink, released when the socket closes.
 */
export class RpcConnection implements NotificationSink {
  /** The caller this socket carries (a script until it says otherwise). */
  readonly link: ClientLink;
  private readonly _abort = new AbortController();
  private _closed = false;
  /** Lines read and not yet dispatched (at most about one read's worth: we stop reading meanwhile). */
  private readonly _queue: Buffer[] = [];
  /** Requests started in this event-loop turn (their answers are written by the turn's end). */
  private _startedThisTurn = 0;
  private _drainWait: IDisposable | undefined;
  private _readingPaused = false;
  /** The client ended its input (a half-close): answer what it asked, then close our side. */
  private _inputEnded = false;
  /** Requests started and not yet answered. */
  private _inFlight = 0;
  private _probe: NodeJS.Timeout | undefined;
  private readonly _out: FrameWriter;
  /** Nothing has shown yet that the client speaks JSON-RPC (on a port that requires it first). */
  private _unproven: boolean;
  /** The first byte that is not whitespace has come (and could begin a JSON-RPC message). */
  private _firstByteSeen = false;
  /** Refused as not JSON-RPC: nothing more it sent is read. */
  private _refused = false;

  constructor(
    private readonly _socket: Duplex,
    private readonly _options: RpcConnectionOptions,
  ) {
    this._out = new FrameWriter(_socket);
    this._unproven = _options.jsonRpcFirst === true;
    const { mode } = _options;
    this.link = new ClientLink({
      origin: 'script',
      transport: mode.kind === 'session' ? 'socket' : 'control',
      sink: this,
      home: mode.kind === 'session' ? mode.session : undefined,
    });
    const reader = new LineReader(
      _options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES,
      (line) => {
        if (this._refused) return;
        if (this._unproven) {
          if (isBlankLine(line)) return;
          if (!isJsonRpcLine(line)) return this._refuseNotJsonRpc();
          this._unproven = false;
        }
        this._queue.push(line);
        this._pump();
      },
      () => this._rejectOversizedLine(),
    );
    _socket.on('data', (chunk: Buffer) => {
      if (this._refused) return;
      // An HTTP request line is refused at its first byte: no need to wait for the line's end.
      if (this._unproven && !this._firstByteSeen) {
        const fits = firstByteFitsJsonRpc(chunk);
        if (fits === false) return this._refuseNotJsonRpc();
        this._firstByteSeen = fits === true;
      }
      reader.push(chunk);
    });
    // End of input is not "client gone" (the socket is half-open): only a full close or a write
    // error is. Pending answers and live subscriptions are still sent.
    _socket.on('end', () => {
      if (this._refused) return;
      reader.end();
      this._inputEnded = true;
      this._finishIfDone();
      if (!this._closed) this._probe = setInterval(() => this._probeReader(), HALF_CLOSED_PROBE_MS).unref();
    });
    _socket.on('close', () => this._close());
    _socket.on('error', () => this._close());
  }

  notify(method: string, params: Record<string, unknown>): void {
    this._write({ jsonrpc: '2.0', method, params });
    if (method === 'pty/exit') this._finishIfDone();
  }

  cork(): void {
    this._out.cork();
  }

  uncork(): void {
    this._out.uncork();
  }

  congested(): boolean {
    return this._socket.writableLength + this._out.gatheredBytes > CLIENT_HIGH_WATER_BYTES;
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

  /**
   * Starts queued requests while the client keeps up with our answers. Calls still run
   * concurrently; only the start of new ones waits while too much is unsent to this client.
   */
  private _pump(): void {
    if (this._closed || this._drainWait) return;
    while (this._queue.length > 0) {
      if (this._socket.writableLength > REQUEST_HIGH_WATER_BYTES) {
        this._drainWait = this.whenDrained(() => {
          this._drainWait = undefined;
          this._pump();
        });
        break;
      }
      if (this._startedThisTurn >= REQUESTS_PER_TURN) break; // the turn's end pumps again
      if (this._startedThisTurn++ === 0) {
        setImmediate(() => {
          this._startedThisTurn = 0;
          this._pump();
        });
      }
      void this._handleLine(this._queue.shift()!);
    }
    this._setReading(this._queue.length === 0);
  }

  /** Stops reading the client's input while requests wait in the queue (the kernel holds the rest). */
  private _setReading(on: boolean): void {
    if (on === !this._readingPaused || this._closed) return;
    this._readingPaused = !on;
    if (on) this._socket.resume();
    else this._socket.pause();
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
      this._finishIfDone();
      return;
    }
    const max = this._options.maxInFlightRequests ?? MAX_IN_FLIGHT_REQUESTS;
    if (this._inFlight >= max) return this._refuseOverLimit(message, max);
    this._inFlight++;
    try {
      const { response, afterSend } = await dispatch(message, {
        mode: this._options.mode,
        services: this._options.services,
        caller: this.link,
        signal: this._abort.signal,
      });
      if (this._closed) return;
      this._write(response);
      if (afterSend.length > 0) this._endTurn(); // the answer leaves before what follows it (a close, an exit)
      for (const fn of afterSend) fn();
    } finally {
      this._inFlight--;
      this._finishIfDone();
    }
  }

  /**
   * A request past the in-flight limit is answered at once (a notification gets nothing) and not
   * run: one client cannot pile up thousands of day-long `pty/wait`s. The connection stays open.
   */
  private _refuseOverLimit(message: unknown, max: number): void {
    const id = requestId(message);
    if (id === undefined) return this._finishIfDone();
    this._write(errorResponse(id, tooManyInFlight(max), dialectOf(this._options.mode)));
    this._finishIfDone();
  }

  /**
   * After a half-close, ends our side once every request read has been answered and no
   * subscription has more to send (its session exited). Checked a turn later, so a subscription
   * started by the last answer and notifications gathered in a pump are counted and flushed.
   */
  private _finishIfDone(): void {
    if (!this._inputEnded || this._closed) return;
    setImmediate(() => {
      if (this._closed || this._queue.length > 0 || this._inFlight > 0 || this.link.streaming) return;
      this._endTurn();
      this._socket.end();
    });
  }

  /** One space to a half-closed client: harmless to one that reads, a write error for one that is gone. */
  private _probeReader(): void {
    if (this._closed || this._socket.destroyed || !this._socket.writable) return;
    this._socket.write(' ');
  }

  /**
   * The first line is not JSON-RPC (an HTTP request a web page made the browser send): one error
   * line, then the connection closes. Nothing it sent is read any further, let alone run.
   */
  private _refuseNotJsonRpc(): void {
    this._refused = true;
    this._socket.pause();
    this._write(errorResponse(null, new RpcError(ErrorCode.InvalidRequest, NOT_JSON_RPC_MESSAGE)));
    this._endTurn();
    this._socket.end();
    // A client that never reads its end must not keep the socket open.
    setTimeout(() => this._socket.destroy(), REFUSED_LINGER_MS).unref();
  }

  private _rejectOversizedLine(): void {
    const limit = this._options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
    this._write(errorResponse(null, new RpcError(ErrorCode.InvalidRequest, `Invalid Request: line longer than ${limit} bytes; closing the connection`)));
    this._endTurn();
    this._socket.end();
    // A client that keeps sending must not keep the socket open for ever.
    setTimeout(() => this._socket.destroy(), REFUSED_LINGER_MS).unref();
  }

  /**
   * Everything written in one turn of the event loop leaves in one socket write, at the turn's
   * end: pipelined requests answered in the same turn cost one system call, not one each
   * (measured: one write per answer spent a third of the host's time in writeUtf8String).
   */
  private _write(msg: JsonRpcResponse | Record<string, unknown>): void {
    if (this._closed || this._socket.destroyed || !this._socket.writable) return;
    if (!this._turn) {
      this._out.cork();
      this._turn = setImmediate(() => this._endTurn());
    }
    this._out.write(JSON.stringify(msg) + '\n');
  }

  private _turn: NodeJS.Immediate | undefined;

  /** Sends what this turn gathered. */
  private _endTurn(): void {
    if (!this._turn) return;
    clearImmediate(this._turn);
    this._turn = undefined;
    this._out.uncork();
  }

  private _close(): void {
    if (this._closed) return;
    this._closed = true;
    clearInterval(this._probe);
    this._queue.length = 0;
    clearImmediate(this._turn); // nobody left to send it to
    this._turn = undefined;
    this._drainWait?.dispose();
    this._abort.abort();
    this.link.dispose();
  }
}
