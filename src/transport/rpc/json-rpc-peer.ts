import { idMayHaveLostDigits, RAW_ID, rawIdText, stringifyMessage, type WithRawId } from './raw-id';
import type { JsonRpcResponse } from '../../core/base/errors';
import { ErrorCode, errorResponse, limitReached, RpcError } from '../../core/base/errors';
import { CALLER_GONE } from '../../core/base/call-end';
import { Disposable, disposableTimeout, Emitter, MutableDisposable, toDisposable, type IDisposable } from '../../core/base/lifecycle';
import type { NotificationSink } from '../../core/io/subscription';
import { MAX_IN_FLIGHT_REQUESTS } from '../../core/base/limits';
import { CallAbort } from './call-abort';
import { CANCEL_REQUEST, ConnectionClosedError, RequestCancelledError, RpcCallError, type Notification } from './messages';

/** Unsent bytes above which a client counts as slow: its subscriptions wait for it to drain. */
export const CLIENT_HIGH_WATER_BYTES = 1024 * 1024;
/**
 * Unsent bytes above which a client's further requests wait (and we stop reading its input) until
 * it drains: a client that pipelines requests without reading the answers (a 1 MiB `pty/output`
 * each) would otherwise make the host buffer every answer. Above the subscriptions' mark, so a
 * subscriber's own stream never holds up its requests (an attached terminal's Ctrl+C).
 */
export const REQUEST_HIGH_WATER_BYTES = 4 * CLIENT_HIGH_WATER_BYTES;
/**
 * Requests started from one client's queue before the rest waits for the event loop's next turn;
 * their answers are written before the next batch.
 */
const REQUESTS_PER_TURN = 16;
/**
 * How long the answer to a write may wait for the output it brings (the echo of a key), to leave
 * with it in one socket write: a client that follows the output is then woken once a key, not
 * twice (bench/README.md, "Issue 25: echo, this round"). The shortest timer there is; an echo
 * comes back in well under it, and a write that echoes nothing (a password) waits no longer.
 */
const ANSWER_WAITS_FOR_OUTPUT_MS = 1;
/**
 * How long a request read while the in-flight limit is full waits in line for room, counted from
 * the last request started or answered: a quick call (a read, a status, a write) is answered in
 * milliseconds even on a loaded machine, so pipelined quick calls always find room; calls that
 * hold every slot this long without one answer are waits (a `pty/wait` may last a day), and the
 * request is refused rather than left waiting behind them (docs/protocol.md#2-framing).
 */
const IN_FLIGHT_PATIENCE_MS = 1000;

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

/** The cancel notification's method as bytes, to find it without parsing every message twice. */
const CANCEL_REQUEST_BYTES = Buffer.from(CANCEL_REQUEST);

/** Whether a message may be the cancel notification (then it is parsed at once, ahead of any queue). */
function mayBeCancel(raw: string | Uint8Array): boolean {
  return typeof raw === 'string' ? raw.includes(CANCEL_REQUEST) : Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).includes(CANCEL_REQUEST_BYTES);
}

/** The id a cancel notification names; undefined when the message is not one. */
function cancelledId(message: unknown): string | number | undefined {
  if (typeof message !== 'object' || message === null || Array.isArray(message) || 'id' in message) return undefined;
  const m = message as { method?: unknown; params?: { id?: unknown } };
  if (m.method !== CANCEL_REQUEST) return undefined;
  const id = m.params?.id;
  return typeof id === 'string' || typeof id === 'number' ? id : undefined;
}

/** A message as it came: a string, or bytes that must be UTF-8. Throws when it is not JSON (or not UTF-8). */
function parse(raw: string | Uint8Array): unknown {
  return JSON.parse(typeof raw === 'string' ? raw : utf8.decode(raw));
}

/**
 * What a peer needs of its connection, whatever frames the messages (a line on a socket, a frame
 * on a WebSocket, a string handed over in memory). The framing calls the peer's `receive` with
 * each message it reads, `endInput` when the other end half-closes, and disposes the peer when the
 * connection is gone.
 */
export interface MessageWire {
  /** Whether a message sent now can still reach the other end. */
  readonly writable: boolean;
  /** Bytes sent and not yet taken by the other end (what a slow reader makes us hold). */
  readonly unsentBytes: number;
  /** Sends one message (the wire adds its framing). */
  send(text: string): void;
  /** Gathers what is sent until `uncork`, to go out in one write (a wire without batching does nothing). */
  cork(): void;
  uncork(): void;
  /** Calls `fn` once the unsent bytes have drained (or the connection closed); dispose to cancel. */
  whenDrained(fn: () => void): IDisposable;
  /** Stops and restarts reading the other end's input (its sender waits meanwhile, in the kernel or in memory). */
  pauseInput(): void;
  resumeInput(): void;
  /** Ends our side once everything is sent (after the other end half-closed and was answered). */
  end(): void;
}

/** How a served request is answered: the response, and what runs once it is sent (a subscription's replay). */
export interface PeerAnswer {
  response: JsonRpcResponse;
  afterSend: Array<() => void>;
  /** The session whose output the answer may wait a moment for and leave with (`_answerMayWaitForOutput`). */
  ridesWith?: string;
}

export interface JsonRpcPeerOptions {
  /** Requests started and not yet answered, at most (default MAX_IN_FLIGHT_REQUESTS). */
  maxInFlightRequests?: number;
  /** How long an answer may wait for the output its request brings (default ANSWER_WAITS_FOR_OUTPUT_MS; tests lengthen it). */
  answerWaitsForOutputMs?: number;
}

/**
 * One end of a JSON-RPC connection, on any framing (docs/protocol.md#2-framing): messages are
 * parsed where they enter, requests run concurrently (a long `pty/wait` does not block a
 * `pty/read`) up to the in-flight limit (past it they wait in line while calls are being answered,
 * and are refused once the calls holding it are waits), the requests of a client that does not read its answers
 * wait (and its input is not read) while too much is unsent to it, and everything written in one
 * event-loop turn leaves in one write. A peer that serves (`_serve`, the host's `TablePeer`)
 * answers every request it reads; one that does not (a client: `RpcClient`) takes each message as
 * it comes, matches answers to its own `request`s, fires notifications, and answers a request of
 * the other end with "method not found". Disposing it (the connection closed) aborts its calls and
 * rejects its pending requests.
 */
export class JsonRpcPeer extends Disposable implements NotificationSink {
  /**
   * Every call running, with its id as JSON (1 and "1" differ; undefined without a usable id):
   * each is aborted when the connection goes, or when a cancel notification names its id. Not a
   * listener per call on one connection-wide signal: an AbortSignal's add/removeEventListener cost
   * 9-30 us a request here, on every key's path. A call's AbortController is made only if it looks
   * at its signal (CallAbort).
   */
  private readonly _running = new Map<CallAbort, string | number | undefined>();
  /** Messages read and not yet handled (at most about one read's worth: we stop reading meanwhile). */
  private readonly _queue: Array<string | Uint8Array> = [];
  /**
   * Requests started since the queue last waited for a turn of the event loop. Not reset at each
   * turn's end: a `setImmediate` per request for that cost every key an extra pass of the loop
   * (bench/README.md, "Issue 25: echo, this round"); a batch may count a few requests of earlier
   * turns, so it starts at most REQUESTS_PER_TURN in one turn, sometimes fewer.
   */
  private _startedThisTurn = 0;
  /** Set while the queue waits for the next turn (REQUESTS_PER_TURN were started). */
  private _turnWait: NodeJS.Immediate | undefined;
  /** Set while queued requests wait for the client to read what is unsent to it. */
  private readonly _drainWait = this._register(new MutableDisposable());
  private _readingPaused = false;
  /** The other end ended its input (a half-close): answer what it asked, then end our side. */
  private _inputEnded = false;
  /** Requests started and not yet answered. */
  private _inFlight = 0;
  /** When a request was last started or answered (the in-flight limit's patience counts from it). */
  private _progressAt = 0;
  /** Set while the next request waits for room under the in-flight limit. */
  private readonly _roomWait = this._register(new MutableDisposable());
  /** The write of this turn's messages, pending at the turn's end. */
  private _turn: NodeJS.Immediate | undefined;
  /** Corks held by `cork` (while any is, a write leaves at the last `uncork` and needs no turn's end). */
  private _corks = 0;
  /** Answers waiting for the output their requests bring (`_answerMayWaitForOutput`), in the order they were ready. */
  private readonly _held: JsonRpcResponse[] = [];
  /**
   * Sends the held answers when no output came for them in time: made once and re-armed
   * (`refresh`), not a timer a key (each one ~350 bytes to collect, bench/README.md "Issue 25: a
   * key's request without promises"). It may still run after the answers it was armed for left
   * with their output; then it does nothing, or waits out the answers held since.
   */
  private _heldTimer: NodeJS.Timeout | undefined;
  private _heldTimerArmed = false;
  /** When the held timer was last armed, and when the oldest held answer was held (performance.now()). */
  private _heldTimerArmedAt = 0;
  private _heldSince = 0;
  /**
   * Whether output followed the last answers that waited for it: once one waited in vain (writes
   * that echo nothing), answers go at once again until output follows a write soon after its answer.
   */
  private _outputFollows = true;
  /** When the last answer that could have waited for output went without waiting (performance.now()). */
  private _unheldAt = -Infinity;
  private _nextId = 1;
  private readonly _pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  private readonly _onNotification = this._register(new Emitter<Notification>());
  /** Notifications from the other end (on a peer that does not serve). */
  readonly onNotification = this._onNotification.event;
  /** Why the connection went, when known: said by the error its pending requests fail with. */
  private _lostBecause: string | undefined;
  /**
   * The last error the other end sent with id null (on a peer that does not serve): it refused
   * something we sent that it could not tie to a request (a line over its limit), and closes next.
   */
  private _refusal: string | undefined;

  constructor(
    private readonly _wire: MessageWire,
    options: JsonRpcPeerOptions = {},
  ) {
    super();
    this._maxInFlight = options.maxInFlightRequests ?? MAX_IN_FLIGHT_REQUESTS;
    this._answerWaitMs = options.answerWaitsForOutputMs ?? ANSWER_WAITS_FOR_OUTPUT_MS;
    this._register(
      toDisposable(() => {
        this._queue.length = 0;
        clearImmediate(this._turn); // nobody left to send it to
        this._turn = undefined;
        clearImmediate(this._turnWait);
        clearTimeout(this._heldTimer);
        this._held.length = 0;
        for (const call of this._running.keys()) call.abort(CALLER_GONE);
        this._running.clear();
        const reason = this._lostBecause ?? (this._refusal && `the other end answered "${this._refusal}"`);
        for (const p of this._pending.values()) p.reject(new ConnectionClosedError(reason, this._refusal));
        this._pending.clear();
      }),
    );
  }

  /**
   * Answers one request; undefined on a peer that does not serve. Never throws: a failure is an
   * error response (the table's dispatch). `call.signal` aborts when the connection goes or the
   * client cancels the call; read it only when needed (it is made on first use).
   */
  protected _serve?(message: unknown, call: { readonly signal: AbortSignal }): PeerAnswer | Promise<PeerAnswer>;

  /** Whether a subscription still has something to send (a half-closed connection stays open for it). */
  protected _hasMoreToSend(): boolean {
    return false;
  }

  /**
   * Whether the answer to `message` may wait a moment for the output the call brings, to leave in
   * the same write (a `pty/write` from a client that follows that output); the peer's `flush`,
   * which a subscription's pump calls once it has written its notifications, sends it.
   */
  protected _answerMayWaitForOutput(_answer: PeerAnswer): boolean {
    return false;
  }

  /** One message the framing read: a string as it came, or bytes (UTF-8, checked). */
  receive(message: string | Uint8Array): void {
    if (this.isDisposed) return;
    // Taking a message writes nothing back (bar refusing a request), so a client has no answers
    // to hold its input back for: it takes each one at once, in order.
    if (!this._serve) return this._take(message);
    // A cancel is acted on at once, not behind requests waiting in line (it may free their room).
    if (mayBeCancel(message) && this._cancel(message)) return;
    this._queue.push(message);
    this._pump();
  }

  /** Cancels the call a cancel notification names (an unknown or answered id: nothing to do); false when `raw` is no cancel notification. */
  private _cancel(raw: string | Uint8Array): boolean {
    let id: string | number | undefined;
    try {
      id = cancelledId(parse(raw));
    } catch {
      return false; // not JSON: the queue answers it with a parse error
    }
    if (id === undefined) return false;
    // Rare (a caller gave up) and at most the in-flight limit to look through.
    for (const [call, k] of this._running) if (k === id) call.abort();
    return true;
  }

  /** The other end will send nothing more (it half-closed): our side ends once all it asked is answered. */
  endInput(): void {
    this._inputEnded = true;
    this._finishIfDone();
  }

  /**
   * Answers with one error, sends it now and ends our side: what the framing does with input it
   * will not read on (a line over the limit, an HTTP request on a JSON-RPC port). Its id is null,
   * or `to`'s: the message refused, when it could be read and named one.
   */
  refuse(error: RpcError, to?: { id: string | number | null; text: string }): void {
    this._sendHeld();
    const response = errorResponse(to?.id ?? null, error);
    // An id written as the client wrote it, as a served call's (raw-id.ts).
    const raw = to && idMayHaveLostDigits(to.id) ? rawIdText(to.text) : undefined;
    if (raw !== undefined) (response as WithRawId)[RAW_ID] = raw;
    this._write(response);
    this._endTurn();
    this._wire.end();
  }

  /**
   * The connection is gone because of `reason` (a line over the framing's limit): pending requests
   * fail with a ConnectionClosedError that says so, and the peer is disposed.
   */
  lose(reason: string): void {
    this._lostBecause ??= reason;
    this.dispose();
  }

  /**
   * Sends what this turn gathered now, not at the turn's end (before the connection is ended; when
   * a subscription's pump ends), with the answers that waited for output after it.
   */
  flush(): void {
    if (this._held.length > 0) this._sendHeld();
    else if (!this._outputFollows && performance.now() - this._unheldAt < this._answerWaitMs) this._outputFollows = true;
    this._endTurn();
  }

  /**
   * Calls a method of the other end; rejects with its error answer, or when the connection closes.
   * When `signal` aborts first, the other end is told to cancel the call (CANCEL_REQUEST) and the
   * promise rejects with a RequestCancelledError.
   */
  request<T = unknown>(method: string, params: Record<string, unknown> = {}, signal?: AbortSignal): Promise<T> {
    if (this.isDisposed) return Promise.reject(new ConnectionClosedError());
    if (signal?.aborted) return Promise.reject(new RequestCancelledError(method));
    const id = this._nextId++;
    return new Promise<T>((resolve, reject) => {
      const cancel = () => {
        if (!this._pending.delete(id)) return;
        if (!this.isDisposed) this.notify(CANCEL_REQUEST, { id });
        reject(new RequestCancelledError(method));
      };
      signal?.addEventListener('abort', cancel, { once: true });
      const settled = () => signal?.removeEventListener('abort', cancel);
      this._pending.set(id, {
        resolve: (v) => {
          settled();
          resolve(v as T);
        },
        reject: (e) => {
          settled();
          reject(e);
        },
      });
      this._write({ jsonrpc: '2.0', id, method, params });
    });
  }

  notify(method: string, params: Record<string, unknown>): void {
    this._write({ jsonrpc: '2.0', method, params });
    if (method === 'pty/exit') this._finishIfDone();
  }

  /**
   * Holds what is written until `uncork` (a subscription's pump: its notifications and the
   * answers that waited for them leave in one write), instead of at the turn's end.
   */
  cork(): void {
    this._corks++;
    this._wire.cork();
  }

  uncork(): void {
    if (this._corks > 0) this._corks--;
    this._wire.uncork();
  }

  congested(): boolean {
    return this._wire.unsentBytes > CLIENT_HIGH_WATER_BYTES;
  }

  whenDrained(fn: () => void): IDisposable {
    return this._wire.whenDrained(() => {
      if (!this.isDisposed) fn();
    });
  }

  /**
   * Starts queued requests while the client keeps up with our answers. Calls still run
   * concurrently; only the start of new ones waits while too much is unsent to this client.
   */
  private _pump(): void {
    if (this.isDisposed || this._drainWait.value) return;
    this._pumping = true;
    try {
      this._startQueued();
    } finally {
      this._pumping = false;
    }
    this._setReading(this._queue.length === 0);
  }

  /** Whether `_pump` is starting requests now (an answer given at once must not pump again inside it). */
  private _pumping = false;

  private _startQueued(): void {
    while (this._queue.length > 0) {
      if (this._wire.unsentBytes > REQUEST_HIGH_WATER_BYTES) {
        this._drainWait.value = this._wire.whenDrained(() => {
          this._drainWait.clear();
          this._pump();
        });
        break;
      }
      if (this._startedThisTurn >= REQUESTS_PER_TURN) {
        // The rest waits for the next turn: this turn's answers leave first.
        this._turnWait ??= setImmediate(() => {
          this._turnWait = undefined;
          this._startedThisTurn = 0;
          this._pump();
        });
        break;
      }
      if (!this._hasRoom()) break; // an answer, or the patience's end, pumps again
      this._startedThisTurn++;
      this._handle(this._queue.shift()!);
    }
  }

  /**
   * Whether the next request may be handled now: there is room under the in-flight limit, or the
   * calls holding it have been answering nothing for the patience (then it is refused at once, as
   * each one after it while that lasts). Otherwise it waits in line, and a timer pumps again when
   * the patience ends.
   */
  private _hasRoom(): boolean {
    if (!this._serve || this._inFlight < this._maxInFlight) return true;
    const waited = performance.now() - this._progressAt;
    if (waited >= IN_FLIGHT_PATIENCE_MS) return true;
    this._roomWait.value ??= disposableTimeout(() => {
      this._roomWait.clear();
      this._pump();
    }, IN_FLIGHT_PATIENCE_MS - waited);
    return false;
  }

  /**
   * Read from the options once: each kind of peer is given an options object of its own shape,
   * and reading it per request kept V8 recompiling the getter for each new shape it met.
   */
  private readonly _maxInFlight: number;

  /** Stops reading the client's input while requests wait in the queue (the kernel holds the rest). */
  private _setReading(on: boolean): void {
    if (on === !this._readingPaused || this.isDisposed) return;
    this._readingPaused = !on;
    if (on) this._wire.resumeInput();
    else this._wire.pauseInput();
  }

  private _handle(raw: string | Uint8Array): void {
    if (!this._serve) return;
    let message: unknown;
    try {
      message = parse(raw);
    } catch (e) {
      const what = e instanceof SyntaxError ? 'invalid JSON' : 'invalid UTF-8';
      this._write(errorResponse(null, new RpcError(ErrorCode.ParseError, `Parse error: ${what}`)));
      this._finishIfDone();
      return;
    }
    const max = this._maxInFlight;
    if (this._inFlight >= max) return this._refuseOverLimit(message, max);
    this._inFlight++;
    this._progressAt = performance.now();
    // Each call stops when the connection goes, or when the client cancels it by its id.
    const id = requestId(message);
    const call = new CallAbort();
    if (idMayHaveLostDigits(id)) call.rawId = rawIdText(typeof raw === 'string' ? raw : utf8.decode(raw));
    this._running.set(call, id ?? undefined);
    // A call answered in the same turn (a key's write) is sent on at once: no promise, no microtask.
    const answer = this._serve(message, call);
    if (answer instanceof Promise) void answer.then((a) => this._answered(a, call));
    else this._answered(answer, call);
  }

  /** Sends a served call's answer, then what follows it, and frees its room. */
  private _answered(answer: PeerAnswer, call: CallAbort): void {
    try {
      const { response, afterSend } = answer;
      if (this.isDisposed) return;
      if (call.rawId !== undefined) (response as WithRawId)[RAW_ID] = call.rawId;
      if (afterSend.length === 0 && this._answerMayWaitForOutput(answer)) this._holdForOutput(response);
      else {
        // Answers leave in the order they were ready: a held one is not overtaken.
        if (this._held.length > 0) this._sendHeld();
        this._write(response);
      }
      if (afterSend.length > 0) this._endTurn(); // the answer leaves before what follows it (a close, an exit)
      for (const fn of afterSend) fn();
    } finally {
      this._running.delete(call);
      this._inFlight--;
      this._progressAt = performance.now();
      // A request waiting in line for room takes it (unless this answer came inside the pump, which goes on).
      if (this._queue.length > 0 && !this._pumping) this._pump();
      this._finishIfDone();
    }
  }

  /**
   * A message to a peer that does not serve: the answer to one of its requests, a notification,
   * or a request. Read leniently, as a socket-pty host's answers need: what is not JSON, not an
   * object, or answers nothing we asked is skipped (the connection goes on), and `jsonrpc` is not
   * checked.
   */
  private _take(raw: string | Uint8Array): void {
    let message: unknown;
    try {
      message = parse(raw);
    } catch {
      return;
    }
    if (typeof message !== 'object' || message === null || Array.isArray(message)) return;
    const m = message as {
      id?: unknown;
      method?: unknown;
      params?: Record<string, unknown>;
      result?: unknown;
      error?: { code: number; message: string; data?: unknown };
    };
    if (typeof m.method === 'string') {
      if (m.id === undefined) return this._onNotification.fire({ method: m.method, params: m.params ?? {} });
      // A request: this end serves no methods, and JSON-RPC wants every request answered.
      const id = requestId(message);
      if (id !== null && id !== undefined)
        this._write(errorResponse(id, new RpcError(ErrorCode.MethodNotFound, `Method not found: ${m.method} (this end is a client)`)));
      return;
    }
    if (m.id === null && m.error) this._refusal = String(m.error.message);
    const pending = typeof m.id === 'number' ? this._pending.get(m.id) : undefined;
    if (!pending) return;
    this._pending.delete(m.id as number);
    if (m.error) pending.reject(new RpcCallError(m.error.code, m.error.message, m.error.data));
    else pending.resolve(m.result);
  }

  /**
   * A request past the in-flight limit, once the calls holding it have answered nothing for the
   * patience, is answered at once (a notification gets nothing) and not run: one client cannot pile
   * up thousands of day-long `pty/wait`s. The connection stays open.
   */
  private _refuseOverLimit(message: unknown, max: number): void {
    const id = requestId(message);
    if (id === undefined) return this._finishIfDone();
    this._write(errorResponse(id, tooManyInFlight(max)));
    this._finishIfDone();
  }

  /**
   * After a half-close, ends our side once every request read has been answered and no
   * subscription has more to send (its session exited). Checked a turn later, so a subscription
   * started by the last answer and notifications gathered in a pump are counted and flushed.
   */
  private _finishIfDone(): void {
    if (!this._inputEnded || this.isDisposed) return;
    setImmediate(() => {
      if (this.isDisposed || this._queue.length > 0 || this._inFlight > 0 || this._hasMoreToSend()) return;
      this._sendHeld();
      this._endTurn();
      this._wire.end();
    });
  }

  /** Keeps an answer until output is flushed (`flush`) or the wait is over; at once while writes bring no output. */
  private readonly _answerWaitMs: number;

  private _holdForOutput(response: JsonRpcResponse): void {
    if (!this._outputFollows) {
      this._unheldAt = performance.now();
      return this._write(response);
    }
    if (this._held.length === 0) this._heldSince = performance.now();
    this._held.push(response);
    this._armHeldTimer();
  }

  private _armHeldTimer(): void {
    if (this._heldTimerArmed) return;
    this._heldTimerArmed = true;
    this._heldTimerArmedAt = performance.now();
    if (this._heldTimer) this._heldTimer.refresh();
    else this._heldTimer = setTimeout(this._heldTimedOut, this._answerWaitMs);
  }

  private readonly _heldTimedOut = (): void => {
    this._heldTimerArmed = false;
    if (this._held.length === 0) return;
    // Armed for answers that have left: the ones held since get a wait of their own.
    if (this._heldSince > this._heldTimerArmedAt) return this._armHeldTimer();
    this._outputFollows = false;
    this._sendHeld();
  };

  /** Writes the held answers (after whatever this turn gathered before them). */
  private _sendHeld(): void {
    for (const response of this._held) this._write(response);
    this._held.length = 0;
  }

  /**
   * Everything written in one turn of the event loop leaves in one write, at the turn's end:
   * pipelined requests answered in the same turn cost one system call, not one each (measured on
   * the socket: one write per answer spent a third of the host's time in writeUtf8String).
   */
  private _write(msg: JsonRpcResponse | Record<string, unknown>): void {
    if (this.isDisposed || !this._wire.writable) return;
    if (!this._turn && this._corks === 0) {
      this._wire.cork();
      this._turn = setImmediate(() => this._endTurn());
    }
    this._wire.send(stringifyMessage(msg));
  }

  /** Sends what this turn gathered. */
  private _endTurn(): void {
    if (!this._turn) return;
    clearImmediate(this._turn);
    this._turn = undefined;
    this._wire.uncork();
  }
}
