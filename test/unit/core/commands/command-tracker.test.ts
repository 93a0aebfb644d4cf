// How the command tracker reads a shell's marks when shells nest or marks go missing: the cases a
// real shell produces only in setups a test cannot build cheaply (a shell with its own integration
// inside ours, over ssh for example), replayed as the exact bytes such shells print.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CommandTracker, type CommandRecord } from '../../../../src/core/commands/command-tracker';

const mark = (m: string) => `\x1b]633;${m}\x07`;

/** Feeds `parts` as output, one read each, and returns the tracker. */
function replay(parts: string[], tracker = new CommandTracker('/start', true)): CommandTracker {
  let cursor = 0;
  for (const p of parts) {
    const bytes = Buffer.from(p);
    cursor += bytes.length;
    tracker.feed(bytes, cursor);
  }
  return tracker;
}

const summary = (r: CommandRecord) => [r.command, r.exitCode, r.endCursor === null ? 'running' : 'ended'];

test('a shell with marks of its own inside a command (ssh to a host with integration): its prompt ends that command, its commands are records of their own', () => {
  const prompt = mark('A') + '$ ' + mark('B');
  const t = replay([
    prompt, 'ssh box\r\n', mark('E;ssh box') + mark('C'),
    // The remote shell's prompt, an empty line (a bare D), a command, its prompt again.
    mark('D') + prompt, '\r\n', mark('D') + prompt, 'ls\r\n', mark('E;ls') + mark('C'), 'a b\r\n', mark('D;0') + prompt,
    'exit\r\n', mark('E;exit') + mark('C'), 'logout\r\n',
    // Back in the outer shell.
    mark('D;5') + mark('P;Cwd=/home/u') + prompt,
  ]);
  // The remote `exit` never reports its end: the outer shell's mark ends it, with ssh's status.
  assert.deepEqual(t.list(10).map(summary), [['ssh box', null, 'ended'], ['ls', 0, 'ended'], ['exit', 5, 'ended']]);
  assert.equal(t.running, false);
  assert.equal(t.cwd, '/home/u');
});

test('a start while a command runs ends that one (its end was never reported); the shell ending ends the last', () => {
  const t = replay([mark('E;one') + mark('C'), 'x', mark('E;two') + mark('C'), 'y']);
  const [one, two] = t.list(10);
  assert.deepEqual(summary(one), ['one', null, 'ended']);
  assert.equal(one.endCursor, two.startCursor - mark('C').length);
  assert.deepEqual(summary(two), ['two', null, 'running']);
  t.shellEnded(130, 99);
  assert.deepEqual(summary(t.list(10)[1]), ['two', 130, 'ended']);
  assert.equal(t.list(10)[1].endCursor, 99);
});

test('a command line reported after "executed" (bash, when its history cannot tell) belongs to that command', () => {
  const t = replay([mark('C'), mark('E;echo not-in-history'), 'not-in-history\r\n', mark('D;0')]);
  assert.deepEqual(t.list(10).map(summary), [['echo not-in-history', 0, 'ended']]);
});

test('marks seen in a session without injection turn its integration on', () => {
  const t = new CommandTracker('/start', false);
  let changed = 0;
  t.onDidChangeState(() => changed++);
  replay(['plain output'], t);
  assert.equal(t.integration, false);
  replay([mark('A')], t);
  assert.equal(t.integration, true);
  assert.equal(changed, 1);
  t.dispose();
});
