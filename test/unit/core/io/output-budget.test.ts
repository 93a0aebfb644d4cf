// The output budget of docs/guarantees.md#output-budget-for-agents, as a function: head and tail kept within maxChars, one line
// between that counts what was left out, and the elision it reports matches the text exactly.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyBudget, MIN_KEPT_CHARS, type Elision } from '../../../../src/core/io/output-budget';
import { ensureNoDisposablesAreLeakedInTestSuite } from '../../../helpers/leak-tracker';

// Every disposable a test makes is disposed by its end (docs/testing.md).
ensureNoDisposablesAreLeakedInTestSuite();

const lines = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}\n`).join('');
const pointer = (e: Elision) => `read lines ${e.firstLine + 1}-${e.lastLine + 1}`;

test('short text is returned as it is, with nothing left out', () => {
  const text = lines(10);
  assert.deepEqual(applyBudget(text, text.length, pointer), { text, totalChars: text.length, elidedChars: 0 });
});

test('long text keeps whole lines at its head and tail, and one line between says what was left out', () => {
  const text = lines(10000);
  const r = applyBudget(text, 2000, pointer);
  assert.ok(r.text.length <= 2000, `${r.text.length}`);
  assert.equal(r.totalChars, text.length);
  const out = r.text.split('\n');
  const notes = out.filter((l) => l.startsWith('[… '));
  assert.equal(notes.length, 1);
  const e = r.elision!;
  assert.equal(notes[0], `[… ${e.lines} lines (${e.chars} characters) left out; read lines ${e.firstLine + 1}-${e.lastLine + 1}]`);
  assert.equal(r.elidedChars, e.chars);
  // Whole lines on both sides, and the left-out lines are exactly those the elision names.
  assert.ok(e.head.endsWith('\n') && /^line \d+\n/.test(e.tail));
  const all = text.split('\n');
  assert.equal(e.head + all.slice(e.firstLine, e.lastLine + 1).join('\n') + '\n' + e.tail, text);
  assert.equal(e.lines, e.lastLine - e.firstLine + 1);
  assert.equal(e.head.length + e.chars + e.tail.length, text.length);
  // Head and tail share the budget.
  assert.ok(Math.abs(e.head.length - e.tail.length) < 100, `${e.head.length} vs ${e.tail.length}`);
});

test('one huge line is cut inside it, never in the middle of a surrogate pair', () => {
  const text = '😀'.repeat(5000); // 10000 UTF-16 units, no newline
  const r = applyBudget(text, 1001, () => 'see elsewhere');
  assert.ok(r.text.length <= 1001);
  const e = r.elision!;
  assert.equal(e.firstLine, 0);
  assert.equal(e.lastLine, 0);
  assert.equal(e.lines, 1);
  assert.equal(e.head.length % 2, 0, 'the head ends between characters');
  assert.equal(e.tail.length % 2, 0, 'the tail starts at a character');
  assert.equal(e.head + text.slice(e.head.length, text.length - e.tail.length) + e.tail, text);
  assert.match(r.text, /\n\[… 1 line \(\d+ characters\) left out; see elsewhere\]\n/);
});

test('the text stays within maxChars when the pointer the real counts make is longer than the one sized beforehand', () => {
  const text = lines(5000);
  // A pointer made of cursors, not counts: its numbers need not be below the text's length (read_output's byte cursors).
  const cursors = (e: Elision) => `read_output since=${e.firstLine === text.length ? 7 : 1_000_000 + e.firstLine} maxBytes=${e.chars * 3}`;
  for (const maxChars of [200, 250, 300, 301, 305, 1000]) {
    const r = applyBudget(text, maxChars, cursors);
    assert.ok(r.text.length <= maxChars, `maxChars ${maxChars}: ${r.text.length} characters`);
    const e = r.elision!;
    assert.equal(e.head + text.slice(e.head.length, text.length - e.tail.length) + e.tail, text);
  }
});

test('a budget smaller than the line between still keeps a head and a tail (MIN_KEPT_CHARS of output) with the line between', () => {
  const text = lines(300);
  // As long as the pointers the tools write (read_command_output … or read_output …).
  const long = (e: Elision) =>
    `read them with read_command_output id=2 offset=${e.firstLine} (they end at offset ${e.lastLine}), or read_output since=29147 maxBytes=1392 strip=true`;
  for (const maxChars of [1, 50, 100, 200]) {
    const r = applyBudget(text, maxChars, long);
    const e = r.elision!;
    assert.ok(e.head.length > 0 && e.head.endsWith('\n'), `maxChars ${maxChars}: a head of whole lines: ${JSON.stringify(e.head)}`);
    assert.ok(e.tail.length > 0 && /^line \d+\n/.test(e.tail), `maxChars ${maxChars}: a tail of whole lines: ${JSON.stringify(e.tail)}`);
    assert.ok(e.head.length + e.tail.length <= Math.max(MIN_KEPT_CHARS, maxChars), `maxChars ${maxChars}: ${e.head.length + e.tail.length} characters kept`);
    assert.equal(r.text, `${e.head}[… ${e.lines} lines (${e.chars} characters) left out; ${long(e)}]\n${e.tail}`);
    assert.equal(e.head + text.slice(e.head.length, text.length - e.tail.length) + e.tail, text);
    assert.equal(r.elidedChars, text.length - e.head.length - e.tail.length);
  }
  // A text that the line saying what was left out would not make shorter is kept whole.
  const short = lines(12);
  assert.deepEqual(applyBudget(short, 50, long), { text: short, totalChars: short.length, elidedChars: 0 });
});
