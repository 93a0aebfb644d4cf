// Agent guards bind a principal, not a transport (issue 21 item 8): a scoped token used on `/mcp`
// is an agent's, so what MCP refuses it may not write through REST, the stream WebSocket or `/rpc`
// either, and what it writes there is credited to the agent; a guest's token that never met /mcp
// types as the human. Deny rules see the line as the shell will run it: split across writes, one
// command of a list, behind sudo/env/command, and `open_session`'s command line. A real host,
// bash, real sockets and the official MCP SDK client over /mcp.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { RpcClient } from '../../../../src/transport/client/rpc-client';
import { BASH, connect, until, withTimeout, clientsClosed } from '../../../helpers/host';
import { mcpAgent, request, startHttpHost, wsOpen, type HttpHost, type WsClient } from '../../../helpers/http';
import { ensureNoDisposablesAreLeakedBySuite } from '../../../helpers/leak-tracker';

/** The user declined an agent's write: socket-pty's server error, `data.reason: "declined"` (docs/protocol.md#4-error-codes). */
const DECLINED = -32000;

type ToolResult = { isError?: boolean; content: Array<{ type: string; text?: string }> };
const textOf = (r: ToolResult) => r.content.map((c) => c.text ?? '').join('\n');

/** An MCP agent holding a scoped token (as a user gives one to an agent with `shared-pty share`). */
async function mcpWithToken(h: HttpHost, token: string, clients: Client[]): Promise<Client> {
  const client = new Client({ name: 'guards-test', version: '0' });
  clients.push(client);
  const transport = new StreamableHTTPClientTransport(new URL(`${h.http.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
  await withTimeout(client.connect(transport), 20_000, 'MCP connect');
  return client;
}

/** One JSON-RPC call over an open /rpc WebSocket: its result or its error. */
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

// Once the shared host is closed, nothing the suite made is left (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedBySuite(clientsClosed);

/**
 * A headless host whose policy is `deny` (an agent may not type into a session the user opened), for
 * one describe's tests, with a control connection; the MCP clients and WebSockets they open (kept in
 * `clients` and `sockets`) are closed with it.
 */
function hostDenyingAgents(): { h: HttpHost; ctl: RpcClient; clients: Client[]; sockets: WsClient[] } {
  const t = { h: undefined as unknown as HttpHost, ctl: undefined as unknown as RpcClient, clients: [] as Client[], sockets: [] as WsClient[] };
  before(async () => {
    t.h = await startHttpHost([], { agentApproval: 'deny' });
    t.ctl = await connect(t.h.host.controlAddress);
  });
  after(async () => {
    for (const s of t.sockets) await s.close();
    for (const c of t.clients) await c.close().catch(() => undefined);
    t.ctl?.close();
    await t.h?.close();
  });
  return t;
}

describe('agent guards bind the principal (a scoped token used on /mcp)', () => {
  const t = hostDenyingAgents();

  async function userSession(): Promise<string> {
    const info = await t.ctl.call('session/create', { ...BASH, cols: 80, rows: 24, origin: 'user' });
    await until(async () => (await t.ctl.call('pty/read', { session: info.id })).screen.includes('$'), 10_000, 'a prompt');
    return info.id;
  }
  const screen = async (id: string) => (await t.ctl.call('pty/read', { session: id })).screen;

  test('the input token MCP refused writes nothing through REST, the stream WebSocket or /rpc either', { timeout: 60_000 }, async () => {
    const id = await userSession();
    const { token } = (await t.ctl.call('session/share', { session: id, scope: 'input', reusable: true })) as { token: string };
    const agent = await mcpWithToken(t.h, token, t.clients);
    const refused = (await agent.callTool({ name: 'send_keys', arguments: { session: id, keys: ['e', 'c', 'h', 'o'] } })) as ToolResult;
    assert.equal(refused.isError, true, textOf(refused));
    assert.match(textOf(refused), /^Error -32000: .*declined/);

    const viaRest = await request(t.h.port, 'POST', `/sessions/${id}/write`, { token, body: { data: 'echo via-rest' } });
    assert.equal(viaRest.status, 403, viaRest.text);
    assert.equal(viaRest.json.error.code, 'FORBIDDEN');
    assert.equal(viaRest.json.error.rpcCode, DECLINED);
    assert.equal(viaRest.json.error.data.reason, 'declined');
    assert.match(viaRest.json.error.message, /declined/);

    const stream = await wsOpen(t.h.port, `/sessions/${id}/stream`, { token });
    t.sockets.push(stream);
    stream.send({ type: 'write', data: 'echo via-stream', submit: true });
    const streamError = await stream.next((m) => m && m.type === 'error', 'the stream refusing the write');
    assert.equal(streamError.code, DECLINED, JSON.stringify(streamError));
    assert.match(streamError.message, /declined/);
    stream.send('echo via-raw-stream\r');
    assert.match((await stream.next((m) => m && m.type === 'error', 'the raw write refused')).message, /declined/);

    const rpc = await wsOpen(t.h.port, '/rpc', { token });
    t.sockets.push(rpc);
    // Saying it is the user changes nothing: the token is an agent's.
    const viaRpc = await wsRpc(rpc, 'pty/write', { session: id, action: { text: 'echo via-rpc\r' }, client: { origin: 'user' } });
    assert.equal(viaRpc.error?.code, DECLINED, JSON.stringify(viaRpc));
    assert.equal(viaRpc.error?.data?.reason, 'declined');
    assert.match(viaRpc.error!.message, /declined/);

    assert.doesNotMatch(await screen(id), /via-|echo/);
    // Each refusal is the agent's, on the surface it came through (never "user via ws-stream").
    const last = (await t.ctl.call('pty/info', { session: id })).lastInput!;
    assert.deepEqual(
      { origin: last.origin, transport: last.transport, approval: last.approval },
      { origin: 'agent', transport: 'ws-rpc', approval: 'policy_deny' },
    );
    await t.ctl.call('pty/kill', { session: id });
  });

  test("what a token an agent holds writes elsewhere is credited to the agent; a guest's token still types as the human", { timeout: 60_000 }, async () => {
    const id = await userSession();
    await t.ctl.call('host/agentPolicy', { approval: 'allow' });
    try {
      const agentToken = ((await t.ctl.call('session/share', { session: id, scope: 'input', reusable: true })) as { token: string }).token;
      const guestToken = ((await t.ctl.call('session/share', { session: id, scope: 'input', reusable: true })) as { token: string }).token;
      await mcpWithToken(t.h, agentToken, t.clients); // connecting is using /mcp: the token is an agent's now

      const agentStream = await wsOpen(t.h.port, `/sessions/${id}/stream`, { token: agentToken });
      t.sockets.push(agentStream);
      agentStream.send({ type: 'write', data: 'echo agent-wrote', submit: true });
      await until(async () => /agent-wrote\r?\n/.test(await screen(id)), 10_000, "the agent's line");
      const last = (await t.ctl.call('pty/info', { session: id })).lastInput!;
      assert.equal(last.origin, 'agent', JSON.stringify(last));
      assert.equal(last.transport, 'ws-stream');

      const guestStream = await wsOpen(t.h.port, `/sessions/${id}/stream`, { token: guestToken });
      t.sockets.push(guestStream);
      guestStream.send({ type: 'write', data: 'echo guest-wrote', submit: true });
      await until(async () => /guest-wrote\r?\n/.test(await screen(id)), 10_000, "the guest's line");
      assert.equal((await t.ctl.call('pty/info', { session: id })).lastInput?.origin, 'user');
    } finally {
      await t.ctl.call('host/agentPolicy', { approval: 'deny' });
      await t.ctl.call('pty/kill', { session: id });
    }
  });
});

describe("the host's own token: the user's scripts' until it is used on /mcp, an agent's on every surface from then on", () => {
  const t = hostDenyingAgents();

  test('what MCP refused with the host token, REST, the stream WebSocket and /rpc refuse with it too', { timeout: 60_000 }, async () => {
    const info = await t.ctl.call('session/create', { ...BASH, cols: 80, rows: 24, origin: 'user' });
    const id = info.id as string;
    await until(async () => (await t.ctl.call('pty/read', { session: id })).screen.includes('$'), 10_000, 'a prompt');
    // Before any /mcp call the token is a script's: its REST write goes in, credited to a script.
    const before = await request(t.h.port, 'POST', `/sessions/${id}/write`, { token: t.h.token, body: { data: 'echo script-$((2+2))' } });
    assert.equal(before.status, 200, before.text);
    await until(async () => (await t.ctl.call('pty/read', { session: id })).screen.includes('script-4'), 10_000, "the script's line");
    assert.equal(((await t.ctl.call('pty/info', { session: id })) as { lastInput: { origin: string } }).lastInput.origin, 'script');

    const agent = await mcpWithToken(t.h, t.h.token, t.clients);
    const refused = (await agent.callTool({ name: 'send', arguments: { session: id, text: 'echo via-mcp' } })) as ToolResult;
    assert.equal(refused.isError, true, textOf(refused));
    assert.match(textOf(refused), /declined/);

    const viaRest = await request(t.h.port, 'POST', `/sessions/${id}/write`, { token: t.h.token, body: { data: 'echo via-rest' } });
    assert.equal(viaRest.status, 403, viaRest.text);
    assert.equal(viaRest.json.error.data.reason, 'declined');
    const rpc = await wsOpen(t.h.port, '/rpc', { token: t.h.token });
    t.sockets.push(rpc);
    const viaRpc = await wsRpc(rpc, 'pty/send', { session: id, text: 'echo via-rpc', client: { origin: 'user' } });
    assert.equal(viaRpc.error?.data?.reason, 'declined', JSON.stringify(viaRpc));
    const stream = await wsOpen(t.h.port, `/sessions/${id}/stream`, { token: t.h.token });
    t.sockets.push(stream);
    stream.send({ type: 'write', data: 'echo via-stream', submit: true });
    assert.match((await stream.next((m) => m && m.type === 'error', 'the stream write refused')).message, /declined/);
    await new Promise((r) => setTimeout(r, 300));
    assert.doesNotMatch(await t.ctl.call('pty/read', { session: id }).then((r: any) => r.screen), /via-/, 'nothing of theirs typed');
    // The host's t.sockets stay the user's and the scripts'.
    await t.ctl.call('pty/write', { session: id, action: { text: 'echo socket-$((3+3))\r' } });
    await until(async () => (await t.ctl.call('pty/read', { session: id })).screen.includes('socket-6'), 10_000, 'the socket write');
  });
  test(
    "a stream view with that token still has its terminal's own answers taken out: one answer per query reaches the program",
    { timeout: 60_000 },
    async () => {
      const info = await t.ctl.call('session/create', { ...BASH, cols: 80, rows: 24 });
      const id = info.id as string;
      await until(async () => (await t.ctl.call('pty/read', { session: id })).screen.includes('$'), 10_000, 'a prompt');
      const stream = await wsOpen(t.h.port, `/sessions/${id}/stream`, { token: t.h.token });
      t.sockets.push(stream);
      await t.ctl.call('pty/write', { session: id, action: { text: "printf '\\033[6n'; read -rs -d R x; echo got-answer; cat -v\r" } });
      await stream.streamUntil((t) => t.includes('\x1b[6n'), 'the query in the stream');
      // As xterm.js does: the view answers the query it was shown.
      stream.send({ type: 'write', data: '\x1b[55;55R' });
      await until(async () => (await t.ctl.call('pty/read', { session: id })).screen.includes('got-answer'), 10_000, "the host's answer read");
      await new Promise((r) => setTimeout(r, 500));
      assert.doesNotMatch((await t.ctl.call('pty/read', { session: id })).screen, /55R/, "the view's answer never reached the program");
      await t.ctl.call('pty/kill', { session: id });
    },
  );
});

describe("an agent's token for every session (host/agentToken, what the editor gives its chat)", () => {
  let h: HttpHost;
  let ctl: RpcClient;
  const clients: Client[] = [];
  const sockets: WsClient[] = [];
  before(async () => {
    h = await startHttpHost([], { agentApproval: 'deny' });
    ctl = await connect(h.host.controlAddress);
  });
  after(async () => {
    for (const s of sockets) await s.close();
    for (const c of clients) await c.close().catch(() => undefined);
    ctl?.close();
    await h?.close();
  });

  test(
    "an agent from its first request on every surface: the guards refuse its writes, the user's host methods and pages refuse it",
    { timeout: 60_000 },
    async () => {
      const user = await ctl.call('session/create', { ...BASH, cols: 80, rows: 24, origin: 'user' });
      await until(async () => (await ctl.call('pty/read', { session: user.id })).screen.includes('$'), 10_000, 'a prompt');
      const { token, info } = await ctl.call('host/agentToken', {});
      assert.deepEqual(
        { agent: info.agent, session: info.session, scope: info.scope, reusable: info.reusable },
        { agent: true, session: null, scope: 'control', reusable: true },
      );
      assert.ok(
        (await ctl.call('host/tokens', {})).tokens.some((t) => t.id === info.id && t.agent === true),
        "host/tokens lists it as an agent's",
      );

      // Never used on /mcp, yet an agent's: REST writes into the user's session meet the policy (deny).
      const viaRest = await request(h.port, 'POST', `/sessions/${user.id}/write`, { token, body: { data: 'echo via-rest' } });
      assert.equal(viaRest.status, 403, viaRest.text);
      assert.equal(viaRest.json.error.rpcCode, DECLINED);
      assert.equal(viaRest.json.error.data.reason, 'declined');
      const rpc = await wsOpen(h.port, '/rpc', { token });
      sockets.push(rpc);
      const viaRpc = await wsRpc(rpc, 'pty/write', { session: user.id, action: { text: 'echo via-rpc\r' }, client: { origin: 'user' } });
      assert.equal(viaRpc.error?.code, DECLINED, JSON.stringify(viaRpc));
      // It reads every session, and sets no policy, mints or lists no token, makes no link.
      assert.match((await wsRpc(rpc, 'pty/read', { session: user.id })).result.screen, /\$/);
      for (const [method, params] of [
        ['host/agentPolicy', { approval: 'allow' }],
        ['host/tokens', {}],
        ['host/agentToken', {}],
        ['host/revoke', { id: info.id }],
        ['session/share', { session: user.id, scope: 'control', reusable: true }],
        ['session/viewUrl', { session: user.id }],
      ] as const) {
        const r = await wsRpc(rpc, method, params);
        assert.equal(r.error?.code, -32004, `${method}: ${JSON.stringify(r)}`);
      }
      assert.equal((await ctl.call('host/agentPolicy', {})).approval, 'deny', 'the policy is as it was');
      const page = await request(h.port, 'GET', `/sessions/${user.id}/view?token=${token}`);
      assert.notEqual(page.status, 200, 'no browser page opens with it');
      const pageByHeader = await request(h.port, 'GET', `/sessions/${user.id}/view`, { token, headers: { accept: 'application/json' } });
      assert.notEqual(pageByHeader.status, 200, `nor with it as a Bearer header: ${pageByHeader.text}`);
      // A caller that says it is an agent mints none, on the control socket either.
      await assert.rejects(ctl.call('host/agentToken', { client: { origin: 'agent' } } as never), /agent cannot mint/);

      // Over MCP: every session listed; open_session opens the agent's own, where it types; REST
      // opens the agent's too, whatever origin it says.
      const agent = await mcpWithToken(h, token, clients);
      const listed = (await agent.callTool({ name: 'list_sessions', arguments: {} })) as ToolResult;
      assert.match(textOf(listed), new RegExp(user.id));
      const opened = (await agent.callTool({ name: 'open_session', arguments: { ...BASH, cols: 80, rows: 24 } })) as ToolResult & {
        structuredContent: { id: string; origin: string };
      };
      assert.equal(opened.structuredContent.origin, 'agent', textOf(opened));
      const sent = (await agent.callTool({ name: 'send', arguments: { session: opened.structuredContent.id, text: 'echo agent-own' } })) as ToolResult;
      assert.notEqual(sent.isError, true, textOf(sent));
      const viaRestOpen = await request(h.port, 'POST', '/sessions', { token, body: { ...BASH, origin: 'user' } });
      assert.equal(viaRestOpen.status, 200, viaRestOpen.text);
      assert.equal(viaRestOpen.json.data.origin, 'agent');
      assert.doesNotMatch((await ctl.call('pty/read', { session: user.id })).screen, /via-/);

      // Revoked, it opens nothing.
      await ctl.call('host/revoke', { id: info.id });
      assert.equal((await request(h.port, 'GET', '/sessions', { token })).status, 401);
      for (const id of [user.id, opened.structuredContent.id, viaRestOpen.json.data.id as string]) await ctl.call('pty/kill', { session: id });
    },
  );
});

describe('deny rules see the line as the shell will run it', () => {
  let h: HttpHost;
  let ctl: RpcClient;
  let agent: Client;
  let dir: string;
  before(async () => {
    h = await startHttpHost([], { agentApproval: 'allow', agentDenyCommands: ['^rm -rf'] });
    ctl = await connect(h.host.controlAddress);
    agent = await mcpAgent(h, 'deny-rules-test');
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spt-deny-'));
  });
  after(async () => {
    await agent?.close().catch(() => undefined);
    ctl?.close();
    await h?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const screenOf = async (id: string) => (await ctl.call('pty/read', { session: id })).screen;

  /** A directory a denied `rm -rf` would remove: it must still be there after each attempt. */
  function victim(name: string): string {
    const p = path.join(dir, name);
    fs.mkdirSync(p);
    fs.writeFileSync(path.join(p, 'keep'), 'x');
    return p;
  }

  async function agentSession(integrated = false): Promise<string> {
    // An integrated bash says when it waits at its prompt (its line editor reading keys).
    const shell = integrated ? { ...BASH, env: { PS1: '$ ', HISTFILE: '/dev/null' } } : BASH;
    const opened = (await agent.callTool({ name: 'open_session', arguments: { ...shell, cols: 100, rows: 30 } })) as ToolResult & {
      structuredContent: { id: string };
    };
    assert.notEqual(opened.isError, true, textOf(opened));
    const id = opened.structuredContent.id;
    await until(async () => (await ctl.call('pty/read', { session: id })).screen.includes('$'), 10_000, 'a prompt');
    return id;
  }

  async function refused(args: Record<string, unknown>, name = 'send', why = /deny rule \^rm -rf/): Promise<string> {
    const r = (await agent.callTool({ name, arguments: args })) as ToolResult;
    assert.equal(r.isError, true, `${name} ${JSON.stringify(args)} was not refused: ${textOf(r)}`);
    assert.match(textOf(r), why);
    return textOf(r);
  }

  test('a line split across writes: send_keys ["r"], then send "m -rf …"', { timeout: 60_000 }, async () => {
    const id = await agentSession();
    const target = victim('split');
    const keys = (await agent.callTool({ name: 'send_keys', arguments: { session: id, keys: ['r'] } })) as ToolResult;
    assert.notEqual(keys.isError, true, textOf(keys));
    await refused({ session: id, text: `m -rf ${target}` });
    // Backspaced away, the same text is harmless: `rm -rf` is not what the shell gets.
    await ctl.call('pty/write', { session: id, action: { key: 'Ctrl+U' } });
    assert.ok(fs.existsSync(path.join(target, 'keep')), 'the directory is still there');
    await ctl.call('pty/kill', { session: id });
  });

  test('a line put together out of order with the cursor keys: "-rf …", Home, "rm "', { timeout: 60_000 }, async () => {
    const id = await agentSession();
    const target = victim('cursor');
    const typed = (await agent.callTool({ name: 'send', arguments: { session: id, text: `-rf ${target}`, submit: false } })) as ToolResult;
    assert.notEqual(typed.isError, true, textOf(typed));
    const home = (await agent.callTool({ name: 'send_keys', arguments: { session: id, keys: ['Home'] } })) as ToolResult;
    assert.notEqual(home.isError, true, textOf(home));
    // bash now holds `rm -rf …` with this write, the cursor having gone back to the line's start.
    await refused({ session: id, keys: ['r', 'm', 'Space', 'Enter'] }, 'send_keys');
    // Written by a script instead, the same keys run the line as bash holds it, Enter ending it wherever the cursor is.
    await ctl.call('pty/write', { session: id, action: { text: 'echo \x1b[F-typed-last\x1b[Dx\r' } });
    const screen = async () => (await ctl.call('pty/read', { session: id })).screen as string;
    await until(async () => /^-rf \S+-typed-lasxt\s*$/m.test(await screen()), 10_000, "bash's line as edited");
    assert.ok(fs.existsSync(path.join(target, 'keep')), 'the directory is still there');
    await ctl.call('pty/kill', { session: id });
  });

  test('a line of the write longer than a typed line may be is refused, though the write erases it after', { timeout: 60_000 }, async () => {
    const id = await agentSession();
    const r = (await agent.callTool({ name: 'send', arguments: { session: id, text: `${'x'.repeat(70_000)}\x15`, submit: false } })) as ToolResult;
    assert.equal(r.isError, true, textOf(r).slice(0, 200));
    assert.match(textOf(r), /longer than 65536 characters/);
    await ctl.call('pty/kill', { session: id });
  });

  test("at an integrated shell's prompt, keys the host does not follow, or Enter on a line they left, are refused", { timeout: 60_000 }, async () => {
    const id = await agentSession(true);
    await until(async () => (await ctl.call('pty/info', { session: id })).integration === true, 10_000, 'shell integration');
    const target = victim('history');
    // The user ran the line once; an agent's Up and Enter would run it again unseen.
    assert.equal((await ctl.call('pty/send', { session: id, text: `: rm -rf ${target}` })).waitReason, 'command_done');
    await refused({ session: id, keys: ['ArrowUp'] }, 'send_keys', /keys the host does not follow/);
    await ctl.call('pty/write', { session: id, action: { key: 'ArrowUp' } });
    await refused({ session: id, keys: ['Enter'] }, 'send_keys', /send Ctrl\+C/);
    const clear = (await agent.callTool({ name: 'send_keys', arguments: { session: id, keys: ['Ctrl+C'] } })) as ToolResult;
    assert.notEqual(clear.isError, true, textOf(clear));
    const ok = (await agent.callTool({ name: 'send', arguments: { session: id, text: 'echo typed-whole' } })) as ToolResult;
    assert.notEqual(ok.isError, true, textOf(ok));
    assert.match(textOf(ok), /typed-whole/);
    assert.ok(fs.existsSync(path.join(target, 'keep')), 'the directory is still there');
    await ctl.call('pty/kill', { session: id });
  });

  test('typed ahead while a command runs, the kernel edits the line: Ctrl+A then Backspace is "rm -rf …" to bash', { timeout: 60_000 }, async () => {
    const id = await agentSession(true);
    const target = victim('ahead');
    const sleep = (await agent.callTool({ name: 'send', arguments: { session: id, text: 'sleep 3', timeout: 200 } })) as ToolResult;
    assert.notEqual(sleep.isError, true, textOf(sleep));
    await refused({ session: id, text: `rm\x01\x7f -rf ${target}`, submit: false });
    await ctl.call('pty/write', { session: id, action: { key: 'Ctrl+C' } });
    assert.ok(fs.existsSync(path.join(target, 'keep')), 'the directory is still there');
    await ctl.call('pty/kill', { session: id });
  });

  test(
    'a key a full-screen program reads is no shell line: after `q` in less, by the agent or the user, the agent types on; a key a busy program may leave to the shell still counts',
    { timeout: 60_000 },
    async () => {
      const id = await agentSession(true);
      await until(async () => (await ctl.call('pty/info', { session: id })).integration === true, 10_000, 'shell integration');
      const call = (name: string, args: Record<string, unknown>) => agent.callTool({ name, arguments: { session: id, ...args } }) as Promise<ToolResult>;
      const paged = await call('send', { text: 'seq 1 100 | less', timeout: 5000 });
      assert.match(textOf(paged), /stdin_read/, textOf(paged));
      const quit = await call('send_keys', { keys: ['q'], wait: true });
      assert.match(textOf(quit), /command_done/, textOf(quit));
      const after = await call('send', { text: 'echo after-less' });
      assert.notEqual(after.isError, true, textOf(after));
      assert.match(textOf(after), /^after-less$/m);

      // The user pages and quits from a view: no line of theirs is started, so the agent does not wait for it.
      const view = await wsOpen(h.port, `/sessions/${id}/stream`, { token: h.token });
      try {
        view.send({ type: 'write', data: 'seq 1 100 | less', submit: true });
        await until(async () => /^:/m.test(await screenOf(id)), 10_000, "less's prompt");
        // Drawn, then it reads: a key that comes before less waits for one is kept (it might not read it).
        await new Promise((r) => setTimeout(r, 500));
        view.send({ type: 'write', data: 'q', submit: false });
        await until(async () => (await ctl.call('pty/commands', { session: id, limit: 1 })).commands.at(-1)?.exitCode === 0, 10_000, 'less to end');
        await new Promise((r) => setTimeout(r, 1700)); // the user's pause (typing arbitration: 1.5 s)
        const next = await call('send', { text: 'echo after-user', timeout: 4000 });
        assert.notEqual(next.isError, true, textOf(next));
        assert.match(textOf(next), /^after-user$/m);
      } finally {
        await view.close();
      }

      // A key written while the command is busy (not reading) may reach the shell when it ends: kept.
      const target = victim('busy-key');
      const raw = await call('send', { text: 'stty raw -echo; sleep 1; stty sane', timeout: 200 });
      assert.notEqual(raw.isError, true, textOf(raw));
      const key = await call('send_keys', { keys: ['r'] });
      assert.notEqual(key.isError, true, textOf(key));
      await until(async () => (await ctl.call('pty/commands', { session: id, limit: 1 })).commands.at(-1)?.exitCode !== null, 10_000, 'the command to end');
      await refused({ session: id, text: `m -rf ${target}` }, 'send', /could not follow|deny rule/);
      assert.ok(fs.existsSync(path.join(target, 'keep')), 'the directory is still there');
      await ctl.call('pty/kill', { session: id });
    },
  );

  test("a command continued on the next line (an open quote) is judged whole: echo ', then '; rm -rf …", { timeout: 60_000 }, async () => {
    const id = await agentSession();
    const target = victim('quote');
    const open = (await agent.callTool({ name: 'send', arguments: { session: id, text: "echo '", timeout: 2000 } })) as ToolResult;
    assert.notEqual(open.isError, true, textOf(open));
    await refused({ session: id, text: `'; rm -rf ${target}` });
    await ctl.call('pty/write', { session: id, action: { key: 'Ctrl+C' } });
    assert.ok(fs.existsSync(path.join(target, 'keep')), 'the directory is still there');
    await ctl.call('pty/kill', { session: id });
  });

  test(
    "typed ahead during a command, keys the shell's line editor reads later are judged so, or refused; history expansion too",
    { timeout: 60_000 },
    async () => {
      const id = await agentSession(true);
      await until(async () => (await ctl.call('pty/info', { session: id })).integration === true, 10_000, 'shell integration');
      const target = victim('readline-ahead');
      const sleep = (await agent.callTool({ name: 'send', arguments: { session: id, text: 'sleep 3', timeout: 200 } })) as ToolResult;
      assert.notEqual(sleep.isError, true, textOf(sleep));
      // The kernel hands on `-rf …^Arm `; bash's readline then goes home with Ctrl+A.
      await refused({ session: id, text: `-rf ${target}\x01rm `, submit: false });
      await refused({ session: id, text: `echo \x1brrm -rf ${target}`, submit: false }, 'send', /typed ahead while a command runs/);
      await ctl.call('pty/write', { session: id, action: { key: 'Ctrl+C' } });
      assert.equal((await ctl.call('pty/send', { session: id, text: `echo rm -rf ${target}` })).waitReason, 'command_done');
      await refused({ session: id, text: '!!:1-$' }, 'send', /history expansion/);
      assert.ok(fs.existsSync(path.join(target, 'keep')), 'the directory is still there');
      await ctl.call('pty/kill', { session: id });
    },
  );

  test(
    'a shell whose marks stopped (PROMPT_COMMAND replaced) still has its prompt guarded: it holds the terminal, reading keys',
    { timeout: 60_000 },
    async () => {
      const id = await agentSession(true);
      await until(async () => (await ctl.call('pty/info', { session: id })).integration === true, 10_000, 'shell integration');
      const target = victim('no-marks');
      await ctl.call('pty/write', { session: id, action: { text: 'PROMPT_COMMAND=\r' } });
      await until(async () => /PROMPT_COMMAND=\s*\n\$ $/.test((await ctl.call('pty/read', { session: id })).screen.trimEnd() + ' '), 10_000, 'the next prompt');
      await refused({ session: id, text: `echo \x1brrm -rf ${target}`, submit: false }, 'send', /keys the host does not follow/);
      assert.ok(fs.existsSync(path.join(target, 'keep')), 'the directory is still there');
      await ctl.call('pty/kill', { session: id });
    },
  );

  test("after stty changes the terminal's editing keys, an agent's write with one of them is refused at the prompt", { timeout: 60_000 }, async () => {
    const id = await agentSession(true);
    await until(async () => (await ctl.call('pty/info', { session: id })).integration === true, 10_000, 'shell integration');
    const target = victim('stty');
    const erase = (await agent.callTool({ name: 'send', arguments: { session: id, text: "stty erase '#'" } })) as ToolResult;
    assert.notEqual(erase.isError, true, textOf(erase));
    // `#` now erases: bash would run `rm -rf …`.
    await refused({ session: id, text: `rmm# -rf ${target}` }, 'send', /editing keys were changed/);
    const sane = (await agent.callTool({ name: 'send', arguments: { session: id, text: 'stty sane' } })) as ToolResult;
    assert.notEqual(sane.isError, true, textOf(sane));
    const ok = (await agent.callTool({ name: 'send', arguments: { session: id, text: 'echo fine # a comment' } })) as ToolResult;
    assert.notEqual(ok.isError, true, textOf(ok));
    assert.ok(fs.existsSync(path.join(target, 'keep')), 'the directory is still there');
    await ctl.call('pty/kill', { session: id });
  });

  test('every command of a list, and behind sudo, env and command', { timeout: 60_000 }, async () => {
    const id = await agentSession();
    const target = victim('list');
    for (const line of [
      `echo hi; rm -rf ${target}`,
      `true && rm -rf ${target}`,
      `false || rm -rf ${target}`,
      `echo y | rm -rf ${target}`,
      `env FOO=1 rm -rf ${target}`,
      `command rm -rf ${target}`,
      `FOO=1 /bin/rm -rf ${target}`,
      `echo "$(rm -rf ${target})"`,
      `bash -c 'rm -rf ${target}'`,
    ]) {
      await refused({ session: id, text: line });
    }
    // sudo would ask for a password: refused before, so nothing waits at a prompt.
    await refused({ session: id, text: `sudo -n rm -rf ${target}` });
    assert.ok(fs.existsSync(path.join(target, 'keep')), 'the directory is still there');
    // An ordinary line still runs.
    const ok = (await agent.callTool({ name: 'send', arguments: { session: id, text: 'echo still-fine' } })) as ToolResult;
    assert.notEqual(ok.isError, true, textOf(ok));
    assert.match(textOf(ok), /still-fine/);
    await ctl.call('pty/kill', { session: id });
  });

  test('open_session\'s command line: /bin/sh -c "rm -rf …" opens nothing', { timeout: 60_000 }, async () => {
    const target = victim('open');
    const before = (await ctl.call('session/list', {})).sessions.length;
    const r = (await agent.callTool({ name: 'open_session', arguments: { command: '/bin/sh', args: ['-c', `rm -rf ${target}`] } })) as ToolResult;
    assert.equal(r.isError, true, textOf(r));
    assert.match(textOf(r), /deny rule \^rm -rf/);
    assert.equal((await ctl.call('session/list', {})).sessions.length, before, 'no session was opened');
    assert.ok(fs.existsSync(path.join(target, 'keep')), 'the directory is still there');
  });

  test("open_session's env: a denied line in PROMPT_COMMAND, or in a variable `sh -c '$X'` runs, opens nothing", { timeout: 60_000 }, async () => {
    const before = (await ctl.call('session/list', {})).sessions.length;
    for (const [what, args] of [
      ['PROMPT_COMMAND of the default shell', { env: { PROMPT_COMMAND: `rm -rf ${victim('prompt-command')}` } }],
      ["$X of sh -c '$X'", { command: '/bin/sh', args: ['-c', '$X'], env: { X: `rm -rf ${victim('env-x')}` } }],
    ] as const) {
      const r = (await agent.callTool({ name: 'open_session', arguments: args })) as ToolResult;
      assert.equal(r.isError, true, `${what}: ${textOf(r)}`);
      assert.match(
        textOf(r),
        new RegExp(`deny rule \\^rm -rf, in the value of ${'env' in args ? Object.keys(args.env)[0] : '?'}\\); no session was opened`),
        what,
      );
    }
    await new Promise((r) => setTimeout(r, 500));
    assert.equal((await ctl.call('session/list', {})).sessions.length, before, 'no session was opened');
    for (const name of ['prompt-command', 'env-x']) assert.ok(fs.existsSync(path.join(dir, name, 'keep')), `${name}: the directory is still there`);
  });
});
