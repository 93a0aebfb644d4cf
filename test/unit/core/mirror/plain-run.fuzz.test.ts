// The plain-line fast path (src/core/mirror/plain-run.ts, Mirror's _writeRuns) changes nothing a
// user sees: the same random output (runs of plain lines of every length, mixed with escape
// sequences that change how characters land, cut into writes at random points, with resizes
// between writes) goes to a Mirror with the fast path and to one without, and after every write
// and resize both must give the same screen, cursor, retained rows, row numbers and serialize()
// output, with a small scrollback so the store's trimming is compared too.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Mirror } from '../../../../src/core/mirror/mirror';
import { PlainRunFinder } from '../../../../src/core/mirror/plain-run';
import { fuzzSync } from '../../../helpers/fuzz';
import { ensureNoDisposablesAreLeakedInTestSuite } from '../../../helpers/leak-tracker';

/** Rows xterm keeps above the screen itself (mirror.ts MirrorTuning.XtermScrollback): they re-wrap on a resize. */
const XTERM_SCROLLBACK = 64;

ensureNoDisposablesAreLeakedInTestSuite();

/** Cases in `npm test`: ~0.1-0.3 s each. */
const SHORT_RUNS = 40;

/** Printable ASCII, spaces more often than the rest (trailing spaces are trimmed from rows). */
const ALPHABET = '    abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/=-_.,:;!?#$%&*()[]{}<>@^`|~\'"\\';

/** A line of `length` printable characters from `seed`, then `spaces` spaces. */
function lineText(length: number, seed: number, spaces: number): string {
  let s = '';
  let x = seed >>> 0 || 1;
  for (let i = 0; i < length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    s += ALPHABET[(x >>> 0) % ALPHABET.length];
  }
  return s + ' '.repeat(spaces);
}

/** Sequences that change where and how the next characters land, or that swallow them. */
const ESCAPES = [
  '\x1b[31m',
  '\x1b[1;44m',
  '\x1b[38;5;100;48;2;1;2;3m',
  '\x1b[0m',
  '\x1b[5;15r',
  '\x1b[2;40r',
  '\x1b[r',
  '\x1b[2J',
  '\x1b[3J',
  '\x1b[J',
  '\x1b[1J',
  '\x1b[K',
  '\x1bc',
  '\x1b[?1049h',
  '\x1b[?1049l',
  '\x1b[?47h',
  '\x1b[?47l',
  '\x1b7',
  '\x1b8',
  '\x1b[s',
  '\x1b[u',
  '\x1b(0',
  '\x1b(B',
  '\x1b)0',
  '\x0e',
  '\x0f',
  '\x1b[4h',
  '\x1b[4l',
  '\x1b[?7l',
  '\x1b[?7h',
  '\x1b[?6h',
  '\x1b[?6l',
  '\x1b[20h',
  '\x1b[20l',
  '\x1b]0;an unterminated title ',
  '\x1bP1$r',
  '\x07',
  '\x1b\\',
  '\x1b]8;;http://example.com/\x07',
  '\x1b]8;;\x07',
  '\xe2\x82',
  '\xac',
  '€',
  '中文',
  'e\u0301',
  'x\x1b[5b',
  '\x1b[3b',
  '\n',
  '\r',
  '\r\n',
  'no newline',
  '\t',
  '\b',
  '\x1bD',
  '\x1bM',
  '\x1bE',
  '\x1b[3L',
  '\x1b[2M',
  '\x1b[2S',
  '\x1b[3T',
  '\x1b[?2026h',
  '\x1b[?2026l',
] as const;

/** Sequences that put back what lasting ones changed (scroll region, charsets, modes, the normal screen, an open string). */
const RESTORE = ['\x1b[r', '\x1b(B', '\x0f', '\x1b[4l', '\x1b[?7h', '\x1b[?6l', '\x1b[?1049l', '\x07', '\x1b]8;;\x07', '\x1b[0m\x1b[999;1H\r\n'] as const;

/** States that last and change how the next plain lines land (or swallow them): each put right before a block of lines too. */
const LASTING = [
  '\x1b(0',
  '\x1b)0\x0e',
  '\x1b[4h',
  '\x1b[?7l',
  '\x1b]8;;http://example.com/\x07',
  '\x1b]0;t',
  '\x1bP1$r',
  '\xe2\x82',
  '\x1b[5;15r',
  '\x1b[?1049h',
  '\x1b[?6h',
  '\x1b[20h',
  '\x1b[31;44m',
  'abc',
  '\x1b[H',
  'z'.repeat(70) + '\x1b[H',
  '\x1b[5;1H',
];

type Piece =
  | { t: 'lines'; lines: Array<[number, number, number]>; before?: string }
  | { t: 'esc'; s: string }
  | { t: 'cup'; row: number; col: number }
  | { t: 'resize'; cols: number; rows: number };

const lineArb = fc.tuple(
  fc.oneof(fc.constantFrom(0, 1, 9, 10, 11, 19, 20, 21, 40, 79, 80, 81, 100, 160, 161), fc.integer({ min: 0, max: 260 })),
  fc.integer({ min: 1, max: 2 ** 31 - 1 }),
  fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 90 })),
);

const pieceArb: fc.Arbitrary<Piece> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ t: fc.constant('lines' as const), lines: fc.array(lineArb, { minLength: 0, maxLength: 300, size: 'max' }) }) },
  { weight: 3, arbitrary: fc.record({ t: fc.constant('esc' as const), s: fc.constantFrom(...ESCAPES) }) },
  // What undoes the lasting ones, so that long cases keep coming back to where plain lines may skip xterm.
  { weight: 2, arbitrary: fc.record({ t: fc.constant('esc' as const), s: fc.constantFrom(...RESTORE) }) },
  {
    weight: 2,
    arbitrary: fc.record({
      t: fc.constant('lines' as const),
      lines: fc.array(lineArb, { minLength: 100, maxLength: 300, size: 'max' }),
      before: fc.constantFrom(...LASTING),
    }),
  },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('cup' as const), row: fc.integer({ min: 1, max: 45 }), col: fc.integer({ min: 1, max: 120 }) }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('resize' as const), cols: fc.integer({ min: 10, max: 120 }), rows: fc.integer({ min: 3, max: 40 }) }) },
);

const caseArb = fc.record({
  cols: fc.integer({ min: 10, max: 120 }),
  rows: fc.integer({ min: 3, max: 40 }),
  scrollback: fc.oneof(fc.integer({ min: 1, max: 400 }), fc.constant(10000)),
  pieces: fc.array(pieceArb, { minLength: 1, maxLength: 30, size: 'medium' }),
  /** Where writes are cut: sizes, used in turn. */
  cuts: fc.array(fc.integer({ min: 1, max: 40000 }), { minLength: 1, maxLength: 6 }),
});

type Op = { write: Uint8Array } | { resize: [number, number] };

/**
 * Most writes in a case. Both mirrors are compared after every write, so 40 KB of lines cut into
 * writes of 3 bytes made one case take two minutes (seed 211966268): the file's time limit then ran
 * out after two cases, too few for the fast path to show. Larger cases get their cuts scaled up;
 * small ones keep cuts of a byte or two.
 */
const MAX_WRITES = 1500;

/** The pieces as writes cut at the given sizes (scaled up to at most MAX_WRITES writes), and resizes between them. */
function operations(pieces: Piece[], cuts: number[]): Op[] {
  // Output between resizes, and where the resizes come.
  const segments: Array<Buffer | [number, number]> = [];
  let pending: Buffer[] = [];
  const endSegment = () => {
    segments.push(Buffer.concat(pending));
    pending = [];
  };
  for (const p of pieces) {
    if (p.t === 'resize') {
      endSegment();
      segments.push([p.cols, p.rows]);
    } else if (p.t === 'esc') pending.push(Buffer.from(p.s, p.s === '\xe2\x82' || p.s === '\xac' ? 'latin1' : 'utf8'));
    else if (p.t === 'cup') pending.push(Buffer.from(`\x1b[${p.row};${p.col}H`));
    else {
      if (p.before) pending.push(Buffer.from(p.before, 'latin1'));
      pending.push(Buffer.from(p.lines.map(([len, seed, spaces]) => lineText(len, seed, spaces) + '\r\n').join('')));
    }
  }
  endSegment();
  const bytes = segments.reduce((n, s) => n + (Buffer.isBuffer(s) ? s.length : 0), 0);
  const meanCut = cuts.reduce((a, b) => a + b, 0) / cuts.length;
  const scale = Math.max(1, Math.ceil(bytes / meanCut / MAX_WRITES));
  const ops: Op[] = [];
  let k = 0;
  for (const s of segments) {
    if (!Buffer.isBuffer(s)) {
      ops.push({ resize: s });
      continue;
    }
    for (let at = 0; at < s.length;) {
      const n = cuts[k++ % cuts.length] * scale;
      ops.push({ write: s.subarray(at, at + n) });
      at += n;
    }
  }
  return ops;
}

/** Rows compared after each step (all of them, and the whole `serialize`, after the case's last step). */
const STEP_ROWS = 300;

/**
 * What a reader can learn from a mirror: everything when `all`, else the screen, the row numbers
 * and the newest rows (reading 10,000 rows after every write of a case made the file take minutes).
 */
function view(m: Mirror, all: boolean) {
  return {
    screen: m.screen(),
    line: m.lineBeforeCursor(),
    cursorRow: m.cursorRow,
    firstRetainedRow: m.firstRetainedRow,
    endRow: m.endRow,
    rows: m.rowsBetween(all ? 0 : Math.max(0, m.endRow - STEP_ROWS), m.endRow),
    // The same rows with the wrapped ones joined: which rows continue a line, as xterm marks them.
    joined: m.rowsBetween(all ? 0 : Math.max(0, m.endRow - STEP_ROWS), m.endRow, true),
    serialized: all ? m.serialize(100000) : '',
    serializedShort: m.serialize(5),
  };
}

/** Feeds both mirrors the case, comparing them after each step; the rows the fast path skipped. */
function compare(c: { cols: number; rows: number; scrollback: number; pieces: Piece[]; cuts: number[] }): number {
  const fast = new Mirror(c.cols, c.rows, c.scrollback);
  const slow = new Mirror(c.cols, c.rows, c.scrollback, { plainRuns: false });
  try {
    const ops = operations(c.pieces, c.cuts);
    for (const [i, op] of ops.entries()) {
      if ('write' in op) {
        fast.write(op.write);
        slow.write(op.write);
      } else {
        fast.resize(...op.resize);
        slow.resize(...op.resize);
      }
      const all = i === ops.length - 1;
      assert.deepEqual(view(fast, all), view(slow, all), `after step ${i} (${'write' in op ? `${op.write.length} bytes` : `resize ${op.resize.join('x')}`})`);
    }
    return fast.plainRowsSkipped;
  } finally {
    fast.dispose();
    slow.dispose();
  }
}

test('the plain-line fast path leaves screen, scrollback, row numbers and serialize() as xterm alone does', () => {
  let skipped = 0;
  let cases = 0;
  let casesSkipping = 0;
  fuzzSync(
    [caseArb],
    (c) => {
      const n = compare(c);
      skipped += n;
      cases++;
      if (n > 0) casesSkipping++;
    },
    SHORT_RUNS,
  );
  // The property is only worth something if the fast path ran in a good share of the cases.
  assert.ok(casesSkipping * 4 >= cases, `the fast path ran in ${casesSkipping} of ${cases} cases (${skipped} rows)`);
});

test('a flood of plain lines through a tty skips xterm for most rows, and matches xterm alone', () => {
  // As the bench prints: base64 lines of 76 characters, "\r\n" from onlcr, in 32 KiB writes.
  const lines: string[] = [];
  for (let i = 0; i < 6000; i++) lines.push(lineText(76, i + 1, 0));
  const bytes = Buffer.from(lines.join('\r\n') + '\r\n');
  const fast = new Mirror(80, 24, 10000);
  const slow = new Mirror(80, 24, 10000, { plainRuns: false });
  try {
    for (let at = 0; at < bytes.length; at += 32768) {
      fast.write(bytes.subarray(at, at + 32768));
      slow.write(bytes.subarray(at, at + 32768));
    }
    assert.deepEqual(view(fast, true), view(slow, true));
    assert.ok(fast.plainRowsSkipped > 6000 / 2, `${fast.plainRowsSkipped} of 6000 rows skipped xterm`);
    assert.equal(slow.plainRowsSkipped, 0);
    assert.equal(fast.rowsBetween(0, 1)[0], lines[0]);
  } finally {
    fast.dispose();
    slow.dispose();
  }
});

/** Numbered lines and resizes: each line `#<n>:` then `x`s, the numbers counting up from 1. */
const resizeCaseArb = fc.record({
  cols: fc.integer({ min: 10, max: 120 }),
  rows: fc.integer({ min: 3, max: 40 }),
  scrollback: fc.oneof(fc.integer({ min: 20, max: 600 }), fc.constant(10000)),
  steps: fc.array(
    fc.oneof(
      // Long output: past xterm's own scrollback (64 rows) and into the store.
      fc.record({
        lines: fc.array(fc.oneof(fc.integer({ min: 0, max: 30 }), fc.integer({ min: 0, max: 260 })), { minLength: 1, maxLength: 400, size: 'max' }),
      }),
      fc.record({ cols: fc.oneof(fc.integer({ min: 2, max: 20 }), fc.integer({ min: 10, max: 160 })), rows: fc.integer({ min: 2, max: 60 }) }),
    ),
    { minLength: 2, maxLength: 12, size: 'medium' },
  ),
  /** Where writes are cut: sizes, used in turn. */
  cuts: fc.array(fc.integer({ min: 1, max: 40000 }), { minLength: 1, maxLength: 4 }),
});

/**
 * The numbered lines the retained rows hold, read in order across however the rows are wrapped:
 * [number, count of x] per line, from the first whole one (the oldest may have lost its head).
 */
function numberedLines(m: Mirror): Array<[number, number]> {
  const text = m.rowsBetween(m.firstRetainedRow, m.endRow).join('');
  const out: Array<[number, number]> = [];
  for (const match of text.slice(Math.max(0, text.indexOf('#'))).matchAll(/#(\d+):(x*)/g)) out.push([Number(match[1]), match[2].length]);
  return out;
}

test('resizes that narrow and widen after long output keep every retained row once, in order', () => {
  fuzzSync(
    [resizeCaseArb],
    (c) => {
      for (const plainRuns of [true, false]) {
        const m = new Mirror(c.cols, c.rows, c.scrollback, { plainRuns });
        try {
          const lengths: number[] = [0];
          let k = 0;
          let rewrapped = false;
          for (const [i, step] of c.steps.entries()) {
            const label = `plainRuns ${plainRuns}, step ${i}`;
            if ('lines' in step) {
              let text = '';
              for (const len of step.lines) {
                text += `#${lengths.length}:${'x'.repeat(len)}\r\n`;
                lengths.push(len);
              }
              const bytes = Buffer.from(text);
              for (let at = 0; at < bytes.length;) {
                const n = c.cuts[k++ % c.cuts.length];
                m.write(bytes.subarray(at, at + n));
                at += n;
              }
            } else {
              const first = m.firstRetainedRow;
              const top = m.cursorRow - (m.screen().cursor.row - 1);
              const above = m.rowsBetween(first, top);
              if (step.cols !== m.size.cols) rewrapped = true;
              m.resize(step.cols, step.rows);
              // (The first retained row may come back a little: a taller screen pulls rows back down
              // from the scrollback, as xterm and tmux do, and the retained window follows the screen.)
              // Rows older than xterm's own scrollback are in the store: they keep their numbers and
              // their wrapping (only xterm's rows re-wrap, or come back onto a taller screen).
              const stored = above.length - XTERM_SCROLLBACK;
              const from = Math.max(first, m.firstRetainedRow);
              if (first + stored > from) {
                const kept = m.rowsBetween(from, first + stored);
                assert.deepEqual(kept, above.slice(from - first, stored), `${label}: the stored rows after resize ${step.cols}x${step.rows}`);
              }
            }
            const got = numberedLines(m);
            const last = lengths.length - 1;
            if (last === 0) continue;
            const retained = m.endRow - m.firstRetainedRow;
            // The oldest lines go only when the store is full (a line may be longer than it), or
            // went while it was full of rows wrapped another way (xterm's rows re-wrap on a resize).
            const from = got[0]?.[0] ?? last + 1;
            assert.ok(from <= 2 || retained >= c.scrollback || rewrapped, `${label}: lines from ${from} kept in ${retained} rows of ${c.scrollback}`);
            const want: Array<[number, number]> = [];
            for (let n = from; n <= last; n++) want.push([n, lengths[n]]);
            assert.deepEqual(got, want, `${label}: the lines retained, ${from} to ${last}`);
          }
        } finally {
          m.dispose();
        }
      }
    },
    SHORT_RUNS,
  );
});

test('runs: only whole plain lines, the tail the fewest last lines making the rows asked for', () => {
  const finder = new PlainRunFinder();
  const data = Buffer.from('\x1b[1mhead\r\n' + 'aa\r\n'.repeat(3) + 'b'.repeat(25) + '\r\n' + 'cc \r\n' + 'partial');
  // cols 10: "aa" 1 row each, 25 b's 3 rows, "cc " 1 row.
  const run = finder.find(data, 0, 10, 4, 2);
  assert.ok(run);
  assert.equal(data.subarray(run.start, run.tail).toString(), 'aa\r\n'.repeat(3));
  assert.equal(data.subarray(run.tail, run.end).toString(), 'b'.repeat(25) + '\r\ncc \r\n');
  assert.equal(run.skippedRows, 3);
  const rows: string[] = [];
  finder.pushRows(data, run, 10, (d, s, e) => rows.push(Buffer.from(d.subarray(s, e)).toString()));
  assert.deepEqual(rows, ['aa', 'aa', 'aa']);
  assert.equal(finder.find(data, 0, 10, 4, 4), undefined, 'too few rows before the tail');
  const wrapped = Buffer.from('x'.repeat(20) + '   ' + 'y'.repeat(7) + '   \r\n\r\n' + 'z\r\n'.repeat(5));
  const r2 = finder.find(wrapped, 0, 10, 5, 1)!;
  const rows2: string[] = [];
  finder.pushRows(wrapped, r2, 10, (d, s, e) => rows2.push(Buffer.from(d.subarray(s, e)).toString()));
  assert.deepEqual(rows2, ['xxxxxxxxxx', 'xxxxxxxxxx', '   yyyyyyy', '', '']);
});

/**
 * The runs `find` should return, read byte by byte as the definition has it (plain-run.ts): lines
 * of printable ASCII ended by "\r\n", the tail the fewest last lines making `tailRows` rows.
 */
function referenceFind(data: Uint8Array, from: number, cols: number, tailRows: number, minSkipped: number) {
  const rowsOf = (length: number) => (length === 0 ? 1 : Math.ceil(length / cols));
  const printable = (b: number) => b >= 0x20 && b <= 0x7e;
  let i = from;
  while (i < data.length) {
    const start = i;
    const lines: Array<{ start: number; end: number }> = [];
    let next: number | undefined;
    for (;;) {
      const lf = data.indexOf(0x0a, i);
      if (lf < 0) break;
      const plain = lf - 1 >= i && data[lf - 1] === 0x0d && data.subarray(i, lf - 1).every(printable);
      if (!plain) {
        next = lf + 1;
        break;
      }
      lines.push({ start: i, end: lf + 1 });
      i = lf + 1;
    }
    const rows = lines.reduce((sum, l) => sum + rowsOf(l.end - 2 - l.start), 0);
    if (rows >= tailRows + minSkipped) {
      let k = lines.length;
      let tail = 0;
      while (k > 0 && tail < tailRows) {
        k--;
        tail += rowsOf(lines[k].end - 2 - lines[k].start);
      }
      const skippedRows = rows - tail;
      if (skippedRows >= minSkipped) {
        return { start, tail: k === 0 ? start : lines[k - 1].end, end: lines[lines.length - 1].end, skippedRows, skippedLines: k };
      }
    }
    if (next === undefined) return undefined;
    i = next;
  }
  return undefined;
}

test('runs: the finder reads any bytes as the byte-by-byte definition does, at any alignment in memory', () => {
  // The bytes at the edges of "printable" and of a line, and a few letters for long plain stretches.
  const tricky = fc.constantFrom(0x00, 0x0a, 0x0d, 0x1b, 0x1f, 0x20, 0x41, 0x61, 0x7e, 0x7f, 0x80, 0xc3, 0xff);
  const chunk = fc.oneof(
    fc.array(tricky, { maxLength: 12 }),
    fc.tuple(fc.string({ maxLength: 90 }), fc.boolean()).map(([s, crlf]) => [...Buffer.from(s.replace(/[^\x20-\x7e]/g, 'x') + (crlf ? '\r\n' : '\n'))]),
  );
  fuzzSync(
    [fc.array(chunk, { maxLength: 40 }), fc.nat(7), fc.nat(20), fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 6 }), fc.nat(6)],
    // tailRows at least 1, as the mirror asks (its buffer's rows).
    (chunks, offset, fromPick, cols, tailRows, minSkipped) => {
      const bytes = chunks.flat();
      // A view at `offset` bytes into its memory: the finder reads words wherever a chunk begins.
      const memory = new Uint8Array(offset + bytes.length);
      memory.set(bytes, offset);
      const data = memory.subarray(offset);
      const from = bytes.length === 0 ? 0 : fromPick % (bytes.length + 1);
      const finder = new PlainRunFinder();
      const found = finder.find(data, from, cols, tailRows, minSkipped);
      assert.deepEqual(found, referenceFind(data, from, cols, tailRows, minSkipped));
    },
    300, // microseconds a case
  );
});
