import type { IDisposable } from '../base/lifecycle';
import type { Session } from '../session/session';
import type { RingRead } from '../session/ring-buffer';
import { MAX_UTF8_CHARACTER_BYTES } from '../base/utf8';
import { FlowPatience, FlowWindow } from './flow-window';

/** A client that receives notifications and may fall behind. */
export interface NotificationSink {
  /** Sends one JSON-RPC notification. */
  notify(method: string, params: Record<string, unknown>): void;
  /** True while the client's unsent data is above its high-water mark. */
  congested(): boolean;
  /** Calls `fn` once the client has caught up (or closed); returns a handle to cancel. */
  whenDrained(fn: () => void): IDisposable;
  /** Optional: hold writes, then send them together (one system call for a pump's notifications). */
  cork?(): void;
  uncork?(): void;
  /**
   * Optional: send what is held now rather than at the end of the event loop's turn (a pump's
   * notifications are complete when it ends; waiting for the turn's end cost the echo a loop pass).
   */
  flush?(): void;
}

/** Most raw output put in one notification; larger backlogs go out in several. */
const MAX_NOTIFICATION_BYTES = 64 * 1024;
/** During a burst, notifications go out at most once per this many ms per subscriber (see _schedulePump)… */
const NOTIFY_INTERVAL_MS = 4;
/** …a burst being a last notification at least this large (a PTY read gives up to 4 KB at a time). */
const BURST_BYTES = 2048;

/** How a subscription treats a client that falls behind (docs/guarantees.md#output-under-load). */
export interface SubscriptionOptions {
  /** Where to start (live when undefined). */
  since?: number;
  /** Flow-controlled: hold the PTY once this many bytes are unacknowledged (lossy when undefined). */
  window?: number;
  /** With `window`: the client's patience on this session, shared by its subscriptions (FlowPatience). */
  patience?: FlowPatience;
  /** Extra fields in every notification (the control socket adds `session`). */
  extra?: Record<string, unknown>;
  /** Count the subscriber as a client of the session (not when its connection already is one). */
  countAsClient?: boolean;
}

/**
 * Streams one session's output to one client. The ring buffer is the only queue: the
 * subscription is just a cursor into it, so a slow client costs no memory. A lossy subscriber that
 * falls behind further than the ring holds is told how many bytes it missed (`dropped`); a
 * flow-controlled one is sent no more than its window past its last acknowledgement and holds the
 * PTY (its `FlowWindow`) until it acknowledges, so it never misses a byte, unless it stops
 * acknowledging and is demoted to lossy (`pty/flow`).
 * Nothing is sent before `start()`, so the answer to the subscribe call goes out first.
 */
export class OutputSubscription implements IDisposable {
  private _cursor: number;
  private _disposed = false;
  private _waitingDrain: IDisposable | undefined;
  private _exitSent = false;
  private _started = false;
  /** The output cursor when the subscriber joined: what it is sent from before it is a replay. */
  private readonly _joinedAt: number;
  private _flow: FlowWindow | undefined;
  private readonly _extra: Record<string, unknown>;
  private readonly _subs: IDisposable[];

  constructor(
    private readonly _session: Session,
    private readonly _sink: NotificationSink,
    options: SubscriptionOptions = {},
  ) {
    const since = options.since;
    this._cursor = since === undefined ? _session.cursor : Math.min(since, _session.cursor);
    this._joinedAt = _session.cursor;
    this._extra = options.extra ?? {};
    this._subs = [_session.onOutput(() => this._schedulePump()), _session.onExit(() => this._exited())];
    // A subscriber is a connected client of the session (SessionInfo.clients, editor leases).
    if (options.countAsClient ?? true) this._subs.push(_session.addClient());
    if (options.window !== undefined) {
      const flow = new FlowWindow(_session, this.startCursor, options.window, options.patience);
      this._flow = flow;
      flow.onDemoted(() => {
        this._flow = undefined;
        this._sink.notify('pty/flow', { ...this._extra, demoted: true });
        // Lossy now: what the window held back goes on.
        this._schedulePump();
      });
    }
  }

  /**
   * The program ended: with nothing left to hold back, the window no longer applies (not a
   * demotion: the subscriber did nothing wrong). The rest goes now, then `pty/exit`, before the
   * session's socket closes with it (found by an outside audit: a subscriber that had stopped
   * acknowledging was cut off with neither).
   */
  private _exited(): void {
    this._flow?.dispose();
    this._flow = undefined;
    this.pump();
  }

  /** True while the subscription is flow-controlled (not yet demoted, and asked for with a window). */
  get flowControlled(): boolean {
    return this._flow !== undefined;
  }

  /** Where the notifications start. */
  get startCursor(): number {
    return Math.max(this._cursor, this._session.ring.start);
  }

  /**
   * Moves the start to `cursor` before `start()` (a snapshot's cursor: what comes before it is in
   * the picture); a flow-controlled subscriber's window counts from there too.
   */
  rebase(cursor: number): void {
    if (this._started) return;
    this._cursor = Math.min(cursor, this._session.cursor);
    this._flow?.restart(this._cursor);
  }

  /** True once everything is sent, the exit included: nothing more will come. */
  get finished(): boolean {
    return this._exitSent || this._disposed || this._session.isDisposed;
  }

  /** Begins sending (after the subscribe call has answered). */
  start(): void {
    this._started = true;
    this.pump();
  }

  /** A flow-controlled subscriber has processed the output before `cursor`; ignored when lossy. */
  ack(cursor: number): void {
    if (!this._flow) return;
    // Never past what was sent: an acknowledgement is for output the client has seen.
    this._flow.ack(Math.min(cursor, this._cursor));
    if (this._cursor >= this._session.cursor) return;
    // The window has room again for what it held back: that output is here already, so it goes
    // at once, not after a burst's spacing (a client acknowledging every 64 KiB waited up to 4 ms each time).
    if (this._heldByWindow) {
      this._heldByWindow = false;
      queueMicrotask(() => this.pump());
    } else this._schedulePump();
  }

  /** The last pump stopped at the window with output left to send. */
  private _heldByWindow = false;

  private _pumpScheduled = false;
  private _lastPumpAt = 0;
  /** Bytes the last pump sent: small means no burst is on, so new output goes at once. */
  private _lastPumpBytes = 0;

  /**
   * Output that comes now and then is sent at once (an echo, a prompt, keys typed back to back:
   * each waited up to 4 ms when every pump was spaced, measured p50 3.7 ms), as soon as the PTY
   * read that brought it has been handled (a microtask: the read's ring, mirror and command-log
   * work is done, nothing else runs first; a `setImmediate` cost the echo a pass of the event
   * loop). During a burst, the PTY gives at most 4 KB a read; sending at most every 4 ms turns
   * that into a few large notifications, written together, instead of thousands of small ones:
   * socket writes cost per write, for the host and for the client it wakes (measured on a 50 MB
   * `cat`: 1 ms batches delivered 26-31 MB/s, 4 ms batches 30-39 MB/s, sending per read about half that).
   */
  private _schedulePump(): void {
    if (this._pumpScheduled) return;
    this._pumpScheduled = true;
    const wait = this._lastPumpBytes < BURST_BYTES ? 0 : this._lastPumpAt + NOTIFY_INTERVAL_MS - performance.now();
    if (wait <= 0) queueMicrotask(this._runScheduled);
    else setTimeout(this._runScheduled, wait);
  }

  private readonly _runScheduled = (): void => {
    this._pumpScheduled = false;
    this.pump();
  };

  /** Sends what the client has not seen yet, as far as it can take it now. */
  pump(): void {
    if (this._disposed || !this._started || this._waitingDrain) return;
    this._lastPumpAt = performance.now();
    this._lastPumpBytes = this._session.cursor - this._cursor;
    this._sink.cork?.();
    try {
      // What this pump sent leaves at the uncork, in one write with the answers that waited for
      // it (`flush`), not at the turn's end.
      if (this._pumpCorked()) this._sink.flush?.();
    } finally {
      this._sink.uncork?.();
    }
  }

  /** Returns whether it sent anything. */
  private _pumpCorked(): boolean {
    let sent = false;
    while (this._cursor < this._session.cursor) {
      if (this._sink.congested()) {
        this._waitingDrain = this._sink.whenDrained(() => {
          // The wait is over: released here (as the peer's pump clears its own), not merely forgotten.
          this._waitingDrain?.dispose();
          this._waitingDrain = undefined;
          this.pump();
        });
        return sent;
      }
      const r = this._readNext();
      if (r === undefined || (r.text.length === 0 && r.dropped === 0)) break;
      // What came before the subscriber joined is a replay: its queries are old (Session.replayedToSubscriber).
      if (this._cursor < this._joinedAt) this._session.replayedToSubscriber(r.text);
      const params: Record<string, unknown> = { ...this._extra, data: r.text, cursor: r.cursor };
      if (r.dropped > 0) params.dropped = r.dropped;
      this._cursor = r.cursor;
      this._sink.notify('pty/output', params);
      sent = true;
    }
    const exit = this._session.exitInfo;
    if (exit && !this._exitSent && this._cursor >= this._session.cursor) {
      this._exitSent = true;
      this._sink.notify('pty/exit', { ...this._extra, exitCode: exit.exitCode, signal: exit.signal });
      sent = true;
    }
    return sent;
  }

  /**
   * The next notification's output: at most what the window has room for while flow-controlled
   * (the bytes after it stay in the ring, which holds a window and a PTY read past the last
   * acknowledgement), undefined while the window is full. A window too small for the next
   * character lets that one character through once everything sent is acknowledged.
   */
  private _readNext(): RingRead | undefined {
    const ring = this._session.ring;
    if (!this._flow) return ring.read(this._cursor, MAX_NOTIFICATION_BYTES);
    const room = this._flow.sendLimit - this._cursor;
    this._heldByWindow = room < this._session.cursor - this._cursor;
    if (room <= 0) return undefined;
    const r = ring.read(this._cursor, Math.min(room, MAX_NOTIFICATION_BYTES));
    if (r.text.length > 0 || r.dropped > 0 || this._cursor > this._flow.acked) return r;
    return ring.read(this._cursor, MAX_UTF8_CHARACTER_BYTES);
  }

  dispose(): void {
    this._disposed = true;
    this._waitingDrain?.dispose();
    this._flow?.dispose();
    for (const s of this._subs) s.dispose();
  }
}
