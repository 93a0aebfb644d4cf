/*
 * Runs of plain lines in a chunk of output, and the rows they make (docs/architecture.md#plain-runs).
 *
 * A "plain line" is printable ASCII (0x20-0x7e) ended by "\r\n", as a tty with onlcr passes a
 * program's "text\n". Printed at column 0 of the bottom row of a full-screen scroll region, with
 * plain ASCII printing (mirror.ts checks that), a line of L characters fills max(1, ceil(L/cols))
 * rows, each its cols-wide piece of the line, and every row scrolls off the screen one after the
 * other. Rows that scroll off only ever reach the compact store as text, so the head of a long run
 * can go there straight from the bytes; xterm parses only the run's tail, which leaves its whole
 * buffer, cursor and state exactly as parsing the whole run would.
 */

const CR = 0x0d;
const LF = 0x0a;
const SPACE = 0x20;
const TILDE = 0x7e;

/** A run of plain lines in a chunk: [start, tail) goes to the store, [tail, end) to xterm. */
export interface PlainRun {
  /** First byte of the run's first line. */
  start: number;
  /** First byte of the tail: the run's last lines, which xterm parses itself. */
  tail: number;
  /** Just past the run's last "\r\n". */
  end: number;
  /** Rows the lines before the tail make. */
  skippedRows: number;
  /** Lines before the tail. */
  skippedLines: number;
}

/**
 * Where byte `value` next occurs in `data` from `from`, or -1: Buffer's search (memchr), about
 * four times as fast as a typed array's own indexOf, which cost cursor-heavy output ~0.3 ms a MB.
 */
const bufferIndexOf = Buffer.prototype.indexOf as (this: Uint8Array, value: number, from: number) => number;
function indexOfByte(data: Uint8Array, value: number, from: number): number {
  return bufferIndexOf.call(data, value, from);
}

/** Each byte's high bit, in a 32-bit word. */
const HIGH_BITS = 0x80808080;

/**
 * The first byte from `from` (before `to`) that is not printable ASCII (0x20-0x7e), or `to`.
 * Four bytes a step (`view` is `data`'s): a word holds such a byte when one is below 0x20 (the
 * subtraction borrows into its high bit, which the byte did not have) or above 0x7e (adding 1
 * sets a high bit, or it was set). Then byte by byte within the word. A line's own search for its
 * end (a native call a line) cost more than its check: this finds both in one pass.
 */
function plainUntil(data: Uint8Array, view: DataView, from: number, to: number): number {
  let k = from;
  for (; k + 4 <= to; k += 4) {
    const w = view.getUint32(k, true);
    if ((((w - 0x20202020) & ~w) | ((w + 0x01010101) | w)) & HIGH_BITS) break;
  }
  // One unsigned comparison a byte: below 0x20 wraps around to a large number.
  for (; k < to; k++) if ((data[k] - SPACE) >>> 0 > TILDE - SPACE) return k;
  return to;
}

/** Rows a plain line of `length` characters fills on a screen `cols` wide. */
export function rowsOfLine(length: number, cols: number): number {
  return length === 0 ? 1 : Math.ceil(length / cols);
}

/**
 * End (just past "\r\n") of each line of the last run found, by any finder of this thread. One
 * array for all: it grows to a chunk's lines (64 KiB for 32 KiB of short lines), which every
 * session that printed used to hold (100 flooding sessions, 6 MiB: bench/README.md, "Issue 25: a
 * flood's memory"). A run's ends are read before the next find anywhere: Mirror._writeRuns finds,
 * uses and parses in one synchronous call.
 */
let sharedEnds = new Uint32Array(1024);

/** Finds runs of plain lines; the line ends of the last run found stay for `pushRows` and `linesCovering`. */
export class PlainRunFinder {
  /**
   * The first run in `data` from `from` whose lines make at least `tailRows` rows of tail (the
   * shortest suffix of whole lines that does) and at least `minSkipped` rows before it.
   */
  find(data: Uint8Array, from: number, cols: number, tailRows: number, minSkipped: number): PlainRun | undefined {
    const n = data.length;
    // A local in the loop: the module's binding is read once per call, not twice per line.
    let ends = sharedEnds;
    const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
    let i = from;
    while (i < n) {
      const start = i;
      let lines = 0;
      let rows = 0;
      // Where the line that is not plain ends (its "\r\n" or "\n" at j + 1), or n for none.
      let j: number;
      for (;;) {
        // Printable bytes, then "\r\n": a plain line (a "\n" before is not printable).
        const stop = plainUntil(data, view, i, n);
        if (stop + 1 >= n || data[stop] !== CR || data[stop + 1] !== LF) {
          const lf = indexOfByte(data, LF, stop);
          j = lf < 0 ? n : lf - 1;
          break;
        }
        j = stop;
        if (lines === ends.length) {
          const grown = new Uint32Array(lines * 2);
          grown.set(ends);
          ends = sharedEnds = grown;
        }
        ends[lines++] = j + 2;
        rows += rowsOfLine(j - i, cols);
        i = j + 2;
      }
      if (rows >= tailRows + minSkipped) {
        const run = this._split(start, lines, cols, tailRows);
        if (run.skippedRows >= minSkipped) return run;
      }
      // The line at `i` is not plain (or not complete): the next run may start after its end.
      if (j >= n) return undefined;
      i = j + 2;
    }
    return undefined;
  }

  /** The run of `lines` lines from `start`, its tail being the fewest last lines that make `tailRows` rows. */
  private _split(start: number, lines: number, cols: number, tailRows: number): PlainRun {
    const ends = sharedEnds;
    let rows = 0;
    let k = lines;
    while (k > 0 && rows < tailRows) {
      k--;
      const lineStart = k === 0 ? start : ends[k - 1];
      rows += rowsOfLine(ends[k] - 2 - lineStart, cols);
    }
    let skippedRows = 0;
    for (let m = 0; m < k; m++) skippedRows += rowsOfLine(ends[m] - 2 - (m === 0 ? start : ends[m - 1]), cols);
    return { start, tail: k === 0 ? start : ends[k - 1], end: ends[lines - 1], skippedRows, skippedLines: k };
  }

  /**
   * Byte offset just past the first lines of `run` that make at least `rows` rows (the run's end
   * at most): what xterm parses to bring the cursor down to the bottom row.
   */
  linesCovering(run: PlainRun, cols: number, rows: number): number {
    const ends = sharedEnds;
    let made = 0;
    let at = run.start;
    for (let k = 0; made < rows && at < run.end; k++) {
      made += rowsOfLine(ends[k] - 2 - at, cols);
      at = ends[k];
    }
    return at;
  }

  /**
   * Hands each row the run's lines before its tail make to `push`, oldest first: a line's
   * cols-wide pieces, each without its trailing spaces (as rows read from xterm are, row-text.ts).
   */
  pushRows(data: Uint8Array, run: PlainRun, cols: number, push: (data: Uint8Array, start: number, end: number, wrapped: boolean) => void): void {
    const ends = sharedEnds;
    let lineStart = run.start;
    for (let k = 0; k < run.skippedLines; k++) {
      const lineEnd = ends[k] - 2;
      if (lineEnd === lineStart) push(data, lineStart, lineStart, false);
      for (let p = lineStart; p < lineEnd; p += cols) {
        let q = Math.min(p + cols, lineEnd);
        while (q > p && data[q - 1] === SPACE) q--;
        // A row after a line's first continues it, as xterm marks a wrapped row.
        push(data, p, q, p > lineStart);
      }
      lineStart = ends[k];
    }
  }
}
