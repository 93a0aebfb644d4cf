// The private parts of @xterm/headless the mirror reads for speed (src/core/base/internals/xterm.ts),
// on a real terminal: an xterm that reshapes them fails here (the mirror would quietly take the slow path).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Terminal } from '@xterm/headless';
import {
  cellsOfLine,
  cursorColumnOf,
  keepEmptyRowMaps,
  eraseStepsOf,
  touchedRowsOf,
  hiddenModesOf,
  normalRowListOf,
  printStateOf,
  rowListOf,
  savedCursorOf,
  savedCursorRowOf,
  syncWriteOf,
} from '../../../../../src/core/base/internals/xterm';
import { ensureNoDisposablesAreLeakedInTestSuite } from '../../../../helpers/leak-tracker';

function terminal(): Terminal {
  return new Terminal({ cols: 20, rows: 5, allowProposedApi: true });
}

// Every test leaves nothing undisposed (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedInTestSuite();

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

test("xterm keeps the saved cursor's row counted from the top of the scrollback (savedY), which the mirror corrects", () => {
  const term = new Terminal({ cols: 20, rows: 4, scrollback: 100, allowProposedApi: true, logLevel: 'off' });
  const write = syncWriteOf(term)!;
  // Saved on screen row 1, then the screen scrolls by 3 rows before the restore.
  write(Buffer.from('a\r\nb\x1b7\r\n\r\n\r\n\r\n\r\nX\x1b8Y'));
  const saved = savedCursorRowOf(term);
  assert.ok(saved, 'the active buffer has a numeric savedY');
  const buf = term.buffer.active;
  assert.equal(buf.baseY, 3);
  // xterm's own restore: three rows higher than the screen row it was saved on (row 1 - 3 → clamped 0).
  assert.equal(buf.cursorY, 0);
  saved.set(buf.baseY + 1);
  write(Buffer.from('\x1b8'));
  assert.equal(term.buffer.active.cursorY, 1, 'setting savedY moves where DECRC returns');
  term.dispose();
});

test("xterm keeps the saved cursor's column and row (savedX, savedY from the scrollback's top)", () => {
  const term = terminal();
  const write = syncWriteOf(term)!;
  write(Buffer.from('\r\n\r\n\r\n\r\n\r\n\r\n\x1b[3;7H\x1b7\x1b[5;1H'));
  assert.deepEqual(savedCursorOf(term), { x: 6, row: term.buffer.active.baseY + 2 });
  term.dispose();
});

test('xterm keeps the cursor one past the edge after text written there with autowrap off (x), which autowrap-resumed.ts moves back', () => {
  const term = new Terminal({ cols: 5, rows: 3, allowProposedApi: true, logLevel: 'off' });
  try {
    const write = syncWriteOf(term)!;
    write(Buffer.from('\x1b[?7labcdefgh'));
    const column = cursorColumnOf(term);
    assert.ok(column, 'the active buffer has a numeric x');
    assert.equal(column.get(), 5, 'one past the last column');
    column.set(4);
    write(Buffer.from('\x1b[?7hX'));
    assert.equal(term.buffer.active.getLine(0)!.translateToString(true), 'abcdX', 'from the last column, X takes its place');
  } finally {
    term.dispose();
  }
});

test("xterm's erase steps and cursor are on its input handler, as erase-above.ts uses them", () => {
  const term = new Terminal({ cols: 10, rows: 3, scrollback: 10, allowProposedApi: true, logLevel: 'off' });
  try {
    const write = syncWriteOf(term)!;
    write(Buffer.from('aaaaaaaaaa\r\nbbbbbbbbbb\r\ncc'));
    const steps = eraseStepsOf(term);
    assert.ok(steps, '_core._inputHandler: _eraseInBufferLine, _resetBufferLine, _dirtyRowTracker, _activeBuffer');
    assert.deepEqual(steps.cursor(), { x: 2, y: 2, ybase: 0 });
    steps.eraseInLine(2, 0, 1, false);
    steps.resetLine(0, false);
    steps.markDirty(0);
    const text = (y: number) => term.buffer.active.getLine(y)?.translateToString(true);
    assert.deepEqual([text(0), text(1), text(2)], ['', 'bbbbbbbbbb', ' c']);
    assert.equal(steps.row(1)?.isWrapped, false);
  } finally {
    term.dispose();
  }
});

test("xterm's parse tells the topmost screen row it touched (its dirty rows), and starts again from the cursor's, as a send's output reads them", () => {
  const term = new Terminal({ cols: 10, rows: 4, scrollback: 10, allowProposedApi: true, logLevel: 'off' });
  try {
    const write = syncWriteOf(term)!;
    const touched = touchedRowsOf(term);
    assert.ok(touched, '_core._inputHandler._dirtyRowTracker: start, clearRange');
    const top = () => touched.top();
    write(Buffer.from('a\r\nb\r\nc'));
    write(Buffer.from('d'));
    assert.equal(top(), 2, 'printing on the cursor row');
    write(Buffer.from('\r\n'));
    assert.equal(top(), 2, 'a line feed starts at the cursor row');
    write(Buffer.from('\x1b[2A'));
    assert.equal(top(), 1, 'the cursor moved up, nothing printed');
    write(Buffer.from('\x1b[Hx'));
    assert.equal(top(), 0, 'the cursor sent home and a character printed');
    write(Buffer.from('\x1b[4;1H'));
    write(Buffer.from('\x1b[2J'));
    assert.equal(top(), 0, 'the screen erased from the bottom row');
    touched.restart();
    assert.equal(top(), 3, "started again at the cursor's row");
    // A scroll: the public event first, then xterm marks the region, then afterScroll.
    write(Buffer.from('a\r\nb\r\nc\r\n'));
    const seen: string[] = [];
    const publicScroll = term.onScroll(() => seen.push(`scroll ${top()}`));
    const after = touched.afterScroll(() => {
      seen.push(`after ${top()}`);
      touched.restart();
    });
    write(Buffer.from('d\r\ne'));
    publicScroll.dispose();
    after.dispose();
    assert.deepEqual(seen, ['scroll 3', 'after 0'], 'the region marked between the two');
    assert.equal(top(), 3, 'only the row printed after the scroll');
  } finally {
    term.dispose();
  }
});

test("xterm's core keeps the hidden cursor, the mouse encoding, the cursor's shape, the scroll region and the character sets where a snapshot reads them", () => {
  const term = new Terminal({ cols: 10, rows: 6, allowProposedApi: true, logLevel: 'off' });
  try {
    const write = syncWriteOf(term)!;
    assert.deepEqual(hiddenModesOf(term), {
      cursorHidden: false,
      mouseEncoding: 'DEFAULT',
      scrollTop: 0,
      scrollBottom: 5,
      cursor: { x: 0, y: 0 },
      charsets: [],
      glevel: 0,
    });
    write(Buffer.from('\x1b[?25l\x1b[?1006h\x1b[3 q\x1b[2;4r\x1b[3;5H\x1b)0\x0e'));
    const modes = hiddenModesOf(term)!;
    assert.deepEqual(
      { ...modes, charsets: modes.charsets.map((c) => c?.q) },
      {
        cursorHidden: true,
        mouseEncoding: 'SGR',
        cursorStyle: { style: 'underline', blink: true },
        scrollTop: 1,
        scrollBottom: 3,
        cursor: { x: 4, y: 2 },
        charsets: [undefined, '\u2500'],
        glevel: 1,
      },
      'G1 is DEC line drawing (q draws a horizontal line), shifted in',
    );
  } finally {
    term.dispose();
  }
});

test("xterm's normal buffer tells when rows leave the top of its list (what its markers follow), and a reset replaces the list", () => {
  const term = new Terminal({ cols: 10, rows: 3, scrollback: 2, allowProposedApi: true, logLevel: 'off' });
  try {
    const write = syncWriteOf(term)!;
    const rows = normalRowListOf(term);
    assert.ok(rows, '_core.buffers.normal.lines: onTrim, onInsert, onDelete');
    const list = rows();
    const seen: string[] = [];
    const subscriptions = [
      list!.onTrim((n) => seen.push(`trim ${n}`)),
      list!.onInsert((e) => seen.push(`insert ${e.index} ${e.amount}`)),
      list!.onDelete((e) => seen.push(`delete ${e.index} ${e.amount}`)),
    ];
    write(Buffer.from('1\r\n2\r\n3\r\n4\r\n5\r\n6'));
    assert.deepEqual(seen.splice(0), ['trim 1']);
    term.resize(5, 3);
    write(Buffer.from('\x1b[3J'));
    assert.ok(seen.includes('trim 2'), `ED 3 trims the scrollback: ${seen.join(', ')}`);
    for (const s of subscriptions) s.dispose();
    write(Buffer.from('\x1bc'));
    assert.notEqual(rows(), list, 'RIS makes a new normal buffer');
  } finally {
    term.dispose();
  }
});

test("xterm's print state: parser ground state, UTF-8 remainder, charset, insert mode, auto-wrap, hyperlink, cursor and scroll region, as the plain-line fast path reads them", () => {
  const term = new Terminal({ cols: 10, rows: 4, scrollback: 10, allowProposedApi: true, logLevel: 'off' });
  try {
    const write = syncWriteOf(term)!;
    const state = printStateOf(term);
    assert.ok(state, '_core._inputHandler: _parser, _parseStack, _utf8Decoder, _charsetService, _coreService, _curAttrData, _activeBuffer');
    assert.equal(state.idle(), true);
    assert.equal(state.plainPrint(), true);
    assert.deepEqual(state.cursor(), { x: 0, y: 0, scrollTop: 0, scrollBottom: 3, ybase: 0, ydisp: 0 });
    // Each of these makes the next printable character land otherwise, or swallows it; the state
    // says so, and says it is back once undone.
    const steps: Array<[string, keyof typeof state, string]> = [
      ['\x1b]0;a title', 'idle', '\x07'],
      ['\x1bP1$r', 'idle', '\x1b\\'],
      ['\x1b[', 'idle', 'm'],
      ['\xe2', 'idle', '\x82\xac'],
      ['\x1b(0', 'plainPrint', '\x1b(B'],
      ['\x1b)0\x0e', 'plainPrint', '\x0f'],
      ['\x1b[4h', 'plainPrint', '\x1b[4l'],
      ['\x1b[?7l', 'plainPrint', '\x1b[?7h'],
      ['\x1b]8;;http://example.com/\x07', 'plainPrint', '\x1b]8;;\x07'],
    ];
    for (const [set, what, unset] of steps) {
      write(Buffer.from(set, 'latin1'));
      assert.equal((state[what] as () => boolean)(), false, `${JSON.stringify(set)}: ${what}() is false`);
      write(Buffer.from(unset, 'latin1'));
      assert.equal((state[what] as () => boolean)(), true, `${JSON.stringify(unset)}: ${what}() is true again`);
    }
    write(Buffer.from('\x1b[2;3r\x1b[3;5H'));
    assert.deepEqual(state.cursor(), { x: 4, y: 2, scrollTop: 1, scrollBottom: 2, ybase: 0, ydisp: 0 });
    write(Buffer.from('\x1b[r\x1b[4;1H0123456789'));
    assert.equal(state.cursor().x, 10, 'a wrap is pending: x is cols');
    write(Buffer.from('\r\n\r\n'));
    assert.deepEqual(state.cursor(), { x: 0, y: 3, scrollTop: 0, scrollBottom: 3, ybase: 2, ydisp: 2 });
    write(Buffer.from('\x1b[?1049h\x1b[2;2H'));
    assert.deepEqual(state.cursor(), { x: 1, y: 1, scrollTop: 0, scrollBottom: 3, ybase: 0, ydisp: 0 }, "the alternate screen's cursor");
  } finally {
    term.dispose();
  }
});

test('a row xterm reuses at a scroll keeps its own empty maps (keepEmptyRowMaps), and combined characters and underline colours still come and go with the rows', () => {
  const term = new Terminal({ cols: 10, rows: 3, scrollback: 2, allowProposedApi: true, logLevel: 'off' });
  try {
    assert.equal(keepEmptyRowMaps(term), true, "xterm's rows: copyFrom, _combined, _extendedAttrs");
    const write = syncWriteOf(term)!;
    const rows = (term as unknown as { _core: { buffers: { normal: { lines: { get(i: number): { _combined: object; _extendedAttrs: object } } } } } })._core
      .buffers.normal.lines;
    // Fill the buffer (scrollback 2 + 3 rows), then scroll: the oldest row is reused each time.
    write(Buffer.from('a\r\nb\r\nc\r\nd\r\ne'));
    const oldest = rows.get(0);
    const maps = [oldest._combined, oldest._extendedAttrs];
    write(Buffer.from('\r\nf'));
    const reused = rows.get(4);
    assert.equal(reused, oldest, 'xterm reused the oldest row for the new bottom row');
    assert.equal(reused._combined, maps[0], 'its own empty map of combined characters, not a new one');
    assert.equal(reused._extendedAttrs, maps[1], 'its own empty map of extended attributes, not a new one');
    // A row holding a combined character and an underline colour (an extended attribute) still
    // loses both when it is reused, and rows printed later get their own.
    write(Buffer.from('\r\ne\u0301\x1b[4;58;5;1mu\x1b[0m'));
    const marked = rows.get(4);
    assert.equal(Object.keys(marked._combined).length, 1);
    assert.equal(Object.keys(marked._extendedAttrs).length, 1);
    write(Buffer.from('\r\n1\r\n2\r\n3\r\n4\r\n5'));
    assert.equal(rows.get(4), marked, 'reused for the row of 5');
    assert.equal(Object.keys(marked._combined).length, 0, 'reused: no combined character left');
    assert.equal(Object.keys(marked._extendedAttrs).length, 0, 'reused: no extended attribute left');
    write(Buffer.from('\r\ne\u0301'));
    const screen = () => [0, 1, 2].map((y) => term.buffer.active.getLine(term.buffer.active.baseY + y)?.translateToString(true));
    assert.deepEqual(screen(), ['4', '5', 'e\u0301']);
    assert.equal(
      term.buffer.active
        .getLine(term.buffer.active.baseY + 2)
        ?.getCell(0)
        ?.getChars(),
      'e\u0301',
    );
  } finally {
    term.dispose();
  }
});
