// A command log's budget (budgetOfLog): whatever the output (colours, progress bars, wide
// characters, one line longer than the budget), the head is the start of its text and the tail
// its end, both within the budget, and what lies between is counted exactly and found in the log
// bytes the budget names. A real log file, written as the session writes it.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CommandLog } from '../../../../src/core/commands/command-log';
import { budgetOfLog } from '../../../../src/core/commands/command-log-budget';
import { StrippedText } from '../../../../src/core/base/stripped-text';
import { ensureNoDisposablesAreLeakedInTestSuite } from '../../../helpers/leak-tracker';

// Every disposable a test makes is disposed by its end (docs/testing.md).
ensureNoDisposablesAreLeakedInTestSuite();

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spt-log-budget-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));
let next = 1;

/** A finished log holding `bytes`, appended in PTY-sized chunks. */
function logOf(bytes: Buffer): CommandLog {
  const log = new CommandLog(next, path.join(dir, `${next++}.log`));
  for (let i = 0; i < bytes.length; i += 4093) log.append(bytes.subarray(i, i + 4093));
  log.finish();
  return log;
}

function textOf(bytes: Uint8Array): string {
  const s = new StrippedText(0, true);
  s.feed(bytes);
  return s.text();
}

const OUTPUTS: Record<string, string> = {
  numbers: Array.from({ length: 200_000 }, (_, i) => `${i + 1}\r\n`).join(''),
  colours: Array.from({ length: 30_000 }, (_, i) => `\x1b[3${i % 8}mline ${i} é漢😀\x1b[0m\r\n`).join(''),
  progress: Array.from({ length: 20_000 }, (_, i) => `${i % 100}%\r${i % 100 === 99 ? '\r\n' : ''}`).join('') + 'done\r\n',
  'one long line': 'x'.repeat(300_000) + '\r\nend\r\n',
  'no final newline': Array.from({ length: 50_000 }, (_, i) => `row ${i}`).join('\r\n'),
};

for (const [name, output] of Object.entries(OUTPUTS)) {
  test(`${name}: head from the start, tail from the end, the rest counted exactly and where the budget says`, async () => {
    const bytes = Buffer.from(output, 'utf8');
    const log = logOf(bytes);
    const whole = textOf(bytes);
    assert.equal(log.text.chars, whole.length, 'the log counts its text as it is written');
    for (const maxChars of [1, 200, 5000]) {
      const b = await budgetOfLog(log, maxChars);
      assert.equal(b.totalChars, whole.length);
      if (whole.length <= maxChars) {
        assert.deepEqual([b.head, b.tail, b.elided], [whole, '', undefined], `${maxChars}: it fits`);
        continue;
      }
      assert.ok(b.head.length + b.tail.length <= maxChars, `${maxChars}: ${b.head.length} + ${b.tail.length}`);
      assert.ok(whole.startsWith(b.head), `${maxChars}: the head is the start`);
      assert.ok(whole.endsWith(b.tail), `${maxChars}: the tail is the end`);
      const e = b.elided!;
      assert.equal(e.chars, whole.length - b.head.length - b.tail.length, `${maxChars}: elided counted exactly`);
      const middle = whole.slice(b.head.length, whole.length - b.tail.length);
      // The log's bytes [offset, end) hold what was left out (exactly, when both cuts fall on line starts).
      const named = textOf(bytes.subarray(e.offset, e.end));
      assert.ok(named.includes(middle), `${maxChars}: the bytes named hold what was left out`);
      if (b.head.endsWith('\n') || b.head === '') assert.equal(e.firstLine, whole.slice(0, b.head.length).split('\n').length - 1);
      // The lines named are lines of the text: none past its last (a final newline starts no line).
      assert.ok(e.lastLine <= b.totalLines - 1, `${maxChars}: last line left out ${e.lastLine} of ${b.totalLines}`);
      assert.equal(e.lines, e.lastLine - e.firstLine + 1, `${maxChars}: lines counted`);
    }
    const all = await budgetOfLog(log, whole.length);
    assert.equal(all.head, whole, 'a budget as large as the text: all of it, nothing left out');
    assert.equal(all.elided, undefined);
  });
}

// A command longer than the session's bound: the file keeps its start, the log its end in memory
// (as CommandLogs feeds it), and the budget is still its first lines, its last lines and exact counts.
for (const name of ['numbers', 'colours', 'progress', 'one long line']) {
  test(`${name}, past the session's bound: the tail is still the output's end, and the counts are of all of it`, async () => {
    const bytes = Buffer.from(OUTPUTS[name], 'utf8');
    const bound = Math.min(100_000, Math.floor(bytes.length / 3));
    const log = new CommandLog(next, path.join(dir, `${next++}.log`));
    for (let i = 0; i < bytes.length; i += 4093) {
      const chunk = bytes.subarray(i, i + 4093);
      const room = Math.max(0, bound - log.size);
      log.append(chunk.subarray(0, room));
      if (chunk.length > room) log.appendBeyond(chunk.subarray(room));
    }
    log.finish();
    assert.equal(log.size, bound);
    assert.equal(log.totalBytes, bytes.length);
    assert.equal(log.truncated, true);
    const whole = textOf(bytes);
    for (const maxChars of [200, 5000]) {
      const b = await budgetOfLog(log, maxChars);
      assert.equal(b.totalChars, whole.length, `${maxChars}: counted past the bound`);
      assert.equal(b.totalLines, textOf(bytes).split('\n').length - (whole.endsWith('\n') ? 1 : 0));
      assert.ok(b.head.length + b.tail.length <= maxChars);
      assert.ok(whole.startsWith(b.head), `${maxChars}: the head is the start`);
      assert.ok(whole.endsWith(b.tail), `${maxChars}: the tail is the end: ${JSON.stringify(b.tail.slice(-60))}`);
      if (name !== 'one long line') assert.ok(b.tail.length > Math.min(maxChars / 4, 500), `${maxChars}: a tail of whole lines (${b.tail.length})`);
      const e = b.elided!;
      assert.equal(e.chars, whole.length - b.head.length - b.tail.length, `${maxChars}: elided counted exactly`);
      assert.ok(e.end <= bound && e.offset <= e.end, `${maxChars}: what the log holds of the part left out: [${e.offset}, ${e.end})`);
      // The lines named are those between: counted from the whole output, past the bound too.
      const tailAt = whole.length - b.tail.length;
      const before = whole.slice(0, tailAt).split('\n').length - 1;
      assert.equal(e.lastLine, whole[tailAt - 1] === '\n' ? before - 1 : before, `${maxChars}: the last line left out`);
      assert.equal(e.lines, e.lastLine - e.firstLine + 1);
    }
  });
}
