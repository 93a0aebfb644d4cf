import type { IBuffer } from '@xterm/headless';

/**
 * xterm.js's own row of cells, behind the public IBufferLine: three 32-bit words per cell, the
 * first holding the code point (21 bits), a "combined" flag and the width (top bits). Read
 * directly because the public `translateToString` builds each row as a rope of one string per
 * cell, which made moving rows into the compact scrollback cost as much as parsing the output.
 * The layout is checked on every call; anything unexpected takes the public path.
 */
interface CellRow {
  _data: Uint32Array;
  length: number;
}

const enum Cell {
  Words = 3,
  CodePointMask = 0x1fffff,
  IsCombined = 0x200000,
  WidthShift = 22,
}

let latin1 = Buffer.allocUnsafeSlow(1024);
let units = new Uint16Array(2048);

/** One row as text, trailing spaces removed (spaces a program wrote count too, as in tmux's capture-pane). */
export function rowText(buf: IBuffer, y: number): string {
  const line = buf.getLine(y);
  if (!line) return '';
  const cells = (line as unknown as { _line?: CellRow })._line;
  const fast = cells && cells._data instanceof Uint32Array && cells.length === line.length && cells._data.length >= cells.length * Cell.Words ? fromCells(cells) : undefined;
  if (fast !== undefined) return fast;
  const text = line.translateToString(true);
  return text.charCodeAt(text.length - 1) === 0x20 ? text.replace(/ +$/, '') : text;
}

/** True when rows are read from xterm's cells directly (the layout is as expected); for tests. */
export function readsCellsDirectly(buf: IBuffer): boolean {
  const line = buf.getLine(0);
  const cells = (line as unknown as { _line?: CellRow } | undefined)?._line;
  return !!line && !!cells && cells._data instanceof Uint32Array && cells.length === line.length;
}

/** The row's text from its cells, or undefined for a row with combined characters (accents, ZWJ emoji). */
function fromCells(row: CellRow): string | undefined {
  const data = row._data;
  const n = row.length;
  if (units.length < n * 2) {
    units = new Uint16Array(n * 2);
    latin1 = Buffer.allocUnsafeSlow(n * 2);
  }
  let len = 0;
  let end = 0; // just past the last non-space
  let narrow = true; // every code point fits in one byte
  for (let x = 0; x < n; x++) {
    const content = data[x * Cell.Words];
    if (content & Cell.IsCombined) return undefined;
    const cp = content & Cell.CodePointMask;
    if (cp === 0) {
      units[len++] = 0x20; // an empty cell reads as a space
      continue;
    }
    if (cp > 0xffff) {
      units[len++] = 0xd800 + ((cp - 0x10000) >> 10);
      units[len++] = 0xdc00 + ((cp - 0x10000) & 0x3ff);
      narrow = false;
    } else {
      units[len++] = cp;
      if (cp > 0xff) narrow = false;
    }
    if (cp !== 0x20) end = len;
    if (content >>> Cell.WidthShift === 2) x++; // the wide character's second cell holds nothing
  }
  if (end === 0) return '';
  if (!narrow) return String.fromCharCode.apply(null, units.subarray(0, end) as unknown as number[]);
  for (let i = 0; i < end; i++) latin1[i] = units[i];
  return latin1.toString('latin1', 0, end);
}
