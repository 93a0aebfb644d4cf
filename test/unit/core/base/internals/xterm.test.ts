// The private parts of @xterm/headless the mirror reads for speed (src/core/base/internals/xterm.ts),
// on a real terminal: an xterm that reshapes them fails here (the mirror would quietly take the slow path).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Terminal } from '@xterm/headless';
import { cellsOfLine, rowListOf, syncWriteOf } from '../../../../../src/core/base/internals/xterm';

function terminal(): Terminal {
  return new Terminal({ cols: 20, rows: 5, allowProposedApi: true });
}

test("xterm parses synchronously through its core's writeSync", () => {
  const term = terminal();
  try {
    const write = syncWriteOf(term);
    assert.ok(write, '_core.writeSync');
    write(Buffer.from('hello'));
    assert.equal(term.buffer.active.getLine(0)?.translateToString(true), 'hello', 'parsed before write returned');
  } finally {
    term.dispose();
  }
});

test("xterm keeps each row as cells of three words, reachable from the line and from the buffer's list", () => {
  const term = terminal();
  try {
    syncWriteOf(term)!(Buffer.from('A'));
    const line = term.buffer.active.getLine(0);
    const cells = cellsOfLine(line);
    assert.ok(cells, 'IBufferLine._line');
    assert.ok(cells._data instanceof Uint32Array, '_line._data');
    assert.equal(cells.length, 20);
    assert.ok(cells._data.length >= cells.length * 3, 'three 32-bit words per cell');
    assert.equal(cells._data[0] & 0x1fffff, 'A'.codePointAt(0), 'the first word holds the code point');
    const list = rowListOf(term.buffer.active);
    assert.ok(list, 'IBuffer._buffer.lines');
    assert.equal(list.get(0), cells, "the same row as the line's");
  } finally {
    term.dispose();
  }
});
