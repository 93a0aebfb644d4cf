import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { DAEMON_LOG, ensureDaemon, findDaemon } from '../../../src/host/daemon';
import { spawn } from 'node:child_process';
import { isAlive, readLiveRecords, type HostRecord } from '../../../src/host/discovery';
import { Host } from '../../../src/host/host';
import { VERSION } from '../../../src/version';
import { idleExitMs } from '../../../src/host/exit-empty';
import { tempRuntimeDir, until, connect, clientsClosed } from '../../helpers/host';
import type { SessionInfo } from '../../../src/core/methods/types';
import { ensureNoDisposablesAreLeakedInTestSuite } from '../../helpers/leak-tracker';

// The per-user host starts detached on first need; when it cannot start, the caller hears why
// (the last line it wrote to daemon.log), not a bare timeout.

const dir = tempRuntimeDir();
after(() => {
  const rec = findDaemon(dir);
  if (rec) process.kill(rec.pid, 'SIGTERM');
  fs.rmSync(dir, { recursive: true, force: true });
});
// Every test leaves nothing undisposed (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedInTestSuite(clientsClosed);

test('a host that cannot start is reported with its last words, and its log is 0600', async () => {
  const script = path.join(dir, 'broken-cli.js');
  fs.writeFileSync(script, "process.stderr.write('node-pty failed to load: boom\\n'); process.exit(3);\n");
  await assert.rejects(ensureDaemon({ cliPath: script, runtimeDir: dir }), /exited with 3: node-pty failed to load: boom/);
  assert.equal(fs.statSync(path.join(dir, DAEMON_LOG)).mode & 0o777, 0o600);
});

test('a daemon.log planted as a symlink is not read through: its target is never printed', async () => {
  const own = tempRuntimeDir();
  try {
    const target = path.join(own, 'elsewhere.txt');
    fs.writeFileSync(target, 'NOT-THE-LOG\n');
    fs.symlinkSync(target, path.join(own, DAEMON_LOG));
    // A host that leaves without a word and takes its start log with it (as one that found another running does).
    const script = path.join(own, 'quiet-cli.js');
    fs.writeFileSync(
      script,
      "require('fs').rmSync(require('path').join(process.env.SHARED_PTY_DIR, process.env.SHARED_PTY_START_LOG), { force: true }); process.exit(3);\n",
    );
    await assert.rejects(ensureDaemon({ cliPath: script, runtimeDir: own }), (e: Error) => {
      assert.match(e.message, /exited with 3/);
      assert.doesNotMatch(e.message, /NOT-THE-LOG/);
      return true;
    });
    assert.ok(fs.lstatSync(path.join(own, DAEMON_LOG)).isSymbolicLink(), 'left as it was');
  } finally {
    fs.rmSync(own, { recursive: true, force: true });
  }
});

test('the real host starts once, detached, and a second call finds it', async () => {
  const cli = path.join(__dirname, '..', '..', '..', 'bin', 'shared-pty.js');
  const first = await ensureDaemon({ cliPath: cli, runtimeDir: dir });
  assert.equal(first.kind, 'daemon');
  const second = await ensureDaemon({ cliPath: cli, runtimeDir: dir });
  assert.equal(second.hostId, first.hostId);
  process.kill(first.pid, 'SIGTERM');
  await until(() => !findDaemon(dir), 10000, 'the daemon to stop');
});

/** A process's environment, from /proc. */
function environOf(pid: number): Map<string, string> {
  const out = new Map<string, string>();
  for (const kv of fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0')) {
    const eq = kv.indexOf('=');
    if (eq > 0) out.set(kv.slice(0, eq), kv.slice(eq + 1));
  }
  return out;
}

/**
 * Whether `pid` has become `sleep` with its new environment in place: execve names the process
 * before it sets up the new stack, and in between /proc/<pid>/environ reads empty.
 */
function execDone(pid: number): boolean {
  return fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'sleep' && environOf(pid).size > 0;
}

test(
  "the host runs in the user's own environment, tuned by nothing set by hand; its sessions see the user's GLIBC_TUNABLES",
  { skip: process.platform !== 'linux' && 'Linux only' },
  async () => {
    const own = tempRuntimeDir();
    const cli = path.join(__dirname, '..', '..', '..', 'bin', 'shared-pty.js');
    const rec = await ensureDaemon({ cliPath: cli, runtimeDir: own, env: { GLIBC_TUNABLES: 'glibc.malloc.arena_max=2' } });
    const client = await connect(rec.control);
    try {
      // Every host (per-user, serve, the editor's) runs alike: no tunable of ours (#12 part 3).
      const host = environOf(rec.pid);
      assert.equal(host.get('GLIBC_TUNABLES'), 'glibc.malloc.arena_max=2');
      const s = await client.request<SessionInfo>('session/create', { command: 'sleep', args: ['30'] });
      await until(() => execDone(s.pid), 10000, 'sleep to start');
      const env = environOf(s.pid);
      assert.equal(env.get('GLIBC_TUNABLES'), 'glibc.malloc.arena_max=2', 'the program sees what the user set');
      await client.request('pty/kill', { session: s.id });
      // A session opened with a GLIBC_TUNABLES of its own keeps it: the caller's env wins over the user's.
      const own2 = await client.request<SessionInfo>('session/create', {
        command: 'sleep',
        args: ['30'],
        env: { GLIBC_TUNABLES: 'glibc.malloc.tcache_count=0' },
      });
      // Until the child has exec'd, /proc shows the host's environment (node-pty forks, then execs).
      await until(() => execDone(own2.pid), 10000, 'sleep to start');
      assert.equal(environOf(own2.pid).get('GLIBC_TUNABLES'), 'glibc.malloc.tcache_count=0', "the session's own env wins");
      await client.request('pty/kill', { session: own2.id });
    } finally {
      client.close();
      process.kill(rec.pid, 'SIGTERM');
      await until(() => !findDaemon(own), 10000, 'the daemon to stop');
      fs.rmSync(own, { recursive: true, force: true });
    }
  },
);

// Issue #14: like a tmux server with `exit-empty`, the per-user host ends once it has had no session
// and no client for a while, so a host left behind (by an editor update, a closed window) does not
// run for good; a session or a connected client (the editor, `attach`, `shared-pty mcp`) keeps it.
test(
  'the per-user host exits by itself once it has no session and no client (a window watching for agents is none); either one keeps it',
  { timeout: 60_000 },
  async () => {
    const own = tempRuntimeDir();
    const cli = path.join(__dirname, '..', '..', '..', 'bin', 'shared-pty.js');
    const idleMs = 300;
    const rec = await ensureDaemon({ cliPath: cli, runtimeDir: own, args: ['--no-http', '--idle-exit-ms', String(idleMs)] });
    const settle = () => new Promise((r) => setTimeout(r, idleMs * 5));
    try {
      let client = await connect(rec.control);
      const s = await client.request<SessionInfo>('session/create', { command: 'sleep', args: ['60'] });
      client.close();
      await settle();
      assert.ok(isAlive(rec.pid), 'a session keeps the host up with no client');
      client = await connect(rec.control);
      await client.request('pty/kill', { session: s.id });
      await settle();
      assert.ok(isAlive(rec.pid), 'a connected client keeps the host up with no session');
      // An editor window watches every host it sees for agents' approval requests: that alone keeps none up.
      const window = await connect(rec.control);
      await window.request('host/watchAgents', {});
      client.close();
      await until(() => !isAlive(rec.pid), 15_000, 'the empty host to exit, though a window watches it');
      window.close();
      assert.deepEqual(fs.readdirSync(own), [], 'it removed its record, sockets and log');
    } finally {
      if (isAlive(rec.pid)) process.kill(rec.pid, 'SIGTERM');
      fs.rmSync(own, { recursive: true, force: true });
    }
  },
);

test('idle exit: 10 min by default, --idle-exit-ms or SHARED_PTY_IDLE_EXIT_MS to change it, --stay or 0 to stay', () => {
  assert.equal(idleExitMs(undefined, false, {}), 10 * 60 * 1000);
  assert.equal(idleExitMs(5000, false, { SHARED_PTY_IDLE_EXIT_MS: '9' }), 5000, 'the flag wins over the environment');
  assert.equal(idleExitMs(undefined, false, { SHARED_PTY_IDLE_EXIT_MS: '2500' }), 2500);
  assert.equal(idleExitMs(undefined, false, { SHARED_PTY_IDLE_EXIT_MS: '0' }), undefined);
  assert.equal(idleExitMs(0, false, {}), undefined);
  assert.equal(idleExitMs(undefined, true, { SHARED_PTY_IDLE_EXIT_MS: '2500' }), undefined, '--stay wins');
  assert.equal(idleExitMs(undefined, false, { SHARED_PTY_IDLE_EXIT_MS: 'soon' }), 10 * 60 * 1000, 'a value that is no number is ignored');
});

// Issue #14, upgrades: the per-user host outlives the editor, so after an update the new editor (or
// CLI) finds a host of the old version still running, perhaps from files the update deleted.
const CLI_PATH = path.join(__dirname, '..', '..', '..', 'bin', 'shared-pty.js');

test('a host of another version keeps its sessions; new ones open in a host of this version, said once', { timeout: 60_000 }, async () => {
  const own = tempRuntimeDir();
  const old = await Host.start({ kind: 'daemon', runtimeDir: own, version: '0.0.1-old' });
  const told: string[] = [];
  let current: HostRecord | undefined;
  try {
    const s = await old.createSession({ command: 'sleep', args: ['60'] });
    current = await ensureDaemon({ cliPath: CLI_PATH, runtimeDir: own, args: ['--no-http'], onOutdatedHost: (m) => told.push(m) });
    assert.equal(current.version, VERSION);
    assert.notEqual(current.hostId, old.hostId);
    assert.deepEqual(told, [
      `Shared PTY: the host ${old.hostId} of version 0.0.1-old keeps your 1 running session; new sessions open in host ${current.hostId} (version ${VERSION}), and the old host exits when its last session ends`,
    ]);
    const again = await ensureDaemon({ cliPath: CLI_PATH, runtimeDir: own, onOutdatedHost: (m) => told.push(m) });
    assert.equal(again.hostId, current.hostId, 'the host of this version is found again');
    assert.equal(told.length, 1, 'said once');
    assert.ok(s.running, "the old host's session still runs");
    assert.deepEqual(
      readLiveRecords(own)
        .map((r) => r.hostId)
        .sort(),
      [old.hostId, current.hostId].sort(),
      "both hosts are listed, so both hosts' sessions are",
    );
  } finally {
    if (current) process.kill(current.pid, 'SIGTERM');
    await old.close();
    if (current) await until(() => !isAlive(current!.pid), 10000, 'the new host to stop');
    fs.rmSync(own, { recursive: true, force: true });
  }
});

test('a host whose files an update removed takes no new session and exits when its last session ends, clients or not', { timeout: 60_000 }, async () => {
  const own = tempRuntimeDir();
  // The "installed extension": a link to the CLI that the update removes.
  const installed = path.join(own, 'installed-cli.js');
  fs.symlinkSync(CLI_PATH, installed);
  const first = await ensureDaemon({ cliPath: installed, runtimeDir: own, args: ['--no-http', '--stay'] });
  const client = await connect(first.control);
  let second: HostRecord | undefined;
  try {
    const s = await client.request<SessionInfo>('session/create', { command: 'sleep', args: ['60'] });
    fs.rmSync(installed); // the update
    const told: string[] = [];
    second = await ensureDaemon({ cliPath: CLI_PATH, runtimeDir: own, args: ['--no-http', '--stay'], onOutdatedHost: (m) => told.push(m) });
    assert.notEqual(second.hostId, first.hostId, 'new sessions get a host of files that exist');
    assert.match(
      told[0] ?? '',
      new RegExp(`the host ${first.hostId} of version ${VERSION.replace(/\./g, '\\.')} whose files were removed keeps your 1 running session`),
    );
    assert.ok(isAlive(first.pid), 'the old host keeps its session running');
    await client.request('pty/kill', { session: s.id });
    await until(() => !isAlive(first.pid), 15_000, 'the old host to exit after its last session');
    assert.ok(isAlive(second.pid), 'the new host stays');
  } finally {
    client.close();
    if (isAlive(first.pid)) process.kill(first.pid, 'SIGTERM');
    if (second) process.kill(second.pid, 'SIGTERM');
    if (second) await until(() => !isAlive(second!.pid), 10000, 'the new host to stop');
    fs.rmSync(own, { recursive: true, force: true });
  }
});

test('two per-user hosts started at the same moment on one directory: one runs, the other leaves', { timeout: 60_000 }, async () => {
  const own = tempRuntimeDir();
  const env = { ...process.env, SHARED_PTY_DIR: own };
  const start = () => spawn(process.execPath, [CLI_PATH, 'daemon', '--no-http'], { env, stdio: 'ignore' });
  const both = [start(), start()];
  const exits = both.map((c) => new Promise<number | null>((r) => c.once('exit', (code) => r(code))));
  try {
    const loser = await Promise.race(exits.map((p, i) => p.then((code) => ({ i, code }))));
    assert.equal(loser.code, 0, 'the second one leaves quietly');
    const winner = both[1 - loser.i];
    const rec = await until(() => readLiveRecords(own).find((r) => r.kind === 'daemon'), 15_000, 'the record of the one that runs');
    assert.equal(rec.pid, winner.pid);
    assert.deepEqual(
      readLiveRecords(own).map((r) => r.pid),
      [winner.pid],
      'one host, one record',
    );
  } finally {
    for (const c of both) if (c.exitCode === null && c.pid) process.kill(c.pid, 'SIGTERM');
    await Promise.all(exits);
    fs.rmSync(own, { recursive: true, force: true });
  }
});

test('two clients that need the per-user host at the same moment both get the one that runs', { timeout: 60_000 }, async () => {
  // Two editor windows restored together, or an editor and `shared-pty open`: each starts a host,
  // one of the two hosts leaves at once (the lock), and its starter must wait for the other's record.
  const own = tempRuntimeDir();
  // A link planted where the log goes: replaced, never followed.
  const planted = path.join(os.tmpdir(), `spt-planted-${process.pid}`);
  fs.writeFileSync(planted, 'kept');
  fs.symlinkSync(planted, path.join(own, DAEMON_LOG));
  let started: HostRecord[] = [];
  try {
    started = await Promise.all([0, 1].map(() => ensureDaemon({ cliPath: CLI_PATH, runtimeDir: own, args: ['--no-http'] })));
    assert.equal(started[0].hostId, started[1].hostId, 'both use the same host');
    assert.deepEqual(
      readLiveRecords(own).map((r) => r.hostId),
      [started[0].hostId],
      'one host runs',
    );
    // The host that runs writes to daemon.log: the other's start did not put a log of its own in its place.
    const log = path.join(own, DAEMON_LOG);
    assert.equal(fs.readlinkSync(`/proc/${started[0].pid}/fd/2`), log);
    assert.equal(fs.lstatSync(log).mode & 0o777, 0o600);
    assert.ok(fs.lstatSync(log).isFile());
    assert.equal(fs.readFileSync(planted, 'utf8'), 'kept');
    // The one that left took its start log with it.
    await until(() => fs.readdirSync(own).filter((n) => /^daemon\..+\.log$/.test(n)).length === 0, 10_000, 'no start log left');
  } finally {
    fs.rmSync(planted, { force: true });
    // Also when a start failed: the host that runs writes its record a moment later, then stops.
    await until(() => readLiveRecords(own).length > 0, 10000, 'the host to run').catch(() => {});
    for (const r of readLiveRecords(own)) process.kill(r.pid, 'SIGTERM');
    await until(() => readLiveRecords(own).length === 0, 10000, 'the host to stop');
    fs.rmSync(own, { recursive: true, force: true });
  }
});

/** Whether a Unix socket address (`unix:PATH`) refuses a connection: nobody listens there. */
function connectionRefused(control: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.createConnection(control.slice('unix:'.length));
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (e: NodeJS.ErrnoException) => resolve(e.code === 'ECONNREFUSED'));
  });
}

// Its socket gone too (a tmp cleaner emptied its folder): every `open` failed on the record with
// "cannot reach host" (an outside audit).
for (const cleaned of [false, true])
  test(
    `a per-user host's record whose pid now belongs to another process (killed, pid reused) is forgotten: a new host starts${cleaned ? ' (its socket removed too)' : ''}`,
    { timeout: 60_000 },
    async () => {
      const own = tempRuntimeDir();
      // Stands for the process that got the dead host's pid: alive, and listening on nothing.
      const stranger = spawn('sleep', ['60'], { stdio: 'ignore' });
      const started: number[] = [];
      try {
        const dead = await ensureDaemon({ cliPath: CLI_PATH, runtimeDir: own, args: ['--no-http'] });
        started.push(dead.pid);
        process.kill(dead.pid, 'SIGKILL');
        // Its threads close its sockets a moment after its main thread is seen ended.
        await until(async () => (await connectionRefused(dead.control)) && !isAlive(dead.pid), 10_000, 'the host to die');
        // What the killed host left (its record, the lock naming its pid), with the pid now another's.
        const reused = { ...dead, pid: stranger.pid! };
        fs.writeFileSync(path.join(own, `${dead.hostId}.json`), JSON.stringify(reused));
        fs.writeFileSync(path.join(own, `daemon-${VERSION}.pid`), String(stranger.pid));
        if (cleaned) fs.rmSync(path.join(own, dead.hostId, 'control.sock'), { force: true });
        assert.equal(findDaemon(own)?.hostId, dead.hostId, 'the record looks alive by its pid');

        const fresh = await ensureDaemon({ cliPath: CLI_PATH, runtimeDir: own, args: ['--no-http'] });
        started.push(fresh.pid);
        assert.notEqual(fresh.hostId, dead.hostId);
        assert.deepEqual(
          readLiveRecords(own).map((r) => r.hostId),
          [fresh.hostId],
          'the dead host is forgotten',
        );
        assert.ok(!fs.existsSync(path.join(own, dead.hostId)), 'its socket folder is removed');
        assert.ok(isAlive(stranger.pid!), 'the process that has the pid now is left alone');
      } finally {
        stranger.kill();
        for (const pid of started) if (isAlive(pid)) process.kill(pid, 'SIGTERM');
        await until(() => readLiveRecords(own).length === 0, 10000, 'the host to stop');
        fs.rmSync(own, { recursive: true, force: true });
      }
    },
  );
