// Malformed percent-encoding in what a client sends the HTTP server — a session in a REST path or
// a stream URL, the token cookie — is a clear 4xx, never a 500, and never an exception out of
// the upgrade handler, which would end the whole host (found by the HTTP fuzzer).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { pageCookieName } from '../../../../src/transport/http/http-security';
import { request, startHttpHost, wsConnect, type HttpHost } from '../../../helpers/http';
import { BASH } from '../../../helpers/host';
import { ensureNoDisposablesAreLeakedBySuite } from '../../../helpers/leak-tracker';

const TEST_TIMEOUT = 30_000;
const MALFORMED = ['%', '%zz', '%E0%A4%A'];

let h: HttpHost;
let sessionId: string;
const escaped: Error[] = [];
const onUncaught = (e: Error) => escaped.push(e);

before(async () => {
  h = await startHttpHost();
  const r = await request(h.port, 'POST', '/sessions', { token: h.token, body: { ...BASH } });
  sessionId = r.json.data.id;
  process.on('uncaughtException', onUncaught);
});

after(async () => {
  process.off('uncaughtException', onUncaught);
  await h?.close();
});
// Once the shared host is closed, nothing the suite made is left (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedBySuite();

async function hostServes(): Promise<void> {
  const r = await request(h.port, 'GET', `/sessions/${sessionId}?since=0`, { token: h.token });
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(
    escaped.map((e) => e.message),
    [],
    'no exception escaped the server',
  );
}

describe('malformed percent-encoding', () => {
  test('in a REST path: 400 BAD_REQUEST on every route', { timeout: TEST_TIMEOUT }, async () => {
    for (const bad of MALFORMED) {
      for (const [verb, path] of [
        ['GET', `/sessions/${bad}`],
        ['DELETE', `/sessions/${bad}`],
        ['POST', `/sessions/${bad}/write`],
        ['POST', `/sessions/${bad}/resize`],
      ]) {
        const r = await request(h.port, verb, path, { token: h.token, body: verb === 'POST' ? { text: 'x' } : undefined });
        assert.equal(r.status, 400, `${verb} ${path}: ${r.text}`);
        assert.equal(r.json.error.code, 'BAD_REQUEST');
        assert.match(r.json.error.message, /Malformed session/);
      }
    }
    await hostServes();
  });

  test('in a stream URL: the upgrade is refused with 400 and the host serves on', { timeout: TEST_TIMEOUT }, async () => {
    for (const bad of MALFORMED) {
      const r = await wsConnect(h.port, `/sessions/${bad}/stream`, { token: h.token });
      assert.equal(r.kind, 'refused');
      assert.equal((r as { status: number }).status, 400);
    }
    await hostServes();
  });

  test('in the page cookie: no access (401) on a page and on the stream upgrade, and the host serves on', { timeout: TEST_TIMEOUT }, async () => {
    for (const bad of MALFORMED) {
      const cookie = `${pageCookieName(h.port)}=${bad}`;
      const r = await request(h.port, 'GET', `/sessions/${sessionId}/view`, { headers: { cookie } });
      assert.equal(r.status, 401, r.text);
      const ws = await new Promise<number>((resolve, reject) => {
        void import('ws').then(({ default: WebSocket }) => {
          const c = new WebSocket(`ws://127.0.0.1:${h.port}/sessions/${sessionId}/stream`, { headers: { cookie } });
          c.once('unexpected-response', (_req, res) => {
            c.on('error', () => undefined);
            c.terminate();
            resolve(res.statusCode ?? 0);
          });
          c.once('open', () => {
            c.close();
            resolve(101);
          });
          c.once('error', reject);
        });
      });
      assert.equal(ws, 401);
    }
    await hostServes();
  });
});
