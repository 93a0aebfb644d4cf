/**
 * The messages a test client received and has not taken yet, and the waits for the next one that
 * matches: LineClient (JSON-RPC lines) and WsClient (WebSocket frames) keep theirs in one of these.
 */
export class Inbox<T> {
  /** Every message received, in order (for diagnostics). */
  readonly received: T[] = [];
  private readonly _queued: T[] = [];
  private readonly _waiters: Array<{ pred: (m: T) => boolean; resolve(m: T): void; timer: NodeJS.Timeout }> = [];
  private _isClosed = false;

  /** A message came: the oldest wait it satisfies takes it, else it is queued. */
  push(msg: T): void {
    this.received.push(msg);
    const i = this._waiters.findIndex((w) => w.pred(msg));
    if (i >= 0) this._waiters.splice(i, 1)[0].resolve(msg);
    else this._queued.push(msg);
  }

  /**
   * Nothing more can arrive: a wait still pending runs out as before, but no longer keeps the test
   * file's process alive after its last test (a 60 s wait on a closed connection did).
   */
  close(): void {
    this._isClosed = true;
    for (const w of this._waiters) w.timer.unref();
  }

  /** The next message satisfying `pred` (queued ones first); rejects after `timeoutMs`, naming `what`. */
  next(pred: (m: T) => boolean, timeoutMs: number, what: string): Promise<T> {
    const i = this._queued.findIndex(pred);
    if (i >= 0) return Promise.resolve(this._queued.splice(i, 1)[0]);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        const k = this._waiters.indexOf(waiter);
        if (k >= 0) this._waiters.splice(k, 1);
        reject(new Error(`timed out waiting for ${what}; last messages: ${JSON.stringify(this.received.slice(-3)).slice(0, 600)}`));
      }, timeoutMs);
      if (this._isClosed) timer.unref();
      const waiter = {
        pred,
        timer,
        resolve: (m: T) => {
          clearTimeout(timer);
          resolve(m);
        },
      };
      this._waiters.push(waiter);
    });
  }

  /** Takes every queued message satisfying `pred`, oldest first. */
  take(pred: (m: T) => boolean): T[] {
    const out: T[] = [];
    for (let i = 0; i < this._queued.length;) {
      if (pred(this._queued[i])) out.push(...this._queued.splice(i, 1));
      else i++;
    }
    return out;
  }
}
