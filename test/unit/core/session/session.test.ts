import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startHost, until } from '../../../helpers/host';
import { ensureNoDisposablesAreLeakedBySuite } from '../../../helpers/leak-tracker';
import { descriptorsOfSleeping } from '../../../helpers/descriptors';

// Closing a session ends its program as a terminal window that closes does: SIGHUP, and the
// terminal hangs up. A program that acts on SIGHUP only once its read of the terminal returns (as
// bash does when the signal comes while it starts) must end as hung up, not be killed later.

const hostP = startHost();
after(async () => (await hostP).close());
// Once the shared host is closed, nothing the suite made is left (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedBySuite();

/** Output since the start, as text. */
function outputOf(s: { ring: { read(since: number, maxBytes: number): { text: string } } }): string {
  return s.ring.read(0, 1 << 20).text;
}

/**
 * A program that acts on SIGHUP only once its read of the terminal returns. Like bash between its
 * own handler and readline's: the signal only sets a flag, looked at when the blocking read of the
 * terminal returns (Python retries a read the handler interrupted).
 */
const ACTS_ON_HANGUP_AFTER_READ = [
  'import os, signal',
  'got = []',
  'signal.signal(signal.SIGHUP, lambda *_: got.append(1))',
  // One write: print() wrote 'ready' and its newline apart, and a hang-up between the two made
  // the second fail (EIO), an uncaught error (exit 1) on a loaded machine.
  "os.write(1, b'ready\\n')",
  'try:',
  '    os.read(0, 1)',
  'except OSError:',
  '    pass',
  // Python runs its handler at the interpreter's next check (a call, a loop's jump), not inside
  // the read that the hang-up ended: let it run before looking at the flag, as bash's C handler has.
  'for _ in range(2):',
  '    (lambda: None)()',
  'if got:',
  '    signal.signal(signal.SIGHUP, signal.SIG_DFL)',
  '    os.kill(os.getpid(), signal.SIGHUP)',
].join('\n');

test('a closed session hangs up its terminal: a program that acts on SIGHUP when its read returns ends as hung up (129)', async () => {
  const { host } = await hostP;
  const s = await host.createSession({ command: 'python3', args: ['-c', ACTS_ON_HANGUP_AFTER_READ], cols: 80, rows: 24 });
  await until(() => outputOf(s).includes('ready'), 10_000, 'the program to wait for input');
  host.registry.remove(s.id);
  const end = await s.exited;
  assert.deepEqual(end, { exitCode: 129, signal: 'SIGHUP' }, 'hung up, not killed after the grace (137)');
});

test("a session started later holds no copy of an earlier one's terminal: the earlier one still hangs up when closed, and no program can reach it past the host", async () => {
  const { host } = await hostP;
  const first = await host.createSession({ command: 'python3', args: ['-c', ACTS_ON_HANGUP_AFTER_READ], cols: 80, rows: 24 });
  await until(() => outputOf(first).includes('ready'), 10_000, 'the program to wait for input');
  const later = await host.createSession({ command: 'sleep', args: ['60'], cols: 80, rows: 24 });
  try {
    // The later program's descriptors: its own terminal, and no master of any terminal.
    const held = (await descriptorsOfSleeping(later.pid)).map((line) => line.slice(line.indexOf(' ') + 1));
    assert.ok(!held.some((target) => target === '/dev/ptmx' || target.endsWith('/ptmx')), `a later program holds a terminal master: ${held.join(' ')}`);
    host.registry.remove(first.id);
    // With a copy of its master alive in the later program, closing it hung nothing up: the
    // program slept on until the grace's SIGKILL (137).
    assert.deepEqual(await first.exited, { exitCode: 129, signal: 'SIGHUP' }, 'hung up, not killed after the grace (137)');
  } finally {
    host.registry.remove(later.id);
  }
});

test('output written just before the close is kept, even while a subscriber holds the terminal', async () => {
  const { host } = await hostP;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spt-session-'));
  const marker = path.join(dir, 'written');
  try {
    // Prints a block and an end mark, says so in a file, and waits; nothing reads the terminal meanwhile.
    const program = [
      'import os, sys',
      "sys.stdout.write('x' * 3000 + ' END-OF-OUTPUT')",
      'sys.stdout.flush()',
      `open(${JSON.stringify(marker)}, 'w').close()`,
      'os.read(0, 1)',
    ].join('\n');
    const s = await host.createSession({ command: 'python3', args: ['-c', program], cols: 80, rows: 24 });
    // A flow-controlled subscriber whose window stays full: the session stops reading the PTY.
    const held = s.addFlowHolder({ updateHold: () => true });
    await until(() => fs.existsSync(marker), 10_000, 'the program to write its output');
    host.registry.remove(s.id);
    await s.exited;
    held.dispose();
    assert.ok(outputOf(s).includes('END-OF-OUTPUT'), 'the last output reached the session');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
