// Passwords the model never sees (docs/protocol.md#secret-pages): when an agent's write is refused
// because the program asks for a secret, the person gets a one-time page of the host where they
// type it straight into the PTY: through URL-mode elicitation of the agent's client (the official
// SDK client over `shared-pty mcp`), or from a link the refusal carries (a client without it, over
// /mcp). Real host, real bash `read -s`, real Chromium filling the page. And the page refuses a
// second use, an expired link, a session no longer asking, and a POST from another origin.
/// <reference lib="dom" />
import { strict as assert } from 'node:assert';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { BASH, connect, startHost, until, withTimeout } from '../helpers/host';
import { request } from '../helpers/http';
import { bashEnv, buildCli, CLI, REPO_ROOT } from '../helpers/protocol';
import { webSocketWire } from '../helpers/fuzz-wire';
import { chromiumSkip, launchChromium } from '../helpers/chromium';
import { startHttpServer, type HttpServer } from '../../src/transport/http/http-server';
import type { Host } from '../../src/host/host';
import type { RpcClient } from '../../src/transport/client/rpc-client';

const skip = chromiumSkip('the secret page') || (process.platform !== 'linux' && 'needs Linux /proc');
/** What the person types; the shell prints only its length, so it must appear nowhere else. */
const SECRET = 'Zq9-hunter2';
/** An origin the host allows for browsers (--allow-origin), which still may not post a secret. */
const ALLOWED_ORIGIN = 'http://localhost:5999';
/** A secret page's lifetime on the second host: short, to see one expire (the option exists for tests only). */
const SHORT_LIFETIME_MS = 50;

/** Bounds on waits; generous, since a browser on a loaded test machine is slow. */
const enum Wait {
  Load = 30_000,
  Screen = 20_000,
}

type ToolResult = { content: Array<{ type: string; text?: string }>; structuredContent?: any; isError?: boolean };
const textOf = (r: ToolResult) => r.content.map((c) => c.text ?? '').join('');

/** A host with its HTTP server attached, the secret page's lifetime as given. */
async function hostWithHttp(secretPageLifetimeMs?: number): Promise<{ host: Host; http: HttpServer; dir: string; close(): Promise<void> }> {
  const { host, dir, close } = await startHost();
  const http = await startHttpServer(host, { hostId: host.hostId, allowedOrigins: [ALLOWED_ORIGIN], secretPageLifetimeMs });
  host.attachHttp(http);
  return { host, http, dir, close };
}

describe('secret pages (real host, bash read -s, Chromium, the SDK client)', () => {
  let h: Awaited<ReturnType<typeof hostWithHttp>>;
  let short: Awaited<ReturnType<typeof hostWithHttp>>;
  let ctl: RpcClient;
  let shortCtl: RpcClient;
  let browser: Browser;
  let page: Page;
  let stdioAgent: Client;
  let httpAgent: Client;
  const asked: Array<{ mode?: string; url?: string; message: string }> = [];
  const results: unknown[] = [];

  const rpc = (method: string, params: Record<string, unknown>) => ctl.request<any>(method, params);

  /** A user's bash that asks for a secret now (`read -s`, then prints the length read). */
  async function asking(c: RpcClient = ctl): Promise<string> {
    const info = await c.request<any>('session/create', { ...BASH, cols: 80, rows: 24, origin: 'user' });
    await until(async () => (await c.request<any>('pty/read', { session: info.id })).screen.includes('$'), Wait.Screen, 'a prompt');
    await c.request('pty/write', { session: info.id, action: { text: 'read -s x; echo "len=${#x}"\r' } });
    await until(async () => (await c.request<any>('pty/info', { session: info.id })).secretInput, Wait.Screen, 'the shell asks for a secret');
    return info.id;
  }

  /** The person opens `url` in Chromium and types the secret there. */
  async function typeOnPage(url: string): Promise<string> {
    await page.goto(url);
    await page.fill('input[name=secret]', SECRET);
    await page.click('button[type=submit]');
    await page.waitForSelector('h1');
    return (await page.textContent('h1')) ?? '';
  }

  const screenOf = async (session: string, c: RpcClient = ctl) => (await c.request<any>('pty/read', { session })).screen as string;

  before(async () => {
    if (skip) return;
    buildCli();
    h = await hostWithHttp();
    short = await hostWithHttp(SHORT_LIFETIME_MS);
    ctl = await connect(h.host.controlAddress);
    shortCtl = await connect(short.host.controlAddress);
    browser = await launchChromium();
    page = await (await browser.newContext()).newPage();
    page.setDefaultTimeout(Wait.Load);

    // An agent whose client asks the person to open URLs (and fill forms): over stdio, the relay finds the host by its record.
    stdioAgent = new Client({ name: 'secret-e2e', version: '0' }, { capabilities: { elicitation: { url: {}, form: {} } } });
    stdioAgent.setRequestHandler(ElicitRequestSchema, async (req) => {
      const p = req.params as { mode?: string; url?: string; message: string };
      asked.push(p);
      return { action: 'accept' };
    });
    const env = bashEnv({ SHARED_PTY_DIR: h.dir }) as Record<string, string>;
    await withTimeout(
      stdioAgent.connect(new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp'], env, cwd: REPO_ROOT, stderr: 'pipe' })),
      30_000,
      'MCP stdio connect',
    );
    // An agent whose client has no elicitation, over /mcp.
    httpAgent = new Client({ name: 'secret-e2e-http', version: '0' });
    await withTimeout(
      httpAgent.connect(
        new StreamableHTTPClientTransport(new URL(`${h.http.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${h.http.token}` } } }),
      ),
      20_000,
      'MCP connect',
    );
  });

  after(async () => {
    for (const r of results) assert.ok(!JSON.stringify(r).includes(SECRET), `the secret shows in ${JSON.stringify(r).slice(0, 300)}`);
    await browser?.close().catch(() => {});
    await stdioAgent?.close().catch(() => {});
    await httpAgent?.close().catch(() => {});
    ctl?.close();
    shortCtl?.close();
    await short?.close();
    await h?.close();
  });

  it('a client with URL elicitation asks the person to open the page; what they type there reaches the program', { skip }, async () => {
    const session = await asking();
    const refused = (await stdioAgent.callTool({ name: 'send', arguments: { session, text: 'agent-guess' } })) as ToolResult;
    results.push(refused);
    assert.equal(refused.isError, true);
    assert.match(textOf(refused), /asks for a secret/);
    assert.match(textOf(refused), /asked through your MCP client .* opened it/);
    assert.equal(asked.length, 1, 'one question to the person');
    assert.equal(asked[0].mode, 'url');
    assert.match(asked[0].url ?? '', new RegExp(`^${h.http.url}/secret/[A-Za-z0-9_-]+$`));
    assert.ok(!textOf(refused).includes(asked[0].url!), 'the model is not handed the link the person was asked to open');

    assert.equal(await typeOnPage(asked[0].url!), 'Typed');
    await until(async () => (await screenOf(session)).includes(`len=${SECRET.length}`), Wait.Screen, 'the shell read the secret');
    assert.equal((await rpc('pty/info', { session })).lastInput.transport, 'secret-page');
    const screen = await screenOf(session);
    results.push(screen, await rpc('pty/output', { session, since: 0 }), await rpc('pty/scrollback', { session }));
    assert.ok(!screen.includes('agent-guess'), "nothing of the agent's reached the program");

    // The link works once: opened again, it says so; posted again from the page's own origin, nothing is typed.
    await page.goto(asked[0].url!);
    assert.equal(await page.textContent('h1'), 'This page was already used');
    const again = await request(h.http.port, 'POST', new URL(asked[0].url!).pathname, {
      origin: h.http.url,
      body: `secret=${SECRET}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    assert.equal(again.status, 410, again.text);
  });

  it(
    'a client without URL elicitation gets no link (the model reads its results, and could type on it): it is told to ask the person, and its token makes no page on /rpc',
    { skip },
    async () => {
      const session = await asking();
      const refused = (await httpAgent.callTool({ name: 'send_keys', arguments: { session, keys: ['x', 'Enter'] } })) as ToolResult;
      results.push(refused);
      assert.equal(refused.isError, true);
      assert.doesNotMatch(textOf(refused), /\/secret\//);
      assert.match(textOf(refused), /Ask the person to type it in the terminal themselves/);
      // The same token, an agent's since it was used on /mcp, asks for a page itself over /rpc.
      const wire = await webSocketWire(`ws://127.0.0.1:${h.http.port}/rpc`, h.http.token);
      try {
        wire.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'pty/secretPage', params: { session } }));
        const answer = (await wire.nextResponse(10_000, 'the answer to pty/secretPage')) as { error?: { code: number; message: string }; result?: unknown };
        assert.equal(answer.result, undefined, JSON.stringify(answer));
        assert.equal(answer.error?.code, -32004);
        assert.match(answer.error!.message, /a secret page is for the person, not an agent/);
      } finally {
        wire.close();
      }
      assert.equal((await rpc('pty/info', { session })).secretInput, true, 'the program still asks');
      // The person types it in the terminal.
      await rpc('pty/write', { session, action: { text: `${SECRET}\r` } });
      await until(async () => (await screenOf(session)).includes(`len=${SECRET.length}`), Wait.Screen, 'the shell read the secret');
    },
  );

  it('refuses a POST from another origin (even one allowed for the API), and the link still works after', { skip }, async () => {
    const session = await asking();
    const { url } = await rpc('pty/secretPage', { session });
    const path = new URL(url).pathname;
    const form = { body: `secret=${SECRET}`, headers: { 'content-type': 'application/x-www-form-urlencoded' } };
    for (const origin of ['http://evil.example', ALLOWED_ORIGIN, undefined]) {
      const r = await request(h.http.port, 'POST', path, { ...form, origin });
      assert.equal(r.status, 403, `${origin}: ${r.text}`);
      assert.ok(!r.text.includes(SECRET));
    }
    assert.equal((await rpc('pty/info', { session })).secretInput, true, 'nothing was typed');
    assert.equal(await typeOnPage(url), 'Typed');
    await until(async () => (await screenOf(session)).includes(`len=${SECRET.length}`), Wait.Screen, 'the shell read the secret');
  });

  it('refuses when the session no longer asks for a secret and types nothing; the page works when it asks again', { skip }, async () => {
    const session = await asking();
    const { url } = await rpc('pty/secretPage', { session });
    await page.goto(url); // the person opens it, but answers in the terminal meanwhile
    await rpc('pty/write', { session, action: { text: 'typed-in-terminal\r' } });
    await until(async () => (await screenOf(session)).includes('len=17'), Wait.Screen, 'the shell read the answer typed in the terminal');
    await until(async () => !(await rpc('pty/info', { session })).secretInput, Wait.Screen, 'the prompt is over');
    await page.fill('input[name=secret]', SECRET);
    await page.click('button[type=submit]');
    await page.waitForSelector('h1');
    assert.equal(await page.textContent('h1'), 'The program no longer asks for a secret');
    await rpc('pty/write', { session, action: { text: 'echo after\r' } });
    await until(async () => /^after$/m.test(await screenOf(session)), Wait.Screen, 'the shell runs on');
    assert.ok(!(await screenOf(session)).includes(SECRET), 'the secret was not typed');
    // And no link is made for a session that does not ask.
    await assert.rejects(rpc('pty/secretPage', { session }), /does not ask for a secret/);
    // Nothing was typed, so the page was not spent: when the program asks again, it types.
    await rpc('pty/write', { session, action: { text: 'read -s x; echo "again=${#x}"\r' } });
    await until(async () => (await rpc('pty/info', { session })).secretInput, Wait.Screen, 'the shell asks again');
    assert.equal(await typeOnPage(url), 'Typed');
    await until(async () => (await screenOf(session)).includes(`again=${SECRET.length}`), Wait.Screen, 'the shell read the secret from the same page');
  });

  it('a page whose session has ended says so (410), and types nothing', { skip }, async () => {
    const session = await asking();
    const { url } = await rpc('pty/secretPage', { session });
    await rpc('pty/kill', { session });
    await until(
      async () => !(await rpc('session/list', {})).sessions.some((s: { id: string; running: boolean }) => s.id === session && s.running),
      Wait.Screen,
      'the session to end',
    );
    const form = { origin: h.http.url, body: `secret=${SECRET}`, headers: { 'content-type': 'application/x-www-form-urlencoded' } };
    const posted = await request(h.http.port, 'POST', new URL(url).pathname, form);
    assert.equal(posted.status, 410, posted.text);
    assert.match(posted.text, /The session has ended/);
    assert.doesNotMatch(posted.text, /still works/);
    assert.equal((await request(h.http.port, 'GET', new URL(url).pathname)).status, 410);
  });

  it('refuses a link past its lifetime (a host started with a short one), and types nothing', { skip }, async () => {
    const session = await asking(shortCtl);
    const { url, expiresAt } = await shortCtl.request<any>('pty/secretPage', { session });
    await until(() => Date.now() > Date.parse(expiresAt), Wait.Screen, 'the link to expire');
    await page.goto(url);
    assert.equal(await page.textContent('h1'), 'This page has expired');
    const r = await request(short.http.port, 'POST', new URL(url).pathname, {
      origin: short.http.url,
      body: `secret=${SECRET}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    assert.equal(r.status, 410, r.text);
    assert.equal((await shortCtl.request<any>('pty/info', { session })).secretInput, true, 'the program still asks: nothing was typed');
  });
});
