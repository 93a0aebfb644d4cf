// The terminal view of MCP Apps (docs/guarantees.md#the-terminal-in-the-agents-chat) over both MCP transports, with the official SDK
// client: the server declares the extension, lists and serves ui://shared-pty/terminal as one
// self-contained page, the tools that show a session point at it and name the session in their
// structured result, and the tools the view calls draw and follow a real bash session.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { BASH, connect, until, withTimeout } from '../../../helpers/host';
import type { RpcClient } from '../../../../src/transport/client/rpc-client';
import { mcpPost, startHttpHost, type HttpHost } from '../../../helpers/http';
import { bashEnv, buildCli, CLI, REPO_ROOT } from '../../../helpers/protocol';
import { ensureNoDisposablesAreLeakedBySuite } from '../../../helpers/leak-tracker';

const URI = 'ui://shared-pty/terminal';
/** The tools that show a session (docs/guarantees.md#the-terminal-in-the-agents-chat). */
const SHOWING = ['open_session', 'read_screen', 'send', 'wait_for'];
const TEST_TIMEOUT = 60_000;

type ToolResult = { content: Array<{ type: string; text?: string }>; structuredContent?: any; isError?: boolean };

/** The MCP Apps names, as the extension's own package spells them. */
async function appsNames(): Promise<{ EXTENSION_ID: string; RESOURCE_MIME_TYPE: string }> {
  const specifier: string = '@modelcontextprotocol/ext-apps/server';
  return import(specifier);
}

/** What every transport must agree on: the capability, the resource, and the tools' metadata. */
async function checkDeclarations(client: Client): Promise<void> {
  const { EXTENSION_ID, RESOURCE_MIME_TYPE } = await appsNames();
  const caps = client.getServerCapabilities() as any;
  assert.deepEqual(caps?.extensions?.[EXTENSION_ID], { mimeTypes: [RESOURCE_MIME_TYPE] }, 'the server declares MCP Apps');
  assert.ok(caps?.resources, 'the server declares resources');

  const { resources } = await client.listResources();
  const listed = resources.find((r) => r.uri === URI);
  assert.ok(listed, `resources/list lists ${URI}: ${JSON.stringify(resources)}`);
  assert.equal(listed.mimeType, RESOURCE_MIME_TYPE);

  const read = await client.readResource({ uri: URI });
  assert.equal(read.contents.length, 1);
  const page = read.contents[0] as { uri: string; mimeType?: string; text?: string };
  assert.equal(page.uri, URI);
  assert.equal(page.mimeType, RESOURCE_MIME_TYPE);
  const html = page.text ?? '';
  assert.match(html, /^<!DOCTYPE html>/);
  assert.match(html, /<script>[\s\S]*xterm[\s\S]*<\/script>/, 'the script is inline, xterm.js included');
  assert.match(html, /<style>[\s\S]*\.xterm[\s\S]*<\/style>/, 'the styles are inline, xterm.css included');
  assert.doesNotMatch(html, /<script[^>]*\bsrc=|<link[^>]*\bhref=/i, 'the page loads no script or stylesheet of its own');

  const { tools } = await client.listTools();
  for (const name of SHOWING) {
    const tool = tools.find((t) => t.name === name);
    assert.equal((tool?._meta as any)?.ui?.resourceUri, URI, `${name} points at the terminal view`);
    assert.equal((tool?.outputSchema as any)?.properties?.session?.type, 'string', `${name}'s structured result names the session`);
  }
  const snapshot = tools.find((t) => t.name === 'terminal_snapshot');
  assert.deepEqual((snapshot?._meta as any)?.ui?.visibility, ['app'], 'the snapshot tool is for the view, not the model');
  const keys = tools.find((t) => t.name === 'app_input');
  assert.deepEqual((keys?._meta as any)?.ui?.visibility, ['app'], "the person's keys are the view's, hidden from the model");
  for (const t of tools.filter((x) => !SHOWING.includes(x.name) && x.name !== 'terminal_snapshot' && x.name !== 'app_input')) {
    assert.equal((t._meta as any)?.ui, undefined, `${t.name} shows no view`);
  }
}

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<{ data: any; text: string }> {
  const r = (await client.callTool({ name, arguments: args })) as ToolResult;
  const text = r.content.map((c) => c.text ?? '').join('');
  assert.notEqual(r.isError, true, `${name} failed: ${text}`);
  return { data: r.structuredContent, text };
}

// Once the shared host is closed, nothing the suite made is left (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedBySuite();

describe('MCP Apps over Streamable HTTP (/mcp)', () => {
  let h: HttpHost;
  let client: Client;

  before(async () => {
    h = await startHttpHost();
    client = new Client({ name: 'apps-test', version: '0.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(`${h.http.url}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${h.token}` } },
    });
    await withTimeout(client.connect(transport), 20_000, 'MCP connect');
  });

  after(async () => {
    await client?.close();
    await h?.close();
  });

  test('the extension, the resource and the tool metadata', { timeout: TEST_TIMEOUT }, async () => {
    await checkDeclarations(client);
  });

  test('the tools that show a session name it by id (whatever selector the agent used) and keep their text', { timeout: TEST_TIMEOUT }, async () => {
    const opened = await call(client, 'open_session', { ...BASH, name: 'apps-shown' });
    const id = opened.data.id;
    assert.equal(opened.data.session, id);
    assert.match(opened.text, /^Opened session /);
    const sent = await call(client, 'send', { session: 'apps-shown', text: 'echo shown-$((6*7))' });
    assert.equal(sent.data.session, id, 'send by name names the id');
    assert.match(sent.text, /shown-42/);
    const screen = await call(client, 'read_screen', { session: id.slice(0, 6) });
    assert.equal(screen.data.session, id, 'read_screen by id prefix names the id');
    assert.match(screen.text, /shown-42/);
    const waited = await call(client, 'wait_for', { session: 'apps-shown', match: 'shown-42', timeout: 5000 });
    assert.equal(waited.data.session, id);
    assert.equal(waited.data.reason, 'matched');
    await call(client, 'close_session', { session: id });
  });

  test("the view's tools: a snapshot that redraws the screen, then read_output from its cursor follows new output", { timeout: TEST_TIMEOUT }, async () => {
    const { data: s } = await call(client, 'open_session', { ...BASH, cols: 60, rows: 12 });
    await call(client, 'send', { session: s.id, text: 'echo before-snapshot' });
    const snap = await call(client, 'terminal_snapshot', { session: s.id });
    assert.equal(snap.data.cols, 60);
    assert.equal(snap.data.rows, 12);
    assert.match(snap.data.data, /before-snapshot/);
    assert.doesNotMatch(snap.text, /before-snapshot/, 'a model reading the text gets no escape-laden picture');
    const reading = call(client, 'read_output', { session: s.id, since: snap.data.cursor, waitMs: 20_000, strip: true });
    await call(client, 'send_keys', { session: s.id, keys: [...'echo after-$((1+1))', 'Enter'] });
    let seen = '';
    let cursor = snap.data.cursor;
    let next = reading;
    while (!seen.includes('after-2\n')) {
      const { data } = await next;
      assert.equal(data.dropped, 0);
      seen += data.data;
      cursor = data.cursor;
      next = call(client, 'read_output', { session: s.id, since: cursor, waitMs: 20_000, strip: true });
    }
    assert.doesNotMatch(seen, /before-snapshot/, 'output before the snapshot is not read again');
    await call(client, 'close_session', { session: s.id });
    await next.catch(() => {});
  });
});

describe('MCP Apps over stdio (shared-pty mcp)', () => {
  let base: string;
  let client: Client;

  before(async () => {
    buildCli();
    base = fs.mkdtempSync(path.join(os.tmpdir(), 'spt-apps-'));
    fs.chmodSync(base, 0o700);
    const env = bashEnv({ SHARED_PTY_DIR: base }) as Record<string, string>;
    const transport = new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp'], env, cwd: REPO_ROOT, stderr: 'pipe' });
    client = new Client({ name: 'apps-test', version: '0.0.0' });
    await withTimeout(client.connect(transport), 30_000, 'MCP stdio connect');
  });

  after(async () => {
    await client?.close().catch(() => {});
    if (base) fs.rmSync(base, { recursive: true, force: true });
  });

  // No tool is called, so no host starts: the view is the server's own, whatever hosts run.
  test('the extension, the resource and the tool metadata', { timeout: TEST_TIMEOUT }, async () => {
    await checkDeclarations(client);
  });
});

describe("the person's keys over /mcp, whose 2025-11-25 requests carry no capabilities", () => {
  let h: HttpHost;
  let ctl: RpcClient;
  const rpc = (method: string, params: Record<string, unknown>) => ctl.request<any>(method, params);
  const screen = async (session: string) => (await rpc('pty/read', { session })).screen as string;

  before(async () => {
    // Agents may not type into the user's sessions.
    h = await startHttpHost([], { agentApproval: 'deny' });
    ctl = await connect(h.host.controlAddress);
  });

  after(async () => {
    ctl?.close();
    await h?.close();
  });

  async function clientDeclaring(apps: boolean, token = h.token): Promise<Client> {
    const capabilities = apps ? { extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] } } } : {};
    const client = new Client({ name: apps ? 'renders-apps' : 'renders-none', version: '0.0.0' }, { capabilities });
    const transport = new StreamableHTTPClientTransport(new URL(`${h.http.url}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    });
    await withTimeout(client.connect(transport), 20_000, 'MCP connect');
    return client;
  }

  test(
    "app_input is the user's only from a client whose initialize declared MCP Apps; one that declared none, or a caller never seen to initialize, writes as itself, through the agent guards",
    { timeout: TEST_TIMEOUT },
    async () => {
      const user = await rpc('session/create', { ...BASH, cols: 80, rows: 24, origin: 'user' });
      await until(async () => (await screen(user.id)).includes('$'), 10_000, 'a prompt');
      // The key is in a page any client may read (and a model given a tool that reads resources).
      const plain = await clientDeclaring(false);
      const page = (await plain.readResource({ uri: URI })).contents[0] as { text?: string };
      const appKey = /<meta name="shared-pty-app-key" content="([^"]+)">/.exec(page.text ?? '')?.[1];
      assert.ok(appKey);
      const keys = (client: Client, data: string) =>
        client.callTool({ name: 'app_input', arguments: { session: user.id, data, appKey } }) as Promise<ToolResult>;
      const text = (r: ToolResult) => r.content.map((c) => c.text ?? '').join('');

      // A client that declared none: its keys are its own, refused in the user's session like its send.
      const none = await keys(plain, 'echo from-no-apps\r');
      assert.equal(none.isError, true);
      assert.match(text(none), /agents may not type into session/);
      await plain.close();

      // A scoped token never used to initialize: nothing known of its client, so the keys are its own.
      const shared = await rpc('session/share', { session: user.id, scope: 'control', reusable: true });
      const raw = await mcpPost(h.port, shared.token, {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'app_input', arguments: { session: user.id, data: 'echo past-the-guards\r', appKey } },
      });
      assert.equal(raw.json?.result?.isError, true, raw.text);
      assert.match(raw.text, /agents may not type into session/);
      const last = (await rpc('pty/info', { session: user.id })).lastInput;
      assert.deepEqual([last.origin, last.approval], ['agent', 'policy_deny'], "the agent's write, refused by the policy");
      // The same scoped token from a client that declares MCP Apps: any client can declare it, and a
      // scoped token used here is an agent's on every surface, so its keys stay its own.
      const scopedApps = await clientDeclaring(true, shared.token);
      try {
        const claimed = await keys(scopedApps, 'echo scoped-as-person\r');
        assert.equal(claimed.isError, true, text(claimed));
        assert.match(text(claimed), /agents may not type into session/);
      } finally {
        await scopedApps.close();
      }
      // In an agent's own session the write goes in, and says why it counts as the agent's (it said
      // "it has not declared MCP Apps", which this client had: found by an outside audit).
      const mine = await rpc('session/create', { ...BASH, cols: 80, rows: 24, origin: 'agent' });
      const mineToken = (await rpc('session/share', { session: mine.id, scope: 'input', reusable: true })).token as string;
      const mineApps = await clientDeclaring(true, mineToken);
      try {
        const own = (await mineApps.callTool({ name: 'app_input', arguments: { session: mine.id, data: 'echo mine\r', appKey } })) as ToolResult;
        assert.notEqual(own.isError, true, text(own));
        assert.match(text(own), /^Typed \d+ bytes as this client's own write \(a session's scoped token writes as an agent\)\.$/);
      } finally {
        await mineApps.close();
        await rpc('pty/kill', { session: mine.id });
      }

      // A chat host that renders MCP Apps (and so hides app_input from its model): the person's keys.
      const apps = await clientDeclaring(true);
      try {
        const typed = await keys(apps, 'echo the-person-$((6*7))\r');
        assert.notEqual(typed.isError, true, text(typed));
        await until(async () => /^the-person-42$/m.test(await screen(user.id)), 10_000, "the person's line ran");
        const person = (await rpc('pty/info', { session: user.id })).lastInput;
        assert.deepEqual([person.origin, person.transport], ['user', 'mcp-app']);
      } finally {
        await apps.close();
      }
      // An agent's token (host/agentToken) is the agent's whatever its client declares: the agent
      // may hold it itself.
      const agentToken = (await rpc('host/agentToken', {})).token as string;
      const agentApps = await clientDeclaring(true, agentToken);
      try {
        const claimed = await keys(agentApps, 'echo agent-as-person\r');
        assert.equal(claimed.isError, true, text(claimed));
        assert.match(text(claimed), /agents may not type into session/);
      } finally {
        await agentApps.close();
      }
      // The editor's chat holds one minted for a chat host (`chat`), not the host's token: the
      // view's keys are the person's from the client that declared MCP Apps with it, and its own
      // from one that declared none.
      const chatToken = (await rpc('host/agentToken', { chat: true })).token as string;
      const chatPlain = await clientDeclaring(false, chatToken);
      try {
        const own = await keys(chatPlain, 'echo chat-no-apps\r');
        assert.equal(own.isError, true, text(own));
        assert.match(text(own), /agents may not type into session/);
      } finally {
        await chatPlain.close();
      }
      const chat = await clientDeclaring(true, chatToken);
      try {
        const typed = await keys(chat, 'echo chat-person-$((6*7))\r');
        assert.notEqual(typed.isError, true, text(typed));
        await until(async () => /^chat-person-42$/m.test(await screen(user.id)), 10_000, "the person's line from the chat's view ran");
        const person = (await rpc('pty/info', { session: user.id })).lastInput;
        assert.deepEqual([person.origin, person.transport], ['user', 'mcp-app']);
      } finally {
        await chat.close();
      }
      const shown = await screen(user.id);
      assert.ok(
        !shown.includes('from-no-apps') &&
          !shown.includes('past-the-guards') &&
          !shown.includes('scoped-as-person') &&
          !shown.includes('chat-no-apps') &&
          !shown.includes('agent-as-person'),
        shown,
      );
      await rpc('pty/kill', { session: user.id });
    },
  );
});
