import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { request, startHttpHost, wsConnect } from '../../helpers/http';

// docs/protocol.md#access-checks: every request needs `Authorization: Bearer <token>`; only a WebSocket (which a
// browser cannot give headers) may carry it as `?token=`. The browser view's one-time link is
// the other place a browser needs it.

const hP = startHttpHost();
after(async () => (await hP).close());

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

test('a cookie does not open REST either', async () => {
  const h = await hP;
  const r = await request(h.port, 'GET', '/sessions', { headers: { cookie: `shared_pty_auth=${encodeURIComponent(h.token)}` } });
  assert.equal(r.status, 401);
});

test('?token= opens WebSocket upgrades', async () => {
  const h = await hP;
  const out = await wsConnect(h.port, `/rpc?token=${encodeURIComponent(h.token)}`);
  assert.equal(out.kind, 'open');
  if (out.kind === 'open') out.client.close();
});
