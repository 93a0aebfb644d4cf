// The text a person would read from raw terminal output (src/core/base/ansi.ts), as budgets and
// pattern waits see it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { stripAnsi } from '../../../../src/core/base/ansi';
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
