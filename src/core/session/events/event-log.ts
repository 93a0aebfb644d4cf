import { Disposable, Emitter } from '../../base/lifecycle';
import type { HostEvent, SessionEventBody } from './session-events';

/** Events a host keeps for `pty/events { since }` replays (docs/protocol.md#events-ptyevents-and-ptywaitevent). */
export const enum EventLogTuning {
  /**
   * Enough for a client that reconnects after a while to catch up on every session (an event is
   * a few hundred bytes at most, so the log stays under ~1 MiB), few enough that replaying it is instant.
   */
  RetainedEvents = 4096,
}

/**
 * The event log of one host: every session's events, numbered by `seq` (one more per event of the
 * host, from 1), the newest `RetainedEvents` of them kept. Subscribers are cursors into it
 * (EventSubscription), so a slow client costs no memory here.
 */
export class EventLog extends Disposable {
  private readonly _events: HostEvent[] = [];
  private _seq = 0;
  private readonly _onEvent = this._register(new Emitter<HostEvent>());
  /** An event was appended. */
  readonly onEvent = this._onEvent.event;

  constructor(private readonly _retained: number = EventLogTuning.RetainedEvents) {
    super();
  }

  /** The newest event's seq (0 before the first). */
  get seq(): number {
    return this._seq;
  }

  /** The oldest retained event's seq (the newest + 1 when none is retained). */
  get firstSeq(): number {
    return this._events.length > 0 ? this._events[0].seq : this._seq + 1;
  }

  /** Numbers and keeps an event of `session`, and tells the subscribers. */
  append(session: string, body: SessionEventBody): HostEvent {
    const event = { session, seq: ++this._seq, at: new Date().toISOString(), ...body } as HostEvent;
    this._events.push(event);
    // Trimmed in batches, so keeping the bound costs O(1) per event on average.
    if (this._events.length >= 2 * this._retained) this._events.splice(0, this._events.length - this._retained);
    this._onEvent.fire(event);
    return event;
  }

  /**
   * Retained events with seq > `since` (of one session when `session` is given), oldest first, at
   * most `limit`. Events older than the log keeps are gone: a gap in seq shows it.
   */
  since(since: number, session?: string, limit = Infinity): HostEvent[] {
    const out: HostEvent[] = [];
    const floor = Math.max(since + 1, this.firstSeq, this._seq + 1 - this._retained);
    for (let i = floor - this.firstSeq; i < this._events.length && out.length < limit; i++) {
      const e = this._events[i];
      if (session === undefined || e.session === session) out.push(e);
    }
    return out;
  }
}
