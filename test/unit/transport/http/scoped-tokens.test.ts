// Scoped tokens (docs/protocol.md#scoped-tokens, issue #15): `session/share` hands out a token for one session with a
// scope; it works on every HTTP surface (REST, /rpc, the stream WebSocket, /mcp, the browser
// view) for that session only and within its scope, until it expires or is revoked, and then the
// WebSockets opened with it close. Driven against a real host (node-pty, bash, its control socket
// and HTTP server, the MCP SDK client, the built CLI).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { SessionInfo } from '../../../../src/core/methods/types';
import type { RpcClient } from '../../../../src/transport/client/rpc-client';
import { TOKEN_ENDED_CLOSE } from '../../../../src/transport/http/http-server';
import { BASH, connect, rejectsWith, withTimeout, clientsClosed } from '../../../helpers/host';
import { request, startHttpHost, wsConnect, type HttpHost, type WsClient } from '../../../helpers/http';
import { runCli } from '../../../helpers/cli';
import { bashEnv, buildCli } from '../../../helpers/protocol';
import { ensureNoDisposablesAreLeakedBySuite } from '../../../helpers/leak-tracker';

type Scope = 'view' | 'input' | 'control';
interface Shared {
  token: string;
  url: string;
  info: { id: string; scope: Scope; session: string; reusable: boolean; openedAt: string | null; expiresAt: string; lastUsedAt: string | null };
}

let h: HttpHost;
let ctl: RpcClient;
let a: SessionInfo;
let b: SessionInfo;
const clients: Client[] = [];
const sockets: WsClient[] = [];

/** A reusable token, as scripts and agents use them (a link, the default, is for a browser: see test/unit/transport/pages/page-links.test.ts). */
function share(session: string, scope: Scope, expiresIn?: number): Promise<Shared> {
  return ctl.call('session/share', { session, scope, expiresIn, reusable: true }) as Promise<Shared>;
}

function rest(method: string, path: string, token: string, body?: unknown) {
  return request(h.port, method, path, { token, body });
}

async function ws(path: string, token: string): Promise<WsClient> {
  const o = await wsConnect(h.port, path, { token });
  assert.equal(o.kind, 'open', `${path} opens`);
  const c = (o as { client: WsClient }).client;
  sockets.push(c);
  return c;
}

/** One JSON-RPC call over an open /rpc WebSocket: its result, or its error object. */
let nextId = 1;
async function rpc(c: WsClient, method: string, params: Record<string, unknown>): Promise<{ result?: any; error?: { code: number; message: string } }> {
  const id = nextId++;
  c.send({ jsonrpc: '2.0', id, method, params });
  return c.next((m) => m && m.id === id, `${method} answer`);
}

async function mcp(token: string): Promise<Client> {
  const client = new Client({ name: 'scoped-test', version: '0' });
  clients.push(client);
  const transport = new StreamableHTTPClientTransport(new URL(`${h.http.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
  await withTimeout(client.connect(transport), 20_000, 'MCP connect');
  return client;
}

async function toolNames(client: Client): Promise<string[]> {
  return (await client.listTools()).tools.map((t) => t.name).sort();
}

type ToolResult = { isError?: boolean; content: Array<{ type: string; text?: string }> };
const textOf = (r: ToolResult) => r.content.map((c) => c.text ?? '').join('');

before(async () => {
  h = await startHttpHost();
  ctl = await connect(h.host.controlAddress);
  a = (await ctl.call('session/create', { ...BASH, name: 'shared-a' })) as SessionInfo;
  b = (await ctl.call('session/create', { ...BASH, name: 'other-b' })) as SessionInfo;
});

after(async () => {
  for (const c of clients) await c.close().catch(() => {});
  for (const s of sockets) await s.close().catch(() => {});
  ctl?.close();
  await h?.close();
});
// Once the shared host is closed, nothing the suite made is left (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedBySuite(clientsClosed);

describe('scoped tokens', { timeout: 60_000 }, () => {
  test('REST: each scope allows its calls and refuses the rest with 403; other sessions and host calls are refused', async () => {
    const view = await share(a.id, 'view');
    const input = await share(a.id, 'input');
    assert.equal((await rest('GET', `/sessions/${a.id}`, view.token)).status, 200);
    const refused = await rest('POST', `/sessions/${a.id}/write`, view.token, { data: 'echo no', submit: false });
    assert.equal(refused.status, 403);
    assert.equal(refused.json.error.code, 'FORBIDDEN');
    assert.match(refused.json.error.message, /needs the "input" scope; this token has "view"/);
    assert.equal((await rest('POST', `/sessions/${a.id}/write`, input.token, { data: '', submit: false })).status, 200);
    assert.equal((await rest('POST', `/sessions/${a.id}/resize`, input.token, { cols: 90, rows: 24 })).status, 200);
    const del = await rest('DELETE', `/sessions/${a.id}`, input.token);
    assert.equal(del.status, 403);
    assert.match(del.json.error.message, /needs the "control" scope/);
    // Nor does its signal go first: SIGUSR1 would end bash.
    const signalled = await rest('DELETE', `/sessions/${a.id}?signal=SIGUSR1`, input.token);
    assert.equal(signalled.status, 403);
    assert.match(signalled.json.error.message, /pty\/kill needs the "control" scope/);
    const alive = (await ctl.call('pty/send', { session: a.id, text: 'echo alive-$((6*7))' })) as { output: string; waitReason: string };
    assert.match(alive.output, /^alive-42$/m, 'the refused DELETE signalled nothing: bash still answers');
    // Another session, known or not, and the host's own calls.
    assert.equal((await rest('GET', `/sessions/${b.id}`, input.token)).status, 403);
    assert.equal((await rest('GET', '/sessions/nosuch', input.token)).status, 403);
    const control = await share(a.id, 'control');
    assert.equal((await rest('POST', '/sessions', control.token, BASH)).status, 403);
    // What no scoped token may call says so, whatever its scope: "needs the control scope" told a
    // view token's holder that a control token would do (found by an outside audit).
    for (const t of [view, input, control]) {
      const opened = await rest('POST', '/sessions', t.token, BASH);
      assert.equal(opened.status, 403);
      assert.match(opened.json.error.message, /session\/create needs the host's own token; this token reaches only session /);
    }
    assert.equal((await rest('GET', `/sessions/${b.id}`, control.token)).status, 403);
    const list = await rest('GET', '/sessions', view.token);
    assert.deepEqual(
      list.json.data.map((s: SessionInfo) => s.id),
      [a.id],
      'a scoped token lists only its session',
    );
    // /health answers it (a liveness probe works), counting only the sessions it reaches, as the list does.
    assert.deepEqual((await rest('GET', '/health', view.token)).json, { ok: true, data: { hostId: h.host.hostId, sessions: 1 } });
    assert.deepEqual((await rest('GET', '/health', h.token)).json, { ok: true, data: { hostId: h.host.hostId, sessions: 2 } });
    // The host's own token keeps full access.
    assert.equal((await rest('GET', '/sessions', h.token)).json.data.length, 2);
    // A control token may end its session (one of its own here).
    const c = (await ctl.call('session/create', { ...BASH, name: 'to-close' })) as SessionInfo;
    const closer = await share(c.id, 'control');
    assert.equal((await rest('DELETE', `/sessions/${c.id}`, closer.token)).status, 200);
  });

  test('/rpc: -32004 outside the scope, another session or a host method; the rest works', async () => {
    const view = await ws('/rpc', (await share(a.id, 'view')).token);
    assert.ok((await rpc(view, 'pty/read', { session: a.id })).result.screen !== undefined);
    assert.equal((await rpc(view, 'pty/write', { session: a.id, action: { text: '' } })).error?.code, -32004);
    assert.equal((await rpc(view, 'pty/read', { session: b.id })).error?.code, -32004);
    assert.deepEqual(
      (await rpc(view, 'session/list', {})).result.sessions.map((s: SessionInfo) => s.id),
      [a.id],
    );
    const input = await ws('/rpc', (await share(a.id, 'input')).token);
    assert.ok((await rpc(input, 'pty/write', { session: a.id, action: { text: '' } })).result);
    const send = await rpc(input, 'pty/signal', { session: a.id, signal: 'SIGCONT' });
    assert.equal(send.error?.code, -32004);
    assert.match(send.error!.message, /"control"/);
    const control = await ws('/rpc', (await share(a.id, 'control')).token);
    assert.ok((await rpc(control, 'pty/signal', { session: a.id, signal: 'SIGCONT' })).result);
    for (const [method, params] of [
      ['session/create', BASH],
      ['session/viewUrl', { session: a.id }],
      ['host/info', {}],
      ['session/share', { session: a.id, scope: 'control' }],
      ['host/tokens', {}],
      ['pty/signal', { session: b.id, signal: 'SIGCONT' }],
    ] as const) {
      assert.equal((await rpc(control, method, params)).error?.code, -32004, `${method} refused to a control token for one session`);
    }
  });

  // A recording's path is the host's user's choice: a session's token, or an agent, would
  // otherwise create files anywhere the host may write (a ~/.bash_profile that runs what was shown).
  test('pty/record with a path: refused to a control token and to an agent (no file made); without one it records into the recordings folder', async () => {
    const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'spt-rec-path-')));
    const saved = process.env.XDG_DATA_HOME;
    process.env.XDG_DATA_HOME = dir;
    const agent = await connect(h.host.controlAddress);
    try {
      const target = path.join(dir, 'planted.cast');
      const control = await ws('/rpc', (await share(a.id, 'control')).token);
      const refused = await rpc(control, 'pty/record', { session: a.id, path: target });
      assert.equal(refused.error?.code, -32004, JSON.stringify(refused));
      assert.match(refused.error!.message, /host's own token or sockets; leave path out/);
      const asAgent = await rejectsWith(agent.request('pty/record', { session: a.id, path: target, client: { origin: 'agent' } }), -32004);
      assert.match(asAgent.message, /leave path out/);
      assert.equal(fs.existsSync(target), false, 'no file was made');
      const started = await rpc(control, 'pty/record', { session: a.id });
      assert.equal(started.result?.recording, true, JSON.stringify(started));
      assert.equal(path.dirname(started.result.path), path.join(dir, 'shared-pty', 'recordings'));
      assert.equal((await rpc(control, 'pty/record', { session: a.id, stop: true })).result?.path, started.result.path);
    } finally {
      agent.close();
      if (saved === undefined) delete process.env.XDG_DATA_HOME;
      else process.env.XDG_DATA_HOME = saved;
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test("/rpc: pty/events without a session follows only the token's session", async () => {
    const c = await ws('/rpc', (await share(a.id, 'view')).token);
    const answer = await rpc(c, 'pty/events', {});
    assert.equal(typeof answer.result.seq, 'number');
    await ctl.call('pty/resize', { session: b.id, cols: 71, rows: 21 });
    await ctl.call('pty/resize', { session: a.id, cols: 72, rows: 22 });
    const note = await c.next((m) => m?.method === 'pty/event' && m.params.type === 'resize', 'a resize event');
    assert.equal(note.params.session, a.id, "the first resize it hears of is its own session's, not the other one before it");
  });

  test('stream WebSocket: view reads and cannot type, input types; another session is refused', async () => {
    const view = await ws(`/sessions/${a.id}/stream`, (await share(a.id, 'view')).token);
    view.send({ type: 'write', data: 'echo view-typed\n' });
    assert.match((await view.next((m) => m?.type === 'error', 'refusal')).message, /read-only/);
    const input = await ws(`/sessions/${a.id}/stream`, (await share(a.id, 'input')).token);
    input.send({ type: 'write', data: 'echo typed-$((6*7))\n' });
    await input.streamUntil((t) => t.includes('typed-42'), "the input token's command output");
    await view.streamUntil((t) => t.includes('typed-42'), 'the viewer sees it');
    assert.ok(!view.streamText().includes('view-typed'), 'nothing the viewer sent was typed');
    const other = await wsConnect(h.port, `/sessions/${b.id}/stream`, { token: (await share(a.id, 'control')).token });
    assert.equal(other.kind === 'refused' && other.status, 403);
  });

  test('/mcp: tools/list shows only what the scope allows, and a refused call is isError naming the scope', async () => {
    const reading = [
      'list_commands',
      'list_sessions',
      'read_command_output',
      'read_output',
      'read_screen',
      'read_scrollback',
      'terminal_snapshot',
      'wait_event',
      'wait_for',
    ];
    const view = await mcp((await share(a.id, 'view')).token);
    assert.deepEqual(await toolNames(view), reading);
    const refused = (await view.callTool({ name: 'send', arguments: { session: a.id, text: 'echo no' } })) as ToolResult;
    assert.equal(refused.isError, true);
    assert.match(textOf(refused), /-32004.*"control" scope/);
    const screen = (await view.callTool({ name: 'read_screen', arguments: { session: a.id } })) as ToolResult;
    assert.notEqual(screen.isError, true, textOf(screen));
    const elsewhere = (await view.callTool({ name: 'read_screen', arguments: { session: b.id } })) as ToolResult;
    assert.equal(elsewhere.isError, true);
    assert.match(textOf(elsewhere), /-32004/);
    const listed = (await view.callTool({ name: 'list_sessions', arguments: {} })) as ToolResult & { structuredContent: { sessions: SessionInfo[] } };
    assert.deepEqual(
      listed.structuredContent.sessions.map((s) => s.id),
      [a.id],
    );
    const input = await mcp((await share(a.id, 'input')).token);
    assert.deepEqual(await toolNames(input), [...reading, 'app_input', 'resize', 'send_keys'].sort());
    const control = await mcp((await share(a.id, 'control')).token);
    assert.deepEqual(
      await toolNames(control),
      [...reading, 'app_input', 'close_session', 'resize', 'send', 'send_keys', 'signal'].sort(),
      'open_session needs the host token',
    );
    const full = await mcp(h.token);
    assert.ok((await toolNames(full)).includes('open_session'));
  });

  test('the browser link opens its session (read-only for view) and no other', async () => {
    const view = (await ctl.call('session/share', { session: a.id, scope: 'view' })) as Shared;
    assert.match(view.url, new RegExp(`^${h.http.url}/sessions/${a.id}/view\\?token=`));
    const link = new URL(view.url);
    const first = await request(h.port, 'GET', link.pathname + link.search);
    assert.equal(first.status, 303);
    const cookie = String(first.headers['set-cookie']).split(';')[0];
    const page = await request(h.port, 'GET', `/sessions/${a.id}/view`, { headers: { cookie } });
    assert.equal(page.status, 200);
    assert.match(page.text, /data-readonly="1"/);
    assert.equal((await request(h.port, 'GET', `/sessions/${b.id}/view`, { headers: { cookie } })).status, 403);
    const input = new URL(((await ctl.call('session/share', { session: a.id, scope: 'input' })) as Shared).url);
    const inputCookie = String((await request(h.port, 'GET', input.pathname + input.search)).headers['set-cookie']).split(';')[0];
    assert.match((await request(h.port, 'GET', `/sessions/${a.id}/view`, { headers: { cookie: inputCookie } })).text, /data-readonly="0"/);
  });

  test('revoking ends the token at once: its WebSockets close and its requests get 401', async () => {
    const shared = await share(a.id, 'input');
    const stream = await ws(`/sessions/${a.id}/stream`, shared.token);
    const rpcSocket = await ws('/rpc', shared.token);
    assert.equal((await rest('GET', `/sessions/${a.id}`, shared.token)).status, 200);
    assert.deepEqual(await ctl.call('host/revoke', { id: shared.info.id }), { id: shared.info.id, revoked: true });
    assert.deepEqual(await withTimeout(stream.closed, 10_000, 'stream closes'), { code: TOKEN_ENDED_CLOSE, reason: 'token revoked' });
    assert.deepEqual(await withTimeout(rpcSocket.closed, 10_000, '/rpc closes'), { code: TOKEN_ENDED_CLOSE, reason: 'token revoked' });
    assert.equal((await rest('GET', `/sessions/${a.id}`, shared.token)).status, 401);
    assert.equal((await wsConnect(h.port, `/sessions/${a.id}/stream`, { token: shared.token })).kind, 'refused');
    const tokens = (await ctl.call('host/tokens', {})) as { tokens: Array<{ id: string }> };
    assert.ok(!tokens.tokens.some((t) => t.id === shared.info.id), 'no longer listed');
    await rejectsWith(ctl.call('host/revoke', { id: shared.info.id }), -32000);
  });

  test('a token ends with its session: its WebSockets close saying so, and its requests get 401 saying so (not "revoked")', async () => {
    const c = (await ctl.call('session/create', { ...BASH, name: 'ends-with-token' })) as SessionInfo;
    const shared = await share(c.id, 'input');
    const rpcSocket = await ws('/rpc', shared.token);
    await ctl.call('pty/kill', { session: c.id });
    assert.deepEqual(await withTimeout(rpcSocket.closed, 10_000, '/rpc closes'), { code: TOKEN_ENDED_CLOSE, reason: 'session ended' });
    const after = await rest('GET', '/sessions', shared.token);
    assert.equal(after.status, 401);
    assert.match(after.json.error.message, /session has ended/);
  });

  test('a token expires: its open WebSocket closes and it opens nothing more', async () => {
    const shared = await share(a.id, 'view', 1);
    const stream = await ws(`/sessions/${a.id}/stream`, shared.token);
    assert.deepEqual(await withTimeout(stream.closed, 10_000, 'stream closes at expiry'), { code: TOKEN_ENDED_CLOSE, reason: 'token expired' });
    assert.equal((await rest('GET', `/sessions/${a.id}`, shared.token)).status, 401);
  });

  test('host/tokens lists id, scope, session, expiry and last use, never the token or its hash', async () => {
    const shared = await share(a.id, 'view', 600);
    const listed = () => (ctl.call('host/tokens', {}) as Promise<{ tokens: Shared['info'][] }>).then((r) => r.tokens.find((t) => t.id === shared.info.id)!);
    const before = await listed();
    assert.deepEqual(Object.keys(before).sort(), ['createdAt', 'expiresAt', 'id', 'lastUsedAt', 'openedAt', 'reusable', 'scope', 'session']);
    assert.equal(before.reusable, true);
    assert.equal(before.lastUsedAt, null);
    assert.equal(before.scope, 'view');
    assert.equal(before.session, a.id);
    assert.equal(Date.parse(before.expiresAt) - Date.parse((before as unknown as { createdAt: string }).createdAt), 600_000);
    await rest('GET', `/sessions/${a.id}`, shared.token);
    assert.ok((await listed()).lastUsedAt, 'last use recorded');
    const text = JSON.stringify(await ctl.call('host/tokens', {}));
    const hash = crypto.createHash('sha256').update(shared.token).digest();
    for (const secret of [shared.token, hash.toString('hex'), hash.toString('base64'), hash.toString('base64url')]) assert.ok(!text.includes(secret));
  });
});

describe('shared-pty share, tokens, revoke', { timeout: 120_000 }, () => {
  test('share --reusable prints the link and the token; tokens --json shows no secret; revoke ends it', async () => {
    buildCli();
    const env = bashEnv({ SHARED_PTY_DIR: h.dir });
    const shared = await runCli(['share', 'shared-a', '--scope', 'input', '--expires', '2h', '--reusable'], env);
    assert.equal(shared.code, 0, shared.stderr);
    const link = /^link: +(\S+)$/m.exec(shared.stdout)?.[1];
    const token = /^token: +(\S+)$/m.exec(shared.stdout)?.[1];
    assert.ok(link && token, shared.stdout);
    assert.equal(link, `${h.http.url}/sessions/${a.id}/view?token=${token}`);
    assert.equal((await rest('POST', `/sessions/${a.id}/write`, token, { data: '', submit: false })).status, 200, 'the printed token types');
    const list = await runCli(['tokens', '--json'], env);
    assert.equal(list.code, 0, list.stderr);
    assert.ok(!list.stdout.includes(token), 'tokens --json never shows a token');
    const hash = crypto.createHash('sha256').update(token).digest();
    assert.ok(!list.stdout.includes(hash.toString('hex')) && !list.stdout.includes(hash.toString('base64url')), 'nor its hash');
    const id = /shared-pty revoke (\S+)\)/.exec(shared.stdout)?.[1];
    const mine = (
      JSON.parse(list.stdout) as Array<{ id: string; scope: string; session: string; createdAt: string; expiresAt: string; lastUsedAt: string | null }>
    ).find((t) => t.id === id);
    assert.ok(mine, `${id} in ${list.stdout}`);
    assert.equal(mine.scope, 'input');
    assert.equal(mine.session, a.id);
    assert.equal(Date.parse(mine.expiresAt) - Date.parse(mine.createdAt), 2 * 3600_000, '--expires 2h');
    assert.ok(mine.lastUsedAt, 'its use shows');
    const revoked = await runCli(['revoke', mine.id], env);
    assert.equal(revoked.code, 0, revoked.stderr);
    assert.equal((await rest('GET', `/sessions/${a.id}`, token)).status, 401);
    const again = await runCli(['revoke', mine.id], env);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /^shared-pty: unknown token/);
    const bad = await runCli(['share', 'shared-a', '--scope', 'admin'], env);
    assert.equal(bad.code, 2);
    assert.equal((await runCli(['share', 'shared-a', '--expires', '0s'], env)).code, 2);
  });

  test("tokens names an agent's token (host/agentToken, the editor's chat's) as reaching every session, and revoke ends it", async () => {
    buildCli();
    const env = bashEnv({ SHARED_PTY_DIR: h.dir });
    const { token, info } = await ctl.call('host/agentToken', {});
    const table = await runCli(['tokens'], env);
    assert.equal(table.code, 0, table.stderr);
    const row = table.stdout.split('\n').find((l) => l.startsWith(info.id + ' '));
    assert.match(row ?? '', /^\S+ +control +every session +agent +\S+ +never$/, table.stdout);
    assert.ok(!table.stdout.includes(token), 'never the token');
    assert.equal((await runCli(['revoke', info.id], env)).code, 0);
    assert.equal((await rest('GET', '/sessions', token)).status, 401);
  });
});
