// The limits a local client cannot go past (README "Reliability", src/core/base/limits.ts): sessions
// per host, connections per socket, requests in flight per connection. Over each one a call or a
// connection gets a clear error naming the limit; the host and everyone else go on as before.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as http from 'node:http';
import * as net from 'node:net';
import { MAX_CONNECTIONS_PER_SESSION_SOCKET, MAX_CONTROL_CONNECTIONS, MAX_IN_FLIGHT_REQUESTS } from '../../../../src/core/base/limits';
import { parseAddress } from '../../../../src/transport/base/address';
import type { RpcClient } from '../../../../src/transport/client/rpc-client';
import { connect, rejectsWith, startHost, TEST_WRITER, until, clientsClosed } from '../../../helpers/host';
import { request, startHttpHost, wsConnect, wsOpen } from '../../../helpers/http';
import { ensureNoDisposablesAreLeakedBySuite } from '../../../helpers/leak-tracker';

const TEST_TIMEOUT = 30_000;
/** socket-pty's "server error": what every surface answers for a limit reached, with `reason` (docs/protocol.md#4-error-codes). */
const LIMIT_REACHED = -32000;

interface SessionInfo {
  id: string;
  address: string;
}

const cleanups: (() => unknown)[] = [];
after(async () => {
  for (const fn of cleanups.reverse()) await fn();
});
// Once the shared host is closed, nothing the suite made is left (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedBySuite(clientsClosed);

/** Connects a raw socket to `address` and resolves with everything it receives until the host closes it. */
function connectAndReadAll(address: string): Promise<string> {
  const ep = parseAddress(address);
  return new Promise((resolve, reject) => {
    const socket = ep.type === 'unix' ? net.connect(ep.path) : net.connect(ep.port, ep.host);
    let text = '';
    socket.on('data', (c: Buffer) => (text += c.toString('utf8')));
    socket.on('close', () => resolve(text));
    socket.on('error', reject);
  });
}

/** Opens `n` clients on `address` and checks each is served (so each counts as open on the host). */
async function openClients(address: string, n: number): Promise<RpcClient[]> {
  const clients = await Promise.all(Array.from({ length: n }, () => connect(address)));
  cleanups.push(() => clients.forEach((c) => c.close()));
  return clients;
}

describe('sessions per host', () => {
  test(
    'session/create past the limit is -32000 naming the limit on JSON-RPC, 429 on REST, an error on MCP; closing one makes room',
    { timeout: TEST_TIMEOUT },
    async () => {
      const h = await startHttpHost([], { maxSessions: 2 });
      cleanups.push(() => h.close());
      const c = await connect(h.host.controlAddress);
      cleanups.push(() => c.close());
      const first = await c.request<SessionInfo>('session/create', { command: 'cat' });
      await c.request('session/create', { command: 'cat' });

      const e = await rejectsWith(c.request('session/create', { command: 'cat' }), LIMIT_REACHED);
      assert.match(e.message, /Too many sessions.*the limit is 2/);
      assert.deepEqual(e.data, { limit: 'sessions', max: 2, reason: 'limit_reached' });
      assert.equal(h.host.registry.size, 2);

      const rest = await request(h.port, 'POST', '/sessions', { token: h.token, body: { command: 'cat' } });
      assert.equal(rest.status, 429, rest.text);
      assert.equal(rest.json.ok, false);
      assert.equal(rest.json.error.code, 'TOO_MANY_REQUESTS');
      assert.match(rest.json.error.message, /Too many sessions.*the limit is 2/);

      const mcp = await request(h.port, 'POST', '/mcp', {
        token: h.token,
        body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'open_session', arguments: { command: 'cat' } } },
        headers: { accept: 'application/json, text/event-stream' },
      });
      assert.equal(mcp.status, 200, mcp.text);
      assert.equal(mcp.json.result.isError, true, mcp.text);
      assert.match(JSON.stringify(mcp.json.result.content), /Too many sessions/);
      assert.equal(h.host.registry.size, 2);

      await c.request('pty/kill', { session: first.id });
      await until(() => h.host.registry.size < 2, 5000, 'the killed session to leave the list');
      const again = await c.request<SessionInfo>('session/create', { command: 'cat' });
      assert.ok(again.id);
    },
  );
});

describe('connections per socket (the real defaults)', () => {
  test(
    `a session socket serves ${MAX_CONNECTIONS_PER_SESSION_SOCKET} clients; one more gets one -32000 line and is closed; the others go on`,
    { timeout: TEST_TIMEOUT },
    async () => {
      const h = await startHost();
      cleanups.push(() => h.close());
      const session = await h.host.createSession({ command: 'cat' });
      const address = h.host.describe(session).address;
      const clients = await openClients(address, MAX_CONNECTIONS_PER_SESSION_SOCKET);
      await Promise.all(clients.map((c) => c.request('pty/status')));

      const refused = await connectAndReadAll(address);
      const lines = refused.trim().split('\n');
      assert.equal(lines.length, 1, refused);
      const answer = JSON.parse(lines[0]);
      assert.equal(answer.id, null);
      assert.equal(answer.error.code, LIMIT_REACHED);
      assert.equal(answer.error.data.reason, 'limit_reached');
      assert.match(answer.error.message, new RegExp(`Too many connections.*the limit is ${MAX_CONNECTIONS_PER_SESSION_SOCKET}`));

      const status = await clients[0].request<{ running: boolean }>('pty/status');
      assert.equal(status.running, true);
      // One leaves: a newcomer is served again.
      clients.pop()!.close();
      await until(() => h.host.connections < MAX_CONNECTIONS_PER_SESSION_SOCKET, 5000, 'the closed client to be gone');
      const newcomer = await connect(address);
      cleanups.push(() => newcomer.close());
      assert.equal((await newcomer.request<{ running: boolean }>('pty/status')).running, true);
    },
  );

  test(`the control socket serves ${MAX_CONTROL_CONNECTIONS} clients; one more gets one -32000 line and is closed`, { timeout: TEST_TIMEOUT }, async () => {
    const h = await startHost();
    cleanups.push(() => h.close());
    const address = h.host.controlAddress;
    const clients = await openClients(address, MAX_CONTROL_CONNECTIONS);
    await Promise.all(clients.map((c) => c.request('session/list')));

    const answer = JSON.parse((await connectAndReadAll(address)).trim());
    assert.equal(answer.error.code, LIMIT_REACHED);
    assert.match(answer.error.message, new RegExp(`Too many connections.*the limit is ${MAX_CONTROL_CONNECTIONS}`));
    assert.ok(Array.isArray((await clients[0].request<{ sessions: unknown[] }>('session/list')).sessions));
  });
});

describe('requests in flight per connection', () => {
  test(
    'past the limit a request is answered at once with -32000; the connection and a bystander go on, and room comes back as calls end',
    { timeout: TEST_TIMEOUT },
    async () => {
      const h = await startHost({ maxInFlightRequests: 3 });
      cleanups.push(() => h.close());
      const session = await h.host.createSession({ command: 'cat' });
      const c = await connect(h.host.controlAddress);
      const bystander = await connect(h.host.controlAddress);
      cleanups.push(
        () => c.close(),
        () => bystander.close(),
      );

      const waits = [1, 2, 3].map(() => c.request<{ matched: boolean }>('pty/wait', { session: session.id, match: 'go-now', timeout: 20_000 }));
      const e = await rejectsWith(c.request('pty/status', { session: session.id }), LIMIT_REACHED);
      assert.match(e.message, /Too many requests in flight.*the limit is 3/);
      assert.equal((await bystander.request<{ running: boolean }>('pty/status', { session: session.id })).running, true);

      // The waits end (their text shows up): the connection takes requests again.
      await bystander.request('pty/write', { session: session.id, action: { text: 'go-now\n' } });
      for (const w of await Promise.all(waits)) assert.equal(w.matched, true);
      assert.equal((await c.request<{ running: boolean }>('pty/status', { session: session.id })).running, true);
    },
  );
});

describe('requests in flight on the WebSocket /rpc (the real default)', () => {
  test(
    `${MAX_IN_FLIGHT_REQUESTS} waiting calls are taken; the next is answered at once with -32000 and the socket goes on`,
    { timeout: TEST_TIMEOUT },
    async () => {
      const h = await startHttpHost();
      cleanups.push(() => h.close());
      const session = await h.host.createSession({ command: 'cat' });
      const ws = await wsOpen(h.port, '/rpc', { token: h.token });
      cleanups.push(() => ws.close());
      for (let id = 1; id <= MAX_IN_FLIGHT_REQUESTS; id++) {
        ws.send({ jsonrpc: '2.0', id, method: 'pty/wait', params: { session: session.id, match: 'go-now', timeout: 20_000 } });
      }
      ws.send({ jsonrpc: '2.0', id: 'over', method: 'pty/status', params: { session: session.id } });
      const over = await ws.next((m) => m.id === 'over', 'the answer past the limit');
      assert.equal(over.error.code, LIMIT_REACHED);
      assert.match(over.error.message, new RegExp(`Too many requests in flight.*the limit is ${MAX_IN_FLIGHT_REQUESTS}`));

      session.write('go-now\n', TEST_WRITER);
      const last = await ws.next((m) => m.id === MAX_IN_FLIGHT_REQUESTS, 'the last wait to match');
      assert.equal(last.result.matched, true);
      ws.send({ jsonrpc: '2.0', id: 'after', method: 'pty/status', params: { session: session.id } });
      assert.equal((await ws.next((m) => m.id === 'after', 'pty/status after the waits')).result.running, true);
    },
  );
});

/** A tools/call over `/mcp` with `token` (one POST, answered as JSON). */
function mcpCall(port: number, token: string, id: number | string, name: string, args: Record<string, unknown>) {
  return request(port, 'POST', '/mcp', {
    token,
    body: { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } },
    headers: { accept: 'application/json, text/event-stream' },
  });
}

/**
 * A `wait_for` over `/mcp` that asks for progress, so its answer is an event stream whose headers
 * come as soon as the host runs the call: `running` resolves then (the call holds its slot), `result`
 * with the tool result at the end.
 */
function mcpWaitWithProgress(port: number, token: string, id: number, args: Record<string, unknown>) {
  const body = JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'wait_for', arguments: args, _meta: { progressToken: id } } });
  let running!: () => void;
  const started = new Promise<void>((r) => (running = r));
  const result = new Promise<any>((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/mcp',
        agent: false,
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'content-length': Buffer.byteLength(body),
        },
      },
      (res) => {
        assert.equal(res.statusCode, 200);
        running();
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString('utf8')));
        res.on('end', () => {
          const answers = text
            .split('\n')
            .filter((l) => l.startsWith('data: '))
            .map((l) => JSON.parse(l.slice(6)));
          resolve(answers.find((m) => m.id === id));
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
  return { started, result };
}

describe('requests in flight per token over HTTP (/mcp, REST)', () => {
  test(
    'past the limit /mcp answers 429 with a -32000 JSON-RPC error and REST 429 TOO_MANY_REQUESTS; another token is served; room comes back as calls end',
    { timeout: TEST_TIMEOUT },
    async () => {
      const h = await startHttpHost([], { maxInFlightRequests: 2 });
      cleanups.push(() => h.close());
      const session = await h.host.createSession({ command: 'cat' });
      const waits = [1, 2].map((id) => mcpWaitWithProgress(h.port, h.token, id, { session: session.id, match: 'go-now', timeout: 20_000 }));
      await Promise.all(waits.map((w) => w.started));

      const over = await mcpCall(h.port, h.token, 3, 'read_screen', { session: session.id });
      assert.equal(over.status, 429, over.text);
      assert.equal(over.json.jsonrpc, '2.0');
      assert.equal(over.json.error.code, LIMIT_REACHED);
      assert.match(over.json.error.message, /Too many requests in flight with this token.*the limit is 2/);
      assert.deepEqual(over.json.error.data, { limit: 'inFlightRequests', max: 2, reason: 'limit_reached' });
      const rest = await request(h.port, 'GET', '/sessions', { token: h.token });
      assert.equal(rest.status, 429, rest.text);
      assert.equal(rest.json.error.code, 'TOO_MANY_REQUESTS');

      // A scoped token counts on its own: its holder is served meanwhile.
      const scoped = h.http.tokens.share(session, 'view', 3600, true).token;
      const bystander = await mcpCall(h.port, scoped, 4, 'read_screen', { session: session.id });
      assert.equal(bystander.status, 200, bystander.text);
      assert.equal(bystander.json.result.isError, undefined, bystander.text);

      session.write('go-now\n', TEST_WRITER);
      for (const w of await Promise.all(waits.map((x) => x.result))) assert.equal(w.result.structuredContent.matched, true, JSON.stringify(w));
      const after = await mcpCall(h.port, h.token, 5, 'read_screen', { session: session.id });
      assert.equal(after.status, 200, after.text);
      assert.match(JSON.stringify(after.json.result.content), /go-now/);
    },
  );

  test("the WebSocket /rpc takes the host's lowered limit too", { timeout: TEST_TIMEOUT }, async () => {
    const h = await startHttpHost([], { maxInFlightRequests: 2 });
    cleanups.push(() => h.close());
    const session = await h.host.createSession({ command: 'cat' });
    const ws = await wsOpen(h.port, '/rpc', { token: h.token });
    cleanups.push(() => ws.close());
    for (const id of [1, 2]) ws.send({ jsonrpc: '2.0', id, method: 'pty/wait', params: { session: session.id, match: 'go-now', timeout: 20_000 } });
    ws.send({ jsonrpc: '2.0', id: 'over', method: 'pty/status', params: { session: session.id } });
    const over = await ws.next((m) => m.id === 'over', 'the answer past the limit');
    assert.equal(over.error.code, LIMIT_REACHED, JSON.stringify(over));
    assert.match(over.error.message, /Too many requests in flight.*the limit is 2/);
    session.write('go-now\n', TEST_WRITER);
    assert.equal((await ws.next((m) => m.id === 2, 'the second wait')).result.matched, true);
  });
});

/** Sends `GET /health` on a raw keep-alive connection and waits for its 200. */
function askHealth(socket: net.Socket, port: number, token: string): Promise<void> {
  let text = '';
  return new Promise<void>((resolve, reject) => {
    const onData = (c: Buffer) => {
      text += c.toString('utf8');
      if (!text.includes('"ok":true')) return;
      socket.off('data', onData);
      assert.match(text, /^HTTP\/1\.1 200 /);
      resolve();
    };
    socket.once('error', reject);
    socket.on('data', onData);
    socket.write(`GET /health HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${token}\r\nConnection: keep-alive\r\n\r\n`);
  });
}

/** A raw keep-alive connection that has been answered once (so the host counts it as open). */
async function openHttpConnection(port: number, token: string): Promise<net.Socket> {
  const socket = net.connect(port, '127.0.0.1');
  cleanups.push(() => socket.destroy());
  await askHealth(socket, port, token);
  return socket;
}

describe('HTTP connections at once', () => {
  test(
    'a connection past the limit gets 429 TOO_MANY_REQUESTS (REST) or a JSON-RPC error (/mcp) and is closed; the open ones go on; room comes back',
    { timeout: TEST_TIMEOUT },
    async () => {
      const h = await startHttpHost([], { maxHttpConnections: 2 });
      cleanups.push(() => h.close());
      const open = [await openHttpConnection(h.port, h.token), await openHttpConnection(h.port, h.token)];

      const rest = await request(h.port, 'GET', '/sessions', { token: h.token });
      assert.equal(rest.status, 429, rest.text);
      assert.equal(rest.json.error.code, 'TOO_MANY_REQUESTS');
      assert.match(rest.json.error.message, /Too many connections.*the limit is 2/);
      assert.equal(rest.headers.connection, 'close');
      const mcp = await mcpCall(h.port, h.token, 1, 'list_sessions', {});
      assert.equal(mcp.status, 429, mcp.text);
      assert.equal(mcp.json.error.code, LIMIT_REACHED);
      assert.deepEqual(mcp.json.error.data, { limit: 'connections', max: 2, reason: 'limit_reached' });
      const refused = await wsConnect(h.port, '/rpc', { token: h.token });
      assert.deepEqual(refused, { kind: 'refused', status: 429 });

      // The connections already open are served as before.
      await askHealth(open[0], h.port, h.token);
      open.pop()!.destroy();
      await until(async () => (await request(h.port, 'GET', '/sessions', { token: h.token })).status === 200, 5000, 'a newcomer to be served once one left');
    },
  );
});
