// The line being typed into a session, as the shell will receive it at Enter: what every writer
// typed since the last Enter, with Backspace, Ctrl+W, Ctrl+U and Ctrl+C applied.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_TYPED_LINE_CHARS, TypedLine } from '../../../../src/core/session/typed-line';
import { ensureNoDisposablesAreLeakedInTestSuite } from '../../../helpers/leak-tracker';

// Every disposable a test makes is disposed by its end (docs/testing.md).
ensureNoDisposablesAreLeakedInTestSuite();

describe('TypedLine', () => {
  test('writes add up until Enter; the preview says what a write would submit', () => {
    const t = new TypedLine();
    t.observe('r', false);
    assert.deepEqual(t.preview('m -rf x\r'), { lines: ['rm -rf x'], overflow: false });
    assert.deepEqual(t.preview('m -rf x'), { lines: ['rm -rf x'], overflow: false }, 'the pending line counts too');
    t.observe('m -rf x\recho ', false);
    assert.equal(t.pending, 'echo ');
    assert.deepEqual(t.preview('a\rb\r').lines, ['echo a', 'b']);
  });

  test('editing keys apply; arrows and function keys type nothing', () => {
    const t = new TypedLine();
    t.observe('lx\x7fs -l\x1b[D\x1bOA', false);
    assert.equal(t.pending, 'ls -l');
    t.observe(' foo bar\x17', false);
    assert.equal(t.pending, 'ls -l foo ');
    t.observe('\x15', false);
    assert.equal(t.pending, '');
    t.observe('abc\x03', false);
    assert.equal(t.pending, '', 'Ctrl+C abandons the line');
  });

  test('what is typed at a secret prompt is not kept; its Enter still ends the line', () => {
    const t = new TypedLine();
    t.observe('hunter2', true);
    assert.equal(t.pending, '');
    t.observe('\r', true);
    t.observe('ls', false);
    assert.equal(t.pending, 'ls');
  });

  test('a line past the limit is marked, not kept whole', () => {
    const t = new TypedLine();
    t.observe('x'.repeat(MAX_TYPED_LINE_CHARS + 1), false);
    assert.equal(t.pending.length, MAX_TYPED_LINE_CHARS);
    assert.equal(t.preview('\r').overflow, true);
    t.observe('\r', false);
    assert.equal(t.overflow, false);
  });
});
