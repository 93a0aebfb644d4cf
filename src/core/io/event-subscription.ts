import type { IDisposable } from '../base/lifecycle';
import type { EventLog } from '../session/events/event-log';
import type { NotificationSink } from './subscription';

/** Events put out per look at the client's back-pressure. */
const EVENTS_PER_BATCH = 64;

/** Which events a subscription follows, and from where (docs/protocol.md#events-ptyevents-and-ptywaitevent `pty/events`). */
export interface EventSubscriptionOptions {
  /** Replay retained events with a larger seq first (live only when undefined). */
  since?: number;
  /** Only this session's events (every session of the host when undefined). */
  session?: string;
}

/**
 * Sends one client the host's events as `pty/event` notifications. Like an output subscription it
 * is only a cursor (a seq) into the host's EventLog, so a client that falls behind costs nothing
 * but its place; one that falls further behind than the log keeps sees a gap in seq.
 * Nothing is sent before `start()`, so the answer to `pty/events` goes out first.
 */
export class EventSubscription implements IDisposable {
  /** The seq of the last event this client has been sent (or skipped: another session's). */
  private _cursor: number;
  /** The log's newest seq when the subscription began: live events come after it. */
  readonly startSeq: number;
  private _started = false;
  private _disposed = false;
  private _waitingDrain: IDisposable | undefined;
  private readonly _listener: IDisposable;

  constructor(
    private readonly _log: EventLog,
    private readonly _sink: NotificationSink,
    private readonly _options: EventSubscriptionOptions = {},
  ) {
    this.startSeq = _log.seq;
    this._cursor = Math.min(_options.since ?? _log.seq, _log.seq);
    this._listener = _log.onEvent(() => this.pump());
  }

  /** Begins sending (after the `pty/events` call has answered). */
  start(): void {
    this._started = true;
    this.pump();
  }

  /** Sends what the client has not seen yet, as far as it can take it now. */
  pump(): void {
    if (this._disposed || !this._started || this._waitingDrain) return;
    for (;;) {
      if (this._sink.congested()) {
        this._waitingDrain = this._sink.whenDrained(() => {
          this._waitingDrain = undefined;
          this.pump();
        });
        return;
      }
      const batch = this._log.since(this._cursor, this._options.session, EVENTS_PER_BATCH);
      if (batch.length === 0) {
        this._cursor = this._log.seq; // everything up to here was another session's
        return;
      }
      for (const event of batch) {
        this._cursor = event.seq;
        this._sink.notify('pty/event', { ...event });
      }
    }
  }

  dispose(): void {
    this._disposed = true;
    this._waitingDrain?.dispose();
    this._listener.dispose();
  }
}
