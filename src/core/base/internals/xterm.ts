import type { IBuffer, IBufferLine, Terminal } from '@xterm/headless';

/*
 * What @xterm/headless (6.0) keeps private and the mirror reads for speed (row-text.ts, mirror.ts):
 * each read returns undefined when the shape is not the expected one, and the caller then takes the
 * public path. test/unit/core/base/internals/xterm.test.ts fails when a new xterm changes it.
 */

/**
 * xterm.js's own row of cells, behind the public IBufferLine: three 32-bit words per cell, the
 * first holding the code point (21 bits), a "combined" flag and the width (top bits).
 */
export interface CellRow {
  _data: Uint32Array;
  length: number;
}

/** The row of cells behind a public line (`_line`). */
export function cellsOfLine(line: IBufferLine | undefined): CellRow | undefined {
  return (line as unknown as { _line?: CellRow } | undefined)?._line;
}

/** The buffer's own list of rows (`_buffer.lines`), which the public getLine wraps in a new object per call. */
export function rowListOf(buf: IBuffer): { get(i: number): CellRow | undefined } | undefined {
  const lines = (buf as unknown as { _buffer?: { lines?: { get?: (i: number) => CellRow | undefined } } })._buffer?.lines;
  return typeof lines?.get === 'function' ? (lines as { get(i: number): CellRow | undefined }) : undefined;
}

/** xterm's synchronous parse (its core's `writeSync`), or undefined when this version has none. */
export function syncWriteOf(term: Terminal): ((data: Uint8Array) => void) | undefined {
  const core = (term as unknown as { _core?: { writeSync?: (data: Uint8Array) => void } })._core;
  if (!core || typeof core.writeSync !== 'function') return undefined;
  const writeSync = core.writeSync;
  return (data) => writeSync.call(core, data);
}

/**
 * Where the active buffer's saved cursor (DECSC) returns to, as xterm keeps it: `savedY` counts from
 * the top of the scrollback, not of the screen. Undefined when this version keeps it elsewhere.
 */
export function savedCursorRowOf(term: Terminal): { set(absoluteRow: number): void } | undefined {
  const active = (term as unknown as { _core?: { buffers?: { active?: { savedY?: unknown } } } })._core?.buffers?.active;
  if (!active || typeof active.savedY !== 'number') return undefined;
  return {
    set: (absoluteRow) => {
      active.savedY = absoluteRow;
    },
  };
}
