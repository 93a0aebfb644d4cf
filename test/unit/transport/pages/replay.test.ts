// Replaying recordings in the browser (issue 15): `host/replay` checks a file and makes a link,
// and the host's HTTP server serves that file, and only that file, to the replay page, behind the
// same access checks as the live view. A real host with its HTTP server and real sockets.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { BASH, connect, rejectsWith, clientsClosed } from '../../../helpers/host';
import { request, startHttpHost, wsConnect, type HttpHost, type WsClient } from '../../../helpers/http';
import { ReplayLimits, ReplayLinks } from '../../../../src/transport/pages/replay-links';
import { pageCookieName } from '../../../../src/transport/http/http-security';
import type { RpcClient } from '../../../../src/transport/client/rpc-client';
import { ensureNoDisposablesAreLeakedBySuite } from '../../../helpers/leak-tracker';

const CAST =
  '{"version": 3, "term": {"cols": 80, "rows": 24}, "title": "demo"}\n[0.5, "o", "hello replay\\r\\n"]\n[0.1, "m", "command exited 0: echo hi"]\n[0.1, "x", "0"]\n';

let h: HttpHost;
let ctl: RpcClient;
let dir: string;

before(async () => {
  h = await startHttpHost();
  ctl = await connect(h.host.controlAddress);
  dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'spt-replay-')));
});

after(async () => {
  ctl?.close();
  await h?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});
// Once the shared host is closed, nothing the suite made is left (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedBySuite(clientsClosed);

const replay = (file: string) => ctl.request<{ id: string; url: string; path: string; expiresAt: string; tokenId: string }>('host/replay', { path: file });
const get = (p: string, headers: Record<string, string> = {}, token?: string) => request(h.port, 'GET', p, { headers, token });

/** A recording file of its own. */
function castFile(name: string, text = CAST): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, text);
  return file;
}

/** The cookie a link's 303 sets, as the browser sends it back. */
async function cookieOf(url: string): Promise<{ cookie: string; setCookie: string; location: string }> {
  const u = new URL(url);
  const a = await get(u.pathname + u.search);
  assert.equal(a.status, 303, a.text);
  const setCookie = String(a.headers['set-cookie']);
  return { cookie: setCookie.split(';')[0], setCookie, location: String(a.headers.location) };
}

describe('host/replay', () => {
  test('refuses what it cannot replay, with the reason', async () => {
    assert.match((await rejectsWith(ctl.request('host/replay', { path: 'relative.cast' }), -32602)).message, /path must be absolute/);
    assert.match((await rejectsWith(replay(path.join(dir, 'nope.cast')), -32000)).message, /nope\.cast: no such file/);
    assert.match((await rejectsWith(replay(dir), -32000)).message, /is not a regular file/);
    const text = castFile('notes.txt', 'just some notes\n');
    assert.match((await rejectsWith(replay(text), -32000)).message, /notes\.txt is not an asciicast v3 recording/);
    const broken = castFile('broken.cast', '{"version": 3, "term": {"cols": 80, "rows": 24}}\n[0.1, "o"]\n');
    assert.match((await rejectsWith(replay(broken), -32000)).message, /broken\.cast, line 2: not an asciicast event/);
  });

  test('a token for one session cannot make a link (it would read any file)', async () => {
    const s = await ctl.request<{ id: string }>('session/create', { ...BASH });
    const shared = await ctl.request<{ token: string }>('session/share', { session: s.id, scope: 'control', reusable: true });
    const o = await wsConnect(h.port, '/rpc', { token: shared.token });
    assert.equal(o.kind, 'open');
    const ws = (o as { client: WsClient }).client;
    ws.send({ jsonrpc: '2.0', id: 1, method: 'host/replay', params: { path: castFile('scoped.cast') } });
    const answer = await ws.next((m) => m?.id === 1, 'host/replay answer');
    assert.equal(answer.error?.code, -32004, JSON.stringify(answer));
    await ws.close();
    await ctl.request('pty/kill', { session: s.id });
  });
});

describe('the replay page over HTTP', () => {
  test("a link opens its recording once, with the page cookie; the page may run the player's WebAssembly", async () => {
    const file = castFile('demo.cast');
    const link = await replay(file);
    assert.equal(link.path, file);
    assert.match(link.id, /^[0-9a-f]{32}$/);
    assert.ok(Date.parse(link.expiresAt) > Date.now());
    const u = new URL(link.url);
    assert.equal(u.pathname, `/replay/${link.id}`);
    assert.ok(u.searchParams.get('token'), 'the link carries a token');
    assert.notEqual(u.searchParams.get('token'), h.token, 'not the host token');

    assert.equal((await get(u.pathname)).status, 401, 'no token, no page');
    const { cookie, setCookie, location } = await cookieOf(link.url);
    assert.equal(new URL(location, u).pathname, u.pathname, 'the token leaves the address bar');
    assert.ok(!location.startsWith('/'), "the redirect is relative, so it works under a proxy's prefix");
    assert.match(setCookie, /HttpOnly/);
    assert.match(setCookie, new RegExp(`^${pageCookieName(h.port)}=[^;]+; HttpOnly; SameSite=Strict; Path=/; Max-Age=\\d+$`), setCookie);
    assert.ok(!setCookie.includes(u.searchParams.get('token')!), "the cookie does not hold the link's token");
    // The link opened once: it opens nothing more, and its token is listed (and revocable) until then.
    const again = await get(u.pathname + u.search, { accept: 'text/html' });
    assert.equal(again.status, 401);
    assert.match(again.text, /This link was already used/);
    const listed = await ctl.request<{ tokens: Array<{ id: string; session: string | null; recording?: string; openedAt: string | null }> }>('host/tokens', {});
    const mine = listed.tokens.find((t) => t.id === link.tokenId);
    assert.ok(mine, 'host/tokens lists the replay link');
    assert.equal(mine.session, null);
    assert.equal(mine.recording, file);
    assert.ok(mine.openedAt);

    const page = await get(u.pathname, { cookie });
    assert.equal(page.status, 200, page.text);
    assert.match(String(page.headers['content-type']), /^text\/html/);
    const csp = String(page.headers['content-security-policy']);
    assert.match(csp, /script-src 'self' 'wasm-unsafe-eval'/);
    assert.match(csp, /frame-ancestors 'none'/);
    assert.ok(page.text.includes(`data-cast="${link.id}/cast"`), page.text); // relative: it works under a proxy's prefix
    assert.ok(page.text.includes(`src="${link.id}/assets/replay.js"`), 'assets under the link (…/replay/<id>/assets/)');

    const cast = await get(`${u.pathname}/cast`, { cookie });
    assert.equal(cast.status, 200, cast.text);
    assert.match(String(cast.headers['content-type']), /^application\/x-asciicast/);
    assert.equal(cast.text, CAST);
    // The host's own token opens it too.
    assert.equal((await get(`${u.pathname}/cast`, {}, h.token)).text, CAST);
  });

  test('a link opens that recording and nothing else: as a Bearer token nothing at all; its cookie no other link, no live view, no REST, no WebSocket', async () => {
    const s = await ctl.request<{ id: string }>('session/create', { ...BASH });
    const mine = await replay(castFile('mine.cast'));
    const other = await replay(castFile('other.cast'));
    const token = new URL(mine.url).searchParams.get('token')!;
    const bearer = await get(`/replay/${mine.id}/cast`, {}, token);
    assert.equal(bearer.status, 401, 'a link is for a browser, not a Bearer token');
    const { cookie } = await cookieOf(mine.url);
    assert.equal((await get(`/replay/${mine.id}/cast`, { cookie })).text, CAST);
    for (const p of [`/replay/${other.id}`, `/replay/${other.id}/cast`, '/sessions', `/sessions/${s.id}`, `/sessions/${s.id}/view`, '/health']) {
      assert.equal((await get(p, {}, token)).status, 401, p);
      // The host's other pages: the browser holds no grant for them (403); REST takes no cookie at all (401).
      assert.equal((await get(p, { cookie })).status, p.startsWith('/replay/') || p.endsWith('/view') ? 403 : 401, `${p} (cookie)`);
    }
    for (const p of ['/rpc', `/sessions/${s.id}/stream`]) {
      for (const how of [{ token }, { cookie }]) {
        const o = await wsConnect(h.port, p, how);
        assert.deepEqual(o.kind === 'refused' ? o.status : o.kind, 401, p);
        if (o.kind === 'open') await o.client.close();
      }
    }
    // Revoked, the cookie opens the recording no more, and a browser is told so in words.
    await ctl.request('host/revoke', { id: mine.tokenId });
    const revoked = await get(`/replay/${mine.id}`, { cookie, accept: 'text/html' });
    assert.equal(revoked.status, 401);
    assert.match(String(revoked.headers['content-type']), /^text\/html/);
    assert.match(revoked.text, /This link was revoked/);
    await ctl.request('pty/kill', { session: s.id });
  });

  test('only linked files: unknown ids, other paths and other methods get nothing', async () => {
    const link = await replay(castFile('only.cast'));
    const auth = { authorization: `Bearer ${h.token}` };
    const unknown = await get(`/replay/${'0'.repeat(32)}/cast`, auth);
    assert.equal(unknown.status, 404);
    assert.match(unknown.json.error.message, /Unknown or expired replay link/);
    for (const p of [
      '/replay/only.cast',
      `/replay/${encodeURIComponent(path.join(dir, 'only.cast'))}`,
      '/replay/..%2F..%2Fetc%2Fpasswd',
      '/replay/%2Fetc%2Fpasswd/cast',
      `/replay/${link.id}/../../etc/passwd`,
      `/replay/${link.id}/cast/x`,
      `/replay/${link.id.toUpperCase()}/cast`,
    ]) {
      const a = await get(p, auth);
      assert.equal(a.status, 404, `${p}: ${a.status} ${a.text}`);
      assert.ok(!a.text.includes('hello replay') && !a.text.includes('root:'), p);
    }
    const post = await request(h.port, 'POST', `/replay/${link.id}/cast`, { token: h.token });
    assert.equal(post.status, 405);
    assert.equal((await get(`/replay/${link.id}/cast`, { ...auth, host: 'evil.example:80' })).status, 403, 'DNS rebinding');
    assert.equal((await get(`/replay/${link.id}/cast`, { ...auth, origin: 'http://evil.example' })).status, 403, 'another site');
  });

  test('a token for one session opens the file picker but no recording', async () => {
    const s = await ctl.request<{ id: string }>('session/create', { ...BASH });
    const shared = await ctl.request<{ token: string }>('session/share', { session: s.id, scope: 'control', reusable: true });
    const link = await replay(castFile('private.cast'));
    const page = await get(`/replay/${link.id}`, {}, shared.token);
    assert.equal(page.status, 403);
    assert.match(page.json.error.message, /reaches only session/);
    assert.equal((await get(`/replay/${link.id}/cast`, {}, shared.token)).status, 403);
    const picker = await get('/replay', {}, shared.token);
    assert.equal(picker.status, 200);
    assert.ok(!picker.text.includes('data-cast'), 'the picker names no recording');
    await ctl.request('pty/kill', { session: s.id });
  });

  test('a file changed or deleted since its link was made gets a clear 404', async () => {
    const file = castFile('changing.cast');
    const link = await replay(file);
    fs.writeFileSync(file, 'not a recording any more\n');
    const bad = await get(`/replay/${link.id}/cast`, {}, h.token);
    assert.equal(bad.status, 404);
    assert.match(bad.json.error.message, /Cannot replay changing\.cast: .*not an asciicast v3 recording/);
    fs.rmSync(file);
    const gone = await get(`/replay/${link.id}/cast`, {}, h.token);
    assert.equal(gone.status, 404);
    assert.match(gone.json.error.message, /no such file/);
  });

  test("a browser that holds a share link's grant opens a replay link too: one cookie carries both", async () => {
    const s = await ctl.request<{ id: string }>('session/create', { ...BASH });
    const shared = await ctl.request<{ url: string }>('session/share', { session: s.id, scope: 'view' });
    const first = await cookieOf(shared.url);
    const link = await replay(castFile('beside-share.cast'));
    const u = new URL(link.url);
    const second = await get(u.pathname + u.search, { cookie: first.cookie });
    assert.equal(second.status, 303);
    assert.equal(String(second.headers['set-cookie']).split(';')[0], first.cookie, 'the same page session, one more grant');
    assert.equal((await get(`/replay/${link.id}/cast`, { cookie: first.cookie })).text, CAST);
    assert.equal((await get(`/sessions/${s.id}/view`, { cookie: first.cookie })).status, 200, 'the share link still opens its view');
    await ctl.request('pty/kill', { session: s.id });
  });

  test('the live view links to the replayer; a stale cookie (a host that restarted) opens nothing, and a new link replaces it', async () => {
    const s = await ctl.request<{ id: string }>('session/create', { ...BASH });
    const view = await get(`/sessions/${s.id}/view`, {}, h.token);
    assert.equal(view.status, 200);
    assert.match(view.text, /href="replay"/); // the picker in the session's folder, …/sessions/<id>/replay
    const stale = `${pageCookieName(h.port)}=stale-page-session`;
    assert.equal((await get('/replay', { cookie: stale })).status, 401);
    const link = await replay(castFile('after-stale.cast'));
    const u = new URL(link.url);
    const traded = await get(u.pathname + u.search, { cookie: stale });
    assert.equal(traded.status, 303);
    const cookie = String(traded.headers['set-cookie']).split(';')[0];
    assert.notEqual(cookie, stale);
    assert.equal((await get('/replay', { cookie })).status, 200);
    await ctl.request('pty/kill', { session: s.id });
  });

  test("the page's assets: the script with the player in it and the player's stylesheet; nothing else", async (t) => {
    if (!fs.existsSync(path.join(__dirname, '..', '..', '..', '..', 'dist', 'replay.js'))) return t.skip('dist/replay.js is not built (npm run build)');
    const js = await get('/replay/assets/replay.js', {}, h.token);
    assert.equal(js.status, 200);
    assert.match(String(js.headers['content-type']), /^text\/javascript/);
    assert.ok(js.text.includes('AGFzbQ'), 'the WebAssembly terminal is inlined (no fetch from elsewhere)');
    const css = await get('/replay/assets/asciinema-player.css', {}, h.token);
    assert.equal(css.status, 200);
    assert.match(css.text, /\.ap-wrapper/);
    assert.equal((await get('/replay/assets/../../package.json', {}, h.token)).status, 404);
    assert.equal((await get('/replay/assets/cli.js', {}, h.token)).status, 404);
    // A link's page loads them under its own path.
    const link = await replay(castFile('assets.cast'));
    const { cookie } = await cookieOf(link.url);
    assert.equal((await get(`/replay/${link.id}/assets/asciinema-player.css`, { cookie })).text, css.text);
    assert.equal((await get(`/replay/${link.id}/assets/cli.js`, { cookie })).status, 404);
  });
});

describe('ReplayLinks', () => {
  test("a link expires, and past the limit the oldest goes first; its token comes from the host's scoped tokens", () => {
    let now = Date.parse('2026-12-03T12:00:00Z');
    const minted: Array<{ id: string; recording: string; seconds: number }> = [];
    const mint = (id: string, recording: string, seconds: number) => {
      minted.push({ id, recording, seconds });
      const info = {
        id: `t${minted.length}`,
        scope: 'view' as const,
        session: null,
        recording,
        reusable: false,
        openedAt: null,
        createdAt: '',
        expiresAt: '',
        lastUsedAt: null,
      };
      return { token: `secret-${minted.length}`, info };
    };
    const links = new ReplayLinks(
      (id, token) => `http://x/replay/${id}?token=${token}`,
      mint,
      () => now,
    );
    const first = links.open('/a.cast');
    assert.equal(first.url, `http://x/replay/${first.id}?token=secret-1`);
    assert.equal(first.tokenId, 't1');
    assert.deepEqual(minted[0], { id: first.id, recording: '/a.cast', seconds: ReplayLimits.LifetimeMs / 1000 });
    assert.equal(links.get(first.id)?.path, '/a.cast');
    now += ReplayLimits.LifetimeMs - 1;
    assert.ok(links.get(first.id));
    now += 1;
    assert.equal(links.get(first.id), undefined, 'expired');
    const made = Array.from({ length: ReplayLimits.MaxLinks + 1 }, (_, i) => links.open(`/${i}.cast`));
    assert.equal(links.get(made[0].id), undefined, 'the oldest was dropped');
    assert.equal(links.get(made[1].id)?.path, '/1.cast');
    assert.equal(links.get(made[ReplayLimits.MaxLinks].id)?.path, `/${ReplayLimits.MaxLinks}.cast`);
  });
});
