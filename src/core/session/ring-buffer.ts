import { leadingContinuationBytes, MAX_UTF8_CHARACTER_BYTES, utf8ReadEnd } from '../base/utf8';

/** Default retained raw output per session (docs/guarantees.md#retained-buffer: 1 MiB). */
export const DEFAULT_RING_BYTES = 1024 * 1024;

/**
 * Storage a ring starts with: a prompt and a few screens of typing fit; it doubles as output
 * comes. Zeroed memory the allocator takes from freed chunks is written, so it is resident at
 * once: 64 KiB at the start cost an idle session ~58 KiB of RSS (bench/README.md, issue 25:
 * echo tail and idle memory). The storage is not zeroed at all (see RingBuffer._grow), and grows
 * by GROWTH.
 */
const INITIAL_RING_BYTES = 4 * 1024;

/**
 * The storage grows this many times at once (4 KiB, 64 KiB, then the capacity): each storage left
 * behind stays resident until a collection frees it and then sits in malloc's free lists, so
 * doubling left ~0.5 MiB behind per session that printed a lot (100 sessions of `yes`:
 * bench/README.md, issue 25: memory per session). Storage is not zeroed, so the part not yet
 * written costs no RAM.
 */
const GROWTH = 16;

/** What a read from the ring returns. */
export interface RingRead {
  /** The bytes read, decoded (never a split character). */
  text: string;
  /** Absolute byte offset just after the bytes read. */
  cursor: number;
  /** Bytes between the requested `since` and the oldest retained byte, lost to the ring's bound. */
  dropped: number;
}

/**
 * A bounded byte buffer addressed by absolute offsets ("cursors") that only grow.
 * The storage grows on demand up to `capacity`, so idle sessions stay small.
 */
export class RingBuffer {
  private _buf: Buffer;
  private _start = 0; // physical index of the oldest byte
  private _length = 0; // bytes retained
  private _end = 0; // absolute offset after the newest byte

  constructor(readonly capacity = DEFAULT_RING_BYTES) {
    // Start small: most sessions never fill a megabyte, and an idle one holds a prompt.
    this._buf = Buffer.allocUnsafeSlow(Math.min(capacity, INITIAL_RING_BYTES));
  }

  /** Absolute offset just after the newest byte. */
  get end(): number {
    return this._end;
  }

  /** Absolute offset of the oldest retained byte. */
  get start(): number {
    return this._end - this._length;
  }

  append(chunk: Uint8Array): void {
    if (chunk.length === 0) return;
    this._end += chunk.length;
    if (chunk.length >= this.capacity) {
      this._grow(this.capacity);
      this._buf.set(chunk.subarray(chunk.length - this.capacity), 0);
      this._start = 0;
      this._length = this.capacity;
      return;
    }
    if (this._length + chunk.length > this._buf.length && this._buf.length < this.capacity) {
      this._grow(Math.min(this.capacity, Math.max(this._buf.length * GROWTH, this._length + chunk.length)));
    }
    const size = this._buf.length;
    let write = (this._start + this._length) % size;
    let rest = chunk;
    while (rest.length > 0) {
      const n = Math.min(rest.length, size - write);
      this._buf.set(rest.subarray(0, n), write);
      rest = rest.subarray(n);
      write = (write + n) % size;
    }
    const overflow = this._length + chunk.length - size;
    if (overflow > 0) {
      this._start = (this._start + overflow) % size;
      this._length = size;
    } else {
      this._length += chunk.length;
    }
  }

  /**
   * Reads from absolute offset `since` (clamped to what is retained), at most `maxBytes`, never
   * splitting a UTF-8 character: a `maxBytes` smaller than the character at `since` reads that one
   * character whole (utf8ReadEnd), so a reader always moves on.
   */
  read(since: number, maxBytes = Infinity): RingRead {
    const from = Math.max(since, this.start);
    const dropped = Math.max(0, this.start - since);
    // A cursor from the future (a stale or made-up one) is answered with the real end, so polling resumes correctly.
    if (from >= this._end) return { text: '', cursor: this._end, dropped };
    // Nothing asked for (a command that printed nothing: its start and end cursors are one).
    if (maxBytes <= 0) return { text: '', cursor: from, dropped };
    // Only what can be returned, plus a character's worth to find a boundary: a subscriber 1 MiB
    // behind used to copy the whole ring for every 64 KiB notification.
    let bytes = this._bytesAt(from - this.start, Math.min(this._end - from, maxBytes + MAX_UTF8_CHARACTER_BYTES));
    let skip = 0;
    if (dropped > 0) skip = leadingContinuationBytes(bytes); // the ring cut a character in half
    if (skip) bytes = bytes.subarray(skip);
    bytes = bytes.subarray(0, utf8ReadEnd(bytes, maxBytes));
    return { text: bytes.toString('utf8'), cursor: from + skip + bytes.length, dropped: dropped + skip };
  }

  /**
   * A copy of every retained byte, to rebuild a screen from (the mirror thread restarted). When the
   * ring has dropped older output, the copy starts at the first line it still holds whole, so the
   * replay does not begin inside a character or an escape sequence cut in two.
   */
  retained(): { from: number; bytes: Buffer } {
    let bytes = this._copy(0, this._length);
    let from = this.start;
    if (from > 0) {
      const nl = bytes.indexOf(0x0a);
      const skip = nl < 0 ? leadingContinuationBytes(bytes) : nl + 1;
      bytes = bytes.subarray(skip);
      from += skip;
    }
    return { from, bytes };
  }

  /**
   * Retained bytes from `offset`: a view of the storage when they do not wrap (decoded at once,
   * before the next append), else a copy. Fresh memory costs page faults, so most reads make none.
   */
  private _bytesAt(offset: number, length: number): Buffer {
    const size = this._buf.length;
    const p = (this._start + offset) % size;
    return p + length <= size ? this._buf.subarray(p, p + length) : this._copy(offset, length);
  }

  private _copy(offset: number, length: number): Buffer {
    const out = Buffer.allocUnsafe(length);
    const size = this._buf.length;
    const p = (this._start + offset) % size;
    const first = Math.min(length, size - p);
    this._buf.copy(out, 0, p, p + first);
    if (first < length) this._buf.copy(out, first, 0, length - first);
    return out;
  }

  /**
   * Larger storage, the retained bytes moved to its front. Not zeroed: only bytes written are
   * ever read (`_length` bounds every read), and a page is resident only once output reaches it,
   * not when zeros are written to it. The bytes go straight to the new storage: a copy in between
   * was one more buffer as large as the ring, per session, until the next collection (100
   * sessions filling their rings at once; bench/README.md, issue 25: memory).
   */
  private _grow(newSize: number): void {
    if (newSize <= this._buf.length) return;
    const grown = Buffer.allocUnsafeSlow(newSize);
    const size = this._buf.length;
    const first = Math.min(this._length, size - this._start);
    this._buf.copy(grown, 0, this._start, this._start + first);
    if (first < this._length) this._buf.copy(grown, first, 0, this._length - first);
    this._buf = grown;
    this._start = 0;
  }
}
