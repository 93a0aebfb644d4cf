// Property-based fuzzing of where an escape sequence starts and ends: stripAnsi (a whole string),
// wholeSequences (a piece read so far) and StrippedText (bytes in chunks) must agree on every
// sequence's bounds, well-formed or not, or a stripped read shows half a sequence as text, or a
// command's counted text differs from its stripped page.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { AnsiStripper, stripAnsi, wholeSequences } from '../../../../src/core/base/ansi';
import { StrippedText } from '../../../../src/core/base/stripped-text';
import { SequenceEnd } from '../../../../src/core/base/escape-sequences';
import { fuzzSync } from '../../../helpers/fuzz';
import { ensureNoDisposablesAreLeakedInTestSuite } from '../../../helpers/leak-tracker';

// Every disposable a test makes is disposed by its end (docs/testing.md).
ensureNoDisposablesAreLeakedInTestSuite();

const chars = (pool: string, max: number) => fc.array(fc.constantFrom(...pool), { maxLength: max }).map((a) => a.join(''));
/** Text (no backspace: it erases across a cut, a known limit of stripping in pieces), with the bytes sequences are made of (`[`, `]`, `\`, digits) and characters of 2 to 4 UTF-8 bytes. */
const text = chars('ab [];\\0m\r\nP\t\x07éü漢😀', 6);
const params = chars('0123456789;:<=>?', 4);
const intermediates = chars(' !"#$%&\'()*+,-./', 2);
const finalByte = fc.constantFrom(...'@ABHJKmhlqp~`{|}'.split(''));
/** The string of an OSC/DCS: anything but its ends, an ESC that is not ST among it. */
const payload = chars('0;ab/:\\[é \x1bx', 8).map((s) => s.replace(/\x1b\\|\x1b$/g, '\x1bx'));
const csi = fc.tuple(fc.constantFrom('\x1b[', '\x9b'), params, intermediates, finalByte).map((p) => p.join(''));
const osc = fc.tuple(payload, fc.constantFrom('\x07', '\x1b\\')).map(([p, end]) => `\x1b]${p}${end}`);
const dcs = fc.tuple(fc.constantFrom('P', 'X', '^', '_'), payload).map(([kind, p]) => `\x1b${kind}${p}\x1b\\`);
/** ESC with a final byte (`ESC 7`, `ESC =`), or intermediates first (`ESC ( B`). */
const shortEscape = fc.tuple(intermediates, fc.constantFrom(...'0789=>BcDEHMNOZ~'.split(''))).map(([i, f]) => `\x1b${i}${f}`);
/** Sequences broken off: an ESC or a CSI followed by what cannot continue it. */
const broken = fc
  .tuple(fc.constantFrom('\x1b', '\x1b[', '\x1b[1;', '\x1b[1 ', '\x1b(', '\x9b'), fc.constantFrom('\n', 'é', '\x1b', '\x7f', '\t', ' 1m', 'x'))
  .map(([start, next]) => start + next);
const output = fc.array(fc.oneof(text, csi, osc, dcs, shortEscape, broken), { maxLength: 12 }).map((parts) => parts.join(''));

describe('fuzz: escape sequence bounds', () => {
  test('AnsiStripper fed in pieces (whole characters, cut anywhere, backspaces too) keeps what stripAnsi of the whole keeps; text(max) is its end', () => {
    const withBackspaces = fc.array(fc.oneof(output, chars('\bx😀', 3)), { maxLength: 4 }).map((parts) => parts.join(''));
    fuzzSync(
      [withBackspaces, fc.array(fc.nat(), { maxLength: 4 }), fc.nat({ max: 20 })],
      (whole, cutSeeds, max) => {
        const points = [...whole];
        const cuts = [...new Set(cutSeeds.map((c) => c % (points.length + 1)))].sort((a, b) => a - b);
        const stripper = new AnsiStripper();
        let from = 0;
        for (const cut of [...cuts, points.length]) {
          stripper.feed(points.slice(from, cut).join(''));
          from = cut;
          // Looking in between (which settles the text kept) changes nothing of what comes after.
          stripper.text();
        }
        const expected = stripAnsi(whole);
        assert.equal(stripper.text(), expected, JSON.stringify({ whole, cuts }));
        // At most `max` code units of its end, one fewer where a surrogate pair straddles the cut.
        const bounded = stripper.text(max);
        assert.ok(expected.endsWith(bounded), JSON.stringify({ expected, bounded }));
        assert.ok(bounded.length === Math.min(max, expected.length) || bounded.length === max - 1, JSON.stringify({ expected, bounded, max }));
      },
      2000,
    );
  });

  test('stripping the whole equals stripping the part wholeSequences gives and then the rest, cut anywhere', () => {
    fuzzSync(
      [output],
      (whole) => {
        const expected = stripAnsi(whole);
        for (let cut = 0; cut <= whole.length; cut++) {
          const first = wholeSequences(whole.slice(0, cut), false).text;
          assert.equal(stripAnsi(first) + stripAnsi(whole.slice(first.length)), expected, `cut at ${cut} of ${JSON.stringify(whole)}`);
        }
      },
      2000,
    );
  });

  test('StrippedText keeps the text stripAnsi gives, whole or fed in two chunks cut at any byte', () => {
    fuzzSync(
      [output],
      (raw) => {
        // A carriage return starting its line over is StrippedText's own rule: none here.
        const whole = raw.replace(/\r/g, '');
        const expected = stripAnsi(whole);
        const bytes = Buffer.from(whole, 'utf8');
        for (let cut = 0; cut <= bytes.length; cut++) {
          const s = new StrippedText(0, true);
          s.feed(bytes.subarray(0, cut));
          s.feed(bytes.subarray(cut));
          assert.equal(s.text(), expected, `cut at byte ${cut} of ${JSON.stringify(whole)}`);
          assert.equal(s.chars, expected.length, `chars, cut at byte ${cut} of ${JSON.stringify(whole)}`);
        }
      },
      2000,
    );
  });

  test('SequenceEnd, fed a sequence and what follows in two chunks cut at any byte, skips exactly that sequence: the rest strips to what the whole does', () => {
    const sequence = fc.oneof(csi, osc, dcs, shortEscape, broken);
    fuzzSync(
      [sequence, output],
      (first, rest) => {
        const whole = first + rest;
        const bytes = Buffer.from(whole, 'utf8');
        for (let cut = 0; cut <= bytes.length; cut++) {
          const scan = new SequenceEnd();
          scan.feed(bytes.subarray(0, cut));
          scan.feed(bytes.subarray(cut));
          const end = scan.end;
          assert.ok(end !== undefined && end > 0, `an end, past the start: ${JSON.stringify(whole)} cut at ${cut}`);
          assert.equal(stripAnsi(bytes.subarray(end).toString('utf8')), stripAnsi(whole), `${JSON.stringify(whole)} cut at byte ${cut}: end ${end}`);
        }
      },
      2000,
    );
  });
});

test('the corners the scanners once read differently: each is one sequence, the same for all three', () => {
  const cases: Array<[string, string]> = [
    ['a\x1b[ 1mb', 'a1mb'], // a CSI parameter after an intermediate breaks it off
    ['a\x1b\nb', 'a\nb'], // ESC then a newline: the newline stays
    ['a\x1b[1éb', 'aéb'], // a character beyond ASCII breaks a CSI off and stays whole
    ['\x1b[31\x1b]0;t\x07m', 'm'], // an ESC inside a CSI opens the next sequence
    ['\x1b\x1b\x1bP\x1b\\a', 'a'],
    ['\x9b31mred\x9b0m', 'red'], // the 8-bit CSI
    ['ok\x1b]0;never ended', 'ok'],
  ];
  for (const [raw, text] of cases) {
    assert.equal(stripAnsi(raw), text, `stripAnsi(${JSON.stringify(raw)})`);
    const bytes = Buffer.from(raw, 'utf8');
    for (let cut = 0; cut <= bytes.length; cut++) {
      const s = new StrippedText(0, true);
      s.feed(bytes.subarray(0, cut));
      s.feed(bytes.subarray(cut));
      assert.equal(s.text(), text, `StrippedText(${JSON.stringify(raw)}) cut at byte ${cut}`);
    }
    for (let cut = 0; cut <= raw.length; cut++) {
      const first = wholeSequences(raw.slice(0, cut), false).text;
      assert.equal(stripAnsi(first) + stripAnsi(raw.slice(first.length)), text, `${JSON.stringify(raw)} cut at ${cut}`);
    }
  }
});
