// The browser view of a session in a real browser: Debian's Chromium driven by playwright-core.
// Needs the view bundle (`node esbuild.mjs` builds dist/view.js) and /usr/bin/chromium.
/// <reference lib="dom" />
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as http from 'node:http';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { Host } from '../../src/host/host';
import type { Session } from '../../src/core/session/session';
import { startHttpServer, type HttpServer } from '../../src/transport/http/http-server';
import { startHost, tempRuntimeDir, TEST_WRITER, until } from '../helpers/host';
import { runCli, startServeHost } from '../helpers/cli';
import { bashEnv } from '../helpers/protocol';
import { mcpAgent, type HttpHost } from '../helpers/http';
import { screenText } from '../../src/core/mirror/screen-text';
import { chromiumSkip, launchChromium } from '../helpers/chromium';

/** What src/view/main.ts exposes for tests. */
declare global {
  interface Window {
    __sharedPtyTerm?: import('@xterm/xterm').Terminal;
    __sharedPtyView?: { readOnly: boolean; state: () => string; resyncs: () => number };
  }
}

const ROOT = path.join(__dirname, '..', '..');
// Screenshots refresh the README's pictures only when asked (SHARED_PTY_SCREENSHOTS=1): a test run leaves the tree clean.
const SHOTS = process.env.SHARED_PTY_SCREENSHOTS === '1' ? path.join(ROOT, 'media') : fs.mkdtempSync(path.join(os.tmpdir(), 'spt-shots-'));
const SCREENSHOT = path.join(SHOTS, 'browser-view.png');
const SCREENSHOT_READ_ONLY = path.join(SHOTS, 'browser-view-readonly.png');
const skip = chromiumSkip('the browser view test');

/** Bounds on waits; generous, since a browser on a loaded test machine is slow to start. */
const enum Wait {
  Load = 30_000,
  Screen = 20_000,
  /** How long input that must not arrive is given to arrive anyway. */
  Refused = 1_500,
  /** A page that stalled through a flood: it parses what it had already received, then the picture. */
  CatchUp = 60_000,
  /** How long a page that gave up is watched for requests (a few of its 1 s size polls). */
  Quiet = 3_000,
}

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

/** One raw request to the host with exactly these headers. */
function get(port: number, pathname: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port, path: pathname, method: 'GET', headers: { host: `127.0.0.1:${port}`, ...headers }, agent: false },
      (res) => {
        const parts: Buffer[] = [];
        res.on('data', (c: Buffer) => parts.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(parts).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.setTimeout(Wait.Load, () => req.destroy(new Error(`GET ${pathname}: no answer`)));
    req.on('error', reject);
    req.end();
  });
}

/** The lines of the page's xterm buffer (scrollback and screen), trailing spaces trimmed. */
function pageLines(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const term = window.__sharedPtyTerm;
    if (!term) return [];
    const buf = term.buffer.active;
    const out: string[] = [];
    for (let y = 0; y < buf.length; y++) out.push(buf.getLine(y)?.translateToString(true) ?? '');
    return out;
  });
}

async function waitForPageLine(page: Page, pred: (line: string) => boolean, what: string): Promise<string[]> {
  let last: string[] = [];
  try {
    await until(
      async () => {
        last = await pageLines(page);
        return last.some(pred);
      },
      Wait.Screen,
      what,
    );
    return last;
  } catch (e) {
    throw new Error(`${(e as Error).message}; page buffer: ${JSON.stringify(last.filter(Boolean).slice(-8))}`, { cause: e });
  }
}

/** The page's screen (not its scrollback) as pty/read gives a screen. */
function pageScreen(page: Page): Promise<string> {
  return page.evaluate(() => {
    const term = window.__sharedPtyTerm!;
    const buf = term.buffer.active;
    const rows: string[] = [];
    for (let y = 0; y < term.rows; y++) rows.push((buf.getLine(buf.viewportY + y)?.translateToString(true) ?? '').replace(/ +$/, ''));
    while (rows.length && rows[rows.length - 1] === '') rows.pop();
    return rows.map((r) => r + '\n').join('');
  });
}

/** The rows of the session's own screen (the host's mirror), what the shell really got. */
async function screenRows(session: Session): Promise<string[]> {
  return (await session.mirror.screen()).rows;
}

describe('browser view (Chromium + xterm.js)', () => {
  let hostHandle: Awaited<ReturnType<typeof startHost>>;
  let host: Host;
  let server: HttpServer;
  let session: Session;
  let browser: Browser;
  const contexts: BrowserContext[] = [];

  const newPage = async (): Promise<Page> => {
    const context = await browser.newContext({ viewport: { width: 1100, height: 640 } });
    contexts.push(context);
    const page = await context.newPage();
    page.setDefaultTimeout(Wait.Load);
    return page;
  };

  before(async () => {
    if (skip) return;
    assert.ok(fs.existsSync(path.join(ROOT, 'dist', 'view.js')), 'dist/view.js is missing: run `node esbuild.mjs` first');
    hostHandle = await startHost();
    host = hostHandle.host;
    server = await startHttpServer(host, { hostId: host.hostId });
    host.attachHttp(server);
    session = await host.createSession({
      command: 'bash',
      args: ['--norc', '--noprofile', '-i'],
      env: { PS1: 'view$ ', HISTFILE: '/dev/null' },
      cols: 90,
      rows: 24,
      name: 'browser-view-test',
    });
    await until(async () => (await screenRows(session)).some((r) => r.startsWith('view$')), Wait.Screen, 'the bash prompt');
    browser = await launchChromium();
  });

  after(async () => {
    for (const c of contexts) await c.close().catch(() => {});
    await browser?.close().catch(() => {});
    await hostHandle?.close();
  });

  it('refuses the page without a token (401) and from a foreign Origin (403); unknown session is 404', { skip }, async () => {
    const pagePath = `/sessions/${session.id}/view`;
    assert.equal((await get(server.port, pagePath)).status, 401);
    assert.equal((await get(server.port, '/view/view.js')).status, 401);
    const foreign = await get(server.port, pagePath, { authorization: `Bearer ${server.token}`, origin: 'http://evil.example' });
    assert.equal(foreign.status, 403);
    const foreignCookie = await get(server.port, pagePath, { cookie: `shared_pty_${server.port}=${server.token}`, origin: 'http://evil.example' });
    assert.equal(foreignCookie.status, 403);
    const unknown = await get(server.port, '/sessions/no-such-session/view', { authorization: `Bearer ${server.token}` });
    assert.equal(unknown.status, 404);
    assert.equal(JSON.parse(unknown.text).ok, false);

    // In the browser too: a fresh context has no cookie, so the bare page is refused.
    const page = await newPage();
    const res = await page.goto(`${server.url}${pagePath}`);
    assert.equal(res?.status(), 401);
  });

  /** A one-time link to the session, as `shared-pty view` makes it (`--input`: one that types). */
  const viewLink = (input: boolean): string => server.tokens.share(session, input ? 'input' : 'view', 600).url;

  it('serves the page and its bundled assets with strict headers and without the token', { skip }, async () => {
    const auth = { authorization: `Bearer ${server.token}` };
    const pageAnswer = await get(server.port, `/sessions/${session.id}/view`, auth);
    assert.equal(pageAnswer.status, 200);
    assert.match(String(pageAnswer.headers['content-type']), /^text\/html/);
    assert.match(String(pageAnswer.headers['content-security-policy']), /default-src 'self'/);
    assert.equal(pageAnswer.headers['referrer-policy'], 'no-referrer');
    assert.equal(pageAnswer.headers['x-content-type-options'], 'nosniff');
    assert.equal(pageAnswer.headers['cache-control'], 'no-store');
    assert.ok(!pageAnswer.text.includes(server.token), 'the token must not appear in the page');
    assert.match(pageAnswer.text, /<title>browser-view-test — Shared PTY<\/title>/);
    assert.match(pageAnswer.text, /src="view\/view\.js"/, "relative to the page, so it works under a proxy's prefix");
    assert.doesNotMatch(pageAnswer.text, /https?:\/\/(?!127\.0\.0\.1)/, 'no external (CDN) references');
    const js = await get(server.port, '/view/view.js', auth);
    assert.equal(js.status, 200);
    assert.match(String(js.headers['content-type']), /^text\/javascript/);
    const css = await get(server.port, '/view/xterm.css', auth);
    assert.equal(css.status, 200);
    assert.match(String(css.headers['content-type']), /^text\/css/);
    assert.match(css.text, /\.xterm/);
    assert.equal((await get(server.port, '/view/nothing.js', auth)).status, 404);
  });

  it('shows the session live: prompt, typed input reaches the shell, output and colours render', { skip }, async () => {
    const page = await newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    page.on('response', (r) => {
      if (r.status() >= 400) errors.push(`${r.status()} ${r.url()}`);
    });
    const link = viewLink(true);
    const linkToken = new URL(link).searchParams.get('token')!;
    await page.goto(link);
    // The one-time token was traded for a cookie: it is neither in the address bar nor in history.
    const landed = new URL(page.url());
    assert.equal(landed.pathname, `/sessions/${session.id}/view`);
    assert.equal(landed.searchParams.get('token'), null);
    assert.ok(!page.url().includes(linkToken));
    // No history entry holds the token either (the 303 replaced the link's entry).
    const cdp = await page.context().newCDPSession(page);
    const history = (await cdp.send('Page.getNavigationHistory')) as { entries: Array<{ url: string }> };
    await cdp.detach();
    assert.ok(history.entries.some((e) => e.url === page.url()));
    for (const e of history.entries) assert.ok(!e.url.includes(linkToken), `history entry with the token: ${e.url}`);
    assert.ok(!(await page.content()).includes(linkToken));
    assert.equal(await page.title(), 'browser-view-test — Shared PTY');
    assert.equal(await page.isVisible('#readonly-badge'), false);

    await waitForPageLine(page, (l) => l.startsWith('view$'), 'the prompt in the page');
    assert.deepEqual(await page.evaluate(() => [window.__sharedPtyTerm!.cols, window.__sharedPtyTerm!.rows]), [90, 24]);
    await until(async () => (await page.textContent('#status'))?.startsWith('live'), Wait.Screen, 'the live status');

    await page.click('#terminal');
    await page.keyboard.type('echo typed-in-browser');
    await page.keyboard.press('Enter');
    await until(async () => (await screenRows(session)).includes('typed-in-browser'), Wait.Screen, 'the shell to run the typed command');
    assert.ok((await screenRows(session)).includes('view$ echo typed-in-browser'));
    await waitForPageLine(page, (l) => l === 'typed-in-browser', 'the command output in the page');

    await page.keyboard.type("printf '\\e[31mRED\\e[0m\\n'");
    await page.keyboard.press('Enter');
    const lines = await waitForPageLine(page, (l) => l === 'RED', 'the coloured output');
    const y = lines.lastIndexOf('RED');
    const cell = await page.evaluate((row) => {
      const c = window.__sharedPtyTerm!.buffer.active.getLine(row)!.getCell(0)!;
      return { fg: c.getFgColor(), palette: c.isFgPalette() };
    }, y);
    assert.deepEqual(cell, { fg: 1, palette: true }, 'RED is drawn in palette colour 1');
    // The DOM renderer draws it with the palette class too.
    await page.waitForSelector('.xterm-rows span.xterm-fg-1');
    assert.equal(await page.textContent('.xterm-rows span.xterm-fg-1'), 'RED');

    // Output produced by someone else appears too.
    session.write('echo from-elsewhere\n', TEST_WRITER);
    await waitForPageLine(page, (l) => l === 'from-elsewhere', 'output written by another client');

    session.write(
      "printf '\\e[1;32mgreen \\e[0;34mblue \\e[43;30m black-on-yellow \\e[0m \\e[38;5;208m256-orange\\e[0m \\e[38;2;200;120;255mtruecolor\\e[0m\\n'; ls --color=always -d / /tmp /dev/null\n",
      TEST_WRITER,
    );
    await waitForPageLine(page, (l) => l.startsWith('green blue'), 'the colour sample');
    await waitForPageLine(page, (l) => l.includes('/dev/null'), 'the ls output');
    fs.mkdirSync(path.dirname(SCREENSHOT), { recursive: true });
    await page.screenshot({ path: SCREENSHOT });

    // Scrollback: far more lines than the screen stay reachable in the page.
    session.write('seq -f line-%g 1 300\n', TEST_WRITER);
    const scrolled = await waitForPageLine(page, (l) => l === 'line-300', 'a long output');
    assert.ok(scrolled.includes('line-1'), 'the first of 300 lines is still in the scrollback');
    assert.ok(await page.evaluate(() => window.__sharedPtyTerm!.buffer.active.baseY > 250));

    assert.deepEqual(errors, [], 'no errors in the page (CSP included)');
  });

  it(
    "typing arbitration through the view: a line the user started in the browser holds an agent's send; typing there during a send ends it",
    { skip },
    async () => {
      const page = await newPage();
      await page.goto(viewLink(true));
      await until(async () => (await page.textContent('#status'))?.startsWith('live'), Wait.Screen, 'the live status');
      const agent = await mcpAgent({ http: server, token: server.token } as HttpHost, 'view-arbitration');
      const toolText = (r: any) => (r.content as Array<{ text?: string }>).map((c) => c.text ?? '').join('');
      try {
        await page.click('#terminal');
        await page.keyboard.type('echo from-the-user');
        await until(
          async () => (await screenRows(session)).some((r) => r.endsWith('echo from-the-user')),
          Wait.Screen,
          "the user's unsubmitted line in the shell",
        );
        const held = (await agent.callTool({ name: 'send', arguments: { session: session.id, text: 'echo agent-ran', timeout: 1000 } })) as any;
        assert.equal(held.isError, true, toolText(held));
        assert.match(toolText(held), /user is typing/);
        assert.ok(!(await screenRows(session)).some((r) => r.includes('agent-ran')), 'nothing the agent sent was written');
        await page.keyboard.press('Enter');
        await until(async () => (await screenRows(session)).includes('from-the-user'), Wait.Screen, "the user's line to run");
        // The user pauses: the agent's send goes through; the user pressing Ctrl+C in the page ends it.
        const sending = agent.callTool({ name: 'send', arguments: { session: session.id, text: 'sleep 5; echo slept', timeout: 20_000 } }) as Promise<any>;
        await until(async () => (await screenRows(session)).some((r) => r.endsWith('sleep 5; echo slept')), Wait.Screen, "the agent's command to run");
        await page.keyboard.press('Control+C');
        const ended = await sending;
        assert.equal(ended.structuredContent.waitReason, 'user_input', toolText(ended));
      } finally {
        await agent.close();
      }
    },
  );

  it('the read-only link shows the badge and does not let typing reach the shell', { skip }, async () => {
    const page = await newPage();
    await page.goto(viewLink(false));
    const landed = new URL(page.url());
    assert.equal(landed.searchParams.get('token'), null);
    assert.equal(await page.isVisible('#readonly-badge'), true);
    assert.equal(await page.textContent('#readonly-badge'), 'read-only');
    assert.equal(await page.isVisible('#fit'), false, 'a read-only view cannot resize the terminal');
    await waitForPageLine(page, (l) => l.startsWith('view$'), 'the replayed prompt in the read-only page');

    await page.click('#terminal');
    await page.keyboard.type('echo should-not-arrive');
    await page.keyboard.press('Enter');
    await new Promise((r) => setTimeout(r, Wait.Refused));
    assert.ok(!(await screenRows(session)).some((r) => r.includes('should-not-arrive')), 'the shell got input from a read-only view');
    assert.ok(!(await pageLines(page)).some((l) => l.includes('should-not-arrive')));

    // Even a hand-made write over the read-only page's WebSocket (its page cookie holds a view grant) is refused.
    const reply = await page.evaluate(
      (id) =>
        new Promise<string>((resolve) => {
          const ws = new WebSocket(`ws://${location.host}/sessions/${id}/stream`);
          ws.onopen = () => ws.send(JSON.stringify({ type: 'write', data: 'echo sneaked-in\n' }));
          ws.onmessage = (ev) => {
            const m = JSON.parse(ev.data as string);
            if (m.type === 'error') {
              resolve(m.message);
              ws.close();
            }
          };
          ws.onclose = () => resolve('closed');
        }),
      session.id,
    );
    assert.match(reply, /read-only/);
    // An ordering fence, not a pause: the host answered the refusal after handling the write, so a
    // line written after it reaches the shell after anything that write could have put there.
    session.write('echo fence-$((6*7))\n', TEST_WRITER);
    await until(async () => (await screenRows(session)).some((r) => r.includes('fence-42')), Wait.Screen, 'the fence line');
    assert.ok(!(await screenRows(session)).some((r) => r.includes('sneaked-in')));

    // The page cookie opens the view and nothing else.
    assert.equal(await page.evaluate(async () => (await fetch('/sessions')).status), 401);

    // It still follows the session live.
    session.write('echo seen-by-viewer\n', TEST_WRITER);
    await waitForPageLine(page, (l) => l === 'seen-by-viewer', 'live output in the read-only page');
    await page.screenshot({ path: SCREENSHOT_READ_ONLY });
  });

  it('after a forced gap (the page stalls during a flood) resyncs by itself: its screen matches pty/read again', { skip }, async () => {
    // The earlier tests' pages follow this session too: each would parse the flood beside this one,
    // on the same two cores. They are not what this test is about.
    for (const c of contexts.splice(0)) await c.close();
    const page = await newPage();
    await page.goto(viewLink(true));
    await waitForPageLine(page, (l) => l.startsWith('view$'), 'the prompt');
    // The page's main thread stalls while ~19 MB pass (more than the loopback socket's buffers
    // hold): the browser stops taking frames, the host's socket fills, and the 1 MiB ring moves on
    // without the view. The stall lasts until the whole flood has reached the host, whatever the
    // machine's speed: the test then sets a cookie, which the busy page reads synchronously.
    const stall = page.evaluate(() => {
      const end = Date.now() + 90_000;
      let next = 0;
      while (Date.now() < end) {
        // busy: no WebSocket message is handled meanwhile; a look at the cookies every 50 ms
        if (Date.now() < next) continue;
        if (document.cookie.includes('flood_done=1')) return;
        next = Date.now() + 50;
      }
    });
    session.write(`printf '\\e[33m'; seq 1 2500000; printf '\\e[0m\\e[44mFIN-%d\\e[0m\\n' $((6*7))\r`, TEST_WRITER);
    await until(async () => (await screenRows(session)).some((r) => r.startsWith('FIN-42')), 60_000, 'the end of the flood on the host');
    await page.context().addCookies([{ name: 'flood_done', value: '1', url: server.url }]);
    await stall;
    // The host's screen is read again on every look: what the shell prints after the FIN line (its
    // prompt) may reach the host after the stall ends, and the view must show that too.
    let expected = '';
    let shown = '';
    await until(
      async () => {
        shown = await pageScreen(page);
        expected = screenText(await session.mirror.screen());
        return shown === expected;
      },
      Wait.CatchUp,
      "the view to show pty/read's screen",
    ).catch(async (e: Error) => {
      const view = await page.evaluate(() => ({ resyncs: window.__sharedPtyView!.resyncs(), state: window.__sharedPtyView!.state() }));
      throw new Error(`${e.message}\nview: ${JSON.stringify(view)}\nexpected:\n${expected}\nshown:\n${shown}`);
    });
    const view = await page.evaluate(() => ({ resyncs: window.__sharedPtyView!.resyncs(), state: window.__sharedPtyView!.state() }));
    assert.ok(view.resyncs > 0, 'the flood outran the view: it resynced');
    assert.match(view.state, /^live/, 'still connected');
  });

  it('follows the session size, fits to the window on request, and shows the exit', { skip }, async () => {
    const page = await newPage();
    await page.goto(viewLink(true));
    await waitForPageLine(page, (l) => l.startsWith('view$'), 'the prompt');
    const size = () => page.evaluate(() => [window.__sharedPtyTerm!.cols, window.__sharedPtyTerm!.rows]);

    // Someone else resizes the terminal: the view follows, it does not push its own size.
    session.resize(100, 30);
    await until(async () => (await size()).join('x') === '100x30', Wait.Screen, 'the view to follow the resize');
    assert.equal(await page.textContent('#size'), '100×30');

    // "Fit to window" resizes the shared terminal to the browser window.
    await page.setViewportSize({ width: 800, height: 500 });
    await page.click('#fit');
    await until(() => session.cols !== 100 && session.rows !== 30, Wait.Screen, 'the PTY to take the window size');
    assert.deepEqual(await size(), [session.cols, session.rows]);
    assert.ok(session.cols < 100 && session.rows < 30, `fitted to ${session.cols}x${session.rows}`);

    await page.click('#terminal');
    await page.keyboard.type('exit 3');
    await page.keyboard.press('Enter');
    await until(async () => (await page.textContent('#status')) === 'exited with code 3', Wait.Screen, 'the exit status in the page');
    assert.equal(session.exitCode, 3);
  });
  it('tells the user when the host is killed, and stops there: no "connecting", no more requests, no typing', { skip }, async () => {
    // A host of its own, in its own process: `shared-pty serve`, killed by its pid.
    const dir = tempRuntimeDir();
    const serve = await startServeHost(['--cmd', 'bash --norc --noprofile', '--quiet'], bashEnv({ SHARED_PTY_DIR: dir, PS1: 'doomed$ ' }));
    try {
      const http = serve.record.http;
      assert.ok(http, 'serve publishes its HTTP server');
      const page = await newPage();
      const view = await runCli(['view', serve.record.sessions[0].id, '--input'], bashEnv({ SHARED_PTY_DIR: dir }));
      assert.equal(view.code, 0, view.stderr);
      await page.goto(view.stdout.trim());
      await waitForPageLine(page, (l) => l.startsWith('doomed$'), 'the prompt of the doomed host');
      await until(async () => (await page.textContent('#status')) === 'live', Wait.Screen, 'the live status');

      process.kill(serve.pid, 'SIGKILL');
      assert.equal(await serve.exited, 'SIGKILL');
      await until(
        async () => /host stopped or cannot be reached/.test((await page.textContent('#status')) ?? ''),
        Wait.Screen,
        'the page to say the host is gone',
      );
      assert.equal(await page.getAttribute('#status', 'class'), 'status status-error');
      assert.match(await page.evaluate(() => window.__sharedPtyView!.state()), /^disconnected: the Shared PTY host stopped/);
      assert.equal(await page.evaluate(() => window.__sharedPtyTerm!.options.disableStdin), true, 'typing is off');
      assert.equal(await page.isHidden('#fit'), true, 'no "fit" button for a host that is gone');

      // It does not spin: no retries, no size polls, the message stays.
      let requests = 0;
      page.on('request', () => requests++);
      await new Promise((r) => setTimeout(r, Wait.Quiet));
      assert.equal(requests, 0, 'the page sent nothing once the host was gone');
      assert.match((await page.textContent('#status')) ?? '', /host stopped or cannot be reached; reload the page once it runs again/);
    } finally {
      await serve.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
