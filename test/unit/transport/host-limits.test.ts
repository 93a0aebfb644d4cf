// The limits a local client cannot go past (README "Reliability", src/core/base/limits.ts): sessions
// per host, connections per socket, requests in flight per connection. Over each one a call or a
// connection gets a clear error naming the limit; the host and everyone else go on as before.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as net from 'node:net';
import { MAX_CONNECTIONS_PER_SESSION_SOCKET, MAX_CONTROL_CONNECTIONS, MAX_IN_FLIGHT_REQUESTS } from '../../../src/core/base/limits';
import { parseAddress } from '../../../src/transport/address';
import type { RpcClient } from '../../../src/transport/rpc-client';
import { connect, rejectsWith, startHost, TEST_WRITER, until } from '../../helpers/host';
import { request, startHttpHost, wsOpen } from '../../helpers/http';

const TEST_TIMEOUT = 30_000;
const SERVER_ERROR = -32000;

interface SessionInfo {
  id: string;
  address: string;
}

const cleanups: (() => unknown)[] = [];
after(async () => {
  for (const fn of cleanups.reverse()) await fn();
});

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
  test('session/create past the limit is -32000 naming the limit on JSON-RPC, an error on REST and MCP; closing one makes room', { timeout: TEST_TIMEOUT }, async () => {
    const h = await startHttpHost([], { maxSessions: 2 });
    cleanups.push(() => h.close());
    const c = await connect(h.host.controlAddress);
    cleanups.push(() => c.close());
    const first = await c.request<SessionInfo>('session/create', { command: 'cat' });
    await c.request('session/create', { command: 'cat' });

    const e = await rejectsWith(c.request('session/create', { command: 'cat' }), SERVER_ERROR);
    assert.match(e.message, /Too many sessions.*the limit is 2/);
    assert.equal(h.host.registry.size, 2);

    const rest = await request(h.port, 'POST', '/sessions', { token: h.token, body: { command: 'cat' } });
    assert.equal(rest.status, 400, rest.text);
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
  });
});

describe('connections per socket (the real defaults)', () => {
  test(`a session socket serves ${MAX_CONNECTIONS_PER_SESSION_SOCKET} clients; one more gets one -32000 line and is closed; the others go on`, { timeout: TEST_TIMEOUT }, async () => {
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
    assert.equal(answer.error.code, SERVER_ERROR);
    assert.match(answer.error.message, new RegExp(`Too many connections.*the limit is ${MAX_CONNECTIONS_PER_SESSION_SOCKET}`));

    const status = await clients[0].request<{ running: boolean }>('pty/status');
    assert.equal(status.running, true);
    // One leaves: a newcomer is served again.
    clients.pop()!.close();
    await until(() => h.host.connections < MAX_CONNECTIONS_PER_SESSION_SOCKET, 5000, 'the closed client to be gone');
    const newcomer = await connect(address);
    cleanups.push(() => newcomer.close());
    assert.equal((await newcomer.request<{ running: boolean }>('pty/status')).running, true);
  });

  test(`the control socket serves ${MAX_CONTROL_CONNECTIONS} clients; one more gets one -32000 line and is closed`, { timeout: TEST_TIMEOUT }, async () => {
    const h = await startHost();
    cleanups.push(() => h.close());
    const address = h.host.controlAddress;
    const clients = await openClients(address, MAX_CONTROL_CONNECTIONS);
    await Promise.all(clients.map((c) => c.request('session/list')));

    const answer = JSON.parse((await connectAndReadAll(address)).trim());
    assert.equal(answer.error.code, SERVER_ERROR);
    assert.match(answer.error.message, new RegExp(`Too many connections.*the limit is ${MAX_CONTROL_CONNECTIONS}`));
    assert.ok(Array.isArray((await clients[0].request<{ sessions: unknown[] }>('session/list')).sessions));
  });
});

describe('requests in flight per connection', () => {
  test('past the limit a request is answered at once with -32000; the connection and a bystander go on, and room comes back as calls end', { timeout: TEST_TIMEOUT }, async () => {
    const h = await startHost({ maxInFlightRequests: 3 });
    cleanups.push(() => h.close());
    const session = await h.host.createSession({ command: 'cat' });
    const c = await connect(h.host.controlAddress);
    const bystander = await connect(h.host.controlAddress);
    cleanups.push(() => c.close(), () => bystander.close());

    const waits = [1, 2, 3].map(() => c.request<{ matched: boolean }>('pty/wait', { session: session.id, match: 'go-now', timeout: 20_000 }));
    const e = await rejectsWith(c.request('pty/status', { session: session.id }), SERVER_ERROR);
    assert.match(e.message, /Too many requests in flight.*the limit is 3/);
    assert.equal((await bystander.request<{ running: boolean }>('pty/status', { session: session.id })).running, true);

    // The waits end (their text shows up): the connection takes requests again.
    await bystander.request('pty/write', { session: session.id, action: { text: 'go-now\n' } });
    for (const w of await Promise.all(waits)) assert.equal(w.matched, true);
    assert.equal((await c.request<{ running: boolean }>('pty/status', { session: session.id })).running, true);
  });
});

describe('requests in flight on the WebSocket /rpc (the real default)', () => {
  test(`${MAX_IN_FLIGHT_REQUESTS} waiting calls are taken; the next is answered at once with -32000 and the socket goes on`, { timeout: TEST_TIMEOUT }, async () => {
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
    assert.equal(over.error.code, SERVER_ERROR);
    assert.match(over.error.message, new RegExp(`Too many requests in flight.*the limit is ${MAX_IN_FLIGHT_REQUESTS}`));

    session.write('go-now\n', TEST_WRITER);
    const last = await ws.next((m) => m.id === MAX_IN_FLIGHT_REQUESTS, 'the last wait to match');
    assert.equal(last.result.matched, true);
    ws.send({ jsonrpc: '2.0', id: 'after', method: 'pty/status', params: { session: session.id } });
    assert.equal((await ws.next((m) => m.id === 'after', 'pty/status after the waits')).result.running, true);
  });
});
