import { Disposable, disposableTimeout, Emitter, MutableDisposable } from '../base/lifecycle';
import type { FlowHolder, Session } from '../session/session';

/** Flow-control sizes and times (CONTRACT §9.1); each says why. */
export const enum FlowTuning {
  /** Window when the subscriber names none: 256 KiB, above VS Code's own 100k-character pause, so an editor never waits on us first. */
  DefaultWindowBytes = 256 * 1024,
  /**
   * Most bytes one PTY read can deliver (libuv reads into 64 KiB): the PTY is paused after the
   * read that fills the window, so a window may overshoot by this much. Windows are kept this far
   * below the ring's size, so a flow-controlled subscriber's bytes are always still in the ring.
   */
  MaxReadBytes = 64 * 1024,
  /**
   * A subscriber that holds the PTY and acknowledges nothing for this long is demoted to lossy
   * (CONTRACT §9.1: 5 s), so a hung client cannot stop a session for ever; a live client acks
   * within milliseconds, so this only catches the stuck.
   */
  DemoteAfterMs = 5000,
}

/**
 * The window of one flow-controlled subscriber: how far the session's output may run ahead of what
 * it acknowledged. While that distance reaches the window it holds the PTY (the session stops
 * reading it); when it holds and acknowledges nothing for `DemoteAfterMs`, it gives up its hold
 * and says so through `onDemoted` (the subscription goes on lossy).
 */
export class FlowWindow extends Disposable implements FlowHolder {
  private _acked: number;
  private readonly _window: number;
  private readonly _patience = this._register(new MutableDisposable());
  private readonly _onDemoted = this._register(new Emitter<void>());
  /** The subscriber held the PTY too long without acknowledging: it is lossy from now on. */
  readonly onDemoted = this._onDemoted.event;

  constructor(
    private readonly _session: Session,
    start: number,
    window: number,
  ) {
    super();
    this._acked = start;
    this._window = Math.max(1, Math.min(window, _session.ring.capacity - FlowTuning.MaxReadBytes));
    this._register(_session.addFlowHolder(this));
  }

  /** The cursor acknowledged so far. */
  get acked(): number {
    return this._acked;
  }

  /** The subscriber has processed everything before `cursor` (a cursor it was sent). */
  ack(cursor: number): void {
    if (this.isDisposed || cursor <= this._acked) return;
    this._acked = Math.min(cursor, this._session.cursor);
    this._patience.clear(); // a new acknowledgement: the subscriber is alive, its patience restarts
    this._session.reconsiderFlow();
  }

  /** Starts counting from `cursor` (a snapshot's: what comes before it is in the picture). */
  restart(cursor: number): void {
    this._acked = cursor;
    this._session.reconsiderFlow();
  }

  updateHold(): boolean {
    const holds = !this.isDisposed && this._session.running && this._session.cursor - this._acked >= this._window;
    if (!holds) this._patience.clear();
    else if (!this._patience.value) this._patience.value = disposableTimeout(() => this._demote(), FlowTuning.DemoteAfterMs);
    return holds;
  }

  private _demote(): void {
    this._onDemoted.fire();
    this.dispose(); // lets go of the PTY (the session reconsiders its holders)
  }
}
