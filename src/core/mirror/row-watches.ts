/**
 * Where the output since a moment first changed the screen, for each send under way: a send's
 * output is the rendered rows from the row its cursor started on, or from the topmost row the
 * program changed since when that is higher up (a `clear`, a cursor sent up and printed over), so
 * that what it drew above its start is not left out (docs/protocol.md#ptysend).
 *
 * One watch per send, and one send at a time per session; a watch never ended (its call failed
 * before it read the output) is dropped once MAX_WATCHES newer ones began.
 */
export class RowWatches {
  /** Watch id → the topmost absolute row seen so far. */
  private readonly _tops = new Map<number, number>();
  private _nextId = 1;

  /** True while a watch is under way: only then do the parses look at what they changed. */
  get active(): boolean {
    return this._tops.size > 0;
  }

  /** Starts a watch at absolute row `row` (the cursor's); returns its id. */
  start(row: number): number {
    const id = this._nextId++;
    this._tops.set(id, row);
    if (this._tops.size > MAX_WATCHES) this._tops.delete(this._tops.keys().next().value as number);
    return id;
  }

  /** The output changed absolute row `row`. */
  touched(row: number): void {
    for (const [id, top] of this._tops) if (row < top) this._tops.set(id, row);
  }

  /** Ends watch `id`: the topmost row seen, or undefined when it is not known (dropped, or the mirror restarted). */
  end(id: number): number | undefined {
    const top = this._tops.get(id);
    this._tops.delete(id);
    return top;
  }
}

/** Watches kept at once; more than sessions ever have sends under way. */
const MAX_WATCHES = 16;
