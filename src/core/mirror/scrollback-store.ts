/** Rows joined into one string at a time (one string per block, not one per row: see below). */
const BLOCK_ROWS = 256;

/** A sealed run of BLOCK_ROWS rows: their text joined by '\n', and where each row ends. */
interface Block {
  text: string;
  ends: Uint32Array;
}

/**
 * Old terminal rows kept as plain text, oldest first, bounded to `capacity` rows.
 * The headless mirror keeps only a short scrollback of its own (its cells cost ~1.8 KB a row);
 * rows that leave it land here as text, which is what every scrollback read returns anyway.
 *
 * Rows are packed 256 to a string: a string per row costs ~20 bytes of header and a pointer, more
 * than the text of a typical short row (10000 rows of `seq` cost ~280 KB as strings, ~100 KB packed).
 */
export class ScrollbackStore {
  private _blocks: Block[] = [];
  /** Rows of the first block already dropped. */
  private _skip = 0;
  /** The newest rows, not yet sealed into a block (fewer than BLOCK_ROWS). */
  private _tail: string[] = [];
  private _length = 0;
  /** Rows ever dropped from the front (for absolute row numbering). */
  private _dropped = 0;

  constructor(private _capacity: number) {}

  get length(): number {
    return this._length;
  }

  /** Absolute number of the oldest row still held. */
  get firstAbsolute(): number {
    return this._dropped;
  }

  push(row: string): void {
    this._tail.push(row);
    this._length++;
    if (this._tail.length >= BLOCK_ROWS) this._seal();
    this._trim();
  }

  /** Row `i` counted from the oldest held row. */
  get(i: number): string {
    if (i < 0 || i >= this._length) return '';
    const k = i + this._skip;
    const b = Math.floor(k / BLOCK_ROWS);
    if (b >= this._blocks.length) return this._tail[k - this._blocks.length * BLOCK_ROWS];
    const { text, ends } = this._blocks[b];
    const r = k - b * BLOCK_ROWS;
    return text.slice(r === 0 ? 0 : ends[r - 1] + 1, ends[r]);
  }

  /**
   * Drops every row (the program cleared the scrollback, as `clear` does with ED 3).
   * `alsoGone` counts rows that vanished before reaching the store, so row numbers keep growing.
   */
  clear(alsoGone = 0): void {
    this._dropped += this._length + alsoGone;
    this._blocks = [];
    this._tail = [];
    this._skip = 0;
    this._length = 0;
  }

  /** Trims to a new bound (the host's setting changed). */
  setCapacity(capacity: number): void {
    this._capacity = capacity;
    this._trim();
  }

  private _seal(): void {
    const rows = this._tail;
    const ends = new Uint32Array(rows.length);
    let at = 0;
    for (let i = 0; i < rows.length; i++) {
      at += rows[i].length;
      ends[i] = at;
      at++; // the '\n' between rows
    }
    this._blocks.push({ text: rows.join('\n'), ends });
    this._tail = [];
  }

  private _trim(): void {
    while (this._length > this._capacity) {
      const over = this._length - this._capacity;
      this._dropped += over;
      this._length -= over;
      if (this._blocks.length === 0) {
        this._tail.splice(0, over);
        return;
      }
      this._skip += over;
      // Whole blocks dropped go at once; a partly dropped block stays until its last row goes.
      const whole = Math.min(Math.floor(this._skip / BLOCK_ROWS), this._blocks.length);
      if (whole > 0) {
        this._blocks.splice(0, whole);
        this._skip -= whole * BLOCK_ROWS;
      }
      if (this._blocks.length === 0 && this._skip > 0) {
        // Everything sealed is gone and more must go: the rest comes off the tail.
        this._tail.splice(0, this._skip);
        this._skip = 0;
      }
    }
  }
}
