import type { IBuffer } from '@xterm/headless';
import { rowBytes, rowIsWrapped, rowText } from './row-text';
import { BLOCK_ROWS, blockRow, ROW_END, sealBlock, type SealedBlock } from './sealed-blocks';

/** Most bytes a cell's character takes in UTF-8 (rowBytes writes at most this much per cell). */
const MAX_CELL_BYTES = 4;

/**
 * Dropped blocks kept to hold the next ones: a flood fills one block as it drops one, so two make
 * the flood allocate none. Each holds at most what a block of its size holds.
 */
const MAX_SPARE_BLOCKS = 2;

/**
 * A block's own memory is a multiple of this, so a spare one fits the next block of about the same
 * size (a few bytes more is usual: a longer row number); half of it on average is unused, ~3 % of
 * a block of coloured rows.
 */
const ROOM_STEP = 1024;

/**
 * A block of BLOCK_ROWS rows (sealed-blocks.ts): in this thread's own memory (`room`, reused once
 * the block is dropped) until another thread is told about it, then in shared memory for good.
 */
interface StoredBlock {
  ends: Uint32Array;
  bytes: Buffer;
  /** Shared memory, once sealed: never written again, maybe held by another thread. */
  memory?: SharedArrayBuffer;
  /** This thread's memory that `bytes` is a view of, until sealed. */
  room?: Buffer;
}

/** The store's sealed rows as another thread reads them (scrollback-page.ts). */
export interface SealedRows {
  /** The sealed blocks' memory, oldest first (shared, never written again). */
  memory: SharedArrayBuffer[];
  /** Rows of the first block already dropped. */
  skip: number;
  /** Absolute number of the first row held (row `skip` of the first block). */
  first: number;
}

/**
 * Old terminal rows kept as UTF-8 text, oldest first, bounded to `capacity` rows.
 * The headless mirror keeps only a short scrollback of its own (its cells cost ~1.8 KB a row);
 * rows that leave it land here as text, which is what every scrollback read returns anyway.
 *
 * Rows are packed 256 to a buffer: a string per row costs ~20 bytes of header and a pointer, more
 * than the text of a typical short row. Rows are written as bytes straight from xterm's cells
 * (pushRow), so a flood makes no string for the thousands of rows that scroll by and are dropped
 * unread: making them was a fifth of the mirror's work (bench/README.md, profile).
 */
export class ScrollbackStore {
  private _blocks: StoredBlock[] = [];
  /** Dropped blocks in this thread's own memory, to hold the next ones (see StoredBlock). */
  private _spare: StoredBlock[] = [];
  /** Rows of the first block already dropped. */
  private _skip = 0;
  /** The newest rows, not yet sealed into a block (fewer than BLOCK_ROWS): bytes and row ends. */
  private _tail = Buffer.allocUnsafeSlow(0);
  private _tailEnds = new Uint32Array(BLOCK_ROWS);
  private _tailRows = 0;
  private _length = 0;
  /** Rows ever dropped from the front (for absolute row numbering). */
  private _dropped = 0;
  /**
   * Which rows continue the row before them (a long line the terminal wrapped): a bit per row, by
   * absolute number, in a ring larger than the rows held. Made at the first such row: a session
   * whose lines all fit holds none.
   */
  private _wraps: Uint8Array | undefined;
  private _wrapMask = 0;

  constructor(private _capacity: number) {}

  get length(): number {
    return this._length;
  }

  /** Absolute number of the oldest row still held. */
  get firstAbsolute(): number {
    return this._dropped;
  }

  /** Adds a row; `wrapped`: it continues the row before (one line the terminal wrapped). */
  push(row: string, wrapped = false): void {
    const at = this._tailBytes();
    this._room(at, Buffer.byteLength(row, 'utf8') + 1);
    this._added(at + this._tail.write(row, at, 'utf8'), wrapped);
  }

  /** Adds xterm's row `y` of `buf` (its text, trailing spaces removed). */
  pushRow(buf: IBuffer, y: number, cols: number): void {
    const at = this._tailBytes();
    this._room(at, cols * MAX_CELL_BYTES + 1);
    const wrapped = rowIsWrapped(buf, y);
    const end = rowBytes(buf, y, this._tail, at);
    if (end < 0) this.push(rowText(buf, y), wrapped);
    else this._added(end, wrapped);
  }

  /** Whether row `i` (counted from the oldest held) continues the row before it. */
  wrapped(i: number): boolean {
    if (!this._wraps || i < 0 || i >= this._length) return false;
    const a = (this._dropped + i) & this._wrapMask;
    return ((this._wraps[a >> 3] >> (a & 7)) & 1) === 1;
  }

  /** Sets the newest row's wrap bit (the ring is made at the first wrapped row, grown with the capacity). */
  private _markNewest(wrapped: boolean): void {
    if (!this._wraps) {
      if (!wrapped) return;
      this._growWraps();
    } else if (this._wrapMask + 1 < this._capacity + 2 * BLOCK_ROWS) this._growWraps();
    this._setWrap(this._dropped + this._length - 1, wrapped);
  }

  /** A ring of bits that outlasts the rows held (the capacity and a block), the held rows' bits kept. */
  private _growWraps(): void {
    let bits = 1024;
    while (bits < this._capacity + 2 * BLOCK_ROWS) bits *= 2;
    const old = this._wraps;
    const oldMask = this._wrapMask;
    this._wraps = new Uint8Array(bits >> 3);
    this._wrapMask = bits - 1;
    if (old) for (let a = this._dropped; a < this._dropped + this._length; a++) this._setWrap(a, ((old[(a & oldMask) >> 3] >> (a & 7)) & 1) === 1);
  }

  private _setWrap(abs: number, on: boolean): void {
    const a = abs & this._wrapMask;
    if (on) this._wraps![a >> 3] |= 1 << (a & 7);
    else this._wraps![a >> 3] &= ~(1 << (a & 7));
  }

  /**
   * Adds bytes `start` to `end` of `data` as a row: text of printable ASCII only (one byte a
   * character, so already UTF-8), trailing spaces already removed. Rows of plain text that never
   * reached xterm come this way (plain-run.ts).
   */
  pushAscii(data: Uint8Array, start: number, end: number, wrapped = false): void {
    const at = this._tailBytes();
    const n = end - start;
    this._room(at, n + 1);
    this._tail.set(data.subarray(start, end), at);
    this._added(at + n, wrapped);
  }

  /** Row `i` counted from the oldest held row. */
  get(i: number): string {
    if (i < 0 || i >= this._length) return '';
    const k = i + this._skip;
    const b = Math.floor(k / BLOCK_ROWS);
    const inTail = b >= this._blocks.length;
    if (!inTail) return blockRow(this._blocks[b], k - b * BLOCK_ROWS);
    const r = k - this._blocks.length * BLOCK_ROWS;
    return this._tail.toString('utf8', r === 0 ? 0 : this._tailEnds[r - 1], this._tailEnds[r] - 1);
  }

  /**
   * Takes back the newest `n` rows (fewer when it holds fewer) and says how many it took: rows
   * that are xterm's again (Mirror.resize re-wraps them and may pull them back onto the screen).
   * A sealed block they reach is copied back into the tail; a thread that holds it keeps its copy.
   */
  popNewest(n: number): number {
    const taken = Math.min(n, this._length);
    let left = taken;
    while (left > 0) {
      if (this._tailRows === 0 && !this._reopenNewestBlock()) break;
      const k = Math.min(left, this._tailRows);
      this._tailRows -= k;
      left -= k;
    }
    this._length -= taken - left;
    return taken - left;
  }

  /** The newest block becomes the tail again (its rows already dropped left out); false when there is none. */
  private _reopenNewestBlock(): boolean {
    const block = this._blocks.pop();
    if (!block) return false;
    const size = block.ends[BLOCK_ROWS - 1];
    this._room(0, size);
    block.bytes.copy(this._tail, 0, 0, size);
    this._tailEnds.set(block.ends.subarray(0, BLOCK_ROWS));
    this._tailRows = BLOCK_ROWS;
    this._keep(block);
    if (this._blocks.length === 0 && this._skip > 0) {
      // It was the first block: its first `_skip` rows were dropped before.
      this._dropTail(this._skip);
      this._skip = 0;
    }
    return true;
  }

  /**
   * The full blocks, for a read from another thread: they stay as they are, whatever the store does
   * next. A block moves to shared memory the first time it is told (a copy, once): in a flood no
   * read asks, and the dropped blocks' memory holds the next ones. Sealing each block as it filled
   * made a shared buffer per 256 rows that only a full collection frees: in 100 sessions of `yes`
   * ~30-50 MB of dead blocks waited for one (bench/README.md, issue 25: memory per session).
   */
  sealed(): SealedRows {
    const memory: SharedArrayBuffer[] = [];
    for (let i = 0; i < this._blocks.length; i++) {
      const b = this._blocks[i];
      if (!b.memory) {
        const sealed: SealedBlock = sealBlock(b.bytes, b.bytes.length, b.ends);
        this._blocks[i] = sealed;
        this._keep(b);
      }
      memory.push(this._blocks[i].memory!);
    }
    return { memory, skip: this._skip, first: this._dropped };
  }

  /**
   * Drops every row (the program cleared the scrollback, as `clear` does with ED 3).
   * `alsoGone` counts rows that vanished before reaching the store, so row numbers keep growing.
   */
  clear(alsoGone = 0): void {
    this._dropped += this._length + alsoGone;
    for (const b of this._blocks) this._keep(b);
    this._blocks = [];
    this._tailRows = 0;
    this._skip = 0;
    this._length = 0;
  }

  /** Trims to a new bound (the host's setting changed). */
  setCapacity(capacity: number): void {
    this._capacity = capacity;
    this._trim();
  }

  private _tailBytes(): number {
    return this._tailRows === 0 ? 0 : this._tailEnds[this._tailRows - 1];
  }

  /** Makes room for `more` bytes after `at` in the tail. */
  private _room(at: number, more: number): void {
    if (at + more <= this._tail.length) return;
    const grown = Buffer.allocUnsafeSlow(Math.max(at + more, this._tail.length * 2, 4096));
    this._tail.copy(grown, 0, 0, at);
    this._tail = grown;
  }

  /** The row written into the tail ends at `end`; its ROW_END goes after it (sealed-blocks.ts). */
  private _added(end: number, wrapped: boolean): void {
    this._tail[end++] = ROW_END;
    this._tailEnds[this._tailRows++] = end;
    this._length++;
    if (this._tailRows >= BLOCK_ROWS) this._seal();
    this._trim();
    if (this._length > 0) this._markNewest(wrapped);
  }

  /**
   * The full tail becomes a block of its size (a spare one when one fits, see StoredBlock); the
   * tail's buffer is reused.
   */
  private _seal(): void {
    const size = this._tailBytes();
    const block = this._roomFor(size);
    this._tail.copy(block.room!, 0, 0, size);
    block.bytes = block.room!.subarray(0, size);
    block.ends.set(this._tailEnds);
    this._blocks.push(block);
    this._tailRows = 0;
  }

  /** A block with room for `size` bytes: a spare one that holds at most twice that, else a new one. */
  private _roomFor(size: number): StoredBlock {
    const i = this._spare.findIndex((b) => b.room!.length >= size && b.room!.length <= 2 * size + ROOM_STEP);
    if (i >= 0) return this._spare.splice(i, 1)[0];
    const room = Buffer.allocUnsafeSlow(Math.ceil(size / ROOM_STEP) * ROOM_STEP || ROOM_STEP);
    return { ends: new Uint32Array(BLOCK_ROWS), bytes: room, room };
  }

  /** A block the store let go of: its own memory holds a later block (a shared one may still be read elsewhere). */
  private _keep(b: StoredBlock): void {
    if (b.room && !b.memory && this._spare.length < MAX_SPARE_BLOCKS) this._spare.push(b);
  }

  /** Drops the oldest `n` rows of the tail (only when no block is left). */
  private _dropTail(n: number): void {
    if (n <= 0) return;
    if (n >= this._tailRows) {
      this._tailRows = 0;
      return;
    }
    const cut = this._tailEnds[n - 1];
    this._tail.copy(this._tail, 0, cut, this._tailBytes());
    for (let i = n; i < this._tailRows; i++) this._tailEnds[i - n] = this._tailEnds[i] - cut;
    this._tailRows -= n;
  }

  private _trim(): void {
    while (this._length > this._capacity) {
      const over = this._length - this._capacity;
      this._dropped += over;
      this._length -= over;
      if (this._blocks.length === 0) {
        this._dropTail(over);
        return;
      }
      this._skip += over;
      // Whole blocks dropped go at once; a partly dropped block stays until its last row goes.
      const whole = Math.min(Math.floor(this._skip / BLOCK_ROWS), this._blocks.length);
      if (whole > 0) {
        for (const b of this._blocks.splice(0, whole)) this._keep(b);
        this._skip -= whole * BLOCK_ROWS;
      }
      if (this._blocks.length === 0 && this._skip > 0) {
        // Everything sealed is gone and more must go: the rest comes off the tail.
        this._dropTail(this._skip);
        this._skip = 0;
      }
    }
  }
}
