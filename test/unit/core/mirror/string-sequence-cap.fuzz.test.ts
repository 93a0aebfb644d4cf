// The cap on OSC and DCS strings (src/core/mirror/string-sequence-cap.ts) changes nothing on the
// screen: random output full of strings (OSC, DCS, as ESC sequences and as C1 controls in UTF-8),
// their terminators (BEL, ST, ESC, CAN, SUB, C1 controls), text and other sequences, cut into
// writes at random points, goes to one xterm whole and to another through a cap of a few bytes;
// both must show the same rows and cursor. A string over the cap is dropped by xterm (no title,
// no answer), and one under it reaches xterm byte for byte.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Terminal } from '@xterm/headless';
import { StringSequenceCap, MAX_STRING_SEQUENCE_BYTES } from '../../../../src/core/mirror/string-sequence-cap';
import { Mirror } from '../../../../src/core/mirror/mirror';
import { fuzz } from '../../../helpers/fuzz';
import { ensureNoDisposablesAreLeakedInTestSuite } from '../../../helpers/leak-tracker';

ensureNoDisposablesAreLeakedInTestSuite();

/** Cases in `npm test`: a few ms each. */
const SHORT_RUNS = 200;
/** The cap in the fuzz: small, so that random strings cross it often. */
const CAP = 8;

const PIECES = [
  'ab',
  'xyz ',
  '\r\n',
  'é',
  '§', // C2 A7: the first byte of a C1 control, not one
  '\x1b]0;',
  '\x1b]2;',
  '\x1b]8;;',
  '\x1b]10;?',
  '\x1bP$q',
  '\x1bP1;2|',
  '\u009d0;', // OSC as a C1 control (C2 9D)
  '\u0090$q', // DCS as a C1 control (C2 90)
  '\x07',
  '\x1b\\',
  '\u009c', // ST as a C1 control
  '\x18',
  '\x1a',
  '\x1b',
  '\u009b31m', // CSI as a C1 control
  '\x1b[1;31m',
  '\x1b[2J',
  '\x1b[H',
  '\x1bc',
  '\x1b_apc',
];

const piece = fc.oneof(
  fc.constantFrom(...PIECES),
  fc.integer({ min: 1, max: 3 * CAP }).map((n) => 'y'.repeat(n)),
);

function screenOf(term: Terminal): string {
  const b = term.buffer.active;
  const rows: string[] = [];
  for (let i = 0; i < b.length; i++) rows.push(b.getLine(i)?.translateToString(true) ?? '');
  return `${rows.join('\n')}\ncursor ${b.cursorX},${b.cursorY}`;
}

function write(term: Terminal, data: Uint8Array | string): Promise<void> {
  return new Promise((resolve) => term.write(data, resolve));
}

test('a cap on OSC and DCS strings leaves the screen as xterm shows the whole output', { timeout: 120_000 }, async () => {
  await fuzz(
    [fc.array(piece, { minLength: 1, maxLength: 40 }), fc.array(fc.nat(), { maxLength: 8 })],
    async (pieces, cuts) => {
      const bytes = Buffer.from(pieces.join(''), 'utf8');
      const whole = new Terminal({ cols: 20, rows: 6, allowProposedApi: true, logLevel: 'off' });
      const capped = new Terminal({ cols: 20, rows: 6, allowProposedApi: true, logLevel: 'off' });
      try {
        const cap = new StringSequenceCap(CAP);
        await write(whole, bytes);
        const at = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
        let from = 0;
        for (const to of [...at, bytes.length]) {
          await write(capped, cap.filter(bytes.subarray(from, to)));
          from = to;
        }
        assert.equal(screenOf(capped), screenOf(whole), JSON.stringify(pieces.join('')));
      } finally {
        whole.dispose();
        capped.dispose();
      }
    },
    SHORT_RUNS,
  );
});

test('strings within the cap, and output with none, are handed on as they are; one opened across writes is capped too', () => {
  const cap = new StringSequenceCap(CAP);
  for (const text of ['plain text\r\n', '\x1b]0;title\x07after', '\x1bP$qm\x1b\\x', '§ é \u009b1m', ']0;' + 'y'.repeat(100), 'yy\x1b']) {
    const chunk = Buffer.from(text, 'utf8');
    assert.equal(cap.filter(chunk), chunk, JSON.stringify(text));
  }
  // The ESC that ended the last write opens an OSC with this one: CAP bytes of it after `]` go on.
  assert.equal(Buffer.from(cap.filter(Buffer.from(']0;' + 'y'.repeat(100)))).toString(), ']0;' + 'y'.repeat(CAP - 2) + '\x18');
});

test('an unfinished title of megabytes reaches the mirror as its first 64 KiB and a CAN; the output after it is on the screen', () => {
  const m = new Mirror(40, 5, 100);
  const titles: string[] = [];
  const sub = m.onTitle((t) => titles.push(t));
  try {
    const cap = new StringSequenceCap();
    const open = Buffer.from('\x1b]0;');
    const payload = Buffer.alloc(1024 * 1024, 'y');
    // Its introducer and 64 KiB after it go on, the rest is left out, write after write, up to its BEL.
    const first = cap.filter(Buffer.concat([open, payload]));
    assert.equal(first.length, '\x1b]'.length + MAX_STRING_SEQUENCE_BYTES + 1);
    assert.equal(first.at(-1), 0x18);
    assert.equal(cap.filter(payload).length, 0);
    assert.deepEqual(Buffer.from(cap.filter(Buffer.from('yyy\x07after'))).toString(), 'after');
    // Through the mirror: no title of megabytes, the text after it on the screen, and a later title taken.
    m.write(Buffer.concat([open, payload, payload, Buffer.from('\x07AFTER\x1b]0;short\x07')]));
    assert.deepEqual(titles, ['short']);
    assert.match(m.screen().rows[0], /^AFTER/);
  } finally {
    sub.dispose();
    m.dispose();
  }
});
