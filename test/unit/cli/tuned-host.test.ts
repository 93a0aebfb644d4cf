// Every host runs with the same malloc tuning, whoever starts it (src/cli/tuned-host.ts): a
// `shared-pty serve` started with none of it in its environment re-executes itself once with
// glibc's hugetlb tunable, its sessions still see exactly the user's GLIBC_TUNABLES, and the
// process the user started ends as the host does. Commands that are not hosts never re-execute.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { SessionInfo } from '../../../src/core/methods/types';
import { hugePageMallocSupported } from '../../../src/core/session/malloc-env';
import { readLiveRecords } from '../../../src/host/discovery';
import { runCli, startedPids, startServeHost, stopPid } from '../../helpers/cli';
import { connect, tempRuntimeDir, until } from '../../helpers/host';
import { bashEnv, buildCli, environOf, hostProcessOf, LineClient, parentOf, pidAlive, sleep, startServe } from '../../helpers/protocol';

const TEST_TIMEOUT = 60_000;
const TUNED = /(^|:)glibc\.malloc\.hugetlb=1(:|$)/;
const skip = !hugePageMallocSupported() && 'needs Linux with glibc >= 2.35';

const dirs: string[] = [];
/** Files of the tests themselves (a burst to print, a preload), private to this run. */
let scratch = '';
before(() => {
  buildCli();
  scratch = tempRuntimeDir();
  dirs.push(scratch);
});
after(async () => {
  for (const pid of startedPids) await stopPid(pid);
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

/** The environment of a user's shell: a private runtime directory, and GLIBC_TUNABLES only if given. */
function userEnv(tunables?: string): NodeJS.ProcessEnv {
  const dir = tempRuntimeDir();
  dirs.push(dir);
  const env = bashEnv({ SHARED_PTY_DIR: dir });
  for (const k of Object.keys(env)) if (k === 'GLIBC_TUNABLES' || k.startsWith('SHARED_PTY_') && k !== 'SHARED_PTY_DIR' && k !== 'SHARED_PTY_TEST') delete env[k];
  if (tunables !== undefined) env.GLIBC_TUNABLES = tunables;
  return env;
}

/** The host's `AnonHugePages` in kB (/proc/<pid>/smaps_rollup). */
function anonHugeKb(pid: number): number {
  const m = /^AnonHugePages:\s+(\d+) kB$/m.exec(fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
  return m ? Number(m[1]) : 0;
}

test('serve started with no GLIBC_TUNABLES runs its host with huge-page malloc, and it takes effect', { skip, timeout: TEST_TIMEOUT }, async () => {
  const data = path.join(scratch, 'burst.txt');
  fs.writeFileSync(data, Buffer.alloc(16 * 1024 * 1024, 'x'.repeat(79) + '\n'));
  const env = userEnv();
  // The session prints 16 MB once the host is up: a burst the host holds in fresh memory.
  const serve = await startServeHost(['--cmd', `sh -c 'sleep 1; cat ${data}; exec sleep 60'`, '--no-http'], env);
  try {
    assert.notEqual(serve.hostPid, serve.pid, 'serve re-executed itself');
    assert.equal(parentOf(serve.hostPid), serve.pid);
    const host = environOf(serve.hostPid);
    assert.match(host.get('GLIBC_TUNABLES') ?? '', TUNED);
    assert.equal(host.get('SHARED_PTY_USER_GLIBC_TUNABLES'), '', 'the user had none');
    // The kernel's view: malloc asked for transparent huge pages (0 kB without the tunable).
    await until(() => anonHugeKb(serve.hostPid) > 0, 15_000, 'AnonHugePages in the host after the burst');
    // The program sees the user's environment: no GLIBC_TUNABLES, none of our markers.
    const session = environOf(serve.record.sessions[0].pid);
    assert.equal(session.has('GLIBC_TUNABLES'), false);
    assert.deepEqual([...session.keys()].filter((k) => k.startsWith('SHARED_PTY_') && k !== 'SHARED_PTY_DIR' && k !== 'SHARED_PTY_TEST'), []);
  } finally {
    await serve.stop();
    fs.rmSync(data, { force: true });
  }
});

test('the user\'s own GLIBC_TUNABLES reaches the sessions unchanged', { skip, timeout: TEST_TIMEOUT }, async () => {
  const serve = await startServeHost(['--cmd', 'sleep 60', '--no-http'], userEnv('glibc.malloc.arena_max=2'));
  try {
    // Started with the user's tunables plus huge pages (glibc rewrites the variable it finds at
    // start, so /proc may show only part of it); the user's own value is kept aside for sessions.
    const host = environOf(serve.hostPid);
    assert.notEqual(serve.hostPid, serve.pid, 'serve re-executed itself');
    assert.match(host.get('GLIBC_TUNABLES') ?? '', /^glibc\.malloc\.arena_max=2/);
    assert.equal(host.get('SHARED_PTY_USER_GLIBC_TUNABLES'), 'glibc.malloc.arena_max=2');
    assert.equal(environOf(serve.record.sessions[0].pid).get('GLIBC_TUNABLES'), 'glibc.malloc.arena_max=2');
    // A session created with its own GLIBC_TUNABLES gets that one: what the caller asks for wins.
    const control = await connect(serve.record.control);
    try {
      const own = await control.request<SessionInfo>('session/create', { command: 'sleep', args: ['30'], env: { GLIBC_TUNABLES: 'glibc.malloc.arena_max=4' } });
      assert.equal(environOf(own.pid).get('GLIBC_TUNABLES'), 'glibc.malloc.arena_max=4');
      await control.request('pty/kill', { session: own.id });
    } finally {
      control.close();
    }
  } finally {
    await serve.stop();
  }
});

test('a user who chose a hugetlb setting keeps it, and serve runs in the process started', { skip, timeout: TEST_TIMEOUT }, async () => {
  const serve = await startServeHost(['--cmd', 'sleep 60', '--no-http'], userEnv('glibc.malloc.hugetlb=0'));
  try {
    assert.equal(serve.hostPid, serve.pid, 'no re-exec');
    assert.equal(environOf(serve.record.sessions[0].pid).get('GLIBC_TUNABLES'), 'glibc.malloc.hugetlb=0');
  } finally {
    await serve.stop();
  }
});

test('SIGTERM and SIGINT to the serve the user started stop it cleanly, exit status 0, as before', { skip, timeout: TEST_TIMEOUT }, async () => {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    const env = userEnv();
    const serve = await startServeHost(['--cmd', 'sleep 60', '--no-http'], env);
    const sessionPid = serve.record.sessions[0].pid;
    process.kill(serve.pid, signal);
    assert.equal(await serve.exited, 0, `exit status after ${signal}`);
    assert.equal(pidAlive(serve.hostPid), false, 'the host is gone');
    assert.deepEqual(readLiveRecords(env.SHARED_PTY_DIR), [], 'and its discovery record');
    await until(() => !pidAlive(sessionPid), 5000, 'the session ended');
  }
});

test('the process started dies of the signal its host died of', { skip, timeout: TEST_TIMEOUT }, async () => {
  const serve = await startServeHost(['--cmd', 'sleep 60', '--no-http'], userEnv());
  assert.notEqual(serve.hostPid, serve.pid);
  process.kill(serve.hostPid, 'SIGKILL');
  assert.equal(await serve.exited, 'SIGKILL');
});

test('the host does not outlive a serve killed outright (SIGKILL cannot be forwarded)', { skip, timeout: TEST_TIMEOUT }, async () => {
  const env = userEnv();
  const serve = await startServeHost(['--cmd', 'sleep 60', '--no-http'], env);
  const sessionPid = serve.record.sessions[0].pid;
  startedPids.add(serve.hostPid); // ended by after() should it outlive the relay after all
  process.kill(serve.pid, 'SIGKILL');
  await until(() => !pidAlive(serve.hostPid), 10_000, 'the host stopped');
  assert.deepEqual(readLiveRecords(env.SHARED_PTY_DIR), [], 'it removed its discovery record: a clean stop');
  await until(() => !pidAlive(sessionPid), 5000, 'the session ended');
});

test('exit status passes through the re-exec: a bad flag is 2 with one line on stderr', { skip, timeout: TEST_TIMEOUT }, async () => {
  const r = await runCli(['serve', '--cols', '1', '--no-http'], userEnv());
  assert.equal(r.code, 2);
  assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  assert.match(r.stderr, /^shared-pty: .*--cols/);
});

test('serve --socket: a socket-pty client works unchanged through the re-exec; pty/kill ends the process with 0', { skip, timeout: TEST_TIMEOUT }, async () => {
  const env = userEnv();
  const sock = path.join(env.SHARED_PTY_DIR!, 'compat.sock');
  const serve = await startServe(['--socket', sock, '--cmd', 'sleep 60', '--no-http'], env, { path: sock });
  const c = await LineClient.connect({ path: sock });
  try {
    const host = hostProcessOf(serve.pid);
    assert.notEqual(host, serve.pid);
    assert.match(environOf(host).get('GLIBC_TUNABLES') ?? '', TUNED);
    const status = await c.call('pty/status', {}, 1);
    assert.deepEqual(Object.keys(status.result).sort(), ['exitCode', 'pid', 'running']);
    assert.equal(parentOf(status.result.pid), host);
    c.sendJson({ jsonrpc: '2.0', id: 2, method: 'pty/kill', params: {} });
    assert.equal(await serve.exited, 0);
  } finally {
    c.close();
    await serve.stop();
  }
});

test('commands that are not hosts (and serve --help) never re-execute: list runs in the process started', { skip, timeout: TEST_TIMEOUT }, async () => {
  // Each node process started with this preload notes its pid and arguments (not its worker threads).
  const log = path.join(scratch, 'starts.log');
  const preload = path.join(scratch, 'note-start.js');
  fs.writeFileSync(preload, `if (require('worker_threads').isMainThread) require('fs').appendFileSync(${JSON.stringify(log)}, process.pid + ' ' + process.argv.slice(2).join(' ') + '\\n');\n`);
  const env = { ...userEnv(), NODE_OPTIONS: `--require ${preload}` };
  const starts = () => (fs.existsSync(log) ? fs.readFileSync(log, 'utf8').trim().split('\n') : []);
  try {
    for (const args of [['list'], ['list', '--json'], ['--version'], ['serve', '--help']]) {
      fs.rmSync(log, { force: true });
      const r = await runCli(args, env);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(starts().length, 1, `${args.join(' ')} started one node process: ${starts().join(' | ')}`);
    }
    // And the check above can see a re-exec: serve's shows as a second start with the same arguments.
    fs.rmSync(log, { force: true });
    const serve = await startServeHost(['--cmd', 'sleep 60', '--no-http'], env);
    await serve.stop();
    await sleep(100);
    const lines = starts();
    assert.equal(lines.length, 2, lines.join(' | '));
    assert.equal(lines[0].split(' ').slice(1).join(' '), lines[1].split(' ').slice(1).join(' '), 'same arguments');
    assert.equal(Number(lines[1].split(' ')[0]), serve.hostPid);
  } finally {
    fs.rmSync(log, { force: true });
    fs.rmSync(preload, { force: true });
  }
});
