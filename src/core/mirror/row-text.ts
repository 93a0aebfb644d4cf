import type { IBuffer } from '@xterm/headless';
import { cellsOfLine, rowListOf, type CellRow } from '../base/internals/xterm';

/*
 * xterm.js's own rows of cells (CellRow, base/internals/xterm.ts) are read directly because the
 * public `translateToString` builds each row as a rope of one string per cell, which made moving
 * rows into the compact scrollback cost as much as parsing the output. The layout is checked on
 * every call; anything unexpected takes the public path.
 */

const enum Cell {
  Words = 3,
  CodePointMask = 0x1fffff,
  IsCombined = 0x200000,
  WidthShift = 22,
  /** A code point above 0x7f, or a combined character: bits that make a cell more than one UTF-8 byte. */
  NotOneByte = (CodePointMask & ~0x7f) | IsCombined,
}

let latin1 = Buffer.allocUnsafeSlow(1024);
let units = new Uint16Array(2048);

/** One row as text, trailing spaces removed (spaces a program wrote count too, as in tmux's capture-pane). */
export function rowText(buf: IBuffer, y: number): string {
  const line = buf.getLine(y);
  if (!line) return '';
  const cells = cellsOfLine(line);
  const fast =
    cells && cells._data instanceof Uint32Array && cells.length === line.length && cells._data.length >= cells.length * Cell.Words
      ? fromCells(cells)
      : undefined;
  if (fast !== undefined) return fast;
  const text = line.translateToString(true);
  let end = text.length;
  while (end > 0 && text.charCodeAt(end - 1) === 0x20) end--; // (not / +$/: it tries every space as a start)
  return end === text.length ? text : text.slice(0, end);
}

/**
 * Writes row `y` as UTF-8 into `out` from `at`, trailing spaces removed, and returns where it
 * ends; -1 when the row must be read as a string instead (combined characters, an unexpected
 * layout). `out` must have room for 4 bytes a cell. Rows moved into the compact scrollback go
 * straight into its bytes this way, with no string made for each (bench/README.md, profile).
 */
export function rowBytes(buf: IBuffer, y: number, out: Buffer, at: number): number {
  const cells = cellRow(buf, y);
  if (!cells) return -1;
  const data = cells._data;
  let n = cells.length;
  if (out.length - at < n * 4) return -1; // a row longer than the caller made room for
  // Trailing blanks are skipped first, reading only: most rows that scroll by in a flood are
  // short (`yes` writes one cell of 80), and the loop below writes a byte for every cell it passes.
  while (n > 0) {
    const content = data[(n - 1) * Cell.Words];
    const cp = content & Cell.CodePointMask;
    if (content & Cell.IsCombined || (cp !== 0 && cp !== 0x20)) break;
    n--;
  }
  // The last cell kept is not blank, so the row ends where the loops stop writing.
  let w = at;
  let x = 0;
  // Cells of one byte, most of most rows, in a loop of their own; an empty cell reads as a space.
  for (; x < n; x++) {
    const content = data[x * Cell.Words];
    if (content & Cell.NotOneByte) break;
    out[w++] = content & 0x7f || 0x20;
  }
  for (; x < n; x++) {
    const content = data[x * Cell.Words];
    if (content & Cell.IsCombined) return -1;
    const cp = content & Cell.CodePointMask;
    if (cp < 0x80) {
      out[w++] = cp === 0 ? 0x20 : cp;
      continue;
    }
    if (cp < 0x800) {
      out[w++] = 0xc0 | (cp >> 6);
    } else if (cp < 0x10000) {
      out[w++] = 0xe0 | (cp >> 12);
      out[w++] = 0x80 | ((cp >> 6) & 0x3f);
    } else {
      out[w++] = 0xf0 | (cp >> 18);
      out[w++] = 0x80 | ((cp >> 12) & 0x3f);
      out[w++] = 0x80 | ((cp >> 6) & 0x3f);
    }
    out[w++] = 0x80 | (cp & 0x3f);
    if (content >>> Cell.WidthShift === 2) x++; // the wide character's second cell holds nothing
  }
  return w;
}

/**
 * xterm's row `y` itself: through the buffer's own line list when it is there (the public
 * getLine makes a wrapper object per call), else through the wrapper; undefined if the layout is
 * not the expected one.
 */
function cellRow(buf: IBuffer, y: number): CellRow | undefined {
  const lines = rowListOf(buf);
  const row = lines ? lines.get(y) : cellsOfLine(buf.getLine(y));
  return row && row._data instanceof Uint32Array && typeof row.length === 'number' && row._data.length >= row.length * Cell.Words ? row : undefined;
}

/** Whether row `y` continues the row before (a line that wrapped), read as the row's cells are: no wrapper object per row. */
export function rowIsWrapped(buf: IBuffer, y: number): boolean {
  const row = rowListOf(buf)?.get(y);
  return typeof row?.isWrapped === 'boolean' ? row.isWrapped : buf.getLine(y)?.isWrapped === true;
}

/** True when rows are read from xterm's cells directly (the layout is as expected); for tests. */
export function readsCellsDirectly(buf: IBuffer): boolean {
  const line = buf.getLine(0);
  const cells = cellsOfLine(line);
  return !!line && !!cells && cells._data instanceof Uint32Array && cells.length === line.length;
}

/** The row's text from its cells, or undefined for a row with combined characters (accents, ZWJ emoji). */
function fromCells(row: CellRow): string | undefined {
  const data = row._data;
  const n = row.length;
  if (latin1.length < n * 2) {
    units = new Uint16Array(n * 2);
    latin1 = Buffer.allocUnsafeSlow(n * 2);
  }
  // Most rows are one byte a character: those go straight into `latin1`, one pass, no copy.
  let end = 0; // just past the last non-space
  let x = 0;
  for (; x < n; x++) {
    const content = data[x * Cell.Words];
    const cp = content & Cell.CodePointMask;
    if (cp > 0xff || content & Cell.IsCombined) break;
    if (cp === 0 || cp === 0x20)
      latin1[x] = 0x20; // an empty cell reads as a space
    else {
      latin1[x] = cp;
      end = x + 1;
    }
  }
  if (x === n) return end === 0 ? '' : latin1.toString('latin1', 0, end);
  return wideRow(data, n);
}

/** A row with characters beyond Latin-1 (or combined ones: undefined), as UTF-16. */
function wideRow(data: Uint32Array, n: number): string | undefined {
  let len = 0;
  let end = 0;
  for (let x = 0; x < n; x++) {
    const content = data[x * Cell.Words];
    if (content & Cell.IsCombined) return undefined;
    const cp = content & Cell.CodePointMask;
    if (cp === 0) {
      units[len++] = 0x20;
      continue;
    }
    if (cp > 0xffff) {
      units[len++] = 0xd800 + ((cp - 0x10000) >> 10);
      units[len++] = 0xdc00 + ((cp - 0x10000) & 0x3ff);
    } else units[len++] = cp;
    if (cp !== 0x20) end = len;
    if (content >>> Cell.WidthShift === 2) x++; // the wide character's second cell holds nothing
  }
  return end === 0 ? '' : String.fromCharCode.apply(null, units.subarray(0, end) as unknown as number[]);
}
