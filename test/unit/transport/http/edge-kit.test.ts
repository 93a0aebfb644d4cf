// The edge kit (docs/architecture.md, "The edge"): one rule decides which session a caller reaches
// (core/methods/access.ts `reachSession`), one list of error codes gives every surface its answer
// (core/base/errors.ts `ERROR_CODES`), and one router declared as data serves HTTP. Driven against a
// real host (node-pty, bash, its sockets and HTTP server, the MCP SDK client).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ERROR_CODES, REST_STATUS } from '../../../../src/core/base/errors';
import type { SessionInfo } from '../../../../src/core/methods/types';
import type { RpcClient } from '../../../../src/transport/client/rpc-client';
import { BASH, connect, rejectsWith, until, withTimeout } from '../../../helpers/host';
import { request, startHttpHost, wsConnect, wsOpen, type HttpHost, type WsClient } from '../../../helpers/http';
import { ensureNoDisposablesAreLeakedBySuite } from '../../../helpers/leak-tracker';

const SRC = path.join(__dirname, '..', '..', '..', '..', 'src');
const DOCS = path.join(__dirname, '..', '..', '..', '..', 'docs');
const FORBIDDEN = -32004;
/** socket-pty's "server error": what every surface answers for an exited session, a limit, a refusal, a host gone, with `data.reason` (docs/protocol.md#4-error-codes). */
const SERVER_ERROR = -32000;
const AGENT = { origin: 'agent', transport: 'mcp-stdio' } as const;

let h: HttpHost;
let ctl: RpcClient;
let a: SessionInfo;
let b: SessionInfo;
const clients: Client[] = [];
const sockets: WsClient[] = [];

async function mcp(token: string): Promise<Client> {
  const client = new Client({ name: 'edge-kit-test', version: '0' });
  clients.push(client);
  const transport = new StreamableHTTPClientTransport(new URL(`${h.http.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
  await withTimeout(client.connect(transport), 20_000, 'MCP connect');
  return client;
}

type ToolResult = { isError?: boolean; content: Array<{ type: string; text?: string }> };
const textOf = (r: ToolResult) => r.content.map((c) => c.text ?? '').join('');

let nextId = 1;
async function wsRpc(
  c: WsClient,
  method: string,
  params: Record<string, unknown>,
): Promise<{ result?: any; error?: { code: number; message: string; data?: any } }> {
  const id = nextId++;
  c.send({ jsonrpc: '2.0', id, method, params });
  return c.next((m) => m && m.id === id, `${method} answer`);
}

/** Every .ts file under src/, with its text. */
function sources(dir = SRC): Array<{ file: string; text: string }> {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return sources(p);
    return e.name.endsWith('.ts') ? [{ file: path.relative(SRC, p), text: fs.readFileSync(p, 'utf8') }] : [];
  });
}

before(async () => {
  h = await startHttpHost();
  ctl = await connect(h.host.controlAddress);
  a = (await ctl.call('session/create', { ...BASH, name: 'reach-a' })) as SessionInfo;
  b = (await ctl.call('session/create', { ...BASH, name: 'reach-b' })) as SessionInfo;
});

after(async () => {
  for (const c of clients) await c.close().catch(() => {});
  for (const s of sockets) await s.close().catch(() => {});
  // The control client is let go when its socket's close arrives: wait for it, so the leak check below sees it gone.
  if (ctl && !ctl.closed) {
    const closed = new Promise<void>((resolve) => ctl.onClose(() => resolve()));
    ctl.close();
    await closed;
  }
  await h?.close();
});
// Once the shared host is closed, nothing the suite made is left (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedBySuite();

describe('one reach rule for every surface', { timeout: 60_000 }, () => {
  test('a token for session A is refused B, known or not, alike over /rpc, REST, the stream, the view and /mcp', async () => {
    const { token } = (await ctl.call('session/share', { session: a.id, scope: 'control', reusable: true })) as { token: string };
    const said = `Forbidden: this token reaches only session ${a.id}`;
    const rpc = await wsOpen(h.port, '/rpc', { token });
    sockets.push(rpc);
    const agent = await mcp(token);
    for (const other of [b.id, b.name, 'no-such-session']) {
      const viaRpc = await wsRpc(rpc, 'pty/read', { session: other });
      assert.deepEqual(viaRpc.error, { code: FORBIDDEN, message: said }, `/rpc ${other}`);
      const viaRest = await request(h.port, 'GET', `/sessions/${encodeURIComponent(other)}`, { token });
      assert.equal(viaRest.status, REST_STATUS.FORBIDDEN, viaRest.text);
      assert.deepEqual(viaRest.json.error, { code: 'FORBIDDEN', message: said }, `REST ${other}`);
      const viaView = await request(h.port, 'GET', `/sessions/${encodeURIComponent(other)}/view`, { token, headers: { accept: 'application/json' } });
      assert.equal(viaView.status, REST_STATUS.FORBIDDEN, viaView.text);
      assert.equal(viaView.json.error.message, said, `view ${other}`);
      const viaStream = await wsConnect(h.port, `/sessions/${encodeURIComponent(other)}/stream`, { token });
      assert.equal(viaStream.kind === 'refused' && viaStream.status, 403, `stream ${other}`);
      const viaMcp = (await agent.callTool({ name: 'read_screen', arguments: { session: other } })) as ToolResult;
      assert.equal(viaMcp.isError, true);
      assert.equal(textOf(viaMcp), `Error ${FORBIDDEN}: ${said}`, `MCP ${other}`);
    }
    // Its own session it reaches everywhere, by id or by name.
    assert.equal((await wsRpc(rpc, 'pty/status', { session: a.name })).result?.running, true);
    assert.equal((await request(h.port, 'GET', `/sessions/${a.name}`, { token })).status, 200);
    const view = await request(h.port, 'GET', `/sessions/${a.name}/view`, { token, headers: { accept: 'application/json' } });
    assert.equal(view.json.data.id, a.id, view.text);
    assert.equal((await request(h.port, 'GET', '/health', { token })).json.data.sessions, 1);
  });

  test('the view reads what pty/info says, and the stream replays what pty/subscribe does: both through the table', async () => {
    const info = (await ctl.call('pty/info', { session: a.id })) as SessionInfo;
    const view = await request(h.port, 'GET', `/sessions/${a.id}/view`, { token: h.token, headers: { accept: 'application/json' } });
    const { id, name, cols, rows, running, exitCode } = info;
    assert.deepEqual({ ...view.json.data, readOnly: undefined }, { id, name, cols, rows, running, exitCode, readOnly: undefined });
    const unknown = await request(h.port, 'GET', '/sessions/no-such-session/view', { token: h.token });
    assert.equal(unknown.status, REST_STATUS.NOT_FOUND);
    assert.deepEqual(unknown.json.error, { code: 'NOT_FOUND', message: 'Unknown session: no-such-session' });
    await ctl.call('pty/write', { session: a.id, action: { text: 'echo through-$((20+3))\r' } });
    const stream = await wsOpen(h.port, `/sessions/${a.id}/stream`, { token: h.token });
    sockets.push(stream);
    await stream.streamUntil((t) => t.includes('through-23'), 'the replay');
    // The stream's link is a client of the session like any subscriber.
    await until(async () => ((await ctl.call('pty/info', { session: a.id })) as SessionInfo).clients >= 1, 5000, 'the stream counted as a client');
  });

  test('the rule is written once: no surface resolves a selector, subscribes or describes a session around the table', () => {
    for (const { file, text } of sources()) {
      if (file !== path.join('core', 'methods', 'access.ts')) assert.doesNotMatch(text, /registry\.resolve\(/, `${file} resolves a selector itself`);
      if (file.startsWith('transport')) {
        assert.doesNotMatch(text, /\blink\.subscribe\(/, `${file} subscribes around pty/subscribe`);
        assert.doesNotMatch(text, /services\.describe\(/, `${file} describes a session around pty/info`);
        // Paths are matched by the router (transport/http/http-router.ts), not by regexes or splits of their own.
        assert.doesNotMatch(text, /\/\^\\\/(sessions|replay|secret|view)/, `${file} matches a path with a regex of its own`);
      }
    }
  });
});

describe('each distinct code on each surface', { timeout: 60_000 }, () => {
  test('an exited session: -32000 with reason session_exited on its own socket, the control socket, /rpc, /mcp and REST (400 with rpcCode)', async () => {
    const gone = (await ctl.call('session/create', { command: 'true' })) as SessionInfo;
    const own = await connect(gone.address);
    await until(async () => !((await ctl.call('pty/status', { session: gone.id })) as { running: boolean }).running, 10_000, 'the program to end');
    const onOwn = await rejectsWith(own.request('pty/write', { action: { text: 'x' } }), SERVER_ERROR);
    assert.deepEqual(onOwn.data, { session: gone.id, reason: 'session_exited' });
    own.close();
    const onControl = await rejectsWith(ctl.call('pty/write', { session: gone.id, action: { text: 'x' } }), SERVER_ERROR);
    assert.deepEqual(onControl.data, { session: gone.id, reason: 'session_exited' });
    const rpc = await wsOpen(h.port, '/rpc', { token: h.token });
    sockets.push(rpc);
    assert.deepEqual((await wsRpc(rpc, 'pty/resize', { session: gone.id, cols: 90, rows: 30 })).error, {
      code: SERVER_ERROR,
      message: 'The session has exited',
      data: { session: gone.id, reason: 'session_exited' },
    });
    const rest = await request(h.port, 'POST', `/sessions/${gone.id}/write`, { token: h.token, body: { data: 'x' } });
    assert.equal(rest.status, REST_STATUS.BAD_REQUEST, rest.text);
    assert.deepEqual(rest.json.error, {
      code: 'BAD_REQUEST',
      message: 'The session has exited',
      rpcCode: SERVER_ERROR,
      data: { session: gone.id, reason: 'session_exited' },
    });
    const tool = (await (await mcp(h.token)).callTool({ name: 'signal', arguments: { session: gone.id, signal: 'SIGINT' } })) as ToolResult;
    assert.equal(textOf(tool), `Error ${SERVER_ERROR}: The session has exited`);
  });

  test("declined: -32000 with reason declined, on the control socket and on the session's own socket, for an MCP relay and for any caller that says it is an agent", async () => {
    const mine = (await ctl.call('session/create', { ...BASH, name: 'users-own', origin: 'user' })) as SessionInfo;
    await ctl.call('host/agentPolicy', { approval: 'deny' });
    // An agent's own connection: a connection that says it is an agent stays one.
    const agent = await connect(h.host.controlAddress);
    try {
      const onControl = await rejectsWith(agent.request('pty/write', { session: mine.id, action: { text: 'x' }, client: AGENT }), SERVER_ERROR);
      assert.deepEqual(onControl.data, { session: mine.id, denied: true, reason: 'declined' });
      const own = await connect(mine.address);
      const onOwn = await rejectsWith(own.request('pty/write', { action: { text: 'x' }, client: AGENT }), SERVER_ERROR);
      assert.deepEqual(onOwn.data, { session: mine.id, denied: true, reason: 'declined' });
      own.close();
      // A caller that says it is an agent, on any transport, meets an agent's guards: its write would be credited to an agent.
      const saysAgent = await connect(h.host.controlAddress);
      try {
        const e = await rejectsWith(saysAgent.request('pty/write', { session: mine.id, action: { text: 'x' }, client: { origin: 'agent' } }), SERVER_ERROR);
        assert.deepEqual(e.data, { session: mine.id, denied: true, reason: 'declined' });
      } finally {
        saysAgent.close();
      }
    } finally {
      agent.close();
      await ctl.call('host/agentPolicy', { approval: 'allow' });
    }
  });

  test('every code is in one list, once, and documented with its HTTP status in docs/protocol.md and docs/guarantees.md', () => {
    const codes = ERROR_CODES.map((e) => e.code);
    assert.equal(new Set(codes).size, codes.length);
    const protocol = fs.readFileSync(path.join(DOCS, 'protocol.md'), 'utf8');
    const table = protocol.slice(protocol.indexOf('## 4. Error codes'), protocol.indexOf('## 5. HTTP and WebSocket'));
    const guarantees = fs.readFileSync(path.join(DOCS, 'guarantees.md'), 'utf8');
    for (const e of ERROR_CODES) {
      // A kind the host answers as -32000 is listed by its reason.
      const answered = e.reason === undefined ? `${e.code}` : `-32000, \`reason: "${e.reason}"\``;
      const row = table.split('\n').find((l) => l.startsWith(`| ${answered} |`));
      assert.ok(row, `docs/protocol.md's error table lists ${answered}`);
      assert.ok(row.includes(`${REST_STATUS[e.rest]}`), `its HTTP status ${REST_STATUS[e.rest]}: ${row}`);
      assert.ok(guarantees.includes(e.reason === undefined ? `${e.code}` : `reason: "${e.reason}"`), `docs/guarantees.md names ${answered}`);
    }
  });
});
