// The text a person would read from raw terminal output (src/core/base/ansi.ts), as budgets and
// pattern waits see it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { stripAnsi, wholeSequences } from '../../../../src/core/base/ansi';
import { ensureNoDisposablesAreLeakedInTestSuite } from '../../../helpers/leak-tracker';

// Every disposable a test makes is disposed by its end (docs/testing.md).
ensureNoDisposablesAreLeakedInTestSuite();

test('escape sequences go, CR LF becomes LF, a lone CR and other controls are dropped', () => {
  assert.equal(stripAnsi('\x1b[1;31mred\x1b[0m\r\nnext\x1b]0;title\x07 line\rx\x07\x7f'), 'red\nnext linex');
});

test('a backspace erases the character before it, a whole one even outside the BMP (an emoji is two UTF-16 units)', () => {
  assert.equal(stripAnsi('abc\b\bd'), 'ad');
  assert.equal(stripAnsi('ok 😀\b!'), 'ok !');
  assert.equal(stripAnsi('\b\bx'), 'x', 'nothing to erase: nothing happens');
});

test('output made of many backspaces keeps what is left, however long', () => {
  const n = 200_000;
  assert.equal(stripAnsi('x'.repeat(n) + '\b'.repeat(n - 1)), 'x');
});

test('a piece of output cut inside an escape sequence is held back from it, so stripping pieces equals stripping the whole', () => {
  const whole = 'a\x1b[31mred\x1b[0m b\x1b]633;P;Cwd=/tmp\x07c\x1b]8;;http://x\x1b\\link\x1b(Bd\x1b';
  // Every cut point (ASCII: characters are bytes), read as a reader of pty/output reads (the cursor goes back by what was held).
  for (let size = 1; size <= whole.length; size++) {
    let at = 0;
    let text = '';
    for (let guard = 0; at < whole.length && guard < 1000; guard++) {
      const end = Math.min(at + size, whole.length);
      const piece = wholeSequences(whole.slice(at, end), end < whole.length);
      text += stripAnsi(piece.text);
      const next = end - piece.heldBytes;
      if (next === at) break; // the end of the output, inside a sequence still being written
      at = next;
    }
    // A piece can hold a sequence back only when it is at least as long as the sequence.
    if (size < '\x1b]633;P;Cwd=/tmp\x07'.length) continue;
    assert.equal(text, stripAnsi(whole.slice(0, -1)), `pieces of ${size}`);
    assert.doesNotMatch(text, /633|31m|\]8/, `pieces of ${size}: no half sequence shows`);
  }
  assert.deepEqual(wholeSequences('ok\x1b[3', false), { text: 'ok', heldBytes: 3 });
  assert.deepEqual(wholeSequences('\x1b]0;ti', false), { text: '', heldBytes: 6 });
  assert.deepEqual(wholeSequences('\x1b]0;ti', true), { text: '', heldBytes: 0 });
  assert.deepEqual(wholeSequences('done\x1b[0m', true), { text: 'done\x1b[0m', heldBytes: 0 });
});
