// Pages behind an editor's port proxy (docs/protocol.md#pages-behind-an-editors-proxy): requests made as
// code-server's proxy forwards them (the browser's Host and Origin kept, no X-Forwarded-*, the
// prefix `/proxy/<port>` stripped or `/absproxy/<port>` kept). Under a Host that is not the host's
// own, only the browser's pages answer, and only to a link traded under that Host or the page
// cookie it left; the cookie is scoped to the host's prefix and bound to that Host; the pages use
// relative addresses. A real host (node-pty, bash, its control socket and HTTP server).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { SessionInfo } from '../../../../src/core/methods/types';
import type { RpcClient } from '../../../../src/transport/client/rpc-client';
import { pageCookieName } from '../../../../src/transport/http/http-security';
import { BASH, connect, clientsClosed } from '../../../helpers/host';
import { request, startHttpHost, wsConnect, type HttpAnswer, type HttpHost } from '../../../helpers/http';
import { ensureNoDisposablesAreLeakedBySuite } from '../../../helpers/leak-tracker';

/** What a browser's navigation asks for. */
const BROWSER = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };
/** The editor's address as the browser sees it (code-server on another port, or a remote name). */
const PROXY_HOST = 'code.example.test:8443';
const PROXY_ORIGIN = `https://${PROXY_HOST}`;

let h: HttpHost;
let ctl: RpcClient;
let s: SessionInfo;
let dir: string;

before(async () => {
  h = await startHttpHost();
  ctl = await connect(h.host.controlAddress);
  s = (await ctl.call('session/create', { ...BASH, name: 'proxied' })) as SessionInfo;
  dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'spt-proxied-')));
});

after(async () => {
  ctl?.close();
  await h?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});
// Once the shared host is closed, nothing the suite made is left (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedBySuite(clientsClosed);

const share = (scope: 'view' | 'input') => ctl.call('session/share', { session: s.id, scope }) as Promise<{ url: string; token: string }>;

/** A request as the proxy forwards it: the proxy's Host, and the browser's headers. */
function viaProxy(method: string, p: string, headers: Record<string, string> = {}, token?: string): Promise<HttpAnswer> {
  return request(h.port, method, p, { host: PROXY_HOST, headers: { ...BROWSER, ...headers }, token });
}

/** The path and query of a link as the host made it (`/sessions/<id>/view?token=…`). */
function pathOf(url: string): string {
  const u = new URL(url);
  return u.pathname + u.search;
}

/** Trades a link through the proxy; returns the cookie as the browser sends it back, and what was set. */
async function trade(p: string): Promise<{ cookie: string; setCookie: string; location: string }> {
  const a = await viaProxy('GET', p);
  assert.equal(a.status, 303, a.text);
  const setCookie = String(a.headers['set-cookie']);
  return { cookie: setCookie.split(';')[0], setCookie, location: String(a.headers.location) };
}

describe("pages behind an editor's port proxy", { timeout: 60_000 }, () => {
  test("under a proxy's Host, only the pages answer: REST, /health, /mcp and /rpc refuse even the host's token", async () => {
    for (const [method, p] of [
      ['GET', '/health'],
      ['GET', '/sessions'],
      ['POST', '/mcp'],
      ['GET', `/sessions/${s.id}`],
    ] as const) {
      const r = await viaProxy(method, p, {}, h.token);
      assert.equal(r.status, 403, `${method} ${p}`);
      assert.match(r.json.error.message, /unexpected Host header/);
    }
    for (const how of [{ token: h.token }, { queryToken: h.token }]) {
      const o = await wsConnect(h.port, '/rpc', { ...how, host: PROXY_HOST, origin: PROXY_ORIGIN });
      assert.deepEqual(o.kind === 'refused' ? o.status : 'open', 403, '/rpc through the proxy');
    }
    // The host's token opens no page through the proxy either: neither as a Bearer header nor as a
    // link (which a browser is told in words); only a link or a page cookie traded there counts.
    assert.equal((await viaProxy('GET', `/sessions/${s.id}/view`, {}, h.token)).status, 403);
    const hostLink = await viaProxy('GET', `/sessions/${s.id}/view?token=${h.token}`);
    // 403, as every request under a Host not the host's own that opens nothing (docs/protocol.md#5-http-and-websocket; it
    // was 401), with the words a browser shows.
    assert.equal(hostLink.status, 403);
    assert.match(hostLink.text, /<h1>/);
    assert.equal((await viaProxy('GET', `/sessions/${s.id}/view?token=garbage`)).status, 403);
    assert.equal(hostLink.headers['set-cookie'], undefined);
    const o = await wsConnect(h.port, `/sessions/${s.id}/stream`, { queryToken: h.token, host: PROXY_HOST, origin: PROXY_ORIGIN });
    assert.deepEqual(o.kind === 'refused' ? o.status : 'open', 403, "the stream with the host's token through the proxy");
  });

  test("/proxy/<port>/ (prefix stripped): a link opens the view, its assets and its stream; the cookie stays in the link's folder and types", async () => {
    const link = await share('input');
    const { cookie, setCookie, location } = await trade(pathOf(link.url));
    assert.equal(location, 'view', 'a relative redirect: the browser stays under /proxy/<port>/');
    // No Path: the browser scopes it to the link's folder (/proxy/<port>/sessions/<id>), so the other
    // ports the proxy serves on the same origin never receive it.
    assert.match(setCookie, new RegExp(`^${pageCookieName(h.port)}=[A-Za-z0-9_-]{43}; HttpOnly; SameSite=Strict; Max-Age=\\d+$`), setCookie);
    const page = await viaProxy('GET', `/sessions/${s.id}/view`, { cookie });
    assert.equal(page.status, 200, page.text);
    // Every address in the page is relative, so it resolves under the proxy's prefix.
    const refs = [...page.text.matchAll(/\b(?:src|href)="([^"]*)"/g)].map((m) => m[1]).filter((r) => !r.startsWith('data:'));
    assert.deepEqual(refs, ['view/xterm.css', 'view/view.js', 'replay']);
    // The view's "Replay a recording" opens the picker in the same folder, which the folder's cookie reaches.
    const picker = await viaProxy('GET', `/sessions/${s.id}/replay`, { cookie });
    assert.equal(picker.status, 200, picker.text);
    const pickerRefs = [...picker.text.matchAll(/\b(?:src|href)="([^"]*)"/g)].map((m) => m[1]).filter((r) => !r.startsWith('data:'));
    assert.ok(pickerRefs.length > 0 && pickerRefs.every((r) => r.startsWith('replay/assets/')), pickerRefs.join(' '));
    for (const ref of pickerRefs) {
      const r = await viaProxy('GET', `/sessions/${s.id}/${ref}`, { cookie });
      assert.equal(r.status, 200, `${ref}: ${r.text.slice(0, 200)}`);
    }
    // Without the cookie it opens nothing.
    assert.notEqual((await viaProxy('GET', `/sessions/${s.id}/replay`)).status, 200);
    for (const asset of ['view/view.js', 'view/xterm.css']) {
      const r = await viaProxy('GET', `/sessions/${s.id}/${asset}`, { cookie });
      assert.equal(r.status, 200, `${asset}: ${r.text.slice(0, 200)}`);
    }
    const size = await viaProxy('GET', `/sessions/${s.id}/view`, { cookie, accept: 'application/json' });
    assert.equal(size.json.data.readOnly, false);
    // The stream, as the page opens it: the page's own origin through the proxy.
    const o = await wsConnect(h.port, `/sessions/${s.id}/stream`, { cookie, host: PROXY_HOST, origin: PROXY_ORIGIN });
    assert.equal(o.kind, 'open');
    if (o.kind !== 'open') return;
    o.client.send({ type: 'write', data: 'echo via-proxy-$((6*7))\r' });
    await o.client.streamUntil((t) => t.includes('via-proxy-42'), 'the typed command to run through the proxied stream');
    await o.client.close();
    // Another site's page cannot open it, cookie or not (cross-site WebSocket hijacking).
    for (const origin of ['https://evil.example', 'https://code.example.test', `https://${PROXY_HOST}.evil.example`]) {
      const x = await wsConnect(h.port, `/sessions/${s.id}/stream`, { cookie, host: PROXY_HOST, origin });
      assert.deepEqual(x.kind === 'refused' ? x.status : 'open', 403, origin);
    }
  });

  test('/absproxy/<port>/ (prefix kept): the host strips it, and scopes the cookie to it', async () => {
    const link = await share('view');
    const prefix = `/absproxy/${h.port}`;
    const { cookie, setCookie, location } = await trade(prefix + pathOf(link.url));
    assert.equal(location, 'view');
    assert.match(setCookie, new RegExp(`; Path=${prefix}/; `), setCookie);
    const page = await viaProxy('GET', `${prefix}/sessions/${s.id}/view`, { cookie });
    assert.equal(page.status, 200, page.text);
    assert.match(page.text, /data-readonly="1"/);
    assert.equal((await viaProxy('GET', `${prefix}/sessions/${s.id}/view/view.js`, { cookie })).status, 200);
    const o = await wsConnect(h.port, `${prefix}/sessions/${s.id}/stream?readonly=1`, { cookie, host: PROXY_HOST, origin: PROXY_ORIGIN });
    assert.equal(o.kind, 'open');
    if (o.kind === 'open') await o.client.close();
    // Another port's prefix is not ours: nothing is stripped, nothing is found.
    assert.equal((await viaProxy('GET', `/absproxy/${h.port + 1}/sessions/${s.id}/view`, { cookie })).status, 403);
  });

  test("a page cookie belongs to the Host it was traded under: the proxy's opens nothing on the host's own address, and the other way round", async () => {
    const { cookie: proxied } = await trade(pathOf((await share('view')).url));
    const direct = await request(h.port, 'GET', pathOf((await share('view')).url), { headers: BROWSER });
    assert.equal(direct.status, 303);
    const own = String(direct.headers['set-cookie']).split(';')[0];
    assert.match(String(direct.headers['set-cookie']), /; Path=\/; /, "on the host's own address the cookie is for every page");
    assert.equal((await request(h.port, 'GET', `/sessions/${s.id}/view`, { headers: { ...BROWSER, cookie: proxied } })).status, 401);
    assert.equal((await viaProxy('GET', `/sessions/${s.id}/view`, { cookie: own })).status, 403);
    assert.equal(
      (await request(h.port, 'GET', `/sessions/${s.id}/view`, { host: 'other.example.test:8443', headers: { ...BROWSER, cookie: proxied } })).status,
      403,
      'nor under a third Host',
    );
    const o = await wsConnect(h.port, `/sessions/${s.id}/stream`, { cookie: proxied, origin: `http://127.0.0.1:${h.port}` });
    assert.deepEqual(o.kind === 'refused' ? o.status : 'open', 401, "the stream on the host's own address with the proxy's cookie");
    // A cookie is never a credential for anything but the pages, through the proxy or not.
    assert.equal((await viaProxy('GET', `/sessions/${s.id}`, { cookie: proxied })).status, 403);
  });

  test('a replay link through the proxy: the player page, its assets and the recording, at relative addresses', async () => {
    const file = path.join(dir, 'demo.cast');
    fs.writeFileSync(file, '{"version": 3, "term": {"cols": 80, "rows": 24}}\n[0.5, "o", "hello proxied replay\\r\\n"]\n');
    const link = await ctl.request<{ id: string; url: string }>('host/replay', { path: file });
    const { cookie, setCookie, location } = await trade(pathOf(link.url));
    assert.equal(location, link.id);
    assert.doesNotMatch(setCookie, /Path=/, "scoped to the link's folder (…/replay)");
    const page = await viaProxy('GET', `/replay/${link.id}`, { cookie });
    assert.equal(page.status, 200, page.text);
    const refs = [...page.text.matchAll(/\b(?:src|href|data-cast)="([^"]*)"/g)].map((m) => m[1]).filter((r) => !r.startsWith('data:'));
    assert.deepEqual(refs, [`${link.id}/assets/asciinema-player.css`, `${link.id}/assets/replay.js`, `${link.id}/cast`]);
    const cast = await viaProxy('GET', `/replay/${link.id}/cast`, { cookie });
    assert.equal(cast.status, 200);
    assert.match(cast.text, /hello proxied replay/);
    assert.equal((await viaProxy('GET', `/replay/${link.id}/assets/replay.js`, { cookie })).status, 200);
    // The picker (…/replay, in the cookie's folder) and its assets.
    const picker = await viaProxy('GET', '/replay', { cookie });
    assert.equal(picker.status, 200);
    assert.match(picker.text, /href="replay\/assets\/asciinema-player\.css"/);
  });
});
