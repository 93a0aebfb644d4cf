// The text a person reads in raw output, worked out byte by byte (StrippedText): the same text as
// stripAnsi gives for the whole string, but that a carriage return no newline follows starts its
// line over (as the screen shows it), however the bytes are cut into chunks, and lengths that are
// the text's own `.length`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { stripAnsi } from '../../../../src/core/base/ansi';
import { StrippedText } from '../../../../src/core/base/stripped-text';
import { ensureNoDisposablesAreLeakedInTestSuite } from '../../../helpers/leak-tracker';

// Every disposable a test makes is disposed by its end (docs/testing.md).
ensureNoDisposablesAreLeakedInTestSuite();

const SAMPLES = [
  'plain\r\nlines\r\n',
  '\x1b[1;31mred\x1b[0m and \x1b]0;title\x07 and \x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\\r\n',
  'ünïcødé 漢字 😀 emoji\r\n\ttab\r\n',
  'progress 10%\r20%\r100%\r\n',
  'N\bNA\bAM\bME\bE overstrike\n',
  '\x1b(B\x1b=\x1b[?1049h\x1b[2J\x1b[H screen\x1bP1$r0m\x1b\\\n',
  'no newline at the end',
  // zsh's mark of output without a final newline, then `\r \r`: nothing on the screen.
  '1\r\n2\r\n\x1b[1m\x1b[7m%\x1b[27m\x1b[1m\x1b[0m          \r \r',
  'abc\rX\r\n\r\r\nend\r',
];

/** What the screen shows of a line a carriage return started over: what came after it. */
const startedOver = (s: string) => s.replace(/[^\r\n]*\r+(?=[^\r\n]|$)/g, '');

function strip(bytes: Buffer, cuts: number[]): StrippedText {
  const s = new StrippedText(8, true);
  let at = 0;
  for (const c of [...cuts, bytes.length]) {
    s.feed(bytes.subarray(at, c));
    at = c;
  }
  return s;
}

test('the same text as stripAnsi, in one piece or cut anywhere, with exact counts', () => {
  for (const sample of SAMPLES) {
    const bytes = Buffer.from(sample, 'utf8');
    const expected = stripAnsi(startedOver(sample));
    for (let cut = 0; cut <= bytes.length; cut++) {
      const s = strip(bytes, [cut]);
      assert.equal(s.text(), expected, `${JSON.stringify(sample)} cut at ${cut}`);
      assert.equal(s.chars, expected.length);
      assert.equal(s.newlines, expected.split('\n').length - 1);
      assert.equal(s.lines, expected.split('\n').filter((l, i, a) => l !== '' || i < a.length - 1).length);
    }
  }
  assert.equal(strip(Buffer.from('progress 10%\r20%\r100%\r\n'), []).text(), '100%\n', 'a progress bar: its last state');
  assert.equal(strip(Buffer.from(SAMPLES.at(-2)!), []).text(), '1\n2\n', "zsh's mark: nothing");
});

test('counting alone gives the counts keeping gives; checkpoints are line starts outside sequences', () => {
  const text = Array.from({ length: 2000 }, (_, i) => `\x1b[3${i % 8}m${i}\x1b[0m ${'é'.repeat(i % 5)}\r\n`).join('');
  const bytes = Buffer.from(text, 'utf8');
  const counting = new StrippedText(100);
  for (let i = 0; i < bytes.length; i += 333) counting.feed(bytes.subarray(i, i + 333));
  const whole = stripAnsi(text);
  assert.equal(counting.chars, whole.length);
  assert.ok(counting.checkpoints.length > 10);
  for (const c of counting.checkpoints) {
    assert.equal(bytes[c.offset - 1], 0x0a);
    const rest = new StrippedText(0, true);
    rest.feed(bytes.subarray(c.offset));
    assert.equal(rest.text(), whole.slice(c.chars), 'stripped from a checkpoint: the rest of the text');
    assert.equal(c.newlines, whole.slice(0, c.chars).split('\n').length - 1);
  }
});
