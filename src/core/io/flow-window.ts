import { Disposable, disposableTimeout, Emitter, MutableDisposable } from '../base/lifecycle';
import type { FlowHolder, Session } from '../session/session';

/** Flow-control sizes and times (docs/protocol.md#flow-control-ptyack-and-ptyflow); each says why. */
export const enum FlowTuning {
  /** Window when the subscriber names none: 256 KiB, above VS Code's own 100k-character pause, so an editor never waits on us first. */
  DefaultWindowBytes = 256 * 1024,
  /**
   * Most bytes one PTY read can deliver (libuv reads into 64 KiB): the PTY is paused after the
   * read that fills the window, so the session's output may run past the window by this much
   * (held back in the ring, not sent: OutputSubscription). Windows are kept this far below the
   * ring's size, so a flow-controlled subscriber's bytes are always still in the ring.
   */
  MaxReadBytes = 64 * 1024,
  /**
   * A client that holds the PTY and acknowledges nothing for this long is demoted to lossy
   * (docs/protocol.md: 5 s), so a hung client cannot stop a session for ever; a live client acks
   * within milliseconds, so this only catches the stuck. It counts per client, over all its
   * subscriptions to the session (FlowPatience), so subscribing again does not restart it.
   */
  DemoteAfterMs = 5000,
}

/**
 * How long one client (a connection, or every connection with one scoped token) has held a
 * session's PTY without acknowledging anything: the patience of docs/protocol.md#flow-control-ptyack-and-ptyflow belongs to the client,
 * not to one subscription. A client that never acknowledges, is demoted, and subscribes again with
 * `flow` finds its patience spent and is demoted at once: it cannot stall the program for more
 * than DemoteAfterMs until it acknowledges output again.
 */
export class FlowPatience {
  /** Time of past holds since the last acknowledgement. */
  private _spentMs = 0;
  /** When the current hold (by any window of the client) began. */
  private _since: number | undefined;
  private _holding = 0;

  /** How long the client has held without acknowledging (past holds and the current one). */
  spentMs(now = Date.now()): number {
    return this._spentMs + (this._since === undefined ? 0 : now - this._since);
  }

  /** How long a hold may still last before the window is demoted. */
  leftMs(): number {
    return Math.max(0, FlowTuning.DemoteAfterMs - this.spentMs());
  }

  /** A window of the client began to hold the PTY. */
  begin(): void {
    if (this._holding++ === 0) this._since = Date.now();
  }

  /** A window of the client stopped holding (acknowledged, demoted or gone). */
  end(): void {
    if (this._holding === 0) return;
    if (--this._holding === 0 && this._since !== undefined) {
      this._spentMs += Date.now() - this._since;
      this._since = undefined;
    }
  }

  /** The client acknowledged output: it is alive, its patience is whole again. */
  acked(): void {
    this._spentMs = 0;
    if (this._since !== undefined) this._since = Date.now();
  }
}

/**
 * The window of one flow-controlled subscriber: how far the session's output may run ahead of what
 * it acknowledged. While that distance reaches the window it holds the PTY (the session stops
 * reading it); when its client has held for `DemoteAfterMs` in all without acknowledging (its
 * `FlowPatience`, shared by the client's subscriptions to the session), it gives up its hold and
 * says so through `onDemoted` (the subscription goes on lossy).
 */
export class FlowWindow extends Disposable implements FlowHolder {
  private _acked: number;
  private readonly _window: number;
  private _holding = false;
  private readonly _deadline = this._register(new MutableDisposable());
  private readonly _onDemoted = this._register(new Emitter<void>());
  /** The subscriber held the PTY too long without acknowledging: it is lossy from now on. */
  readonly onDemoted = this._onDemoted.event;

  constructor(
    private readonly _session: Session,
    start: number,
    window: number,
    private readonly _patience: FlowPatience = new FlowPatience(),
  ) {
    super();
    this._acked = start;
    this._window = Math.max(1, Math.min(window, _session.ring.capacity - FlowTuning.MaxReadBytes));
    this._register({ dispose: () => this._stopHolding() });
    this._register(_session.addFlowHolder(this));
  }

  /** The cursor acknowledged so far. */
  get acked(): number {
    return this._acked;
  }

  /** How far output may be sent: the subscriber's unacknowledged output never exceeds its window. */
  get sendLimit(): number {
    return this._acked + this._window;
  }

  /** The subscriber has processed everything before `cursor` (a cursor it was sent). */
  ack(cursor: number): void {
    if (this.isDisposed || cursor <= this._acked) return;
    this._acked = Math.min(cursor, this._session.cursor);
    // A new acknowledgement: the client is alive, its patience restarts.
    this._patience.acked();
    if (this._holding) this._armDeadline();
    this._session.reconsiderFlow();
  }

  /** Starts counting from `cursor` (a snapshot's: what comes before it is in the picture). */
  restart(cursor: number): void {
    this._acked = cursor;
    this._session.reconsiderFlow();
  }

  updateHold(): boolean {
    const holds = !this.isDisposed && this._session.running && this._session.cursor - this._acked >= this._window;
    if (holds && !this._holding) {
      this._holding = true;
      this._patience.begin();
      this._armDeadline();
    } else if (!holds) this._stopHolding();
    return holds;
  }

  private _armDeadline(): void {
    this._deadline.value = disposableTimeout(() => this._demote(), this._patience.leftMs());
  }

  private _stopHolding(): void {
    if (!this._holding) return;
    this._holding = false;
    this._deadline.clear();
    this._patience.end();
  }

  private _demote(): void {
    this._onDemoted.fire();
    this.dispose(); // lets go of the PTY (the session reconsiders its holders)
  }
}
