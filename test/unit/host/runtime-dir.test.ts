import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ensureRuntimeDir, runtimeDirPath, UnsafeRuntimeDirError } from '../../../src/host/runtime-dir';
import { Host } from '../../../src/host/host';

// CONTRACT §2: where the runtime directory is, its mode, and the directories a host refuses.

const base = fs.mkdtempSync(path.join(os.tmpdir(), 'spt-rtdir-'));
after(() => fs.rmSync(base, { recursive: true, force: true }));

test('the runtime directory: $SHARED_PTY_DIR, else $XDG_RUNTIME_DIR/shared-pty, else <tmp>/shared-pty-<uid>', () => {
  assert.equal(runtimeDirPath({ SHARED_PTY_DIR: '/x/y', XDG_RUNTIME_DIR: '/run/user/1' }), '/x/y');
  assert.equal(runtimeDirPath({ XDG_RUNTIME_DIR: '/run/user/1' }), '/run/user/1/shared-pty');
  assert.equal(runtimeDirPath({}), path.join(os.tmpdir(), `shared-pty-${process.getuid!()}`));
});

test('a new runtime directory is created with mode 0700', () => {
  const dir = path.join(base, 'fresh', 'shared-pty');
  ensureRuntimeDir(dir);
  assert.equal(fs.statSync(dir).mode & 0o777, 0o700);
});

test('a directory writable by group or others is refused with a clear error; a host does not start there', async () => {
  for (const mode of [0o777, 0o770, 0o702, 0o720]) {
    const dir = path.join(base, `open-${mode.toString(8)}`);
    fs.mkdirSync(dir);
    fs.chmodSync(dir, mode);
    assert.throws(() => ensureRuntimeDir(dir), (e: Error) => e instanceof UnsafeRuntimeDirError && /writable by group or others/.test(e.message) && e.message.includes('chmod 700'));
    await assert.rejects(Host.start({ kind: 'serve', runtimeDir: dir }), UnsafeRuntimeDirError);
    assert.deepEqual(fs.readdirSync(dir), [], 'nothing was written there');
  }
});

test('a directory owned by another user is refused', { skip: process.getuid!() !== 0 && 'needs root to chown' }, () => {
  const dir = path.join(base, 'foreign');
  fs.mkdirSync(dir, { mode: 0o700 });
  fs.chownSync(dir, 65534, 65534);
  assert.throws(() => ensureRuntimeDir(dir), (e: Error) => e instanceof UnsafeRuntimeDirError && /owned by uid 65534/.test(e.message));
});

test('a symlink in place of the directory is refused', () => {
  const target = path.join(base, 'target');
  fs.mkdirSync(target, { mode: 0o700 });
  const link = path.join(base, 'link');
  fs.symlinkSync(target, link);
  assert.throws(() => ensureRuntimeDir(link), UnsafeRuntimeDirError);
});

test('the CLI reports an unsafe runtime directory in one line and exits non-zero', () => {
  const dir = path.join(base, 'cli-open');
  fs.mkdirSync(dir);
  fs.chmodSync(dir, 0o777);
  const cli = path.join(__dirname, '..', '..', '..', 'bin', 'shared-pty.js');
  const r = spawnSync(process.execPath, [cli, 'serve', '--no-http', '--cmd', 'true'], { env: { ...process.env, SHARED_PTY_DIR: dir }, encoding: 'utf8', timeout: 20000 });
  assert.notEqual(r.status, 0);
  assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  assert.match(r.stderr, /writable by group or others/);
});

test('readers refuse an unsafe runtime directory too: a planted record is never followed', () => {
  const dir = path.join(base, 'cli-planted');
  fs.mkdirSync(dir);
  fs.chmodSync(dir, 0o770);
  // A record that looks alive (our own pid) and points at a socket someone else controls.
  const planted = { hostId: 'hevil1', pid: process.pid, kind: 'serve', version: '0.0.0', startedAt: new Date().toISOString(), control: `unix:${dir}/hevil1/control.sock`, http: null, sessions: [{ id: 'abcdef', name: 'bash-1', address: `unix:${dir}/hevil1/abcdef.sock` }] };
  fs.writeFileSync(path.join(dir, 'hevil1.json'), JSON.stringify(planted));
  const cli = path.join(__dirname, '..', '..', '..', 'bin', 'shared-pty.js');
  for (const args of [['list'], ['list', '--json'], ['read', 'bash-1'], ['send', 'bash-1', 'id']]) {
    const r = spawnSync(process.execPath, [cli, ...args], { env: { ...process.env, SHARED_PTY_DIR: dir }, encoding: 'utf8', timeout: 20000 });
    assert.notEqual(r.status, 0, `${args.join(' ')}: ${r.stdout}`);
    assert.equal(r.stdout, '', `${args.join(' ')} printed nothing from the planted record`);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.match(r.stderr, /writable by group or others/);
  }
});
