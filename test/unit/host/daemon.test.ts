import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DAEMON_LOG, ensureDaemon, findDaemon } from '../../../src/host/daemon';
import { tempRuntimeDir, until } from '../../helpers/host';
import type { SessionInfo } from '../../../src/core/methods/types';
import { RpcClient } from '../../../src/transport/rpc-client';

// The per-user host starts detached on first need; when it cannot start, the caller hears why
// (the last line it wrote to daemon.log), not a bare timeout.

const dir = tempRuntimeDir();
after(() => {
  const rec = findDaemon(dir);
  if (rec) process.kill(rec.pid, 'SIGTERM');
  fs.rmSync(dir, { recursive: true, force: true });
});

test('a host that cannot start is reported with its last words, and its log is 0600', async () => {
  const script = path.join(dir, 'broken-cli.js');
  fs.writeFileSync(script, "process.stderr.write('node-pty failed to load: boom\\n'); process.exit(3);\n");
  await assert.rejects(ensureDaemon({ cliPath: script, runtimeDir: dir }), /exited with 3: node-pty failed to load: boom/);
  assert.equal(fs.statSync(path.join(dir, DAEMON_LOG)).mode & 0o777, 0o600);
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

test('the host runs in the user\'s own environment, tuned by nothing set by hand; its sessions see the user\'s GLIBC_TUNABLES', { skip: process.platform !== 'linux' && 'Linux only' }, async () => {
  const own = tempRuntimeDir();
  const cli = path.join(__dirname, '..', '..', '..', 'bin', 'shared-pty.js');
  const rec = await ensureDaemon({ cliPath: cli, runtimeDir: own, env: { GLIBC_TUNABLES: 'glibc.malloc.arena_max=2' } });
  const client = await RpcClient.connect(rec.control);
  try {
    // Every host (per-user, serve, the editor's) runs alike: no tunable of ours (#12 part 3).
    const host = environOf(rec.pid);
    assert.equal(host.get('GLIBC_TUNABLES'), 'glibc.malloc.arena_max=2');
    const s = await client.request<SessionInfo>('session/create', { command: 'sleep', args: ['30'] });
    await until(() => fs.readFileSync(`/proc/${s.pid}/comm`, 'utf8').trim() === 'sleep', 10000, 'sleep to start');
    const env = environOf(s.pid);
    assert.equal(env.get('GLIBC_TUNABLES'), 'glibc.malloc.arena_max=2', 'the program sees what the user set');
    await client.request('pty/kill', { session: s.id });
    // A session opened with a GLIBC_TUNABLES of its own keeps it: the caller's env wins over the user's.
    const own2 = await client.request<SessionInfo>('session/create', { command: 'sleep', args: ['30'], env: { GLIBC_TUNABLES: 'glibc.malloc.tcache_count=0' } });
    // Until the child has exec'd, /proc shows the host's environment (node-pty forks, then execs).
    await until(() => fs.readFileSync(`/proc/${own2.pid}/comm`, 'utf8').trim() === 'sleep', 10000, 'sleep to start');
    assert.equal(environOf(own2.pid).get('GLIBC_TUNABLES'), 'glibc.malloc.tcache_count=0', 'the session\'s own env wins');
    await client.request('pty/kill', { session: own2.id });
  } finally {
    client.close();
    process.kill(rec.pid, 'SIGTERM');
    await until(() => !findDaemon(own), 10000, 'the daemon to stop');
    fs.rmSync(own, { recursive: true, force: true });
  }
});
