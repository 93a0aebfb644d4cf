// The terminal view of MCP Apps (ui://shared-pty/terminal) in a real browser: Debian's Chromium,
// a minimal host page that speaks the bridge (fixtures/apps-host.mjs: AppBridge, a sandboxed
// iframe, the specification's default CSP) and forwards the view's tool calls to a real host's
// /mcp through the official SDK client. The view shows the session the agent's tool result names,
// follows new output, and what a person types in it reaches the shell.
/// <reference lib="dom" />
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import * as esbuild from 'esbuild';
import type { Browser, Frame, Page } from 'playwright-core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { until, withTimeout } from '../helpers/host';
import { startHttpHost, type HttpHost } from '../helpers/http';
import { chromiumSkip, launchChromium } from '../helpers/chromium';

declare global {
  interface Window {
    startApp(html: string, toolInput: Record<string, unknown>, toolResult: unknown, theme: 'light' | 'dark'): Promise<void>;
    callTool(params: { name: string; arguments?: Record<string, unknown> }): Promise<unknown>;
    __sharedPtyTerm?: import('@xterm/xterm').Terminal;
    __sharedPtyApp?: { session: () => string | undefined; status: () => string };
  }
}

const ROOT = path.join(__dirname, '..', '..');
// The README's picture is refreshed only when asked (SHARED_PTY_SCREENSHOTS=1): a test run leaves the tree clean.
const SHOTS = process.env.SHARED_PTY_SCREENSHOTS === '1' ? path.join(ROOT, 'media') : fs.mkdtempSync(path.join(os.tmpdir(), 'spt-shots-'));
const skip = chromiumSkip('the terminal view test');

/** Bounds on waits; generous, since a browser on a loaded test machine is slow. */
const enum Wait {
  Load = 30_000,
  Screen = 20_000,
}

type ToolResult = { content: Array<{ type: string; text?: string }>; structuredContent?: any; isError?: boolean };

/** The rows the view's terminal shows now (its whole buffer, trimmed). */
function viewText(frame: Frame): Promise<string> {
  return frame.evaluate(() => {
    const b = window.__sharedPtyTerm!.buffer.active;
    const rows: string[] = [];
    for (let i = 0; i < b.length; i++) rows.push(b.getLine(i)?.translateToString(true) ?? '');
    return rows.join('\n');
  });
}

describe('the terminal view of MCP Apps (Chromium, AppBridge, /mcp)', () => {
  let h: HttpHost;
  let client: Client;
  let browser: Browser;
  let page: Page;
  let frame: Frame;
  let session: string;
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'spt-apps-home-'));
  const errors: string[] = [];
  const requests: string[] = [];

  const call = async (name: string, args: Record<string, unknown>): Promise<ToolResult> => {
    const r = (await client.callTool({ name, arguments: args })) as ToolResult;
    assert.notEqual(r.isError, true, `${name}: ${JSON.stringify(r.content)}`);
    return r;
  };

  before(async () => {
    if (skip) return;
    assert.ok(fs.existsSync(path.join(ROOT, 'dist', 'terminal-app.html')), 'dist/terminal-app.html is missing: run `node esbuild.mjs` first');
    h = await startHttpHost();
    // A chat host that renders MCP Apps says so in its initialize (the view's keys are the person's only then).
    const capabilities = { extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] } } };
    client = new Client({ name: 'apps-e2e', version: '0' }, { capabilities });
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
    page.on('request', (r) => requests.push(r.url()));
    // The host side of the bridge calls tools through the chat host's MCP client: ours, on /mcp.
    await page.exposeFunction('callTool', (p: { name: string; arguments?: Record<string, unknown> }) =>
      client.callTool({ name: p.name, arguments: p.arguments }),
    );
    await page.setContent(`<!DOCTYPE html><html><body style="margin:8px;background:#2b2b2b"><script>${hostPage.outputFiles[0].text}</script></body></html>`);
  });

  after(async () => {
    await browser?.close().catch(() => {});
    await client?.close().catch(() => {});
    await h?.close();
    fs.rmSync(home, { recursive: true, force: true });
  });

  it("shows the session of the agent's tool result, its name, size and last command, from the resource alone", { skip }, async () => {
    // bash with its rc file read, so shell integration reports commands (the header's last command).
    fs.writeFileSync(path.join(home, '.bashrc'), "PS1='agent$ '\nHISTFILE=/dev/null\n");
    const opened = await call('open_session', {
      command: 'bash',
      cwd: home,
      env: { HOME: home, HISTFILE: '/dev/null' },
      name: 'build-shell',
      cols: 80,
      rows: 12,
    });
    session = opened.structuredContent.id;
    assert.equal(opened.structuredContent.integration, true);
    const input = { session: 'build-shell', text: 'printf "\\033[32mcompiled\\033[0m %s files\\n" 42; false' };
    const result = await call('send', input);
    const { contents } = await client.readResource({ uri: 'ui://shared-pty/terminal' });
    const html = (contents[0] as { text: string }).text;

    await page.evaluate(([h, i, r]) => window.startApp(h, i, r, 'dark'), [html, input, result] as const);
    const found = page.frames().find((f) => f !== page.mainFrame());
    assert.ok(found, 'the view renders in an iframe');
    frame = found;
    await frame.waitForFunction(() => window.__sharedPtyApp?.session() !== undefined, undefined, { timeout: Wait.Screen });
    assert.equal(await frame.evaluate(() => window.__sharedPtyApp!.session()), session, 'the view follows the session the result names');
    await until(async () => (await viewText(frame)).includes('compiled 42 files'), Wait.Screen, "the command's output in the view");
    await until(async () => (await frame.textContent('#title')) === 'build-shell', Wait.Screen, "the session's name in the header");
    assert.equal(await frame.textContent('#size'), '80×12');
    assert.equal(await frame.textContent('#state'), 'live');
    await until(async () => (await frame.textContent('#last-command'))?.endsWith('[exit 1]'), Wait.Screen, 'the last command and its exit code');
    assert.deepEqual(errors, []);
    assert.deepEqual(
      requests.filter((u) => !u.startsWith('about:') && !u.startsWith('data:')),
      [],
      'neither the host page nor the view fetched anything',
    );
  });

  it('follows new output as the agent works', { skip }, async () => {
    await call('send', { session, text: 'for i in 1 2 3; do echo "step $i of 3"; done' });
    await until(async () => (await viewText(frame)).includes('step 3 of 3'), Wait.Screen, 'new output in the view');
    await until(async () => (await frame.textContent('#last-command'))?.endsWith('[exit 0]'), Wait.Screen, 'the new last command');
  });

  it('keys typed in the view reach the shell', { skip }, async () => {
    await frame.click('#terminal');
    await page.keyboard.type('echo typed-$((20+3))');
    await page.keyboard.press('Enter');
    await until(
      async () => {
        const r = await call('read_screen', { session });
        return /^typed-23$/m.test(r.structuredContent.screen);
      },
      Wait.Screen,
      "the typed command's output on the session's screen",
    );
    await until(async () => /^typed-23$/m.test(await viewText(frame)), Wait.Screen, 'and in the view');
    await until(async () => (await frame.textContent('#last-command'))?.includes('echo typed-'), Wait.Screen, 'the typed command as the last command');
    await page
      .locator('iframe')
      .first()
      .screenshot({ path: path.join(SHOTS, 'terminal-app.png') });
    assert.deepEqual(errors, []);
  });

  it("takes the host's light theme", { skip }, async () => {
    const input = { session };
    const result = await call('read_screen', input);
    const { contents } = await client.readResource({ uri: 'ui://shared-pty/terminal' });
    await page.evaluate(([h, i, r]) => window.startApp(h, i, r, 'light'), [(contents[0] as { text: string }).text, input, result] as const);
    const light = page
      .frames()
      .filter((f) => f !== page.mainFrame())
      .at(-1)!;
    assert.notEqual(light, frame);
    await light.waitForFunction(() => window.__sharedPtyApp?.session() !== undefined, undefined, { timeout: Wait.Screen });
    await until(async () => (await viewText(light)).includes('typed-23'), Wait.Screen, 'the same session in the second view');
    assert.equal(await light.evaluate(() => window.__sharedPtyTerm!.options.theme?.background), '#ffffff');
    assert.equal(await light.evaluate(() => document.documentElement.dataset.theme), 'light');
  });

  it('says when the program ends', { skip }, async () => {
    await call('send_keys', { session, keys: ['e', 'x', 'i', 't', ' ', '3', 'Enter'] });
    await until(async () => (await frame.textContent('#state')) === 'exited with code 3', Wait.Screen, 'the exit in the header');
  });
});
