// Robustness of the host against bad, slow, vanishing and numerous clients (docs/protocol.md#2-framing, docs/guarantees.md#settled-details),
// and of a session against a program that floods the terminal and exits at once.
// In-process hosts, real node-pty, real bash, raw Unix sockets (no use of our own client where the
// point is what goes over the wire).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as net from 'node:net';
import { StringDecoder } from 'node:string_decoder';
import type { SessionInfo } from '../../../../src/core/methods/types';
import type { Notification, RpcClient } from '../../../../src/transport/client/rpc-client';
import { BASH, connect, rejectsWith, startHost, until, clientsClosed } from '../../../helpers/host';
import { childrenOf, LineClient, pidAlive, sleep, type Msg } from '../../../helpers/protocol';
import { heldBytes } from '../../../helpers/held-memory';
import { DEFAULT_RING_BYTES } from '../../../../src/core/session/ring-buffer';
import { CLIENT_HIGH_WATER_BYTES, REQUEST_HIGH_WATER_BYTES } from '../../../../src/transport/rpc/json-rpc-peer';
import { ensureNoDisposablesAreLeakedBySuite } from '../../../helpers/leak-tracker';

/** Requests a host starts from one client's queue before it looks at what is unsent again (src/transport/socket/rpc-connection.ts). */
const REQUESTS_PER_TURN = 16;

/** Per-test bound: generous for a noisy machine, finite so a hang fails instead of blocking. */
const TEST_TIMEOUT = 60_000;
/** The flood and drain tests push tens of megabytes through the headless terminal's parser. */
const FLOOD_TIMEOUT = 240_000;
/** The host under test refuses lines longer than this (docs/protocol.md#2-framing: a line over the limit). */
const MAX_LINE = 64 * 1024;

type TestHost = Awaited<ReturnType<typeof startHost>>;

/** Every session pid this file started, so `after()` can make sure none outlives it. */
const startedPids = new Set<number>();
const openClients = new Set<{ close(): void }>();
const hosts: TestHost[] = [];

let h: TestHost;
let control: RpcClient;
let shell: SessionInfo;

function unixPath(address: string): string {
  assert.match(address, /^unix:\//);
  return address.slice('unix:'.length);
}

async function lineClient(address: string): Promise<LineClient> {
  const c = await LineClient.connect({ path: unixPath(address) });
  openClients.add(c);
  return c;
}

async function rpcClient(address: string): Promise<RpcClient> {
  const c = await connect(address);
  openClients.add(c);
  return c;
}

async function newShell(c: RpcClient, name: string, extra: Record<string, unknown> = {}): Promise<SessionInfo> {
  const info = await c.request<SessionInfo>('session/create', { ...BASH, cols: 100, rows: 30, name, ...extra });
  startedPids.add(info.pid);
  const w = await c.request<{ matched: boolean }>('pty/wait', { session: info.id, match: '$', timeout: 10_000 });
  assert.equal(w.matched, true, `prompt of ${name}`);
  return info;
}

function openFds(): number {
  return fs.readdirSync('/proc/self/fd').length;
}

/** Every descendant of `pid` (children, grandchildren…), from /proc. */
function descendantsOf(pid: number): Array<{ pid: number; comm: string }> {
  const out: Array<{ pid: number; comm: string }> = [];
  for (const c of childrenOf(pid)) out.push(c, ...descendantsOf(c.pid));
  return out;
}

/** The host still answers a plain client: a status and a screen read of the shared shell. */
async function hostStillServes(): Promise<void> {
  const c = await lineClient(shell.address);
  try {
    const st = await c.result('pty/status');
    assert.equal(st.running, true);
    const r = await c.result('pty/read');
    assert.equal(typeof r.screen, 'string');
    assert.deepEqual(r.size, { cols: 100, rows: 30 });
  } finally {
    c.close();
    openClients.delete(c);
  }
}

/** Connected clients of the shared shell (per-session socket connections and subscriptions). */
async function shellClients(): Promise<number> {
  return (await control.request<SessionInfo>('pty/info', { session: shell.id })).clients;
}

/** Waits until the host has seen every client of the shared shell go (this file's control client is not one). */
async function noShellClients(what = 'no clients left on the shell'): Promise<void> {
  await until(async () => (await shellClients()) === 0, 5000, what);
}

/** Number of 'x' characters in a string. */
function countX(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) === 0x78) n++;
  return n;
}

before(async () => {
  h = await startHost({ maxLineBytes: MAX_LINE });
  hosts.push(h);
  control = await rpcClient(h.host.controlAddress);
  shell = await newShell(control, 'robust');
});

after(async () => {
  for (const c of openClients) c.close();
  for (const x of hosts) await x.close().catch(() => undefined);
  // The host's close sends SIGHUP; give the shells a moment, then kill what remains, by pid.
  const alive = () => [...startedPids].filter(pidAlive);
  await until(() => alive().length === 0, 5000).catch(() => undefined);
  for (const pid of alive()) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
});
// Once the shared host is closed, nothing the suite made is left (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedBySuite(clientsClosed);

describe('bad input gets a clear JSON-RPC error and the connection keeps working', () => {
  test('malformed JSON: -32700 with id null, then the same connection still serves', { timeout: TEST_TIMEOUT }, async () => {
    for (const address of [shell.address, h.host.controlAddress]) {
      const c = await lineClient(address);
      const params = address === shell.address ? {} : { session: shell.id };
      for (const bad of ['{"jsonrpc":"2.0","id":1,"method":"pty/status"', 'not json at all', '{"jsonrpc":"2.0","id":2,}', '\u0000\u0001']) {
        c.raw(bad + '\n');
        const res = await c.next((m) => 'error' in m, undefined, `parse error for ${JSON.stringify(bad)}`);
        assert.equal(res.jsonrpc, '2.0');
        assert.equal(res.id, null);
        assert.equal(res.error.code, -32700);
        assert.match(res.error.message, /parse/i);
      }
      const ok = await c.result('pty/status', params);
      assert.equal(ok.running, true);
      c.close();
    }
  });

  test('invalid UTF-8 bytes in a line: -32700 with id null; nothing reaches the program', { timeout: TEST_TIMEOUT }, async () => {
    const c = await lineClient(shell.address);
    const before = await c.result('pty/output', { since: 0 });
    const line = Buffer.concat([
      Buffer.from('{"jsonrpc":"2.0","id":5,"method":"pty/write","params":{"action":{"text":"echo bad-'),
      Buffer.from([0xff, 0xfe, 0xc3, 0x28]),
      Buffer.from('"}}}\n'),
    ]);
    (c as unknown as { _socket: net.Socket })._socket.write(line);
    const res = await c.next((m) => 'error' in m || 'result' in m);
    assert.equal(res.id, null);
    assert.equal(res.error.code, -32700);
    assert.match(res.error.message, /UTF-8/i);
    // A valid line on the same connection works, and the bad one wrote nothing.
    const after = await c.result('pty/output', { since: before.cursor, waitMs: 200 });
    assert.equal(after.data, '');
    c.close();
  });

  test('a line over the limit: -32600, the connection closes, every other client is unaffected', { timeout: TEST_TIMEOUT }, async () => {
    const bystander = await lineClient(shell.address);
    const controlBystander = await lineClient(h.host.controlAddress);
    await bystander.result('pty/status');

    // Just under the limit is a normal request.
    const near = await lineClient(shell.address);
    const pad = 'p'.repeat(MAX_LINE - 200);
    const nearRes = await near.call('pty/status', { pad });
    assert.equal(nearRes.result?.running, true, JSON.stringify(nearRes.error));
    near.close();

    // 100 KB without a newline (in pieces, as a streaming client would send it).
    const big = await lineClient(shell.address);
    const chunk = 'a'.repeat(10 * 1024);
    for (let i = 0; i < 10; i++) big.raw(chunk);
    const res = await big.next((m) => 'error' in m, undefined, 'the oversized-line error');
    assert.equal(res.id, null);
    assert.equal(res.error.code, -32600);
    assert.match(res.error.message, /line|long|limit/i);
    await big.closed;
    assert.equal(big.isClosed, true);

    // The same on the control socket, a full JSON request this time.
    const big2 = await lineClient(h.host.controlAddress);
    big2.raw(JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'pty/write', params: { session: shell.id, action: { text: 'x'.repeat(100 * 1024) } } }) + '\n');
    const res2 = await big2.next((m) => 'error' in m, undefined, 'the oversized-line error (control)');
    assert.equal(res2.error.code, -32600);
    await big2.closed;

    // Nobody else noticed: the clients that were connected all along, and new ones.
    assert.equal(bystander.isClosed, false);
    assert.equal((await bystander.result('pty/status')).running, true);
    assert.equal((await controlBystander.result('session/list')).sessions.length >= 1, true);
    await hostStillServes();
    bystander.close();
    controlBystander.close();
  });

  test(
    'a line of exactly the limit is served, ended by \\n or by \\r\\n (the \\r is not counted); one byte more is refused',
    { timeout: TEST_TIMEOUT },
    async () => {
      /** A pty/status request of exactly `bytes` bytes. */
      const requestOf = (id: number, bytes: number) => {
        const shape = (pad: string) => JSON.stringify({ jsonrpc: '2.0', id, method: 'pty/status', params: { pad } });
        return shape('p'.repeat(bytes - shape('').length));
      };
      for (const [ending, id] of [
        ['\n', 1],
        ['\r\n', 2],
      ] as const) {
        const c = await lineClient(shell.address);
        const line = requestOf(id, MAX_LINE);
        assert.equal(Buffer.byteLength(line), MAX_LINE);
        c.raw(line + ending);
        const answer = await c.next((m) => m.id === id || m.id === null, undefined, `the answer to a line of the limit ended by ${JSON.stringify(ending)}`);
        assert.equal(answer.result?.running, true, JSON.stringify(answer.error));
        c.close();
      }
      const over = await lineClient(shell.address);
      over.raw(requestOf(3, MAX_LINE + 1) + '\r\n');
      assert.equal((await over.next((m) => 'error' in m, undefined, 'the oversized-line error')).error.code, -32600);
      await over.closed;
    },
  );

  test('invalid envelopes: -32600, with the id echoed when there is one', { timeout: TEST_TIMEOUT }, async () => {
    const c = await lineClient(shell.address);
    const cases: Array<[string, number | string | null]> = [
      ['[]', null],
      ['null', null],
      ['true', null],
      ['42', null],
      ['"pty/status"', null],
      ['{"jsonrpc":"2.0","method":"pty/status"}', null], // a notification: not accepted
      ['{"id":7,"method":"pty/status"}', 7], // no jsonrpc member
      ['{"jsonrpc":"1.0","id":"s8","method":"pty/status"}', 's8'],
      ['{"jsonrpc":"2.0","id":9,"method":42}', 9],
      ['{"jsonrpc":"2.0","id":10,"method":"pty/status","params":[1,2]}', 10],
      ['[{"jsonrpc":"2.0","id":11,"method":"pty/status"}]', null], // batches are not supported
    ];
    for (const [line, id] of cases) {
      c.raw(line + '\n');
      const res = await c.next((m) => 'error' in m || 'result' in m, undefined, `answer to ${line}`);
      assert.equal(res.error?.code, -32600, `${line} → ${JSON.stringify(res)}`);
      assert.equal(res.id, id, line);
    }
    assert.equal((await c.result('pty/status')).running, true);
    c.close();
  });

  test('unknown method: -32601 with the request id', { timeout: TEST_TIMEOUT }, async () => {
    const s = await lineClient(shell.address);
    for (const method of ['pty/nope', 'session/list', 'host/info', '']) {
      // session/list and host/info exist only on the control socket.
      const res = await s.call(method, {}, `m-${method}`);
      assert.equal(res.id, `m-${method}`);
      assert.equal(res.error?.code, -32601, `${method}: ${JSON.stringify(res)}`);
    }
    const c = await lineClient(h.host.controlAddress);
    const res = await c.call('no/such/method', {}, 77);
    assert.equal(res.id, 77);
    assert.equal(res.error.code, -32601);
    assert.match(res.error.message, /no\/such\/method/);
    assert.equal((await s.result('pty/status')).running, true);
    s.close();
    c.close();
  });

  test('unknown session on the control socket: -32001 with data.session', { timeout: TEST_TIMEOUT }, async () => {
    const c = await lineClient(h.host.controlAddress);
    for (const method of ['pty/read', 'pty/status', 'pty/write', 'pty/send', 'pty/wait', 'pty/subscribe', 'pty/kill']) {
      const params: Msg = { session: 'no-such-session' };
      if (method === 'pty/write') params.action = { text: 'x' };
      if (method === 'pty/send') params.text = 'x';
      const res = await c.call(method, params);
      assert.equal(res.error?.code, -32001, `${method}: ${JSON.stringify(res)}`);
      assert.deepEqual(res.error.data, { session: 'no-such-session' });
      assert.match(res.error.message, /no-such-session/);
    }
    // A missing selector is a parameter problem, not an unknown session.
    assert.equal((await c.call('pty/read', {})).error?.code, -32602);
    assert.equal((await c.call('pty/read', { session: 5 })).error?.code, -32602);
    c.close();
    await hostStillServes();
  });

  test('wrong parameter types: -32602, and nothing happens to the session', { timeout: TEST_TIMEOUT }, async () => {
    const bad: Array<[string, Msg]> = [
      ['pty/read', { top: 'x' }],
      ['pty/read', { top: 1.5 }],
      ['pty/read', { start: 3 }],
      ['pty/read', { top: 1, bottom: 1 }],
      ['pty/resize', { cols: -1, rows: 10 }],
      ['pty/resize', { cols: 80 }],
      ['pty/resize', { cols: '80', rows: '24' }],
      ['pty/resize', { cols: 0, rows: 0 }],
      ['pty/resize', { cols: 2.5, rows: 24 }],
      ['pty/write', { action: 5 }],
      ['pty/write', { action: { text: 5 } }],
      ['pty/write', { action: { key: 'NoSuchKey' } }],
      ['pty/write', { action: [] }],
      ['pty/write', {}],
      ['pty/wait', { match: 'x', timeout: 'soon' }],
      ['pty/wait', { regex: '(' }],
      ['pty/send', { text: 42 }],
      ['pty/send', { text: 'true', timeout: -5 }],
      ['pty/output', { since: -1 }],
      ['pty/output', { since: 'a' }],
      ['pty/scrollback', { lines: 0 }],
      ['pty/subscribe', { since: 'a' }],
      ['pty/signal', { signal: 'SIGFOO' }],
    ];
    const s = await lineClient(shell.address);
    const c = await lineClient(h.host.controlAddress);
    const outBefore = await s.result('pty/output', { since: 0 });
    for (const [method, params] of bad) {
      const r1 = await s.call(method, params);
      assert.equal(r1.error?.code, -32602, `${method} ${JSON.stringify(params)} (session socket): ${JSON.stringify(r1)}`);
      assert.equal(typeof r1.error.message, 'string');
      const r2 = await c.call(method, { session: shell.id, ...params });
      assert.equal(r2.error?.code, -32602, `${method} ${JSON.stringify(params)} (control socket): ${JSON.stringify(r2)}`);
    }
    // The size did not change and nothing was typed.
    const st = await s.result('pty/read');
    assert.deepEqual(st.size, { cols: 100, rows: 30 });
    const outAfter = await s.result('pty/output', { since: outBefore.cursor, waitMs: 200 });
    assert.equal(outAfter.data, '');
    s.close();
    c.close();
  });
  test(
    'params nesting thousands of levels deep: -32602 with the id, in a selector or any param; the host keeps serving',
    { timeout: TEST_TIMEOUT },
    async () => {
      // 10,000 levels fit in a line under the limit; an error that quoted such a selector overflowed the stack (-32603).
      const deep = '{"a":'.repeat(10_000) + '1' + '}'.repeat(10_000);
      const deepArray = '['.repeat(10_000) + ']'.repeat(10_000);
      const s = await lineClient(shell.address);
      const c = await lineClient(h.host.controlAddress);
      const cases: Array<[LineClient, string]> = [
        [s, `{"jsonrpc":"2.0","id":"d1","method":"pty/subscribe","params":{"session":${deep}}}`],
        [s, `{"jsonrpc":"2.0","id":"d2","method":"pty/write","params":{"action":${deepArray}}}`],
        [c, `{"jsonrpc":"2.0","id":"d3","method":"pty/read","params":{"session":${deep}}}`],
        [c, `{"jsonrpc":"2.0","id":"d4","method":"pty/wait","params":{"session":"${shell.id}","match":${deepArray}}}`],
      ];
      for (const [client, line] of cases) {
        assert.ok(line.length < MAX_LINE, 'under the line limit');
        client.raw(line + '\n');
        const id = /"id":"(d\d)"/.exec(line)![1];
        const res = await client.next((m) => m.id === id, undefined, `answer to ${id}`);
        assert.equal(res.error?.code, -32602, `${id}: ${JSON.stringify(res).slice(0, 300)}`);
        assert.match(res.error.message, /nest deeper than 256 levels/);
      }
      assert.equal((await s.result('pty/status')).running, true);
      s.close();
      c.close();
      await hostStillServes();
    },
  );
});

describe('clients that vanish mid-call', () => {
  test('a client that disconnects during pty/wait: the host keeps working', { timeout: TEST_TIMEOUT }, async () => {
    await noShellClients();
    const leaver = await lineClient(shell.address);
    const waitAnswer = leaver.call('pty/wait', { match: 'never-shown-7f3a', timeout: 30_000 }, 'w1', 60_000).catch(() => undefined);
    // Calls run concurrently: a status answered after the wait was sent proves the wait is under way.
    assert.equal((await leaver.result('pty/status')).running, true);
    leaver.close();
    await leaver.closed;
    void waitAnswer;
    await noShellClients('the host saw the client go');
    // Meanwhile and afterwards everyone else is served.
    await hostStillServes();
    const w = await control.request<{ matched: boolean; reason: string }>('pty/wait', { session: shell.id, match: '$', timeout: 5000 });
    assert.equal(w.matched, true);
    assert.equal(w.reason, 'matched');
  });

  test('a client that disconnects during pty/send: the send lock is released, a new send succeeds', { timeout: TEST_TIMEOUT }, async () => {
    await noShellClients();
    const leaver = await lineClient(shell.address);
    await until(async () => (await shellClients()) === 1, 5000, 'client counted');
    void leaver.call('pty/send', { text: 'sleep 2', timeout: 30_000 }, 's1', 60_000).catch(() => undefined);
    // While it runs, the session is busy for everybody else.
    await until(() => h.host.registry.get(shell.id)!.sendInProgress, 5000, 'the send to start');
    const busy = await rejectsWith(control.request('pty/send', { session: shell.id, text: 'echo must-not-run', timeout: 100 }), -32002);
    assert.match(busy.message, /busy/i);
    leaver.close();
    await leaver.closed;
    // Once the host has seen the client go (its count drops), the lock is free at once: `sleep 2` is
    // still running, and the new send is accepted (it then waits for the prompt, as a send does).
    await noShellClients('the host saw the client go');
    const r = await control.request<{ output: string; waitReason: string; status: { kind: string } }>('pty/send', {
      session: shell.id,
      text: 'echo after-$((2+3))',
      timeout: 20_000,
    });
    assert.equal(r.waitReason, 'stdin_read');
    assert.match(r.output, /^after-5$/m);
    assert.deepEqual(r.status, { kind: 'running' });
    assert.doesNotMatch((await control.request<{ screen: string }>('pty/read', { session: shell.id })).screen, /must-not-run/);
    // sleep is gone: nothing is left behind under the shell.
    await until(() => descendantsOf(shell.pid).length === 0, 5000, 'no children of the shell');
  });

  test('a program that exits during a send: waitReason session_exit with its exit status', { timeout: TEST_TIMEOUT }, async () => {
    const s = await newShell(control, 'exits-during-send');
    const r = await control.request<{ waitReason: string; status: Msg; output: string }>('pty/send', {
      session: s.id,
      text: 'echo bye-$((1+1)); sleep 0.3; exit 7',
      timeout: 20_000,
    });
    assert.equal(r.waitReason, 'session_exit');
    assert.deepEqual(r.status, { kind: 'exited', exitCode: 7, signal: null });
    assert.match(r.output, /^bye-2$/m);
    const st = await control.request<{ running: boolean; exitCode: number }>('pty/status', { session: s.id });
    assert.equal(st.running, false);
    assert.equal(st.exitCode, 7);
    // A later send or write does not hang: each is refused with a clear error, nothing typed.
    for (const [method, params] of [
      ['pty/send', { text: 'echo nobody', timeout: 5000 }],
      ['pty/write', { action: { text: 'x' } }],
    ] as const) {
      const e = await rejectsWith(control.request(method, { session: s.id, ...params }), -32000);
      assert.match(e.message, /exit/i, method);
      assert.equal((e.data as { reason: string }).reason, 'session_exited', method);
    }
    await control.request('pty/kill', { session: s.id });
    await until(async () => !(await control.request<{ sessions: SessionInfo[] }>('session/list')).sessions.some((x) => x.id === s.id), 5000, 'session removed');
    await hostStillServes();
  });
});

describe('many clients', () => {
  test('300 connections opened and dropped: fds, clients, children and memory return to normal', { timeout: 120_000 }, async () => {
    await noShellClients();
    const fds0 = openFds();
    const rss0 = process.memoryUsage().rss;
    const sessionPath = unixPath(shell.address);
    const controlPath = unixPath(h.host.controlAddress);

    const one = (i: number) =>
      new Promise<void>((resolve, reject) => {
        const useControl = i % 2 === 1;
        const sock = net.connect(useControl ? controlPath : sessionPath);
        const session = useControl ? { session: shell.id } : {};
        const timer = setTimeout(() => {
          sock.destroy();
          reject(new Error(`connection ${i} hung`));
        }, 20_000);
        sock.on('error', () => undefined); // a reset while we drop it is fine
        sock.on('close', () => {
          clearTimeout(timer);
          resolve();
        });
        sock.once('connect', () => {
          switch (i % 5) {
            case 0: // connect and leave at once
              sock.destroy();
              break;
            case 1: // one request, wait for the answer, close politely
              sock.once('data', () => sock.end());
              sock.write(JSON.stringify({ jsonrpc: '2.0', id: i, method: 'pty/status', params: session }) + '\n');
              break;
            case 2: // a long wait, then vanish without waiting for it
              sock.write(JSON.stringify({ jsonrpc: '2.0', id: i, method: 'pty/wait', params: { ...session, match: 'never-9d1', timeout: 30_000 } }) + '\n');
              setTimeout(() => sock.destroy(), 5);
              break;
            case 3: // subscribe with a replay, vanish once notifications flow
              sock.once('data', () => sock.destroy());
              sock.write(JSON.stringify({ jsonrpc: '2.0', id: i, method: 'pty/subscribe', params: { ...session, since: 0 } }) + '\n');
              break;
            default: // half a line, then gone
              sock.write('{"jsonrpc":"2.0","id":1,"meth');
              setTimeout(() => sock.destroy(), 5);
          }
        });
      });

    for (let batch = 0; batch < 6; batch++) {
      await Promise.all(Array.from({ length: 50 }, (_, k) => one(batch * 50 + k)));
    }

    // Every server-side socket is closed again: the process's descriptor count returns to where it was.
    const slack = 6;
    await until(() => openFds() <= fds0 + slack, 10_000, `open fds back near ${fds0} (now ${openFds()})`);
    await noShellClients('every connection uncounted');
    assert.deepEqual(descendantsOf(shell.pid), [], 'no leftover processes under the shell');
    const grown = process.memoryUsage().rss - rss0;
    assert.ok(grown < 100 * 1024 * 1024, `rss grew by ${Math.round(grown / 1e6)} MB`);
    await hostStillServes();
  });
});

/**
 * What the host may keep of a flooded session with a subscriber that does not read, by design: the
 * session's ring; the output waiting for the mirror's parser (at most 4 MiB: Backlog.MaxBytes in
 * src/core/mirror/mirror-proxy.ts); what is queued for the client, which stops growing once past
 * the high-water mark (by one notification at most: twice the mark); and the socket writer's pool
 * of free blocks (8 of 256 KiB: src/transport/base/frame-writer.ts). The memory held, measured
 * after a full collection, must grow by less than this while the flood is twice as large.
 */
const KEPT_BYTES = DEFAULT_RING_BYTES + 4 * 1024 * 1024 + 2 * CLIENT_HIGH_WATER_BYTES + 8 * 256 * 1024;

describe('clients that do not read', () => {
  test('a subscriber that stops reading costs no memory, others are served, it is told what it missed', { timeout: FLOOD_TIMEOUT }, async (t) => {
    const s = await newShell(control, 'flood');
    const session = h.host.registry.get(s.id)!;
    // Twice what may be kept: a host that queued the flood for the slow client fails.
    const total = 2 * KEPT_BYTES;

    // The slow client: a raw socket that subscribes, then stops reading.
    const sock = net.connect(unixPath(s.address));
    openClients.add({ close: () => sock.destroy() });
    await new Promise<void>((resolve, reject) => {
      sock.once('connect', resolve);
      sock.once('error', reject);
    });
    const msgs: Msg[] = [];
    const decoder = new StringDecoder('utf8');
    let pending = '';
    sock.on('data', (chunk: Buffer) => {
      pending += decoder.write(chunk);
      for (let nl = pending.indexOf('\n'); nl >= 0; nl = pending.indexOf('\n')) {
        msgs.push(JSON.parse(pending.slice(0, nl)));
        pending = pending.slice(nl + 1);
      }
    });
    sock.write(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'pty/subscribe', params: {} }) + '\n');
    const subRes = (await until(() => msgs.find((m) => m.id === 1), 10_000, 'subscribe answer'))!;
    assert.equal(typeof subRes.result?.cursor, 'number', JSON.stringify(subRes));
    const startCursor: number = subRes.result.cursor;
    sock.pause();

    // Another client, on the control socket, starts the flood and keeps asking for the status.
    const other = await rpcClient(h.host.controlAddress);
    const held0 = heldBytes();
    let maxGrowth = 0;
    await other.request('pty/write', { session: s.id, action: { text: `yes | head -c ${total}; echo flood-done-$((3*3))\r` } });
    let statuses = 0;
    let statusesDuringFlood = 0;
    const deadline = Date.now() + FLOOD_TIMEOUT - 30_000;
    for (;;) {
      const during = session.cursor < total;
      // The bound's timer is cleared once answered: left running, each would keep this file's process alive 15 s.
      let unanswered: NodeJS.Timeout | undefined;
      const st = await Promise.race([
        other.request<{ running: boolean; pid: number }>('pty/status', { session: s.id }),
        new Promise<never>((_, reject) => {
          unanswered = setTimeout(() => reject(new Error('pty/status was not answered while the session floods')), 15_000);
        }),
      ]).finally(() => clearTimeout(unanswered));
      assert.equal(st.running, true);
      statuses++;
      if (during) statusesDuringFlood++;
      maxGrowth = Math.max(maxGrowth, heldBytes() - held0);
      const w = await other.request<{ matched: boolean }>('pty/wait', { session: s.id, match: 'flood-done-9', timeout: 250 });
      if (w.matched) break;
      assert.ok(Date.now() < deadline, `the flood did not finish (cursor ${session.cursor})`);
    }
    assert.ok(session.cursor > total, `all output went through (cursor ${session.cursor})`);
    assert.ok(statusesDuringFlood >= 1, `status answered during the flood (${statusesDuringFlood} of ${statuses})`);
    maxGrowth = Math.max(maxGrowth, heldBytes() - held0);
    t.diagnostic(
      `memory held grew by ${(maxGrowth / 1e6).toFixed(1)} MB at most (bound ${(KEPT_BYTES / 1e6).toFixed(1)} MB) over a ${(total / 1e6).toFixed(0)} MB flood`,
    );
    assert.ok(
      maxGrowth < KEPT_BYTES,
      `memory held grew by ${(maxGrowth / 1e6).toFixed(1)} MB (at most ${(KEPT_BYTES / 1e6).toFixed(1)}: what the host may keep) while a subscriber did not read a ${(total / 1e6).toFixed(0)} MB flood`,
    );
    // The paused client received only a small part so far.
    const seenWhilePaused = msgs.filter((m) => m.method === 'pty/output').length;

    // It reads again: the backlog arrives, then a notification that says what it missed.
    sock.resume();
    await until(
      () => {
        const last = msgs.filter((m) => m.method === 'pty/output').at(-1);
        return last && last.params.cursor === session.cursor;
      },
      30_000,
      'the subscriber to catch up',
    );
    const outs = msgs.filter((m) => m.method === 'pty/output');
    assert.ok(outs.length > seenWhilePaused);
    const withDrop = outs.filter((m) => (m.params.dropped ?? 0) > 0);
    assert.ok(withDrop.length >= 1, 'a notification carries dropped > 0');
    let cursor = startCursor;
    let received = 0;
    let dropped = 0;
    for (const m of outs) {
      const bytes = Buffer.byteLength(m.params.data, 'utf8');
      const d = m.params.dropped ?? 0;
      assert.equal(m.params.cursor, cursor + d + bytes, 'each cursor is the previous one plus what was dropped and sent');
      cursor = m.params.cursor;
      received += bytes;
      dropped += d;
    }
    assert.equal(received + dropped, session.cursor - startCursor);
    assert.ok(dropped > total / 2, `most of the flood was dropped for the slow client (${dropped})`);
    assert.ok(received < total / 2, `the slow client was not sent everything (${received})`);
    assert.match(
      outs
        .map((m) => m.params.data)
        .join('')
        .slice(-4096),
      /flood-done-9/,
    );

    sock.destroy();
    await other.request('pty/kill', { session: s.id });
    other.close();
    await hostStillServes();
  });

  test(
    'a client that pipelines requests and never reads the answers: memory stays bounded, all answers arrive later',
    { timeout: FLOOD_TIMEOUT },
    async (t) => {
      const s = await newShell(control, 'pipeline');
      // Fill the 1 MiB ring, so each pty/output {since: 0} answer is about a megabyte.
      const filled = await control.request<{ waitReason: string }>('pty/send', {
        session: s.id,
        text: "head -c 1200000 /dev/zero | tr '\\0' y",
        timeout: 60_000,
      });
      assert.equal(filled.waitReason, 'stdin_read');
      const probe = await control.request<{ data: string }>('pty/output', { session: s.id, since: 0 });
      assert.ok(probe.data.length > 1_000_000, `the ring is full (${probe.data.length})`);

      const sock = net.connect(unixPath(s.address));
      openClients.add({ close: () => sock.destroy() });
      await new Promise<void>((resolve, reject) => {
        sock.once('connect', resolve);
        sock.once('error', reject);
      });
      sock.pause();
      const n = 150;
      const held0 = heldBytes();
      let lines = '';
      for (let i = 0; i < n; i++) lines += JSON.stringify({ jsonrpc: '2.0', id: i, method: 'pty/output', params: { since: 0 } }) + '\n';
      sock.write(lines);
      // Give the host time to do what it will with them; meanwhile it serves everyone else.
      let maxGrowth = 0;
      for (let k = 0; k < 8; k++) {
        await sleep(250);
        await hostStillServes();
        maxGrowth = Math.max(maxGrowth, heldBytes() - held0);
      }
      // Unbounded, the host would hold every answer (150 MB). It may hold what is queued up to the
      // mark where it stops starting a client's requests, and one batch of answers over it.
      const answerBytes = probe.data.length;
      const kept = REQUEST_HIGH_WATER_BYTES + REQUESTS_PER_TURN * answerBytes;
      t.diagnostic(
        `memory held grew by ${(maxGrowth / 1e6).toFixed(1)} MB at most (bound ${(kept / 1e6).toFixed(1)} MB) for ${n} answers of ${(answerBytes / 1e6).toFixed(1)} MB`,
      );
      assert.ok(
        maxGrowth < kept,
        `memory held grew by ${(maxGrowth / 1e6).toFixed(1)} MB (at most ${(kept / 1e6).toFixed(1)}: the requests' high-water mark and one batch of answers) for a client that does not read`,
      );

      // Once it reads, every answer arrives.
      let answers = 0;
      sock.on('data', (chunk: Buffer) => {
        for (let i = chunk.indexOf(0x0a); i >= 0; i = chunk.indexOf(0x0a, i + 1)) answers++;
      });
      sock.resume();
      await until(() => answers === n, FLOOD_TIMEOUT / 2, `all ${n} answers (got ${answers})`);
      sock.destroy();
      await control.request('pty/kill', { session: s.id });
    },
  );
});

describe('exit drain', () => {
  test('8 MiB printed right before exit is delivered whole, 5 times in a row', { timeout: FLOOD_TIMEOUT }, async () => {
    const big = await startHost({ ringBytes: 16 * 1024 * 1024 });
    hosts.push(big);
    const c = await rpcClient(big.host.controlAddress);
    const size = 8 * 1024 * 1024;
    try {
      for (let run = 0; run < 5; run++) {
        const info = await c.request<SessionInfo>('session/create', {
          command: 'bash',
          args: ['--norc', '--noprofile', '-c', `head -c ${size} /dev/zero | tr '\\0' x; exit`],
          name: `drain-${run}`,
        });
        startedPids.add(info.pid);
        let xs = 0;
        let last = -1;
        let exit: Notification['params'] | undefined;
        const sub = c.onNotification((n) => {
          if (n.params.session !== info.id) return;
          if (n.method === 'pty/output') {
            assert.equal(n.params.dropped ?? 0, 0, 'nothing dropped from a 16 MiB ring');
            xs += countX(String(n.params.data));
            last = n.params.cursor as number;
          } else if (n.method === 'pty/exit') exit = n.params;
        });
        const r = await c.request<{ cursor: number }>('pty/subscribe', { session: info.id, since: 0 });
        assert.equal(r.cursor, 0);
        const ex = await until(() => exit, FLOOD_TIMEOUT / 5 - 5000, `the exit of run ${run}`);
        sub.dispose();
        assert.equal(xs, size, `run ${run}: every byte arrived through pty/subscribe`);
        assert.equal(last, size);
        assert.equal(ex!.exitCode, 0);

        // The same bytes through pty/output polling from cursor 0.
        let since = 0;
        let polled = 0;
        for (;;) {
          const o = await c.request<{ data: string; cursor: number; dropped: number; running: boolean }>('pty/output', { session: info.id, since });
          assert.equal(o.dropped, 0);
          assert.equal(o.running, false);
          if (o.data === '') break;
          polled += countX(o.data);
          since = o.cursor;
        }
        assert.equal(polled, size, `run ${run}: every byte is readable through pty/output`);
        await c.request('pty/kill', { session: info.id });
      }
    } finally {
      c.close();
    }
  });
});
