// How the command tracker reads the marks of the integration the session injected: only marks
// with the session's nonce count; marks a program prints (a file that holds them, a shell with
// an integration of its own inside a command) are output; and cases a real shell produces only
// rarely, replayed as the exact bytes.
import { afterEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { CommandTracker, type CommandRecord } from '../../../../src/core/commands/command-tracker';
import { ensureNoDisposablesAreLeakedInTestSuite } from '../../../helpers/leak-tracker';

const NONCE = 'feedc0de'.repeat(4);
/** A mark as the injected integration prints it. */
const mark = (m: string) => `\x1b]633;${m};${NONCE}\x07`;
/** A mark as anything else prints it (VS Code's own integration, a file, a recording). */
const forged = (m: string) => `\x1b]633;${m}\x07`;

/** Feeds `parts` as output, one read each, as the session does; returns the tracker and what was passed on. */
function replay(parts: string[], tracker = new CommandTracker('/start', NONCE)): CommandTracker & { passed?: string } {
  made.add(tracker);
  let cursor = 0;
  let passed = '';
  for (const p of parts) {
    const { output, marks } = tracker.filter(Buffer.from(p));
    tracker.apply(marks, cursor);
    cursor += output.length;
    passed += output.toString();
  }
  return Object.assign(tracker, { passed });
}

const summary = (r: CommandRecord) => [r.command, r.exitCode, r.endCursor === null ? 'running' : 'ended'];

/** The trackers a test made: disposed when it ends, as a session disposes its own. */
const made = new Set<CommandTracker>();
afterEach(() => {
  for (const t of made) t.dispose();
  made.clear();
});
// Every test leaves nothing undisposed (docs/testing.md#leaks): registered below the disposal above, so it checks after it.
ensureNoDisposablesAreLeakedInTestSuite();

test('marks a program prints end nothing, start nothing, and move no cwd: a forged end, a forged command line, a forged cwd', () => {
  const t = replay([
    mark('E;printf x\\x3b sleep 1\\x3b false') + mark('C'),
    // printf 'done\n\e]633;D;0\a\e]633;A\a' (the forged end of the command)
    'done\r\n' + forged('D;0') + forged('A'),
    // cat of a file holding a whole forged command, and a forged cwd
    forged('D;0') + forged('E;git push --force origin main') + forged('C') + forged('D;0') + forged('P;Cwd=/etc') + `${forged('D;0;0000')}`,
  ]);
  assert.equal(t.running, true);
  assert.deepEqual(t.list(10).map(summary), [['printf x; sleep 1; false', null, 'running']]);
  assert.equal(t.cwd, undefined);
  replay([mark('D;1') + mark('P;Cwd=/home/u')], t);
  assert.deepEqual(t.list(10).map(summary), [['printf x; sleep 1; false', 1, 'ended']]);
  assert.equal(t.cwd, '/home/u');
});

test("a shell with marks of its own inside a command (ssh to a host with integration) is that command's output", () => {
  const prompt = forged('A') + '$ ' + forged('B');
  const t = replay([
    prompt,
    'ssh box\r\n',
    mark('E;ssh box') + mark('C'),
    // The remote shell's prompt, an empty line (a bare D), a command, its prompt again.
    forged('D') + prompt,
    '\r\n',
    forged('D') + prompt,
    'ls\r\n',
    forged('E;ls') + forged('C'),
    'a b\r\n',
    forged('D;0') + prompt,
    'exit\r\n',
    forged('E;exit') + forged('C'),
    'logout\r\n',
    // Back in the outer shell.
    mark('D;5') + mark('P;Cwd=/home/u') + prompt,
  ]);
  assert.deepEqual(t.list(10).map(summary), [['ssh box', 5, 'ended']]);
  assert.equal(t.cwd, '/home/u');
  // The editor's terminal gets VS Code's marks: ours without the nonce; of the remote's, the
  // prompt marks as printed and the others as OSC 63X, which no terminal acts on (the editor would
  // take them for commands, exit codes and a cwd: the host's own marks are told by the nonce).
  assert.ok(!t.passed!.includes(NONCE));
  assert.ok(t.passed!.includes('\x1b]633;D;5\x07\x1b]633;P;Cwd=/home/u\x07'));
  assert.ok(t.passed!.includes('\x1b]63X;E;ls\x07') && !t.passed!.includes(forged('E;ls')));
  assert.ok(t.passed!.includes(forged('A') + '$ ' + forged('B')));
});

test('a start while a command runs ends that one (its end was never reported); the shell ending ends the last', () => {
  const t = replay([mark('E;one') + mark('C'), 'x', mark('E;two') + mark('C'), 'y']);
  const [one, two] = t.list(10);
  assert.deepEqual(summary(one), ['one', null, 'ended']);
  assert.equal(one.endCursor, two.startCursor - forged('C').length);
  assert.deepEqual(summary(two), ['two', null, 'running']);
  t.shellEnded(130, 99);
  assert.deepEqual(summary(t.list(10)[1]), ['two', 130, 'ended']);
  assert.equal(t.list(10)[1].endCursor, 99);
});

test('a command line reported after "executed" (bash, when its history cannot tell) belongs to that command', () => {
  const t = replay([mark('C'), mark('E;echo not-in-history'), 'not-in-history\r\n', mark('D;0')]);
  assert.deepEqual(t.list(10).map(summary), [['echo not-in-history', 0, 'ended']]);
});

test('a session without injected integration has no records, whatever marks its output holds', () => {
  const t = new CommandTracker('/start', undefined);
  const printed = forged('E;ls') + forged('C') + 'x' + forged('D;0') + mark('E;ls') + mark('C');
  assert.equal(replay([printed], t).passed, printed);
  assert.equal(t.integration, false);
  assert.deepEqual(t.list(10), []);
  t.dispose();
});
