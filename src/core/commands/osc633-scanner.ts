/** One OSC 633 sequence found in the output, and where it ends in the output's byte cursors. */
export interface Osc633Sequence {
  /** What follows `ESC ] 633 ;`, without the terminator: `A`, `D;0`, `E;ls\x3b pwd`, `P;Cwd=/tmp`. */
  payload: string;
  /** The output cursor of the sequence's first byte (its ESC). */
  start: number;
  /** The output cursor just after the sequence's terminator. */
  cursor: number;
}

/** `ESC ] 633 ;`: how every VS Code shell integration sequence starts. */
const PREFIX = Buffer.from('\x1b]633;', 'latin1');
const BEL = 0x07;
const ESC = 0x1b;
const BACKSLASH = 0x5c;

/**
 * Longest sequence kept while waiting for its terminator. A command line (`E;…`) may be long, but
 * a sequence never ended (a program printed the prefix and then binary) must not grow for ever.
 */
const MAX_SEQUENCE_BYTES = 64 * 1024;

/**
 * Finds OSC 633 sequences in raw output, chunk by chunk, with the exact output cursor at which
 * each one ends: a sequence split over two reads of the PTY is found whole. The output itself is
 * not changed (the sequences reach every client, the editor's terminal included).
 */
export class Osc633Scanner {
  /** The start of a sequence (or of its prefix) whose end has not arrived yet. */
  private _pending: Buffer | undefined;

  /** Bytes at the end of the output scanned so far that may begin a sequence not complete yet. */
  get pendingBytes(): number {
    return this._pending?.length ?? 0;
  }

  /** Scans one chunk of output; `cursor` is the output cursor just after it. */
  scan(data: Uint8Array, cursor: number): Osc633Sequence[] {
    let buf = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
    if (this._pending) {
      buf = Buffer.concat([this._pending, buf]);
      this._pending = undefined;
    }
    // The cursor of buf[0]: pending bytes came just before this chunk.
    const base = cursor - buf.length;
    const found: Osc633Sequence[] = [];
    let from = 0;
    for (;;) {
      const start = buf.indexOf(PREFIX, from);
      if (start < 0) {
        this._keepPartialPrefix(buf);
        return found;
      }
      const end = terminatorOf(buf, start + PREFIX.length);
      if (end === 'incomplete') {
        // Copied: the chunk's bytes are handed on once scanned.
        if (buf.length - start <= MAX_SEQUENCE_BYTES) this._pending = Buffer.from(buf.subarray(start));
        return found;
      }
      if (end.aborted) {
        // A terminal abandons an OSC at another escape sequence: so do we, and read on from there.
        from = end.next;
        continue;
      }
      found.push({ payload: buf.toString('utf8', start + PREFIX.length, end.payloadEnd), start: base + start, cursor: base + end.next });
      from = end.next;
    }
  }

  /** Keeps the tail of `buf` when it is the beginning of a prefix (`ESC ]6`): the rest may follow. */
  private _keepPartialPrefix(buf: Buffer): void {
    const longest = Math.min(PREFIX.length - 1, buf.length);
    for (let n = longest; n > 0; n--) {
      if (buf.subarray(buf.length - n).equals(PREFIX.subarray(0, n))) {
        this._pending = Buffer.from(buf.subarray(buf.length - n));
        return;
      }
    }
  }
}

/** Where the OSC whose payload starts at `from` ends: BEL, or ST (`ESC \`); another ESC aborts it. */
function terminatorOf(buf: Buffer, from: number): { payloadEnd: number; next: number; aborted: boolean } | 'incomplete' {
  for (let i = from; i < buf.length; i++) {
    const b = buf[i];
    if (b === BEL) return { payloadEnd: i, next: i + 1, aborted: false };
    if (b !== ESC) continue;
    if (i + 1 >= buf.length) return 'incomplete';
    if (buf[i + 1] === BACKSLASH) return { payloadEnd: i, next: i + 2, aborted: false };
    return { payloadEnd: i, next: i, aborted: true };
  }
  return 'incomplete';
}
