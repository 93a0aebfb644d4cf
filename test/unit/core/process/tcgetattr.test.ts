// The terminal's mode read synchronously on the PTY's master side (src/core/process/tcgetattr.ts,
// terminal-mode.ts lineModeOfFd), as Session.write needs it the moment a write reaches the PTY:
// real programs in real ptys set the modes with stty; the answer agrees with stty's own reading.
// Also the node-pty shim it relies on (its private `_fd`): this fails if node-pty's shape changes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as pty from 'node-pty';
import { canReadLocalFlags } from '../../../../src/core/process/tcgetattr';
import { lineModeOf, lineModeOfFd, type LineMode } from '../../../../src/core/process/terminal-mode';
import { masterFdOf } from '../../../../src/core/session/input/pty-input';
import { ensureNoDisposablesAreLeakedBySuite } from '../../../helpers/leak-tracker';
import { ptysKilledAfterSuite } from '../../../helpers/raw-pty';

const linux = process.platform === 'linux';
const open = ptysKilledAfterSuite();
// Once the shared host is closed, nothing the suite made is left (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedBySuite();

function spawn(script: string): pty.IPty {
  const p = pty.spawn('/bin/sh', ['-c', script], { name: 'xterm-256color', cols: 80, rows: 24, env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } });
  p.onData(() => {});
  open.push(p);
  return p;
}

/** Reads until the mode is `want` (stty takes a moment to run); fails with the last reading. */
async function becomes(p: pty.IPty, want: LineMode, what: string): Promise<void> {
  const fd = masterFdOf(p);
  assert.equal(typeof fd, 'number', "node-pty keeps the master's descriptor as _fd");
  let last: LineMode | null = null;
  for (let i = 0; i < 250; i++) {
    last = lineModeOfFd(fd);
    assert.ok(!(last instanceof Promise), 'read synchronously');
    if (last && last.echo === want.echo && last.canonical === want.canonical) {
      // stty on the program's side says the same.
      assert.deepEqual(await lineModeOf((p as unknown as { ptsName: string }).ptsName), want);
      return;
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.fail(`${what}: expected ${JSON.stringify(want)}, last read ${JSON.stringify(last)}`);
}

test(
  "echo and canonical mode of the program's side, read on the master side at once",
  { skip: !linux && 'Linux answers for the slave on the master side' },
  async () => {
    assert.equal(canReadLocalFlags(), true, 'koffi loads and binds tcgetattr');
    await becomes(spawn('cat'), { echo: true, canonical: true }, 'a plain terminal');
    await becomes(spawn('stty -echo; cat'), { echo: false, canonical: true }, 'a password prompt');
    await becomes(spawn('stty -echo -icanon; cat'), { echo: false, canonical: false }, 'a program that reads keys');
  },
);

test('nothing to read: null, not an error', { skip: !linux && 'Linux only' }, () => {
  assert.equal(lineModeOfFd(undefined), null);
  // Not a terminal (ENOTTY), and not a descriptor at all (EBADF).
  const fd = fs.openSync('/dev/null', 'r');
  try {
    assert.equal(lineModeOfFd(fd), null);
  } finally {
    fs.closeSync(fd);
  }
  assert.equal(lineModeOfFd(-1), null);
});
