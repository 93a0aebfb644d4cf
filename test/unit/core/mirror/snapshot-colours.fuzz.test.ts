// A snapshot (Mirror.serialize, what `pty/snapshot` answers) drawn into a fresh terminal gives the
// rows a terminal fed the session's whole output shows, with their colours: random coloured text,
// erases in a colour, line breaks and wraps, the alternate screen and saved cursors, then a
// snapshot with a random amount of scrollback. The screen must come back cell for cell (character,
// background, and the colours and attributes of each character); a scrollback row must too, or
// come back as plain text (rows old enough to be in the store are kept as text, by design:
// docs/protocol.md, pty/snapshot). A row painted where it was not (a line break that scrolled a
// row in with the pen of a coloured erase) fails both.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Terminal, type IBuffer, type IBufferCell } from '@xterm/headless';
import { Mirror } from '../../../../src/core/mirror/mirror';
import { SavedCursorAsScreenRow } from '../../../../src/core/mirror/saved-cursor';
import { syncWriteOf } from '../../../../src/core/base/internals/xterm';
import { fuzzSync } from '../../../helpers/fuzz';
import { ensureNoDisposablesAreLeakedInTestSuite } from '../../../helpers/leak-tracker';

ensureNoDisposablesAreLeakedInTestSuite();

/** Cases in `npm test`: a few ms each. */
const SHORT_RUNS = 60;

/**
 * Pens: background colours of each kind, a foreground with attributes, bold and dim in turn, the
 * default. (Never bold and dim at once: from both to one of them with nothing else changing, the
 * addon's text does not say which one went; serialize.ts boldAndDimKept.)
 */
const PENS = [
  '\x1b[44m',
  '\x1b[41m',
  '\x1b[48;5;100m',
  '\x1b[48;2;1;2;3m',
  '\x1b[22;1;33m',
  '\x1b[7m',
  '\x1b[22;1m',
  '\x1b[22;2;3m',
  '\x1b[22;2m',
  '\x1b[0;2;4m',
  '',
  '\x1b[0m',
  '\x1b[0m',
];
/** What may follow a piece's text. */
const ENDS = [
  '\r\n',
  '\r\n',
  '\r\n',
  '\x1b[K\r\n',
  '\x1b[K',
  '\x1b[3X\r\n',
  '',
  '\x1b[J',
  '\x1b[2J',
  '\x1b7',
  '\x1b8',
  '\x1b[?1049h',
  '\x1b[?1049l',
  '\x1b[1;2r',
  '\x1b[r',
  '\x1b[2;1H',
  '\x1b[3g\x1b[1;3H\x1bH',
];
/** What output after the snapshot may hold: where it lands shows the cursor, a pending wrap, the scroll regions. */
const AFTER = ['Z', 'YX', '\r\n', '\x1b[?1049l', '\x1b[?1049h', '\x1b[0m', '\x1b[H', '\t'];

const piece = fc.record({
  pen: fc.constantFrom(...PENS),
  text: fc.stringMatching(/^[a-z ]{0,30}$/),
  end: fc.constantFrom(...ENDS),
});

const scenario = fc.record({
  cols: fc.integer({ min: 4, max: 16 }),
  rows: fc.integer({ min: 2, max: 7 }),
  pieces: fc.array(piece, { minLength: 1, maxLength: 160 }),
  scrollback: fc.integer({ min: 0, max: 200 }),
  redrawBefore: fc.boolean(),
  after: fc.array(fc.constantFrom(...AFTER), { maxLength: 12 }),
});

/**
 * A terminal that keeps every row. The one fed the output keeps a saved cursor as the mirror does
 * (a screen row, as tmux: saved-cursor.ts), so that a restore after scrolling goes to the same place.
 */
function termOf(cols: number, rows: number, savedAsScreenRow = false): { term: Terminal; write: (s: string) => void; dispose: () => void } {
  const term = new Terminal({ cols, rows, scrollback: 100_000, allowProposedApi: true, logLevel: 'off' });
  const saved = savedAsScreenRow ? new SavedCursorAsScreenRow(term) : undefined;
  const sync = syncWriteOf(term);
  assert.ok(sync, 'this xterm has a synchronous write');
  return {
    term,
    write: (s) => sync(Buffer.from(s)),
    dispose: () => {
      saved?.dispose();
      term.dispose();
    },
  };
}

/** What a cell shows: its character, its background, and for a character its colours and attributes. */
function look(cell: IBufferCell): string {
  const bg = cell.isBgDefault() ? '' : `${cell.getBgColorMode()}:${cell.getBgColor()}`;
  const ch = cell.getChars();
  if (ch === '' || ch === ' ') return `_${bg}${cell.isInverse() ? 'i' : ''}`;
  const fg = cell.isFgDefault() ? '' : `${cell.getFgColorMode()}:${cell.getFgColor()}`;
  return `${ch}${bg}/${fg}${cell.isBold() ? 'b' : ''}${cell.isDim() ? 'd' : ''}${cell.isItalic() ? 'I' : ''}${cell.isUnderline() ? 'u' : ''}${cell.isInverse() ? 'i' : ''}`;
}

function rowLooks(buffer: IBuffer, y: number, cols: number): string[] {
  const line = buffer.getLine(y)!;
  const cell = buffer.getNullCell();
  const out: string[] = [];
  for (let x = 0; x < cols; x++) out.push(look(line.getCell(x, cell)!));
  return out;
}

const plain = (looks: string[]) => looks.every((l) => l === '_' || /^[^_]\/$/.test(l));
const textOf = (looks: string[]) =>
  looks
    .map((l) => (l.startsWith('_') ? ' ' : l[0]))
    .join('')
    .trimEnd();

test('a snapshot drawn in a fresh terminal shows every row as the output left it, colours kept (no row painted by a line break)', () => {
  fuzzSync(
    [scenario],
    ({ cols, rows, pieces, scrollback, redrawBefore, after }) => {
      const output = pieces.map((p) => p.pen + p.text + p.end).join('');
      const m = new Mirror(cols, rows, 10_000);
      const truth = termOf(cols, rows, true);
      const drawn = termOf(cols, rows);
      try {
        m.write(Buffer.from(output));
        truth.write(output);
        // A terminal that had rows before the snapshot (a view reset with RIS) draws it the same.
        if (redrawBefore) drawn.write('x\r\n'.repeat(rows + 2) + '\x1bc');
        drawn.write(m.serialize(scrollback));
        const t = truth.term.buffer;
        const d = drawn.term.buffer;
        const compare = (stage: string, scrolledBack: number) => {
          assert.equal(d.active.type, t.active.type, `${stage}: the screen in use`);
          for (const which of d.active.type === 'alternate' ? (['normal', 'alternate'] as const) : (['normal'] as const)) {
            const tb = t[which];
            const db = d[which];
            const scrolled = which === 'normal' ? Math.min(scrolledBack, tb.baseY) : 0;
            if (stage === 'the snapshot') assert.equal(db.baseY, scrolled, `${which}: rows of scrollback drawn`);
            for (let i = 0; i < rows + scrolled; i++) {
              const want = rowLooks(tb, tb.baseY - scrolled + i, cols);
              const got = rowLooks(db, db.baseY - scrolled + i, cols);
              const where = `${stage}, ${which} row ${i - scrolled} (0: the screen's top)`;
              assert.equal(textOf(got), textOf(want), `${where}: its text`);
              if (i >= scrolled || !plain(got)) assert.deepEqual(got, want, `${where}: its cells`);
            }
          }
          assert.deepEqual([d.active.cursorY, d.active.cursorX], [t.active.cursorY, t.active.cursorX], `${stage}: the cursor`);
        };
        compare('the snapshot', scrollback);
        // Output after it lands as it would have (the cursor, a pending wrap, the scroll regions, the pen).
        // (Leaving a screen not shown or entering one shown is left out: xterm.js then restores or saves
        // the cursor that DECSC uses too, while the host keeps them apart as tmux does.)
        let more = '';
        for (const piece of after) {
          const shown = t.active.type;
          if ((piece === '\x1b[?1049l' && shown === 'normal') || (piece === '\x1b[?1049h' && shown === 'alternate')) continue;
          truth.write(piece);
          drawn.write(piece);
          more += piece;
        }
        compare(`after ${JSON.stringify(more)}`, 0);
        // DECRC goes where it would have: to a saved cursor, or to the top left when none was saved.
        if (more === '') {
          truth.write('\x1b8');
          drawn.write('\x1b8');
          assert.deepEqual([d.active.cursorY, d.active.cursorX], [t.active.cursorY, t.active.cursorX], 'the cursor after DECRC');
        }
      } finally {
        m.dispose();
        truth.dispose();
        drawn.dispose();
      }
    },
    SHORT_RUNS,
  );
});
