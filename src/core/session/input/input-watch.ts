import { Disposable, disposableTimeout, Emitter, MutableDisposable } from '../../base/lifecycle';
import type { InputWait } from '../../process/input-wait';

/** When a session's foreground job is probed; each number says why. */
export const enum InputWatchTuning {
  /**
   * Probe once output and submitted input have been quiet this long: a prompt is printed just
   * before the program starts to read, and a program that prints steadily is busy anyway.
   */
  QuietMs = 100,
  /**
   * At most one probe per this long (a /proc scan of ~1 ms, plus, when the job waits, ~1.5 ms for
   * stty where tcgetattr cannot be used): output that pauses every 100 ms (a progress bar, `top`)
   * costs at most ~1% of a CPU.
   */
  MinIntervalMs = 250,
  /**
   * A job seen busy is probed again, with nothing printed, after MinIntervalMs, then twice as late
   * each time up to this: a program that starts to read without printing a prompt (`sleep 1; cat`)
   * is seen waiting within about the time it was busy, and a long silent command costs one probe
   * (~1 ms) every 8 s. A job seen waiting is not probed again until something happens.
   */
  MaxBusyRecheckMs = 8000,
}

/** What the foreground job was last seen waiting for: nothing (busy, unknown), input, or a secret. */
export type WaitState = 'none' | 'input' | 'secret';

/**
 * Follows whether a session's foreground job waits for input, and whether that input is a secret
 * (docs/protocol.md#secret-input, docs/protocol.md#events-ptyevents-and-ptywaitevent), without steady polling: the job is probed after output or a submitted line
 * has gone quiet, and a job seen busy again later each time (it may start to read without a
 * prompt), so a session waiting for input costs nothing. A wait is new once the job has been seen busy
 * or has been given a line since the last one, or when another job waits than the one that waited
 * last: typing into a prompt is not a new wait, Enter is, and so is the shell's prompt coming back
 * after a program that read was left with a key (Ctrl+C on `cat`, Ctrl+D in a REPL, `q` in `less`),
 * which no probe sees busy in between.
 */
export class InputWatch extends Disposable {
  private _state: WaitState = 'none';
  private readonly _timer = this._register(new MutableDisposable());
  private _probing = false;
  private _lastActivity = 0;
  private _lastProbe = 0;
  /** Bumped by every submitted line: a probe that started before it says nothing about after it. */
  private _generation = 0;
  private _stopped = false;
  /** Output is waiting to be read (the parser is behind): the job is not quiet, whatever the clock says. */
  private _held = false;
  /** How long after a probe that saw the job busy to look again with nothing printed (doubles each time). */
  private _busyRecheckMs: number = InputWatchTuning.MinIntervalMs;
  /** When the armed timer fires (`Date.now()` ms). */
  private _dueAt = 0;
  /** When a probe last saw the job busy (it started to wait after that). */
  private _busySeenAt = 0;
  /** When the current wait began at the earliest: its last output or line, or the last busy probe (0: no wait). */
  private _waitBegan = 0;
  /** The foreground process group of the current wait (undefined: no wait, or not known). */
  private _waitedBy: number | undefined;
  /** The foreground group changed while the last probe looked: `_run` looks again instead of resting. */
  private _groupChanged = false;
  private readonly _onDidChange = this._register(new Emitter<WaitState>());
  /** A new wait began (`input` or `secret`: the state changed, or another job waits now), or the wait ended (`none`). */
  readonly onDidChange = this._onDidChange.event;

  /**
   * `printing`: true when the program's output waits unread in the kernel (the host is reading,
   * but not as fast as the program prints): a program that prints is not waiting for input, so
   * the probe waits until that output has been read and has gone quiet. Without it a host whose
   * event loop is slower than `QuietMs` (100 flooding sessions on a loaded machine) sees every
   * flooding session as quiet and scans /proc for each (bench/README.md, issue 25: scale).
   *
   * `waiter`: the terminal's foreground process group now (one /proc read, ~20 µs), undefined when
   * it cannot be read. A wait by another group than the last wait's is a new wait: the shell's
   * prompt back after `cat` was interrupted. Without it, a wait is new only after Enter or a busy spell.
   */
  constructor(
    private readonly _probe: () => Promise<InputWait>,
    enabled = process.platform === 'linux',
    private readonly _printing: () => boolean = () => false,
    private readonly _waiter: () => number | undefined = () => undefined,
  ) {
    super();
    this._stopped = !enabled;
  }

  get state(): WaitState {
    return this._state;
  }

  /**
   * For a wait (`input` or `secret`): the earliest it can have begun, in `Date.now()` ms. A probe
   * sees a wait some time after it began (up to seconds, for a job seen busy before); `wait_event`
   * counts only a wait that began after its call did (docs/protocol.md#events-ptyevents-and-ptywaitevent).
   */
  get waitBegan(): number {
    return this._waitBegan;
  }

  /** True when no probe is due or running: what an idle session is (no timer, no work). */
  get quiet(): boolean {
    return !this._timer.value && !this._probing;
  }

  /** Output arrived (called per PTY read, so it only notes the time and arms one timer). */
  activity(): void {
    const now = Date.now();
    this._lastActivity = now;
    this._busyRecheckMs = InputWatchTuning.MinIntervalMs;
    if (this._probing || this._stopped) return;
    // A busy job's late recheck (up to 8 s off) is brought forward: the output may be its prompt,
    // and a wait seen late is reported late (wait_event's input_wait came ~0.9 s after a prompt).
    if (!this._timer.value || this._dueAt > now + InputWatchTuning.QuietMs) this._arm(InputWatchTuning.QuietMs);
  }

  /**
   * The host stopped reading the PTY because the screen's parser fell behind (a flood): output is
   * still coming, so no probe is due until reading resumes, when the quiet time starts again. A
   * host with many flooding sessions would otherwise scan /proc for each of them whenever its
   * event loop is slower than the quiet time (bench/README.md, issue 25: scale).
   */
  hold(held: boolean): void {
    if (held === this._held) return;
    this._held = held;
    if (!held) this.activity();
  }

  /** A line was typed (Enter): whatever the job waited for, it now has input to work on. */
  submitted(): void {
    this._generation++;
    this._set('none');
    this.activity();
  }

  /** The program ended: no more probes. */
  stop(): void {
    this._stopped = true;
    this._timer.clear();
    this._set('none');
  }

  /**
   * Probes now (an agent's write must know; a send polls) and takes the answer as the state, unless
   * a line was submitted meanwhile, or the foreground group changed (a program ended, or started):
   * then the answer may be either job's, and the next probe tells.
   */
  async probeNow(): Promise<InputWait> {
    const generation = this._generation;
    const started = Date.now();
    const group = this._waiter();
    const wait = await this._probe();
    if (wait === 'busy') this._busySeenAt = Math.max(this._busySeenAt, started);
    if (this._waiter() !== group) this._groupChanged = true;
    else if (generation === this._generation) this._take(wait, group);
    return wait;
  }

  /** Takes a probe's answer as the state (a `pty/send` polling on its own reports what it saw). */
  observe(wait: InputWait): void {
    this._take(wait, wait === 'busy' || wait === 'unknown' ? undefined : this._waiter());
  }

  private _take(wait: InputWait, group: number | undefined): void {
    if (this._stopped || this.isDisposed) return;
    this._set(wait === 'secret_input' ? 'secret' : wait === 'input_wait' ? 'input' : 'none', group);
  }

  private _set(state: WaitState, group?: number): void {
    if (this.isDisposed) return;
    // The same wait, still (keys typed into a prompt); a group first known now is this wait's.
    const another = this._waitedBy !== undefined && group !== undefined && group !== this._waitedBy;
    if (state !== 'none' && (this._waitedBy === undefined || another)) this._waitedBy = group;
    if (state === this._state && !(state !== 'none' && another)) return;
    if (state === 'none') this._waitedBy = undefined;
    this._waitBegan = state === 'none' ? 0 : Math.max(this._lastActivity, this._busySeenAt);
    this._state = state;
    this._onDidChange.fire(state);
  }

  private _arm(ms: number): void {
    this._dueAt = Date.now() + ms;
    this._timer.value = disposableTimeout(() => this._onTimer(), Math.max(1, ms), { unref: true });
  }

  private _onTimer(): void {
    this._timer.clear();
    if (this._stopped || this.isDisposed) return;
    if (this._held) return; // reading resumes with activity(), which arms the timer again
    const now = Date.now();
    const quietFor = now - this._lastActivity;
    if (quietFor < InputWatchTuning.QuietMs) return this._arm(InputWatchTuning.QuietMs - quietFor);
    // Output is queued that the host has not read yet: reading it comes with activity(); look again then.
    if (this._printing()) return this._arm(InputWatchTuning.QuietMs);
    const sinceProbe = now - this._lastProbe;
    if (sinceProbe < InputWatchTuning.MinIntervalMs) return this._arm(InputWatchTuning.MinIntervalMs - sinceProbe);
    void this._run();
  }

  private async _run(): Promise<void> {
    this._probing = true;
    const started = Date.now();
    this._lastProbe = started;
    let wait: InputWait | undefined;
    this._groupChanged = false;
    try {
      wait = await this.probeNow();
    } catch {
      // A probe never throws by design; should one, the next activity probes again.
    } finally {
      this._probing = false;
    }
    if (this._stopped || this.isDisposed) return;
    // Output or a line during the probe, or another job in the foreground: look again once that is quiet too.
    if (this._lastActivity >= started || this._groupChanged) return this._arm(InputWatchTuning.QuietMs);
    // Busy and silent: it may start to read without a word (see MaxBusyRecheckMs).
    if (wait === 'busy' && !this._timer.value) {
      this._arm(this._busyRecheckMs);
      this._busyRecheckMs = Math.min(this._busyRecheckMs * 2, InputWatchTuning.MaxBusyRecheckMs);
    }
  }
}
