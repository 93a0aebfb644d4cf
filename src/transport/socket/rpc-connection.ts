import type { Duplex } from 'node:stream';
import type { DispatchMode } from '../../core/methods/dispatch';
import { ErrorCode, RpcError } from '../../core/base/errors';
import { Disposable, disposableTimeout, MutableDisposable, toDisposable } from '../../core/base/lifecycle';
import type { HostServices } from '../../core/methods/types';
import type { ClientLink } from '../../core/io/client-link';
import { TablePeer } from '../rpc/table-peer';
import { LineWire } from '../rpc/line-wire';
import { DEFAULT_MAX_LINE_BYTES, LineReader, tooLongError } from '../base/line-reader';
import { firstByteFitsJsonRpc, firstLineKind, isBlankLine, notJsonRpcMessage } from './first-line';

// The limits are the peer's, on every transport; tests and older imports find them here too.
export { CLIENT_HIGH_WATER_BYTES, REQUEST_HIGH_WATER_BYTES, requestId, tooManyInFlight } from '../rpc/json-rpc-peer';

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

/** `\r`: a line may end in CRLF (docs/protocol.md#2-framing). */
const CR = 0x0d;

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
 * One JSON-RPC client on a stream socket: newline framing (a line limit, CRLF, blank lines, the
 * first-line rule of TCP ports, half-close) around the host's peer, which runs the calls. Who the
 * client is and what it holds lives in the peer's ClientLink, released when the socket closes.
 */
export class RpcConnection extends Disposable {
  readonly peer: TablePeer;
  /** Nothing has shown yet that the client speaks JSON-RPC (on a port that requires it first). */
  private _unproven: boolean;
  /** The first byte that is not whitespace has come (and could begin a JSON-RPC message). */
  private _firstByteSeen = false;
  /** Refused (not JSON-RPC, or a line over the limit) or finishing: nothing more it sent is read. */
  private _refused = false;
  /** After a half-close: the probe that finds a client that is gone. */
  private readonly _probe = this._register(new MutableDisposable());

  constructor(
    private readonly _socket: Duplex,
    private readonly _options: RpcConnectionOptions,
  ) {
    super();
    this._unproven = _options.jsonRpcFirst === true;
    const { mode } = _options;
    this.peer = this._register(
      new TablePeer(new LineWire(_socket, _socket), {
        mode,
        services: _options.services,
        maxInFlightRequests: _options.maxInFlightRequests,
        link: {
          origin: 'script',
          transport: mode.kind === 'session' ? 'socket' : 'control',
          home: mode.kind === 'session' ? mode.session : undefined,
          // No token tells socket clients apart: more connections must not buy more regex time.
          regexBudget: _options.services.socketRegexBudget,
        },
      }),
    );
    const reader = new LineReader(
      _options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES,
      (line) => this._line(line),
      () => this._rejectOversizedLine(),
    );
    this._on('data', (chunk: Buffer) => {
      if (this._refused) return;
      // An HTTP request line is refused at its first byte: no need to wait for the line's end.
      if (this._unproven && !this._firstByteSeen) {
        const fits = firstByteFitsJsonRpc(chunk);
        // Not even the start of a JSON object (an HTTP request line): refused at its first byte.
        if (fits === false) return this._refuseNotJsonRpc(undefined);
        this._firstByteSeen = fits === true;
      }
      reader.push(chunk);
    });
    // End of input is not "client gone" (the socket is half-open): only a full close or a write
    // error is. Pending answers and live subscriptions are still sent.
    this._on('end', () => {
      if (this._refused) return;
      reader.end();
      this.peer.endInput();
      if (this.isDisposed) return;
      const probe = setInterval(() => this._probeReader(), HALF_CLOSED_PROBE_MS).unref();
      this._probe.value = toDisposable(() => clearInterval(probe));
      // Look once this turn is over too (a connection with nothing pending has ended by then): a
      // client that closed altogether (a cancelled call's own connection) is gone now, and its
      // calls (a send holding the session) end now, not a probe later.
      setImmediate(() => this._probeReader());
    });
    this._on('close', () => this.dispose());
    this._on('error', () => this.dispose());
  }

  /**
   * The server closes (its session ended, the host stops): nothing more is read, but what was asked
   * is answered (a `pty/wait` with `session_exit`, a read the kill overtook) and what a subscription
   * still has (the session's `pty/exit`) is sent, then our side ends. socket-pty answers every request.
   */
  finish(): void {
    if (this.isDisposed || this._refused) return;
    this._refused = true;
    this._socket.pause();
    this.peer.endInput();
  }

  /** The caller this socket carries. */
  get link(): ClientLink {
    return this.peer.link;
  }

  /** Listens to the socket until this connection is disposed. */
  private _on(event: string, listener: Parameters<Duplex['on']>[1]): void {
    this._socket.on(event, listener);
    this._register(toDisposable(() => this._socket.off(event, listener)));
  }

  private _line(line: Buffer): void {
    if (this._refused) return;
    if (this._unproven) {
      if (isBlankLine(line)) return;
      const first = firstLineKind(line);
      if (first.kind !== 'json-rpc') return this._refuseNotJsonRpc(first.kind === 'json' ? first : undefined);
      this._unproven = false;
    }
    if (line.length > 0 && line[line.length - 1] === CR) line = line.subarray(0, -1); // tolerate CRLF
    // Blank lines are ignored between messages: spaces alone too (a keep-alive, as the host's own to a half-closed client).
    if (line.length === 0 || isBlankLine(line)) return;
    this.peer.receive(line);
  }

  /** One space to a half-closed client: harmless to one that reads, a write error for one that is gone. */
  private _probeReader(): void {
    if (this.isDisposed || this._socket.destroyed || !this._socket.writable) return;
    this._socket.write(' ');
  }

  /**
   * The first line is not JSON-RPC (an HTTP request a web page made the browser send): one error
   * line, then the connection closes. Nothing it sent is read any further, let alone run.
   */
  private _refuseNotJsonRpc(json: { id: string | number | null; text: string } | undefined): void {
    this._refused = true;
    this._socket.pause();
    this._closeWith(new RpcError(json ? ErrorCode.InvalidRequest : ErrorCode.ParseError, notJsonRpcMessage(json !== undefined)), json);
  }

  private _rejectOversizedLine(): void {
    const limit = this._options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
    this._closeWith(tooLongError(limit, 'line'));
  }

  /** One error line, then our side ends; a client that never reads its end (or keeps sending) is cut soon after. */
  private _closeWith(error: RpcError, to?: { id: string | number | null; text: string }): void {
    this.peer.refuse(error, to);
    this._register(disposableTimeout(() => this._socket.destroy(), REFUSED_LINGER_MS, { unref: true }));
  }
}
