// The host's pages through code-server's port proxy in Chromium (docs/protocol.md#pages-behind-an-editors-proxy):
// a real code-server (scripts/sandbox.mjs) forwards `/proxy/<port>/` (prefix stripped) and
// `/absproxy/<port>/` (prefix kept) to a real host; Chromium opens a link there under a name that
// is not the host's own (mapped to 127.0.0.1 by Chromium's resolver, as a remote editor's name
// would be), and the view streams and types, the replayer plays. Needs `npm run build`.
/// <reference lib="dom" />
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { RpcClient } from '../../src/transport/client/rpc-client';
import { pageCookieName } from '../../src/transport/http/http-security';
import { BASH, connect, until } from '../helpers/host';
import { startHttpHost, type HttpHost } from '../helpers/http';
import { CHROMIUM, chromiumSkip } from '../helpers/chromium';

/** What the view and the replayer expose for tests (src/view). */
interface PageHooks {
  __sharedPtyTerm?: import('@xterm/xterm').Terminal;
  __sharedPtyView?: { state(): string };
  __sharedPtyReplay?: { state(): string };
}
const ROOT = path.join(__dirname, '..', '..');
/** The editor's name as the browser knows it: neither 127.0.0.1 nor localhost, so nothing passes for being the host's own. */
const EDITOR_NAME = 'editor.proxy.test';

const enum Wait {
  Load = 30_000,
  Screen = 20_000,
}

interface CodeServer {
  port: number;
  stop(): Promise<void>;
}
interface Sandbox {
  ensureSandbox(opts?: { log?: (m: string) => void }): Promise<unknown>;
  startCodeServer(opts?: Record<string, unknown>): Promise<CodeServer>;
}

const log = (msg: string) => process.stderr.write(`[proxied pages e2e] ${msg}\n`);

describe("the host's pages through code-server's port proxy (Chromium)", { skip: chromiumSkip('the proxied pages test') }, () => {
  let h: HttpHost;
  let ctl: RpcClient;
  let cs: CodeServer;
  let browser: Browser;
  let editor: string;
  let dir: string;
  const contexts: BrowserContext[] = [];
  /** Console errors and page errors (a CSP refusal, a refused WebSocket): none are expected. */
  const problems: string[] = [];

  before(async () => {
    assert.ok(fs.existsSync(path.join(ROOT, 'dist', 'view.js')) && fs.existsSync(path.join(ROOT, 'dist', 'replay.js')), 'run `npm run build` first');
    const sandbox = (await import(path.join(ROOT, 'scripts', 'sandbox.mjs'))) as Sandbox;
    await sandbox.ensureSandbox({ log });
    cs = await sandbox.startCodeServer({ log });
    editor = `http://${EDITOR_NAME}:${cs.port}`;
    h = await startHttpHost();
    ctl = await connect(h.host.controlAddress);
    dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'spt-proxied-e2e-')));
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        `--host-resolver-rules=MAP ${EDITOR_NAME} 127.0.0.1`,
      ],
    });
  });

  after(async () => {
    for (const c of contexts) await c.close().catch(() => {});
    await browser?.close().catch(() => {});
    ctl?.close();
    await h?.close();
    await cs?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  const newPage = async (): Promise<Page> => {
    const context = await browser.newContext({ viewport: { width: 1000, height: 600 } });
    contexts.push(context);
    const page = await context.newPage();
    page.setDefaultTimeout(Wait.Load);
    page.on('console', (m) => m.type() === 'error' && problems.push(`console: ${m.text()}`));
    page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
    return page;
  };

  /** A link the host made (`http://127.0.0.1:<port>/…?token=…`) as the editor's proxy serves it. */
  const through = (link: string, prefix: string) => {
    const u = new URL(link);
    return `${editor}${prefix}${u.pathname}${u.search}`;
  };

  const screenHas = (page: Page, text: string) =>
    page.evaluate((t) => {
      const term = (window as unknown as PageHooks).__sharedPtyTerm;
      if (!term) return false;
      for (let y = 0; y < term.buffer.active.length; y++) if (term.buffer.active.getLine(y)?.translateToString(true).includes(t)) return true;
      return false;
    }, text);

  it("/proxy/<port>/: a link with input opens the live view, which types into the shell; the cookie stays in the link's folder", async () => {
    const s = await ctl.request<{ id: string }>('session/create', { ...BASH, name: 'proxied-view' });
    const link = await ctl.request<{ url: string }>('session/share', { session: s.id, scope: 'input' });
    const page = await newPage();
    const prefix = `/proxy/${h.port}`;
    const answer = await page.goto(through(link.url, prefix));
    assert.equal(answer?.status(), 200);
    assert.equal(page.url(), `${editor}${prefix}/sessions/${s.id}/view`, 'the browser stays under the proxy, without the token');
    assert.equal(await page.title(), 'proxied-view — Shared PTY');
    await until(
      () => page.evaluate(() => (window as unknown as PageHooks).__sharedPtyView?.state() === 'live'),
      Wait.Screen,
      'the view to go live through the proxy',
    );
    await page.locator('#terminal').click();
    await page.keyboard.type('echo via-proxy-$((6*7))');
    await page.keyboard.press('Enter');
    await until(
      async () => (await ctl.request<{ screen: string }>('pty/read', { session: s.id })).screen.includes('via-proxy-42'),
      Wait.Screen,
      'the typed command to run in the shell',
    );
    await until(() => screenHas(page, 'via-proxy-42'), Wait.Screen, 'the output in the browser view');
    const cookies = await page.context().cookies();
    const cookie = cookies.find((c) => c.name === pageCookieName(h.port));
    assert.ok(cookie, `the page cookie: ${JSON.stringify(cookies.map((c) => c.name))}`);
    assert.equal(cookie.path, `${prefix}/sessions/${s.id}`, "scoped to the link's folder");
    assert.equal((await page.context().cookies(`${editor}/proxy/${h.port + 1}/`)).length, 0, 'another port behind the same proxy never receives it');
    assert.deepEqual(problems, []);
  });

  it('/absproxy/<port>/: a read-only link opens the view live, the cookie scoped to the prefix; a replay link plays under /proxy/', async () => {
    const s = await ctl.request<{ id: string }>('session/create', { ...BASH, name: 'absproxied' });
    await ctl.request('pty/send', { session: s.id, text: 'echo shown-$((6*7))', timeout: Wait.Screen });
    const link = await ctl.request<{ url: string }>('session/share', { session: s.id, scope: 'view' });
    const page = await newPage();
    const prefix = `/absproxy/${h.port}`;
    assert.equal((await page.goto(through(link.url, prefix)))?.status(), 200);
    assert.equal(page.url(), `${editor}${prefix}/sessions/${s.id}/view`);
    await until(
      () => page.evaluate(() => (window as unknown as PageHooks).__sharedPtyView?.state() === 'live (read-only)'),
      Wait.Screen,
      'the read-only view to go live',
    );
    await until(() => screenHas(page, 'shown-42'), Wait.Screen, "the session's screen in the view");
    assert.equal((await page.context().cookies()).find((c) => c.name === pageCookieName(h.port))?.path, `${prefix}/`);

    const file = path.join(dir, 'proxied.cast');
    fs.writeFileSync(
      file,
      `${JSON.stringify({ version: 3, term: { cols: 60, rows: 10 } })}\n${JSON.stringify([0.2, 'o', 'replayed-through-the-proxy\r\n'])}\n`,
    );
    const replay = await ctl.request<{ id: string; url: string }>('host/replay', { path: file });
    const player = await newPage();
    assert.equal((await player.goto(through(replay.url, `/proxy/${h.port}`)))?.status(), 200);
    assert.equal(player.url(), `${editor}/proxy/${h.port}/replay/${replay.id}`);
    await until(
      () => player.evaluate(() => (window as unknown as PageHooks).__sharedPtyReplay?.state() === 'ready'),
      Wait.Screen,
      'the player to load the recording through the proxy',
    );
    await player.click('.ap-overlay-start');
    await until(() => player.evaluate(() => (window as unknown as PageHooks).__sharedPtyReplay?.state() === 'ended'), Wait.Screen, 'the replay to end');
    await until(
      () =>
        player.evaluate(() =>
          [...document.querySelectorAll('.ap-term-text .ap-line')].some((l) => (l.textContent ?? '').includes('replayed-through-the-proxy')),
        ),
      Wait.Screen,
      "the recording's text on the player",
    );
    assert.deepEqual(problems, []);
  });
});
