// What a session's foreground job waits for (docs/protocol.md#secret-input, docs/protocol.md#events-ptyevents-and-ptywaitevent): a prompt is input, a password
// prompt is a secret, a running command is busy. Real programs in a real pty (node-pty, bash, cat,
// sleep); every wait polls up to a bound, nothing asserts a time.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as pty from 'node-pty';
import { probeInputWait, type InputWait } from '../../../../src/core/process/input-wait';
import { isSecretMode, lineModeOf, parseSttySaved } from '../../../../src/core/process/terminal-mode';
import { ensureNoDisposablesAreLeakedBySuite } from '../../../helpers/leak-tracker';
import { ptysKilledAfterSuite } from '../../../helpers/raw-pty';

const linux = process.platform === 'linux';
const open = ptysKilledAfterSuite();
// Once the shared host is closed, nothing the suite made is left (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedBySuite();

function bash(): pty.IPty {
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', TERM: 'xterm-256color', HISTFILE: '/dev/null', PS1: '$ ' };
  const p = pty.spawn('bash', ['--norc', '--noprofile', '-i'], { name: 'xterm-256color', cols: 80, rows: 24, env });
  p.onData(() => {});
  open.push(p);
  return p;
}

/**
 * Probes until the answer is `want` (the program takes a moment to get there); fails with the last
 * one. `again`, if given, is done before the probes and then every second while the answer is not
 * there yet.
 */
async function becomes(p: pty.IPty, want: InputWait, what: string, again?: () => void): Promise<void> {
  const tty = (p as unknown as { ptsName: string }).ptsName;
  let last: InputWait = 'unknown';
  for (let i = 0; i < 250; i++) {
    if (again && i % 50 === 0) again();
    last = await probeInputWait(p.pid, async () => {
      const mode = await lineModeOf(tty);
      return mode !== null && isSecretMode(mode);
    });
    if (last === want) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.fail(`${what}: expected ${want}, last probe said ${last}`);
}

test("stty -g's local flags: echo and canonical mode", () => {
  // GNU stty -g at a readline prompt (-icanon -echo), during `read -s` (icanon -echo), and for `cat` (icanon echo).
  assert.deepEqual(parseSttySaved('500:5:bf:8a31:3:1c:7f:15:4:0:1:0:11:13:1a:0:12:f:17:16:0:0:0:0:0:0:0:0:0:0:0:0:0:0:0:0\n'), {
    echo: false,
    canonical: false,
  });
  assert.deepEqual(parseSttySaved('500:5:bf:8a13:3:1c:7f:15:4:0:1:0:11:13:1a:0:12:f:17:16:0:0:0'), { echo: false, canonical: true });
  assert.deepEqual(parseSttySaved('500:5:bf:8a3b:3:1c'), { echo: true, canonical: true });
  assert.equal(parseSttySaved('stty: /dev/pts/9: No such file or directory'), null);
  assert.equal(parseSttySaved(''), null);
});

test('a prompt is input, `read -s` a secret, a running command busy, `cat` input again', { skip: !linux && 'needs Linux /proc', timeout: 30_000 }, async () => {
  const p = bash();
  await becomes(p, 'input_wait', "bash's prompt (readline turns echo off, but reads keys, not lines)");
  p.write('read -s secret\r');
  await becomes(p, 'secret_input', 'read -s');
  p.write('x\r');
  await becomes(p, 'input_wait', 'the prompt after it');
  p.write('sleep 30\r');
  await becomes(p, 'busy', 'sleep');
  // Again until it lands: a Ctrl+C that comes while bash is still handing the terminal to sleep
  // reaches bash, which ignores it while it waits for a command, and sleep runs on.
  await becomes(p, 'input_wait', 'the prompt after Ctrl+C', () => p.write('\x03'));
  p.write('cat\r');
  await becomes(p, 'input_wait', 'cat reading lines it echoes');
  p.write('\x04');
});

test('the mode of a terminal that is gone cannot be read: null, not an error', async () => {
  assert.equal(await lineModeOf('/dev/pts/no-such-terminal'), null);
});
