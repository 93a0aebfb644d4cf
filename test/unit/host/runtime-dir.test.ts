import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ensureRuntimeDir, runtimeDirPath, RuntimeDirWriteError, UnsafeRuntimeDirError } from '../../../src/host/runtime-dir';
import { Host } from '../../../src/host/host';
import { readLiveRecords } from '../../../src/host/discovery';
import { ensureNoDisposablesAreLeakedInTestSuite } from '../../helpers/leak-tracker';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

// docs/hosts.md#runtime-directory: where the runtime directory is, its mode, and the directories a host refuses.

const base = fs.mkdtempSync(path.join(os.tmpdir(), 'spt-rtdir-'));
after(() => fs.rmSync(base, { recursive: true, force: true }));
// Every test leaves nothing undisposed (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedInTestSuite();

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
    assert.throws(
      () => ensureRuntimeDir(dir),
      (e: Error) => e instanceof UnsafeRuntimeDirError && /writable by group or others/.test(e.message) && e.message.includes('chmod 700'),
    );
    await assert.rejects(Host.start({ kind: 'serve', runtimeDir: dir }), UnsafeRuntimeDirError);
    assert.deepEqual(fs.readdirSync(dir), [], 'nothing was written there');
    assert.equal(fs.statSync(dir).mode & 0o777, mode, 'refused, never chmod-ed');
  }
});

test('a directory owned by another user is refused and left alone', { skip: process.getuid!() !== 0 && 'needs root to chown' }, async () => {
  const dir = path.join(base, 'foreign');
  fs.mkdirSync(dir, { mode: 0o700 });
  fs.chownSync(dir, 65534, 65534);
  assert.throws(
    () => ensureRuntimeDir(dir),
    (e: Error) => e instanceof UnsafeRuntimeDirError && /owned by uid 65534/.test(e.message),
  );
  await assert.rejects(Host.start({ kind: 'serve', runtimeDir: dir }), UnsafeRuntimeDirError);
  const st = fs.statSync(dir);
  assert.deepEqual([st.uid, st.mode & 0o777, fs.readdirSync(dir)], [65534, 0o700, []], 'left as it was: not taken over, nothing written');
});

test('a symlink in place of the directory is refused', () => {
  const target = path.join(base, 'target');
  fs.mkdirSync(target, { mode: 0o700 });
  const link = path.join(base, 'link');
  fs.symlinkSync(target, link);
  assert.throws(
    () => ensureRuntimeDir(link),
    (e: Error) => e instanceof UnsafeRuntimeDirError && /is a symbolic link; refusing to follow it/.test(e.message),
  );
  assert.deepEqual(fs.readdirSync(target), [], 'nothing was written through the link');
});

test('a runtime directory that cannot be created is refused in one line that says what to do', () => {
  const file = path.join(base, 'a-file');
  fs.writeFileSync(file, '');
  assert.throws(
    () => ensureRuntimeDir(path.join(file, 'shared-pty')),
    (e: Error) =>
      e instanceof RuntimeDirWriteError && /^Cannot write in the runtime directory .*a-file\/shared-pty \(ENOTDIR\): .*set SHARED_PTY_DIR/.test(e.message),
  );
});

test('a runtime directory that is a file, or under a file system that makes no directories (/proc), is refused in one line, never a hang', async () => {
  const file = path.join(base, 'a-plain-file');
  fs.writeFileSync(file, '');
  assert.throws(
    () => ensureRuntimeDir(file),
    (e: Error) => e instanceof RuntimeDirWriteError && /\(EEXIST\): a file stands where a directory should be/.test(e.message),
  );
  if (!fs.existsSync('/proc/self')) return;
  // Node's own recursive mkdir loops forever there; the CLI would hang before saying anything.
  const cli = path.join(__dirname, '..', '..', '..', 'bin', 'shared-pty.js');
  for (const command of ['serve', 'open']) {
    const r = spawnSync(process.execPath, [cli, command], {
      env: { ...process.env, SHARED_PTY_DIR: '/proc/shared-pty-none/run' },
      encoding: 'utf8',
      timeout: 20000,
    });
    assert.equal(r.status, 1, `${command}: ${r.error?.message ?? r.stderr}`);
    assert.match(
      r.stderr,
      /^shared-pty: Cannot write in the runtime directory \/proc\/shared-pty-none\/run \(ENOENT\): no directory can be made there .*set SHARED_PTY_DIR/,
    );
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  }
  // An agent's open_session is told the same, as a server error, not an internal one (a checking audit).
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [cli, 'mcp'],
    env: { ...process.env, SHARED_PTY_DIR: '/proc/shared-pty-none/run' } as Record<string, string>,
    stderr: 'pipe',
  });
  const agent = new Client({ name: 'runtime-dir-test', version: '0.0.0' });
  await agent.connect(transport);
  try {
    const opened = (await agent.callTool({ name: 'open_session', arguments: { command: 'cat' } })) as { isError?: boolean; content: Array<{ text?: string }> };
    assert.equal(opened.isError, true);
    assert.match(
      opened.content[0].text ?? '',
      /^Error -32000: Cannot write in the runtime directory \/proc\/shared-pty-none\/run \(ENOENT\): no directory can be made there/,
    );
  } finally {
    await agent.close();
  }
});

/** Mounts a small tmpfs at `dir` (root with mount rights only); false when that is not possible here. */
function mountTmpfs(dir: string, options: string): boolean {
  fs.mkdirSync(dir, { recursive: true });
  return spawnSync('mount', ['-t', 'tmpfs', '-o', options, 'tmpfs', dir], { encoding: 'utf8' }).status === 0;
}
const canMount = (() => {
  if (process.getuid!() !== 0 || process.platform !== 'linux') return false;
  const probe = path.join(base, 'mount-probe');
  const ok = mountTmpfs(probe, 'size=64k');
  if (ok) spawnSync('umount', [probe]);
  return ok;
})();

test(
  'on a full disk or a read-only one, a host refuses to start, in one line, and leaves nothing behind',
  { skip: !canMount && 'needs root and mount (tmpfs)' },
  async () => {
    const full = path.join(base, 'full');
    const ro = path.join(base, 'ro');
    assert.ok(mountTmpfs(full, 'size=64k,mode=0700'));
    try {
      spawnSync('sh', ['-c', `cat /dev/zero > ${full}/filler`]); // ENOSPC ends it: the disk is full
      await assert.rejects(
        Host.start({ kind: 'serve', runtimeDir: full }),
        (e: Error) => e instanceof RuntimeDirWriteError && /\(ENOSPC\): the disk is full/.test(e.message),
      );
      assert.deepEqual(fs.readdirSync(full), ['filler'], 'no half-written record or socket folder is left');
      const cli = path.join(__dirname, '..', '..', '..', 'bin', 'shared-pty.js');
      const r = spawnSync(process.execPath, [cli, 'serve', '--no-http', '--cmd', 'true'], {
        env: { ...process.env, SHARED_PTY_DIR: full },
        encoding: 'utf8',
        timeout: 20000,
      });
      assert.equal(r.status, 1);
      assert.match(r.stderr, /^shared-pty: Cannot write in the runtime directory .* \(ENOSPC\): the disk is full; free some space or set SHARED_PTY_DIR .*\n$/);
    } finally {
      spawnSync('umount', [full]);
    }
    assert.ok(mountTmpfs(ro, 'size=64k,mode=0700'));
    try {
      spawnSync('mount', ['-o', 'remount,ro', ro]);
      await assert.rejects(
        Host.start({ kind: 'serve', runtimeDir: ro }),
        (e: Error) => e instanceof RuntimeDirWriteError && /\(EROFS\): the disk is read-only/.test(e.message),
      );
      await assert.rejects(
        Host.start({ kind: 'serve', runtimeDir: path.join(ro, 'sub') }),
        (e: Error) => e instanceof RuntimeDirWriteError && /\(EROFS\)/.test(e.message),
      );
    } finally {
      spawnSync('umount', [ro]);
    }
  },
);

test('the CLI reports an unsafe runtime directory in one line and exits non-zero', () => {
  const dir = path.join(base, 'cli-open');
  fs.mkdirSync(dir);
  fs.chmodSync(dir, 0o777);
  const cli = path.join(__dirname, '..', '..', '..', 'bin', 'shared-pty.js');
  const r = spawnSync(process.execPath, [cli, 'serve', '--no-http', '--cmd', 'true'], {
    env: { ...process.env, SHARED_PTY_DIR: dir },
    encoding: 'utf8',
    timeout: 20000,
  });
  assert.notEqual(r.status, 0);
  assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  assert.match(r.stderr, /writable by group or others/);
});

test('readers refuse an unsafe runtime directory too: a planted record is never followed', () => {
  const dir = path.join(base, 'cli-planted');
  fs.mkdirSync(dir);
  fs.chmodSync(dir, 0o770);
  // A record that looks alive (our own pid) and points at a socket someone else controls.
  const planted = {
    hostId: 'hevil1',
    pid: process.pid,
    kind: 'serve',
    version: '0.0.0',
    startedAt: new Date().toISOString(),
    control: `unix:${dir}/hevil1/control.sock`,
    http: null,
    sessions: [{ id: 'abcdef', name: 'bash-1', address: `unix:${dir}/hevil1/abcdef.sock` }],
  };
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

test('a host writes only in a directory of mode 700: one open to group or others for reading is refused to it, in one line; readers may still list', async () => {
  for (const mode of [0o750, 0o705, 0o710]) {
    const dir = path.join(base, `readable-${mode.toString(8)}`);
    fs.mkdirSync(dir);
    fs.chmodSync(dir, mode);
    assert.throws(
      () => ensureRuntimeDir(dir),
      (e: Error) =>
        e instanceof UnsafeRuntimeDirError &&
        /is open to group or others \(mode \d+\); a host writes only in a directory of mode 700: run chmod 700/.test(e.message),
    );
    await assert.rejects(Host.start({ kind: 'serve', runtimeDir: dir }), UnsafeRuntimeDirError);
    assert.deepEqual(fs.readdirSync(dir), [], 'nothing was written there');
    assert.deepEqual(readLiveRecords(dir), [], 'nobody else can write there: reading is safe');
  }
});

test('a runtime directory too long for a Unix socket path is refused in one line; no socket is made outside it', async () => {
  // A socket path longer than the kernel takes used to be bound cut short, beside the runtime
  // directory; the host then failed on a bare ENOENT and stayed up, listening there.
  const parent = path.join(base, 'long');
  fs.mkdirSync(parent, { mode: 0o700 });
  const dir = path.join(parent, 'd'.repeat(Math.max(1, 110 - parent.length)));
  await assert.rejects(
    Host.start({ kind: 'serve', runtimeDir: dir }),
    (e: Error) => /longer than a Unix socket allows/.test(e.message) && !e.message.includes('\n'),
  );
  assert.deepEqual(fs.readdirSync(parent), [path.basename(dir)], 'nothing beside the runtime directory');
  assert.deepEqual(fs.readdirSync(dir), [], 'and nothing left in it');
});
