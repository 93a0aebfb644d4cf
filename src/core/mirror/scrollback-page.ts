// One page of `pty/scrollback`: where it starts and ends, and how the main thread answers it from
// the scrollback store's sealed blocks without a trip to the mirror thread
// (docs/architecture.md#reading-old-rows). Nothing here loads xterm: the main thread imports it.
import { blockOf, BLOCK_ROWS, joinRows, type SealedBlock } from './sealed-blocks';
import type { SealedRows } from './scrollback-store';

/** One page of `pty/scrollback` (docs/protocol.md#ptyscrollback), lines counted from the oldest retained row. */
export interface ScrollbackPage {
  text: string;
  firstLine: number;
  lastLine: number;
  totalLines: number;
}

/** A page's line numbers, and the absolute rows [from, to) it holds. */
export interface PageBounds {
  firstLine: number;
  lastLine: number;
  totalLines: number;
  from: number;
  to: number;
}

/** The page `offset` rows back from the newest, `lines` long, of the retained rows [firstRetainedRow, endRow). */
export function pageBounds(firstRetainedRow: number, endRow: number, offset: number, lines: number): PageBounds {
  const totalLines = endRow - firstRetainedRow;
  const lastLine = Math.max(0, totalLines - offset);
  const firstLine = lastLine === 0 ? 0 : Math.max(1, lastLine - lines + 1);
  const from = lastLine === 0 ? firstRetainedRow : firstRetainedRow + firstLine - 1;
  return { firstLine, lastLine, totalLines, from, to: lastLine === 0 ? from : firstRetainedRow + lastLine };
}

/** What the mirror thread tells with a scrollback page: its sealed rows and retained range, as of the page's cursor. */
export interface SealedScrollback extends SealedRows {
  firstRetainedRow: number;
  endRow: number;
}

/**
 * The sealed rows of one moment, on the main thread: a page that lies within them is answered here.
 * Valid only while the mirror is exactly as it was then (MirrorProxy decides).
 */
export class SealedPages {
  private readonly _blocks: SealedBlock[];
  /** Absolute number just past the last sealed row. */
  private readonly _end: number;

  constructor(private readonly _s: SealedScrollback) {
    this._blocks = _s.memory.map(blockOf);
    this._end = _s.first + this._blocks.length * BLOCK_ROWS - _s.skip;
  }

  /** The page, or undefined when some of its rows are not sealed (the thread has them). */
  page(offset: number, lines: number): ScrollbackPage | undefined {
    const s = this._s;
    const b = pageBounds(s.firstRetainedRow, s.endRow, offset, lines);
    if (b.from < s.first || b.to > this._end) return undefined;
    const at = b.from - s.first + s.skip;
    return { text: joinRows(this._blocks, at, at + (b.to - b.from)), firstLine: b.firstLine, lastLine: b.lastLine, totalLines: b.totalLines };
  }
}
