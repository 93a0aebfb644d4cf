import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { request, startHttpHost, wsConnect } from '../../../helpers/http';
import { pageCookieName } from '../../../../src/transport/http/http-security';
import { ensureNoDisposablesAreLeakedBySuite } from '../../../helpers/leak-tracker';

// docs/protocol.md#access-checks: every request needs `Authorization: Bearer <token>`; only a WebSocket (which a
// browser cannot give headers) may carry it as `?token=`. A page's one-time link carries a scoped
// token of its own, traded for a page cookie (test/unit/transport/pages/page-links.test.ts).

const hP = startHttpHost();
after(async () => (await hP).close());
// Once the shared host is closed, nothing the suite made is left (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedBySuite();

test('?token= does not open plain HTTP requests; the Bearer header does', async () => {
  const h = await hP;
  for (const path of ['/health', '/sessions']) {
    const q = await request(h.port, 'GET', `${path}?token=${encodeURIComponent(h.token)}`);
    assert.equal(q.status, 401, `${path} with ?token=`);
    assert.equal(q.json.error.code, 'UNAUTHORIZED');
    const b = await request(h.port, 'GET', path, { token: h.token });
    assert.equal(b.status, 200, `${path} with Bearer`);
  }
});

test('the scheme name is case-insensitive (RFC 9110): `bearer` and `BEARER` carry the token too; another scheme does not', async () => {
  const h = await hP;
  for (const scheme of ['bearer', 'BEARER', 'Bearer']) {
    const r = await request(h.port, 'GET', '/health', { headers: { authorization: `${scheme} ${h.token}` } });
    assert.equal(r.status, 200, scheme);
  }
  for (const auth of [`Basic ${h.token}`, `Bearer${h.token}`, `xBearer ${h.token}`]) {
    const r = await request(h.port, 'GET', '/health', { headers: { authorization: auth } });
    assert.equal(r.status, 401, auth.replace(h.token, '<token>'));
  }
});

test("a page cookie does not open REST either, and the host's token is never one", async () => {
  const h = await hP;
  const session = await h.host.createSession({ command: 'bash', args: ['--norc', '--noprofile'] });
  const link = new URL(h.http.tokens.share(session, 'control', 600).url);
  const traded = await request(h.port, 'GET', link.pathname + link.search);
  assert.equal(traded.status, 303);
  const cookie = String(traded.headers['set-cookie']).split(';')[0];
  assert.ok(cookie.startsWith(`${pageCookieName(h.port)}=`));
  assert.equal((await request(h.port, 'GET', '/sessions', { headers: { cookie } })).status, 401);
  assert.equal((await request(h.port, 'GET', `/sessions/${session.id}/view`, { headers: { cookie: `${pageCookieName(h.port)}=${h.token}` } })).status, 401);
  h.host.registry.remove(session.id);
});

test('?token= opens WebSocket upgrades', async () => {
  const h = await hP;
  const out = await wsConnect(h.port, `/rpc?token=${encodeURIComponent(h.token)}`);
  assert.equal(out.kind, 'open');
  if (out.kind === 'open') out.client.close();
});
