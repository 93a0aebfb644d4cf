// Links and page cookies (docs/protocol.md, Links and page cookies): every link holds a scoped token
// of its own, which a browser trades once for a page cookie named after the host's port; after that
// the printed link opens nothing, and a reusable token (`share --reusable`) stays a Bearer token for
// scripts. One port-named cookie names a page session that holds every grant the browser was given,
// so opening someone's shared link never logs the owner out of their own views. A real host (node-pty,
// bash, its control socket and HTTP server), requests made as a browser makes them.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { SessionInfo } from '../../../../src/core/methods/types';
import type { RpcClient } from '../../../../src/transport/client/rpc-client';
import { pageCookieName } from '../../../../src/transport/http/http-security';
import { TOKEN_ENDED_CLOSE } from '../../../../src/transport/http/http-server';
import { BASH, connect, withTimeout } from '../../../helpers/host';
import { mcpPost, request, startHttpHost, wsConnect, type HttpAnswer, type HttpHost } from '../../../helpers/http';
import { ensureNoDisposablesAreLeakedBySuite } from '../../../helpers/leak-tracker';

interface Link {
  token: string;
  url: string;
  info: { id: string; scope: string; session: string; reusable: boolean; openedAt: string | null; expiresAt: string; createdAt: string };
}

/** What a browser's navigation asks for. */
const BROWSER = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };

let h: HttpHost;
let ctl: RpcClient;
let a: SessionInfo;
let b: SessionInfo;

before(async () => {
  h = await startHttpHost();
  ctl = await connect(h.host.controlAddress);
  a = (await ctl.call('session/create', { ...BASH, name: 'owner-a' })) as SessionInfo;
  b = (await ctl.call('session/create', { ...BASH, name: 'other-b' })) as SessionInfo;
});

after(async () => {
  ctl?.close();
  await h?.close();
});
// Once the shared host is closed, nothing the suite made is left (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedBySuite();

const share = (session: string, params: Record<string, unknown> = {}) => ctl.call('session/share', { session, ...params }) as Promise<Link>;
const viewLink = (session: string, params: Record<string, unknown> = {}) =>
  ctl.call('session/viewUrl', { session, ...params }) as Promise<{ url: string; readOnly: boolean; info: Link['info'] }>;

/** Opens a link as a browser does: the request with its `?token=`, and the browser's cookie if it has one. */
function open(url: string, cookie?: string, port = h.port): Promise<HttpAnswer> {
  const u = new URL(url);
  return request(port, 'GET', u.pathname + u.search, { headers: { ...BROWSER, ...(cookie ? { cookie } : {}) } });
}

/** The `name=value` a 303 sets, as the browser sends it back. */
function cookieOf(answer: HttpAnswer): string {
  assert.equal(answer.status, 303, answer.text);
  return String(answer.headers['set-cookie']).split(';')[0];
}

const page = (session: string, cookie: string) => request(h.port, 'GET', `/sessions/${session}/view`, { headers: { ...BROWSER, cookie } });

describe('links and page cookies', { timeout: 60_000 }, () => {
  test('a link opens its page once: the token leaves the address, the cookie holds no token; then the link is refused, in words', async () => {
    const link = await viewLink(a.id);
    assert.equal(link.readOnly, true, 'view makes a view link by default');
    assert.equal(link.info.scope, 'view');
    assert.equal(Date.parse(link.info.expiresAt) - Date.parse(link.info.createdAt), 8 * 3600_000, 'it lives 8 h unless told otherwise');
    const token = new URL(link.url).searchParams.get('token')!;
    assert.ok(token && token !== h.token, "the link holds a token of its own, never the host's");

    // A HEAD (a link preview's probe) does not spend it.
    const probe = await request(h.port, 'HEAD', new URL(link.url).pathname + new URL(link.url).search);
    assert.notEqual(probe.status, 303);
    const first = await open(link.url);
    assert.equal(first.status, 303);
    assert.equal(
      first.headers.location,
      'view',
      "the browser goes on to the address without the token (history keeps no token), relative: it works under a proxy's prefix",
    );
    const setCookie = String(first.headers['set-cookie']);
    assert.match(setCookie, new RegExp(`^${pageCookieName(h.port)}=[A-Za-z0-9_-]{43}; HttpOnly; SameSite=Strict; Path=/; Max-Age=\\d+$`));
    assert.ok(!setCookie.includes(token) && !setCookie.includes(h.token), "the cookie holds neither the link's token nor the host's");
    const cookie = cookieOf(first);
    const shown = await page(a.id, cookie);
    assert.equal(shown.status, 200);
    assert.match(shown.text, /data-readonly="1"/);

    // The same link again, in this browser or another: refused, and a browser is told why in words.
    for (const again of [await open(link.url), await open(link.url, cookie)]) {
      assert.equal(again.status, 401);
      assert.match(String(again.headers['content-type']), /^text\/html/);
      assert.match(again.text, /<h1>This link was already used<\/h1>/);
      assert.equal(again.headers['set-cookie'], undefined);
    }
    // An API client gets the JSON 401, which says what to use instead.
    const api = await request(h.port, 'GET', new URL(link.url).pathname + new URL(link.url).search);
    assert.equal(api.status, 401);
    assert.equal(api.json.error.code, 'UNAUTHORIZED');
    // The cookie it got still works: the browser that opened it keeps its page.
    assert.equal((await page(a.id, cookie)).status, 200);
  });

  test("a link's token is a Bearer token for its session until its page is opened, then REST, /mcp, /rpc and the stream refuse it, saying to use --reusable; a reusable token works on all and opens pages again and again", async () => {
    const link = await share(a.id, { scope: 'control' });
    assert.equal(link.info.reusable, false);
    const surfaces = [
      ['GET', `/sessions/${a.id}`],
      ['POST', '/mcp'],
    ] as const;
    const mcpInit = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '0' } },
    };
    const MCP_HEADERS = { accept: 'application/json, text/event-stream' };
    const ask = (method: string, path: string) =>
      request(h.port, method, path, { token: link.token, body: path === '/mcp' ? mcpInit : undefined, headers: path === '/mcp' ? MCP_HEADERS : {} });
    // Before a browser opened it: its session, with its scope, as `share` prints it for scripts.
    for (const [method, path] of surfaces) assert.equal((await ask(method, path)).status, 200, `${method} ${path} before the link was opened`);
    assert.equal((await request(h.port, 'POST', '/sessions', { token: link.token, body: {} })).status, 403, 'no other session, nor a new one');
    for (const p of ['/rpc', `/sessions/${a.id}/stream`]) {
      const o = await wsConnect(h.port, p, { token: link.token });
      assert.equal(o.kind, 'open', p);
      if (o.kind === 'open') await o.client.close();
    }
    // Its page opened (once): the token opens nothing more.
    assert.equal((await open(link.url)).status, 303);
    for (const [method, path] of [...surfaces, ['GET', '/health'] as const]) {
      const r = await ask(method, path);
      assert.equal(r.status, 401, `${method} ${path}`);
      if (path !== '/mcp') assert.match(r.json.error.message, /link was opened.*shared-pty share <session> --reusable/);
    }
    for (const p of ['/rpc', `/sessions/${a.id}/stream`]) {
      for (const how of [{ token: link.token }, { queryToken: link.token }]) {
        const o = await wsConnect(h.port, p, how);
        assert.deepEqual(o.kind === 'refused' ? o.status : 'open', 401, p);
      }
    }
    const reusable = await share(a.id, { scope: 'input', reusable: true });
    assert.equal(reusable.info.reusable, true);
    assert.equal((await request(h.port, 'GET', `/sessions/${a.id}`, { token: reusable.token })).status, 200);
    const c1 = cookieOf(await open(reusable.url));
    const c2 = cookieOf(await open(reusable.url));
    assert.notEqual(c1, c2, 'two browsers, two page sessions');
    assert.match((await page(a.id, c2)).text, /data-readonly="0"/);
    const o = await wsConnect(h.port, `/sessions/${a.id}/stream`, { queryToken: reusable.token });
    assert.equal(o.kind, 'open');
    if (o.kind === 'open') await o.client.close();
  });

  test("what was opened with a link's token before its page was opened ends when it is: /rpc (a wait in flight with it) and the stream close with 4401 `link opened`; the browser's own stream stays", async () => {
    const link = await share(a.id, { scope: 'input' });
    const early = async (p: string) => {
      const o = await wsConnect(h.port, p, { token: link.token });
      assert.equal(o.kind, 'open', `${p} opens with the link's token before the link is opened`);
      return (o as { client: import('../../../helpers/http').WsClient }).client;
    };
    const rpc = await early('/rpc');
    const stream = await early(`/sessions/${a.id}/stream`);
    // A wait that nothing will satisfy, in flight over /rpc when the browser trades the link.
    rpc.send({ jsonrpc: '2.0', id: 1, method: 'pty/wait', params: { session: a.id, match: 'never-printed-9f3c', timeout: 30_000 } });
    await new Promise((r) => setTimeout(r, 200));
    const cookie = cookieOf(await open(link.url));
    for (const [what, ws] of [
      ['/rpc', rpc],
      ['the stream', stream],
    ] as const)
      assert.deepEqual(await withTimeout(ws.closed, 10_000, `${what} opened with the link's token closes`), { code: TOKEN_ENDED_CLOSE, reason: 'link opened' });
    assert.ok(!rpc.received.some((m) => m?.id === 1), 'the wait answered nothing: it was cut with its connection');
    const own = await wsConnect(h.port, `/sessions/${a.id}/stream`, { cookie });
    assert.equal(own.kind, 'open', "the browser's stream opens with its page cookie");
    const browser = (own as { client: import('../../../helpers/http').WsClient }).client;
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(browser.ws.readyState, browser.ws.OPEN, "the browser's stream is not ended by its own trade");
    await browser.close();
  });

  test("an MCP task started with a link's token ends when the link is opened: what it waited to type is never typed", async () => {
    const u = (await ctl.call('session/create', { ...BASH, name: 'task-victim', origin: 'user' })) as SessionInfo;
    try {
      await ctl.request('pty/wait', { session: u.id, match: '$', timeout: 10_000 });
      // The person has started a line: an agent's send waits for their pause (typing arbitration).
      const userTypes = (action: Record<string, unknown>) => ctl.request('pty/write', { session: u.id, action, client: { origin: 'user' } });
      await userTypes({ text: 'echo person-started' });
      await ctl.request('pty/wait', { session: u.id, match: 'person-started', timeout: 10_000 });
      const link = await share(u.id, { scope: 'control' });
      const task = await mcpPost(h.port, link.token, {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'send', arguments: { session: u.id, text: 'echo INJECTED-BY-TASK', timeout: 30_000 }, task: { ttl: 60_000 } },
      });
      assert.equal(task.json?.result?.task?.status, 'working', task.text);
      assert.equal((await open(link.url)).status, 303, 'the browser opens the link');
      // The person clears their line and pauses: a task still alive would type now.
      await userTypes({ key: 'Ctrl+U' });
      const typed = (await ctl.request('pty/wait', { session: u.id, match: 'INJECTED-BY-TASK', timeout: 5000 })) as { matched: boolean };
      assert.equal(typed.matched, false, "the task made with the link's token typed after the link was opened");
    } finally {
      await ctl.call('pty/kill', { session: u.id });
    }
  });

  test("tokens lists links and reusable tokens (opened or not); revoke ends a link's page cookie and its stream, and the page says so in words", async () => {
    const link = await viewLink(a.id, { input: true, expiresIn: 600 });
    assert.equal(link.info.scope, 'input');
    const listed = async () => ((await ctl.call('host/tokens', {})) as { tokens: Link['info'][] }).tokens.find((t) => t.id === link.info.id);
    assert.equal((await listed())?.openedAt, null);
    const cookie = cookieOf(await open(link.url));
    const entry = await listed();
    assert.ok(entry?.openedAt, 'listed as opened');
    assert.equal(entry.reusable, false);
    const stream = await wsConnect(h.port, `/sessions/${a.id}/stream`, { cookie });
    assert.equal(stream.kind, 'open', "the page's stream opens with the page cookie");
    const ws = (stream as { client: import('../../../helpers/http').WsClient }).client;
    await ctl.call('host/revoke', { id: link.info.id });
    assert.deepEqual(await withTimeout(ws.closed, 10_000, 'the stream closes'), { code: TOKEN_ENDED_CLOSE, reason: 'token revoked' });
    const refused = await page(a.id, cookie);
    assert.equal(refused.status, 401);
    assert.match(String(refused.headers['content-type']), /^text\/html/);
    assert.match(refused.text, /<h1>This link was revoked<\/h1>/);
    assert.ok(!refused.text.trimStart().startsWith('{'), 'not raw JSON');
    const json = await request(h.port, 'GET', `/sessions/${a.id}/view`, { headers: { cookie, accept: 'application/json' } });
    assert.equal(json.status, 401);
    assert.equal(json.json.ok, false, 'API clients keep their JSON 401');
    const relink = await open(link.url);
    assert.equal(relink.status, 401);
    assert.match(relink.text, /This link was revoked/);
  });

  test('an expired link and an unknown one are refused in words', async () => {
    const link = await share(a.id, { expiresIn: 1 });
    const until = Date.parse(link.info.expiresAt);
    while (Date.now() < until) await new Promise((r) => setTimeout(r, until - Date.now()));
    const expired = await open(link.url);
    assert.equal(expired.status, 401);
    assert.match(expired.text, /<h1>This link has expired<\/h1>/);
    const unknown = await open(`${h.http.url}/sessions/${a.id}/view?token=not-a-token`);
    assert.equal(unknown.status, 401);
    assert.match(unknown.text, /<h1>This link opens nothing<\/h1>/);
    const bare = await request(h.port, 'GET', `/sessions/${a.id}/view`, { headers: BROWSER });
    assert.equal(bare.status, 401);
    assert.match(bare.text, /<h1>This page needs a link<\/h1>/);
  });

  test("the host's token is never traded for a cookie, and a page cookie opens no REST, /rpc or /mcp", async () => {
    const viaLink = await open(`${h.http.url}/sessions/${a.id}/view?token=${encodeURIComponent(h.token)}`);
    assert.equal(viaLink.status, 401);
    assert.equal(viaLink.headers['set-cookie'], undefined);
    assert.match(viaLink.text, /Links do not carry the host&#39;s own token/);
    assert.ok(!viaLink.text.includes(h.token));
    // As a cookie value the host's token is nothing either.
    assert.equal((await page(a.id, `${pageCookieName(h.port)}=${h.token}`)).status, 401);
    const cookie = cookieOf(await open((await share(a.id, { scope: 'control' })).url));
    for (const [method, path] of [
      ['GET', '/sessions'],
      ['POST', '/sessions'],
      ['GET', `/sessions/${a.id}`],
      ['GET', '/health'],
      ['POST', '/mcp'],
    ] as const) {
      const r = await request(h.port, method, path, { headers: { cookie }, body: method === 'POST' ? BASH : undefined });
      assert.equal(r.status, 401, `${method} ${path} with the page cookie`);
    }
    const rpc = await wsConnect(h.port, '/rpc', { cookie });
    assert.deepEqual(rpc.kind === 'refused' ? rpc.status : 'open', 401);
  });

  test("opening someone's shared link never logs the owner out: one cookie per port, one page session, every grant kept (the strongest wins)", async () => {
    // The owner watches session a with input, from their own `view --input`.
    const owner = cookieOf(await open((await viewLink(a.id, { input: true })).url));
    assert.match((await page(a.id, owner)).text, /data-readonly="0"/);
    // A colleague's read-only link to session b, opened in the same browser.
    const shared = await open((await share(b.id)).url, owner);
    assert.equal(cookieOf(shared), owner, 'the same cookie: the page session gained a grant, nothing was replaced');
    assert.equal((await page(b.id, owner)).status, 200);
    assert.match((await page(b.id, owner)).text, /data-readonly="1"/);
    assert.match((await page(a.id, owner)).text, /data-readonly="0"/, 'the owner still types in their own view');
    // A read-only link to the owner's own session does not take their input away either.
    assert.equal(cookieOf(await open((await share(a.id)).url, owner)), owner);
    assert.match((await page(a.id, owner)).text, /data-readonly="0"/);
    const stream = await wsConnect(h.port, `/sessions/${a.id}/stream`, { cookie: owner });
    assert.equal(stream.kind, 'open');
    if (stream.kind === 'open') await stream.client.close();

    // Another host's link (another port) sets its own cookie and leaves this one alone.
    const other = await startHttpHost();
    try {
      const s = (await other.host.createSession({ ...BASH, name: 'elsewhere' })).id;
      const link = other.http.tokens.share(other.host.registry.get(s)!, 'view', 600);
      const answer = await open(link.url, owner, other.port);
      const theirs = cookieOf(answer);
      assert.ok(theirs.startsWith(`${pageCookieName(other.port)}=`), theirs);
      assert.notEqual(pageCookieName(other.port), pageCookieName(h.port));
      const both = await page(a.id, `${owner}; ${theirs}`);
      assert.equal(both.status, 200, `${owner}; ${theirs} ${both.text}` + "the owner's view here still opens with both cookies sent");
    } finally {
      await other.close();
    }
  });
});
