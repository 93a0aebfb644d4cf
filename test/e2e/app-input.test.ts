// The person's keys in the terminal view of MCP Apps are the person's (docs/guarantees.md#the-terminal-in-the-agents-chat):
// on a host whose agent approval is `deny`, in a session the user opened, what the person types in
// the view reaches the shell as the user's (the app-only tool app_input), while the agent's own
// send_keys is refused; the model is told what the person did (ui/update-model-context), never what
// they typed at a password prompt; and the view asks for the display modes the host offers.
// Real Chromium, the bridge of @modelcontextprotocol/ext-apps, the official SDK client, a real host and bash.
/// <reference lib="dom" />
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import * as esbuild from 'esbuild';
import type { Browser, Frame, Page } from 'playwright-core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { BASH, connect, until, withTimeout } from '../helpers/host';
import { startHttpHost, type HttpHost } from '../helpers/http';
import { chromiumSkip, launchChromium } from '../helpers/chromium';
import type { RpcClient } from '../../src/transport/client/rpc-client';

declare global {
  interface Window {
    startApp(
      html: string,
      toolInput: Record<string, unknown>,
      toolResult: unknown,
      theme: 'light' | 'dark',
      offers?: { displayModes?: string[]; modelContext?: boolean },
    ): Promise<void>;
    callTool(params: { name: string; arguments?: Record<string, unknown> }): Promise<unknown>;
    sendToolResult(result: unknown): Promise<void>;
    hostLog: { modelContext: Array<{ content?: Array<{ type: string; text?: string }> }>; displayModes: string[] };
  }
}

const ROOT = path.join(__dirname, '..', '..');
const skip = chromiumSkip("the person's keys in the terminal view");
/** Typed at `read -s`: it must reach the shell and never the model's context. */
const SECRET = 'pa55-Wq7';

/** Bounds on waits; generous, since a browser on a loaded test machine is slow. */
const enum Wait {
  Load = 30_000,
  Screen = 20_000,
}

type ToolResult = { content: Array<{ type: string; text?: string }>; structuredContent?: any; isError?: boolean };

describe("the person's keys in the terminal view (Chromium, AppBridge, /mcp, agent approval deny)", () => {
  let h: HttpHost;
  let client: Client;
  let ctl: RpcClient;
  let browser: Browser;
  let page: Page;
  let frame: Frame;
  let session: string;
  const errors: string[] = [];
  const viewCalls: string[] = [];

  const rpc = (method: string, params: Record<string, unknown>) => ctl.request<any>(method, params);
  const screen = async () => (await rpc('pty/read', { session })).screen as string;
  const modelContext = () => page.evaluate(() => window.hostLog.modelContext.map((c) => (c.content ?? []).map((b) => b.text ?? '').join('')));

  before(async () => {
    if (skip) return;
    assert.ok(fs.existsSync(path.join(ROOT, 'dist', 'terminal-app.html')), 'dist/terminal-app.html is missing: run `node esbuild.mjs` first');
    h = await startHttpHost([], { agentApproval: 'deny' });
    ctl = await connect(h.host.controlAddress);
    // The user's session (the editor would open it): agents may not type into it on this host.
    session = (await rpc('session/create', { ...BASH, cols: 80, rows: 12, origin: 'user', name: 'users-shell' })).id;
    await until(async () => (await screen()).includes('$'), Wait.Screen, 'a prompt');
    // A chat host that renders MCP Apps says so in its initialize (the view's keys are the person's only then).
    const capabilities = { extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] } } };
    client = new Client({ name: 'app-input-e2e', version: '0' }, { capabilities });
    const transport = new StreamableHTTPClientTransport(new URL(`${h.http.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${h.token}` } } });
    await withTimeout(client.connect(transport), 20_000, 'MCP connect');

    const hostPage = await esbuild.build({
      entryPoints: [path.join(__dirname, 'fixtures', 'apps-host.mjs')],
      bundle: true,
      write: false,
      platform: 'browser',
      format: 'iife',
      logLevel: 'warning',
    });
    browser = await launchChromium();
    page = await (await browser.newContext({ viewport: { width: 900, height: 560 } })).newPage();
    page.setDefaultTimeout(Wait.Load);
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    await page.exposeFunction('callTool', (p: { name: string; arguments?: Record<string, unknown> }) => {
      viewCalls.push(p.name);
      return client.callTool({ name: p.name, arguments: p.arguments });
    });
    await page.setContent(`<!DOCTYPE html><html><body style="margin:8px;background:#2b2b2b"><script>${hostPage.outputFiles[0].text}</script></body></html>`);
  });

  after(async () => {
    await browser?.close().catch(() => {});
    await client?.close().catch(() => {});
    ctl?.close();
    await h?.close();
  });

  it("lists app_input for the view only, and the agent's own keys are refused in the user's session", { skip }, async () => {
    const { tools } = await client.listTools();
    const tool = tools.find((t) => t.name === 'app_input');
    assert.deepEqual((tool?._meta as any)?.ui?.visibility, ['app'], 'a chat host hides it from the model');
    const refused = (await client.callTool({ name: 'send_keys', arguments: { session, keys: ['x'] } })) as ToolResult;
    assert.equal(refused.isError, true);
    assert.match(refused.content[0].text ?? '', /agents may not type into session users-shell/);
  });

  it("what the person types in the view reaches the shell as the user's, and the model is told", { skip }, async () => {
    const input = { session };
    const result = (await client.callTool({ name: 'read_screen', arguments: input })) as ToolResult;
    const { contents } = await client.readResource({ uri: 'ui://shared-pty/terminal' });
    const html = (contents[0] as { text: string }).text;
    await page.evaluate(([h, i, r]) => window.startApp(h, i, r, 'dark', { displayModes: ['inline', 'pip', 'fullscreen'], modelContext: true }), [
      html,
      input,
      result,
    ] as const);
    frame = page.frames().find((f) => f !== page.mainFrame())!;
    await frame.waitForFunction(() => (window as any).__sharedPtyApp?.session() !== undefined, undefined, { timeout: Wait.Screen });

    await frame.click('#terminal');
    await page.keyboard.type('echo person-$((40+2))');
    await page.keyboard.press('Enter');
    await until(async () => /^person-42$/m.test(await screen()), Wait.Screen, "the person's command ran");
    const info = await rpc('pty/info', { session });
    assert.equal(info.lastInput.origin, 'user', JSON.stringify(info.lastInput));
    assert.equal(info.lastInput.transport, 'mcp-app');
    assert.ok(viewCalls.includes('app_input') && !viewCalls.includes('send_keys'), `the view typed through app_input: ${viewCalls.join(' ')}`);
    await until(
      // The session by its name, even when the person typed before the view had listed the sessions.
      async () => (await modelContext()).some((t) => t.includes('submitted: "echo person-$((40+2))"') && t.includes('users-shell')),
      Wait.Screen,
      'the model told what the person ran',
    );
    assert.deepEqual(errors, []);
  });

  it('the person answers a password prompt in the view; the model is told only that they did', { skip }, async () => {
    await rpc('pty/write', { session, action: { text: 'read -s pw; echo "got ${#pw}"\r' } });
    await until(async () => (await rpc('pty/info', { session })).secretInput, Wait.Screen, 'the shell asks for a secret');
    await frame.click('#terminal');
    await page.keyboard.type(SECRET);
    await page.keyboard.press('Enter');
    await until(async () => (await screen()).includes(`got ${SECRET.length}`), Wait.Screen, 'the shell read the secret');
    await until(
      async () => (await modelContext()).some((t) => t.includes("answered the program's secret prompt")),
      Wait.Screen,
      'the model told a secret was answered',
    );
    for (const text of await modelContext()) assert.ok(!text.includes(SECRET) && !text.includes('pa55'), `the secret reached the model's context: ${text}`);
  });

  it('asks for picture-in-picture and fullscreen where the host offers them', { skip }, async () => {
    assert.equal(await frame.isVisible('#pip'), true);
    assert.equal(await frame.isVisible('#fullscreen'), true);
    await frame.click('#pip');
    await frame.waitForSelector('#pip[aria-pressed="true"]');
    await frame.click('#fullscreen');
    await frame.waitForSelector('#fullscreen[aria-pressed="true"]');
    await frame.click('#fullscreen');
    await frame.waitForSelector('#fullscreen[aria-pressed="false"]');
    assert.deepEqual(await page.evaluate(() => window.hostLog.displayModes), ['pip', 'fullscreen', 'inline']);
  });

  it('a view that turns to another session names that one to the model, though the person types at once', { skip }, async () => {
    const other = (await rpc('session/create', { ...BASH, cols: 80, rows: 12, origin: 'user', name: 'second-shell' })).id;
    try {
      const before = (await modelContext()).length;
      const result = (await client.callTool({ name: 'read_screen', arguments: { session: other } })) as ToolResult;
      await page.evaluate((r) => window.sendToolResult(r), result);
      await frame.waitForFunction((id) => (window as any).__sharedPtyApp?.session() === id, other, { timeout: Wait.Screen });
      // At once: before the view has listed the sessions (it reads them a moment after drawing).
      await frame.click('#terminal');
      await page.keyboard.press('Enter');
      await until(async () => (await modelContext()).length > before, Wait.Screen, 'the model told of the Enter');
      const told = (await modelContext()).slice(before);
      assert.ok(
        told.every((t) => t.includes('second-shell') && !t.includes('users-shell')),
        `the model must hear of second-shell, not of the session the view showed before: ${JSON.stringify(told)}`,
      );
    } finally {
      await rpc('pty/kill', { session: other }).catch(() => {});
    }
  });

  it('offers no display mode the host does not have', { skip }, async () => {
    const input = { session };
    const result = (await client.callTool({ name: 'read_screen', arguments: input })) as ToolResult;
    const { contents } = await client.readResource({ uri: 'ui://shared-pty/terminal' });
    await page.evaluate(([h, i, r]) => window.startApp(h, i, r, 'dark'), [(contents[0] as { text: string }).text, input, result] as const);
    const plain = page
      .frames()
      .filter((f) => f !== page.mainFrame())
      .at(-1)!;
    await plain.waitForFunction(() => (window as any).__sharedPtyApp?.session() !== undefined, undefined, { timeout: Wait.Screen });
    assert.equal(await plain.isVisible('#pip'), false);
    assert.equal(await plain.isVisible('#fullscreen'), false);
    assert.deepEqual(errors, []);
  });
});
