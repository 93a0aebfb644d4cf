import { toDisposable, type IDisposable } from '../base/lifecycle';

/**
 * A count of holders, each counted until it disposes its handle (once, however often it does):
 * a session's clients, its calls in progress, the recordings that want writes judged.
 */
export class HandleCount {
  private _count = 0;

  /** `changed` is told after every change: the new count, and whether one was added. */
  constructor(private readonly _changed: (count: number, added: boolean) => void = () => {}) {}

  get count(): number {
    return this._count;
  }

  /** Counts one more until the returned handle is disposed. */
  add(): IDisposable {
    this._count++;
    this._changed(this._count, true);
    return toDisposable(() => {
      this._count--;
      this._changed(this._count, false);
    });
  }
}
