// How much of a program's output waits unread in the kernel (src/core/process/unread-output.ts),
// which the input watch asks before it scans /proc: real programs in real ptys. A program that
// floods while the host does not read has output queued; one that waits for input has none once
// its output is read.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as pty from 'node-pty';
import { unreadOutputOf } from '../../../../src/core/process/unread-output';
import { masterFdOf } from '../../../../src/core/session/input/pty-input';
import { until } from '../../../helpers/host';
import { ensureNoDisposablesAreLeakedInTestSuite } from '../../../helpers/leak-tracker';
import { ptysKilledAfterSuite } from '../../../helpers/raw-pty';

const linux = process.platform === 'linux';
const open = ptysKilledAfterSuite();
// Every test leaves nothing undisposed (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedInTestSuite();

function spawn(script: string, onData: (d: string) => void = () => {}): pty.IPty {
  const p = pty.spawn('/bin/sh', ['-c', script], { name: 'xterm-256color', cols: 80, rows: 24, env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } });
  p.onData(onData);
  open.push(p);
  return p;
}

test('a flooding program has output queued while the host does not read', { skip: !linux && 'needs Linux', timeout: 30_000 }, async () => {
  let seen = 0;
  const p = spawn('exec yes', (d) => (seen += d.length));
  const fd = masterFdOf(p);
  await until(() => seen > 0, 10_000, 'the first output');
  // The event loop does not run while this loop spins: nothing reads, so `yes` fills the queue.
  let unread: number | null = 0;
  for (let i = 0; i < 1_000_000 && !(unread !== null && unread > 0); i++) unread = unreadOutputOf(fd);
  assert.ok(unread !== null && unread > 0, `output queued unread (got ${unread})`);
});

test('a program waiting for input has nothing queued once its output is read', { skip: !linux && 'needs Linux', timeout: 30_000 }, async () => {
  let text = '';
  const p = spawn('printf ready; exec cat', (d) => (text += d));
  const fd = masterFdOf(p);
  await until(() => text.includes('ready'), 10_000, 'the output, read');
  assert.equal(unreadOutputOf(fd), 0);
});

test('no descriptor, or a closed one: cannot tell', { skip: !linux && 'needs Linux' }, () => {
  assert.equal(unreadOutputOf(undefined), null);
  assert.equal(unreadOutputOf(-1), null);
});
