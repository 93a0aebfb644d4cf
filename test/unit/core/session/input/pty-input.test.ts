// Input reaches the program whole and in order: a key is written at once when nothing waits, a
// paste larger than the kernel takes at once goes partly through node-pty's queue, and keys typed
// meanwhile must come after it, never in the middle.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Session } from '../../../../../src/core/session/session';
import { until } from '../../../../helpers/host';
import { ensureNoDisposablesAreLeakedBySuite } from '../../../../helpers/leak-tracker';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spt-pty-input-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));
// Once the shared host is closed, nothing the suite made is left (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedBySuite();

const from = { origin: 'script', transport: 'socket' } as const;

/**
 * A session whose program copies exactly `bytes` bytes of raw input (no echo, no line editing) to
 * `file`; `slow`: one byte a read, so the kernel keeps making a little room while a paste waits.
 */
function recorder(file: string, bytes: number, slow = false): Session {
  return new Session({
    id: 'pty-input',
    name: 'pty-input',
    command: 'sh',
    args: ['-c', `stty raw -echo; printf ready; ${slow ? `dd bs=1 count=${bytes} of='${file}' 2>/dev/null` : `head -c ${bytes} > '${file}'`}; printf copied`],
    cwd: dir,
    cols: 80,
    rows: 24,
    origin: 'script',
  });
}

test('a paste bigger than the kernel takes at once, then keys typed while it goes in, arrive whole and in that order', async () => {
  const file = path.join(dir, 'paste.txt');
  const paste = Array.from({ length: 3000 }, (_, i) => `line ${i} ${'x'.repeat(40)}\n`).join(''); // ~150 KB
  const keys = ['a', 'b', 'c', 'é', '\r', 'd', 'e', 'f', 'g', 'h'];
  const expected = paste + keys.join('');
  const total = Buffer.byteLength(expected);
  const session = recorder(file, total, true);
  try {
    let out = '';
    session.onOutput(({ data }) => (out += data.toString('latin1')));
    await until(() => out.includes('ready'), 5000, 'the terminal in raw mode');
    assert.equal(session.write(paste, from), Buffer.byteLength(paste));
    // Typed while the program still reads the paste: the kernel has room now and then, the paste's rest waits its turn.
    for (const k of keys) {
      session.write(k, from);
      await new Promise((r) => setTimeout(r, 15));
    }
    await until(() => out.includes('copied'), 20000, 'the program to copy all of its input');
    assert.equal(fs.readFileSync(file, 'utf8'), expected);
  } finally {
    session.dispose();
  }
});

test('keys written one at a time, each at once, arrive in order', async () => {
  const file = path.join(dir, 'keys.txt');
  const keys = Array.from({ length: 200 }, (_, i) => String.fromCharCode(97 + (i % 26)));
  const session = recorder(file, keys.length);
  try {
    let out = '';
    session.onOutput(({ data }) => (out += data.toString('latin1')));
    await until(() => out.includes('ready'), 5000, 'the terminal in raw mode');
    for (const k of keys) session.write(k, from);
    await until(() => out.includes('copied'), 10000, 'the program to copy its input');
    assert.equal(fs.readFileSync(file, 'utf8'), keys.join(''));
  } finally {
    session.dispose();
  }
});
