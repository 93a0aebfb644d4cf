import type { FlowHolder } from '../session-types';

/** Why node-pty is not being read; reading resumes only once no reason is left. */
export type PauseReason = 'parser' | 'flow';

/** What of node-pty pauses and resumes reading. */
interface Pausable {
  pause(): void;
  resume(): void;
}

/** Every reason the PTY is paused for (the parser fell behind, a flow-controlled subscriber's window is full): it is read only while none holds. */
export class ReadPauses {
  private readonly _reasons = new Set<PauseReason>();

  /**
   * `running`: a PTY whose program ended is neither paused nor resumed any more. `noted` hears every
   * reason set or cleared, whether or not reading changes.
   */
  constructor(
    private readonly _pty: Pausable,
    private readonly _running: () => boolean,
    private readonly _noted: (reason: PauseReason, paused: boolean) => void = () => {},
  ) {}

  /** True while any reason holds reading. */
  get any(): boolean {
    return this._reasons.size > 0;
  }

  has(reason: PauseReason): boolean {
    return this._reasons.has(reason);
  }

  /** Pauses or resumes reading for one reason; the PTY is read only while no reason holds it. */
  set(reason: PauseReason, paused: boolean): void {
    const before = this._reasons.size > 0;
    if (paused) this._reasons.add(reason);
    else this._reasons.delete(reason);
    this._noted(reason, paused);
    const after = this._reasons.size > 0;
    if (before === after || !this._running()) return;
    if (after) this._pty.pause();
    else this._pty.resume();
  }

  /** Forgets every reason without resuming (the caller resumes the stream itself: the exit drain). */
  clear(): void {
    this._reasons.clear();
  }
}

/** The flow-controlled subscribers that may hold the PTY (`Session.addFlowHolder`). */
export class FlowHolders {
  private readonly _holders = new Set<FlowHolder>();

  get size(): number {
    return this._holders.size;
  }

  add(holder: FlowHolder): void {
    this._holders.add(holder);
  }

  /** False when it was not there (let go of already). */
  delete(holder: FlowHolder): boolean {
    return this._holders.delete(holder);
  }

  /** Whether any holder holds the PTY now. Every holder is asked (no short cut), so each one that holds knows it and can run its timer. */
  anyHolds(): boolean {
    let held = false;
    for (const h of this._holders) if (h.updateHold()) held = true;
    return held;
  }
}
