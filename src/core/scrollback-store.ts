/**
 * Old terminal rows kept as plain strings, oldest first, bounded to `capacity` rows.
 * The headless mirror keeps only a short scrollback of its own (its cells cost ~1.8 KB a row);
 * rows that leave it land here as text, which is what every scrollback read returns anyway.
 */
export class ScrollbackStore {
  private _rows: string[] = [];
  private _head = 0; // index of the oldest live row in _rows
  /** Rows ever dropped from the front (for absolute row numbering). */
  private _dropped = 0;

  constructor(private _capacity: number) {}

  get length(): number {
    return this._rows.length - this._head;
  }

  /** Absolute number of the oldest row still held. */
  get firstAbsolute(): number {
    return this._dropped;
  }

  push(row: string): void {
    this._rows.push(row);
    if (this.length > this._capacity) {
      this._head++;
      this._dropped++;
      // Compact the array now and then instead of shifting on every row.
      if (this._head >= 4096 && this._head * 2 >= this._rows.length) {
        this._rows = this._rows.slice(this._head);
        this._head = 0;
      }
    }
  }

  /** Row `i` counted from the oldest held row. */
  get(i: number): string {
    return this._rows[this._head + i];
  }

  /**
   * Drops every row (the program cleared the scrollback, as `clear` does with ED 3).
   * `alsoGone` counts rows that vanished before reaching the store, so row numbers keep growing.
   */
  clear(alsoGone = 0): void {
    this._dropped += this.length + alsoGone;
    this._rows = [];
    this._head = 0;
  }

  /** Trims to a new bound (the host's setting changed). */
  setCapacity(capacity: number): void {
    this._capacity = capacity;
    while (this.length > capacity) {
      this._head++;
      this._dropped++;
    }
  }
}
