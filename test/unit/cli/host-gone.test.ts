// Issue #14, faults: a host killed with SIGKILL while clients are connected. Each client says the
// host is gone in one clear line (no stack trace), one-shot commands exit non-zero, `shared-pty
// mcp` stays up and answers with a tool error; the stale record and sockets are removed by the
// next `list` or the next host that starts.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { IPty } from 'node-pty';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { loadNodePty } from '../../../src/core/session/pty-loader';
import { RpcClient } from '../../../src/transport/client/rpc-client';
import { runCli, startCli, startServeHost, startedPids, killPid, stopPid, type ServeHost } from '../../helpers/cli';
import { readLiveRecords } from '../../../src/host/discovery';
import { tempRuntimeDir, until, withTimeout } from '../../helpers/host';
import { bashEnv, buildCli, CLI, mcpStdio, sleep } from '../../helpers/protocol';

const TEST_TIMEOUT = 90_000;
const SHELL = ['--cmd', 'bash --norc --noprofile -i', '--no-http'];

/** A stack trace line, which a user must never see for this. */
const STACK = /^\s+at /m;

let dir: string;
let env: NodeJS.ProcessEnv;
const hosts: ServeHost[] = [];

before(() => {
  buildCli();
  dir = tempRuntimeDir();
  env = bashEnv({ SHARED_PTY_DIR: dir });
});
after(async () => {
  await Promise.all(hosts.map((h) => h.stop()));
  for (const pid of startedPids) killPid(pid, 'SIGKILL');
  fs.rmSync(dir, { recursive: true, force: true });
});

/** A serve host that is killed with SIGKILL (nothing of it runs its clean-up). */
async function startHost(): Promise<ServeHost> {
  const h = await startServeHost(SHELL, env);
  hosts.push(h);
  return h;
}

/** `shared-pty mcp` over stdio, as an agent starts it, connected with the SDK's client; `stderr` hears its log. */
async function connectMcp(name: string, stderr?: (d: string) => void): Promise<Client> {
  const transport = new StdioClientTransport(mcpStdio(env));
  if (stderr) transport.stderr?.on('data', (d) => stderr(String(d)));
  const mcp = new Client({ name, version: '0.0.0' });
  await withTimeout(mcp.connect(transport), 30_000, 'MCP stdio connect');
  return mcp;
}

async function sigkill(h: ServeHost): Promise<void> {
  killPid(h.pid, 'SIGKILL');
  await h.exited; // reaped: its pid no longer counts as alive
}

const leftovers = (hostId: string) => ({ record: fs.existsSync(path.join(dir, `${hostId}.json`)), sockets: fs.existsSync(path.join(dir, hostId)) });

describe('a host killed with SIGKILL', () => {
  test('attach, a one-shot command, events and shared-pty mcp each say the host is gone in one line', { timeout: TEST_TIMEOUT }, async () => {
    const h = await startHost();
    const id = h.record.sessions[0].id;
    const gone = new RegExp(`the Shared PTY host ${h.record.hostId} is gone \\(process ${h.pid} ended\\); its sessions ended with it`);

    // attach, in a PTY of its own as in a user's terminal.
    const outer: IPty = loadNodePty().spawn(process.execPath, [CLI, 'attach', id], {
      name: 'xterm-256color',
      cols: 80,
      rows: 24,
      cwd: dir,
      env: env as Record<string, string>,
    });
    let shown = '';
    outer.onData((d) => (shown += d));
    const attachExit = new Promise<number>((resolve) => outer.onExit(({ exitCode }) => resolve(exitCode)));
    await until(() => shown.includes('detach with'), 15_000, `attach to attach; it shows: ${shown}`);

    // A one-shot command waiting on the host (it has typed its command when the screen shows it)…
    const control = await RpcClient.connect(h.record.control);
    const send = startCli(['send', id, 'sleep 60 # typed-by-send', '--timeout', '60000'], env, 60_000);
    await control.request('pty/wait', { session: id, match: 'typed-by-send', timeout: 15_000 });
    // …and a long-running follower (it is subscribed once it prints an event).
    const events = startCli(['events', id], env, 60_000);
    let printed = '';
    events.child.stdout!.on('data', (d: string) => (printed += d));
    for (let cols = 81; !printed.includes('resize'); cols++) {
      await control.request('pty/resize', { session: id, cols, rows: 24 });
      await sleep(100);
    }
    control.close();

    // shared-pty mcp, connected to the host through a first call.
    let mcpStderr = '';
    const mcp = await connectMcp('host-gone-test', (d) => (mcpStderr += d));
    try {
      const first = (await mcp.callTool({ name: 'read_screen', arguments: { session: id } })) as { isError?: boolean };
      assert.notEqual(first.isError, true, 'read_screen works while the host runs');

      await sigkill(h);

      assert.equal(await withTimeout(attachExit, 15_000, 'attach to end'), 1, 'attach exits 1');
      assert.match(shown, gone, 'attach says the host is gone');
      assert.doesNotMatch(shown, STACK);

      const w = await send.result;
      assert.equal(w.code, 1, 'the one-shot command exits 1');
      assert.match(w.stderr, new RegExp(`^shared-pty: ${gone.source}\\n$`), 'one line on stderr, nothing else');

      const e = await events.result;
      assert.equal(e.code, 1, 'events exits 1, as every failure does');
      assert.match(e.stderr, gone, 'events says the host is gone');
      assert.doesNotMatch(e.stderr, STACK);

      const r = (await mcp.callTool({ name: 'read_screen', arguments: { session: id } })) as { isError?: boolean; content: Array<{ text?: string }> };
      assert.equal(r.isError, true, 'a tool error, not a protocol error');
      assert.match(r.content.map((c) => c.text ?? '').join(''), gone);
      assert.match(r.content.map((c) => c.text ?? '').join(''), /^Error -32000: /, 'the server-error code (docs/protocol.md#4-error-codes)');
      const again = (await mcp.callTool({ name: 'list_sessions', arguments: {} })) as { isError?: boolean; structuredContent?: { sessions: unknown[] } };
      assert.deepEqual(again.structuredContent?.sessions, [], 'shared-pty mcp is still up and lists what is left');
      assert.equal(mcpStderr.match(/is gone/g)?.length, 1, `mcp tells its log once: ${mcpStderr}`);
      assert.doesNotMatch(mcpStderr, STACK);
      assert.deepEqual(leftovers(h.record.hostId), { record: false, sockets: false }, 'the clients removed the stale record and sockets');
    } finally {
      await mcp.close().catch(() => {});
      killPid(h.pid, 'SIGKILL');
      try {
        outer.kill();
      } catch {
        // ended by itself
      }
    }
  });

  test('with nobody connected, the next list removes the stale record and sockets', { timeout: TEST_TIMEOUT }, async () => {
    const h = await startHost();
    await sigkill(h);
    assert.deepEqual(leftovers(h.record.hostId), { record: true, sockets: true }, 'SIGKILL leaves them behind');
    const list = await runCli(['list'], env);
    assert.equal(list.code, 0);
    assert.equal(list.stdout, '', 'the dead host has no sessions to list');
    assert.deepEqual(leftovers(h.record.hostId), { record: false, sockets: false });
    const read = await runCli(['read', h.record.sessions[0].id], env);
    assert.equal(read.code, 1);
    assert.equal(read.stderr, 'shared-pty: no Shared PTY host is running (start one with: shared-pty open, or shared-pty serve)\n');
  });

  test('the next host that starts removes them too', { timeout: TEST_TIMEOUT }, async () => {
    const h = await startHost();
    await sigkill(h);
    const next = await startHost();
    assert.deepEqual(leftovers(h.record.hostId), { record: false, sockets: false });
    await next.stop();
  });
});

test(
  'a send waiting when its host is ended (SIGTERM) is told its session ended, as at a kill, never an internal error',
  { timeout: TEST_TIMEOUT },
  async () => {
    const h = await startHost();
    const id = h.record.sessions[0].id;
    await until(async () => (await runCli(['read', id], env)).stdout.trim().length > 0, 15_000, 'the first prompt');
    const send = startCli(['send', id, 'sleep 30', '--timeout', '60000'], env, 60_000);
    await sleep(1500);
    killPid(h.pid, 'SIGTERM');
    const r = await send.result;
    // Found by an outside audit: "Internal error: The session has closed", three runs in four. The
    // host now ends its sessions before its sockets close, so the send ends as at a kill: its wait
    // reason session_exit, exit status 0 (neither command_done nor a timeout).
    assert.doesNotMatch(r.stderr, /Internal error/);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /session_exit/);
  },
);

describe('a host that stops answering (stopped, or a link to it that stalled)', () => {
  test('wait, send and open say so in one line, 15 s past their own wait, instead of hanging', { timeout: TEST_TIMEOUT }, async () => {
    const h = await startHost();
    const id = h.record.sessions[0].id;
    // The per-user host that `open` uses, started by a first open.
    assert.equal((await runCli(['open', '--', 'cat'], env)).code, 0);
    const daemon = readLiveRecords(dir).find((r) => r.kind === 'daemon')!;
    killPid(h.pid, 'SIGSTOP');
    killPid(daemon.pid, 'SIGSTOP');
    try {
      // Each is ended after 60 s if it hangs (its exit status then is not 1).
      const [wait, send, open] = await Promise.all([
        runCli(['wait', id, 'never-shown', '--timeout', '1000'], env, 60_000),
        runCli(['send', id, 'true', '--timeout', '2000'], env, 60_000),
        runCli(['open', '--', 'cat'], env, 60_000),
      ]);
      // The host to open in accepts the connection (the kernel does, for a stopped process) and never answers (found by a checking audit).
      assert.equal(open.code, 1, open.stderr);
      assert.equal(
        open.stderr,
        `shared-pty: no answer from the Shared PTY host ${daemon.hostId} within 15 s: it, or the way to it, is stalled (what was asked may still be done if it recovers)\n`,
      );
      for (const [r, asked] of [
        [wait, 1],
        [send, 2],
      ] as const) {
        assert.equal(r.code, 1, r.stderr);
        assert.equal(
          r.stderr,
          `shared-pty: no answer from the Shared PTY host ${h.record.hostId} within ${asked + 15} s (the wait's ${asked} s and 15 s more): it, or the way to it, is stalled (what was asked may still be done if it recovers)\n`,
        );
        assert.doesNotMatch(r.stderr, STACK);
      }
    } finally {
      killPid(h.pid, 'SIGCONT');
      killPid(daemon.pid, 'SIGCONT');
      // Stopped whatever the assertions said: a failed run left this per-user host running.
      await h.stop();
      await stopPid(daemon.pid);
    }
  });

  test("shared-pty mcp's tools and events say so as well; events ends at once on SIGTERM while it waits", { timeout: TEST_TIMEOUT }, async () => {
    const h = await startHost();
    const id = h.record.sessions[0].id;
    const mcp = await connectMcp('host-stalled-test');
    try {
      assert.notEqual(((await mcp.callTool({ name: 'read_screen', arguments: { session: id } })) as { isError?: boolean }).isError, true);
      killPid(h.pid, 'SIGSTOP');
      const events = startCli(['events', id], env, 60_000);
      const interrupted = startCli(['events'], env, 60_000);
      // Well inside the 15 s events waits for the host's answer, once it has started.
      const terminated = sleep(5_000).then(() => killPid(interrupted.pid, 'SIGTERM'));
      const [tool, followed, ended] = await Promise.all([
        mcp.callTool({ name: 'send', arguments: { session: id, text: 'true', timeout: 2000 } }, undefined, { timeout: 60_000 }) as Promise<{
          isError?: boolean;
          content: Array<{ text?: string }>;
        }>,
        events.result,
        interrupted.result,
        terminated,
      ]);
      assert.equal(tool.isError, true, 'a tool error, not a call that never returns');
      assert.match(
        tool.content.map((c) => c.text ?? '').join(''),
        new RegExp(`no answer from the Shared PTY host ${h.record.hostId} within 17 s \\(the wait's 2 s and 15 s more\\): it, or the way to it, is stalled`),
      );
      assert.equal(followed.code, 1, followed.stderr);
      assert.equal(
        followed.stderr,
        `shared-pty: no answer from the Shared PTY host ${h.record.hostId} within 15 s: it, or the way to it, is stalled (what was asked may still be done if it recovers)\n`,
      );
      assert.deepEqual(
        { code: ended.code, signal: ended.signal, stderr: ended.stderr },
        { code: 0, signal: null, stderr: '' },
        'SIGTERM ends it with 0, as Ctrl+C does',
      );
    } finally {
      killPid(h.pid, 'SIGCONT');
      await mcp.close().catch(() => {});
    }
    await h.stop();
  });
});
