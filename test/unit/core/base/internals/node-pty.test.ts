// The private parts of node-pty the session relies on (src/core/base/internals/node-pty.ts), read
// from a real PTY: a node-pty that renames or reshapes one fails here, not as lost output later.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { destroyPty, onRawData, ptyMasterFd, ptyReadStream, ptySlaveName, ptyWriteQueue } from '../../../../../src/core/base/internals/node-pty';
import { loadNodePty } from '../../../../../src/core/session/pty-loader';
import { until } from '../../../../helpers/host';
import { ensureNoDisposablesAreLeakedInTestSuite } from '../../../../helpers/leak-tracker';

function spawn() {
  return loadNodePty().spawn('sh', ['-c', 'read line'], {
    name: 'xterm-256color',
    cols: 80,
    rows: 24,
    cwd: process.cwd(),
    env: { PATH: process.env.PATH ?? '' },
    encoding: null,
  });
}

// Every test leaves nothing undisposed (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedInTestSuite();

test('node-pty keeps its read stream, master descriptor, write queue and slave name where the session reads them', async () => {
  const pty = spawn();
  const exited = new Promise<void>((r) => pty.onExit(() => r()));
  try {
    const stream = ptyReadStream(pty);
    assert.ok(stream, '_socket: the read stream the exit drains take over');
    assert.equal(typeof stream.readableLength, 'number');
    const fd = ptyMasterFd(pty);
    assert.equal(typeof fd, 'number', '_fd: the master descriptor');
    assert.ok(fs.fstatSync(fd!).isCharacterDevice(), 'the master descriptor is the PTY');
    assert.ok(Array.isArray(ptyWriteQueue(pty)), '_writeStream._writeQueue: the writes node-pty holds');
    const slave = ptySlaveName(pty);
    assert.match(slave ?? '', /^\/dev\/pts\/\d+$/, 'ptsName: the slave device');
  } finally {
    pty.kill('SIGKILL');
    await exited;
  }
});

test('node-pty has a destroy that closes its read stream', async () => {
  const pty = spawn();
  const exited = new Promise<void>((r) => pty.onExit(() => r()));
  try {
    const stream = ptyReadStream(pty);
    assert.ok(stream);
    assert.equal(typeof (pty as unknown as { destroy?: unknown }).destroy, 'function', "destroy: node-pty's own teardown");
    destroyPty(pty);
    await until(() => stream.destroyed, 10_000, 'the read stream to be destroyed');
  } finally {
    pty.kill('SIGKILL');
    await exited;
  }
});

test('node-pty spawned with encoding null delivers Buffers', async () => {
  const pty = loadNodePty().spawn('sh', ['-c', 'printf raw; read line'], {
    name: 'xterm-256color',
    cols: 80,
    rows: 24,
    cwd: process.cwd(),
    env: { PATH: process.env.PATH ?? '' },
    encoding: null,
  });
  const exited = new Promise<void>((r) => pty.onExit(() => r()));
  const chunks: unknown[] = [];
  onRawData(pty, (d) => chunks.push(d));
  try {
    await until(() => chunks.length > 0, 10_000, 'output');
    assert.ok(
      chunks.every((c) => Buffer.isBuffer(c)),
      'raw bytes, not strings',
    );
  } finally {
    pty.kill('SIGKILL');
    await exited;
  }
});
