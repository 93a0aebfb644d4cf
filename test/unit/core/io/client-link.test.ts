// The client link (src/core/io/client-link.ts): one connected caller whatever its transport. Its
// subscriptions are reachable by session id and go with it; every write names its caller, over
// every transport, and the session remembers the last one (docs/protocol.md#ptyinfo `lastInput`). Real
// sessions, real sockets, a real `shared-pty mcp` (run `npm run build` first: it runs dist/).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { toDisposable } from '../../../../src/core/base/lifecycle';
import { ClientLink } from '../../../../src/core/io/client-link';
import { OutputSubscription, type NotificationSink } from '../../../../src/core/io/subscription';
import { dispatch } from '../../../../src/core/methods/dispatch';
import type { SessionInfo } from '../../../../src/core/methods/types';
import type { Session } from '../../../../src/core/session/session';
import type { InputSource } from '../../../../src/core/session/input/input-source';
import { SessionFollower } from '../../../../src/transport/client/session-follower';
import type { RpcClient } from '../../../../src/transport/client/rpc-client';
import { BASH, connect, rejectsWith, until, withTimeout } from '../../../helpers/host';
import { request, startHttpHost, wsOpen, type HttpHost } from '../../../helpers/http';
import { bashEnv, CLI, REPO_ROOT } from '../../../helpers/protocol';
import { ensureNoDisposablesAreLeakedBySuite } from '../../../helpers/leak-tracker';

const TEST_TIMEOUT = 60_000;

/** A sink that keeps every notification (never congested). */
class RecordingSink implements NotificationSink {
  readonly notes: Array<{ method: string; params: Record<string, unknown> }> = [];
  notify(method: string, params: Record<string, unknown>): void {
    this.notes.push({ method, params });
  }
  congested(): boolean {
    return false;
  }
  whenDrained(): { dispose(): void } {
    return toDisposable(() => {});
  }
  text(session: string): string {
    return this.notes
      .filter((n) => n.method === 'pty/output' && n.params.session === session)
      .map((n) => n.params.data)
      .join('');
  }
}

let h: HttpHost;
const clients: RpcClient[] = [];

async function shell(name: string): Promise<Session> {
  const s = await h.host.createSession({ ...BASH, name, cols: 80, rows: 24 });
  await until(async () => (await s.mirror.screen()).rows.join('\n').includes('$'), 10_000, `the prompt of ${name}`);
  return s;
}

async function client(address: string): Promise<RpcClient> {
  const c = await connect(address);
  clients.push(c);
  return c;
}

const clientsOf = (s: Session) => h.host.describe(s).clients;

/** Calls the method table as `link` would over its transport, follow-ups (a subscription's replay) included. */
async function call(link: ClientLink, method: string, params: Record<string, unknown>): Promise<unknown> {
  const { response, afterSend } = await dispatch(
    { jsonrpc: '2.0', id: 1, method, params },
    { mode: { kind: 'control' }, services: h.host, caller: link, signal: new AbortController().signal },
  );
  for (const fn of afterSend) fn();
  if (response.error) throw new Error(response.error.message);
  return response.result;
}

/** Waits until the session's last write came from `from`, written after `since` (ms). */
async function lastInputIs(s: Session, from: InputSource, since: number, what: string): Promise<void> {
  await until(() => s.lastInput && s.lastInput.at >= since && s.lastInput.transport === from.transport, 10_000, `${what}: lastInput ${JSON.stringify(from)}`);
  assert.deepEqual({ origin: s.lastInput!.origin, transport: s.lastInput!.transport }, from, what);
  assert.ok(s.lastInput!.at <= Date.now());
}

before(async () => {
  h = await startHttpHost();
});

after(async () => {
  for (const c of clients) c.close();
  await h?.close();
});
// Once the shared host is closed, nothing the suite made is left (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedBySuite();

describe('a link owns its subscriptions', () => {
  test(
    'pty/subscribe goes through the link: the subscription is reachable by session id; pty/unsubscribe and dispose release it',
    { timeout: TEST_TIMEOUT },
    async () => {
      const a = await shell('link-a');
      const b = await shell('link-b');
      const sink = new RecordingSink();
      const link = new ClientLink({ origin: 'script', transport: 'control', sink });
      assert.equal(link.subscription(a.id), undefined);

      assert.deepEqual(await call(link, 'pty/subscribe', { session: a.id, since: 0 }), { cursor: 0 });
      const sub = link.subscription(a.id);
      assert.ok(sub instanceof OutputSubscription, 'the subscription is reachable through its link');
      await call(link, 'pty/subscribe', { session: b.id });
      assert.deepEqual(link.subscribedSessions.sort(), [a.id, b.id].sort());
      assert.equal(clientsOf(a), 1, 'a control subscriber counts as a client');
      assert.equal(clientsOf(b), 1);

      // Its notifications reach the link's sink, tagged with the session.
      await call(link, 'pty/write', { session: a.id, action: { text: 'echo via-link-$((3*4))\r' } });
      await until(() => sink.text(a.id).includes('via-link-12'), 10_000, 'output through the link');

      // Subscribing again replaces the subscription (still one client).
      await call(link, 'pty/subscribe', { session: a.id });
      assert.notEqual(link.subscription(a.id), sub);
      assert.equal(clientsOf(a), 1);

      await call(link, 'pty/unsubscribe', { session: a.id });
      assert.equal(link.subscription(a.id), undefined);
      assert.equal(clientsOf(a), 0);

      link.dispose();
      assert.equal(link.subscription(b.id), undefined, 'a disposed link holds nothing');
      assert.equal(clientsOf(b), 0);
      h.host.registry.remove(a.id);
      h.host.registry.remove(b.id);
    },
  );

  test('closing a socket disposes its link: every subscription goes, the client counts come back', { timeout: TEST_TIMEOUT }, async () => {
    const a = await shell('close-a');
    const b = await shell('close-b');
    const control = await client(h.host.controlAddress);
    await control.request('pty/subscribe', { session: a.id, since: 0 });
    await control.request('pty/subscribe', { session: b.id, since: 0 });
    // The session's own socket: the connection is the client, its subscription does not count twice.
    const own = await client(h.host.describe(a).address);
    await own.request('pty/subscribe', {});
    const rpc = await wsOpen(h.port, '/rpc', { token: h.token });
    rpc.send({ jsonrpc: '2.0', id: 1, method: 'pty/subscribe', params: { session: b.id } });
    await rpc.next((m) => m.id === 1, 'the /rpc subscribe answer');
    await until(() => clientsOf(a) === 2 && clientsOf(b) === 2, 5000, 'every subscriber counted');

    control.close();
    await until(() => clientsOf(a) === 1 && clientsOf(b) === 1, 5000, 'the control socket link released both subscriptions');
    own.close();
    await until(() => clientsOf(a) === 0, 5000, 'the session socket link released its client');
    await rpc.close();
    await until(() => clientsOf(b) === 0, 5000, 'the /rpc link released its subscription');
    h.host.registry.remove(a.id);
    h.host.registry.remove(b.id);
  });
});

describe('every write names its caller', () => {
  test('over each transport the session records origin and transport of the last write', { timeout: 120_000 }, async () => {
    const s = await shell('origins');
    const info = h.host.describe(s);
    assert.equal(s.lastInput, undefined, 'nothing written yet');
    let t = Date.now();

    // The session's own socket and the control socket: scripts.
    const own = await client(info.address);
    await own.request('pty/write', { action: { text: ': own\r' } });
    await lastInputIs(s, { origin: 'script', transport: 'socket' }, t, 'per-session socket');
    t = Date.now();
    const control = await client(h.host.controlAddress);
    await control.request('pty/write', { session: s.id, action: { key: 'Enter' } });
    await lastInputIs(s, { origin: 'script', transport: 'control' }, t, 'control socket pty/write');
    t = Date.now();
    await own.request('pty/send', { text: ': sent', timeout: 10_000 });
    await lastInputIs(s, { origin: 'script', transport: 'socket' }, t, 'pty/send');

    // The editor terminal and attach follow as the user: their writes on that connection are the user's.
    t = Date.now();
    const view = await client(h.host.controlAddress);
    const follower = new SessionFollower(view, s.id, { snapshot: () => {}, output: () => {}, exit: () => {} });
    await follower.start({ snapshotScrollback: 10 });
    await view.request('pty/write', { session: s.id, action: { text: ': typed\r' } });
    await lastInputIs(s, { origin: 'user', transport: 'control' }, t, 'a follower');
    follower.dispose();

    // /rpc: a script; the stream WebSocket: the browser view, the user's.
    t = Date.now();
    const rpc = await wsOpen(h.port, '/rpc', { token: h.token });
    rpc.send({ jsonrpc: '2.0', id: 1, method: 'pty/write', params: { session: s.id, action: { key: 'Enter' } } });
    await rpc.next((m) => m.id === 1, 'the /rpc answer');
    await lastInputIs(s, { origin: 'script', transport: 'ws-rpc' }, t, '/rpc');
    await rpc.close();
    t = Date.now();
    const stream = await wsOpen(h.port, `/sessions/${s.id}/stream`, { token: h.token });
    stream.send({ type: 'write', data: ': streamed\r' });
    await lastInputIs(s, { origin: 'user', transport: 'ws-stream' }, t, 'the stream WebSocket');
    await stream.close();

    // REST: a script.
    t = Date.now();
    const rest = await request(h.port, 'POST', `/sessions/${s.id}/write`, { token: h.token, body: { data: ': rest' } });
    assert.equal(rest.status, 200, rest.text);
    await lastInputIs(s, { origin: 'script', transport: 'rest' }, t, 'REST');

    // MCP over HTTP: an agent.
    t = Date.now();
    const httpAgent = new Client({ name: 'client-link-test', version: '0.0.0' });
    await withTimeout(
      httpAgent.connect(new StreamableHTTPClientTransport(new URL(`${h.http.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${h.token}` } } })),
      20_000,
      'MCP HTTP connect',
    );
    const viaHttp = await httpAgent.callTool({ name: 'send_keys', arguments: { session: s.id, keys: ['Enter'] } });
    assert.ok(!viaHttp.isError, JSON.stringify(viaHttp));
    await lastInputIs(s, { origin: 'agent', transport: 'mcp-http' }, t, '/mcp');
    await httpAgent.close();

    // MCP over stdio (`shared-pty mcp`, relaying through the control socket): an agent.
    t = Date.now();
    const stdioAgent = new Client({ name: 'client-link-test', version: '0.0.0' });
    const env = bashEnv({ SHARED_PTY_DIR: h.dir }) as Record<string, string>;
    await withTimeout(
      stdioAgent.connect(new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp'], env, cwd: REPO_ROOT, stderr: 'pipe' })),
      30_000,
      'MCP stdio connect',
    );
    try {
      const viaStdio = await stdioAgent.callTool({ name: 'send_keys', arguments: { session: s.id, keys: ['Enter'] } });
      assert.ok(!viaStdio.isError, JSON.stringify(viaStdio));
      await lastInputIs(s, { origin: 'agent', transport: 'mcp-stdio' }, t, 'shared-pty mcp');
    } finally {
      await stdioAgent.close();
    }
    h.host.registry.remove(s.id);
  });

  test('saying who calls changes no answer; a malformed declaration is -32602; SessionInfo keeps its shape', { timeout: TEST_TIMEOUT }, async () => {
    const s = await shell('declare');
    const control = await client(h.host.controlAddress);
    const plain = await control.request<SessionInfo>('pty/info', { session: s.id });
    const declared = await control.request<SessionInfo>('pty/info', { session: s.id, client: { origin: 'user' } });
    assert.deepEqual(declared, plain);
    assert.equal((plain as SessionInfo & { lastInput?: unknown }).lastInput, null, 'pty/info says who typed last: nobody yet');
    await rejectsWith(control.request('pty/status', { session: s.id, client: { origin: 'root' } }), -32602);
    await rejectsWith(control.request('pty/status', { session: s.id, client: { origin: 'user', transport: 'rest' } }), -32602);
    h.host.registry.remove(s.id);
  });
});
