// Every transport bounds what one request may weigh, and says so clearly (README "Reliability"):
// an HTTP body over the limit is 413 on REST and /mcp, whether announced by Content-Length or
// streamed in chunks; headers over Node's limit are 431; a `/rpc` message over the host's line
// limit (`serve --max-line-bytes`) is answered as an over-long line is on a socket. The socket line
// limit and the 1 MiB defaults of the WebSockets are tested in robustness.test.ts and
// http-api.test.ts (-32600 then close; 1009).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as http from 'node:http';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { MAX_BODY_BYTES } from '../../../../src/transport/base/http-util';
import { request, startHttpHost, wsOpen, type HttpAnswer, type HttpHost } from '../../../helpers/http';
import { BASH, withTimeout } from '../../../helpers/host';
import { ensureNoDisposablesAreLeakedBySuite } from '../../../helpers/leak-tracker';

const TEST_TIMEOUT = 30_000;

let h: HttpHost;
let sessionId: string;

before(async () => {
  h = await startHttpHost();
  const r = await request(h.port, 'POST', '/sessions', { token: h.token, body: { ...BASH, cols: 80, rows: 24 } });
  assert.equal(r.status, 200, r.text);
  sessionId = r.json.data.id;
});

after(async () => {
  await h?.close();
});
// Once the shared host is closed, nothing the suite made is left (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedBySuite();

/**
 * Streams `bytes` of body in 64 KiB chunks without a Content-Length (chunked), as a client that
 * does not know the size would, and resolves with the answer (the host may close mid-body).
 */
function streamBody(path: string, bytes: number): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port: h.port,
        method: 'POST',
        path,
        agent: false,
        headers: { authorization: `Bearer ${h.token}`, 'content-type': 'application/json' },
      },
      (res) => {
        const parts: Buffer[] = [];
        res.on('data', (c: Buffer) => parts.push(c));
        res.on('end', () => {
          const text = Buffer.concat(parts).toString('utf8');
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: JSON.parse(text) });
        });
      },
    );
    req.on('error', reject);
    const chunk = ' '.repeat(64 * 1024);
    let sent = 0;
    const pump = () => {
      while (sent < bytes) {
        sent += chunk.length;
        if (!req.write(chunk)) return void req.once('drain', pump);
      }
      req.end();
    };
    req.write('{"cols":90,"rows":30');
    pump();
  });
}

/** A resize body padded with JSON whitespace to exactly `bytes` bytes. */
function paddedResize(bytes: number, cols: number): string {
  const core = `{"cols":${cols},"rows":24}`;
  return core.slice(0, -1) + ' '.repeat(bytes - core.length) + '}';
}

async function size(): Promise<{ cols: number; rows: number }> {
  const r = await request(h.port, 'GET', '/sessions', { token: h.token });
  const s = r.json.data.find((x: { id: string }) => x.id === sessionId);
  return { cols: s.cols, rows: s.rows };
}

describe('HTTP body limit (1 MiB)', () => {
  test('REST: a body of exactly the limit is served; one byte more is 413 PAYLOAD_TOO_LARGE and changes nothing', { timeout: TEST_TIMEOUT }, async () => {
    const ok = await request(h.port, 'POST', `/sessions/${sessionId}/resize`, { token: h.token, body: paddedResize(MAX_BODY_BYTES, 81) });
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.json.data.cols, 81);

    const big = await request(h.port, 'POST', `/sessions/${sessionId}/resize`, { token: h.token, body: paddedResize(MAX_BODY_BYTES + 1, 82) });
    assert.equal(big.status, 413, big.text);
    assert.equal(big.json.ok, false);
    assert.equal(big.json.error.code, 'PAYLOAD_TOO_LARGE');
    assert.match(big.json.error.message, /larger than 1048576 bytes/);
    assert.deepEqual(await size(), { cols: 81, rows: 24 });
  });

  test('REST: a chunked body that grows past the limit is cut off with 413; the host serves on', { timeout: TEST_TIMEOUT }, async () => {
    const r = await streamBody(`/sessions/${sessionId}/resize`, 4 * MAX_BODY_BYTES);
    assert.equal(r.status, 413, r.text);
    assert.equal(r.json.error.code, 'PAYLOAD_TOO_LARGE');
    assert.equal(r.headers.connection, 'close');
    assert.deepEqual(await size(), { cols: 81, rows: 24 });
  });

  test(
    'REST with `Expect: 100-continue` (as curl sends a large body): over the limit, 413 before any of the body is asked for; within it, 100 Continue',
    { timeout: TEST_TIMEOUT },
    async () => {
      // Resolves with whether the host asked for the body (100 Continue) and the final status.
      const expecting = (length: number) =>
        new Promise<{ continued: boolean; status: number }>((resolve, reject) => {
          let continued = false;
          const req = http.request({
            host: '127.0.0.1',
            port: h.port,
            method: 'POST',
            path: `/sessions/${sessionId}/resize`,
            headers: { authorization: `Bearer ${h.token}`, 'content-type': 'application/json', 'content-length': length, expect: '100-continue' },
          });
          const body = JSON.stringify({ cols: 83, rows: 24 }).padEnd(length, ' ');
          req.on('continue', () => {
            continued = true;
            req.end(body);
          });
          req.on('response', (res) => {
            res.resume();
            res.on('end', () => resolve({ continued, status: res.statusCode ?? 0 }));
            req.destroy();
          });
          req.on('error', reject);
        });
      assert.deepEqual(await expecting(3 * MAX_BODY_BYTES), { continued: false, status: 413 });
      assert.deepEqual(await expecting(2048), { continued: true, status: 200 });
      assert.deepEqual(await size(), { cols: 83, rows: 24 });
    },
  );

  // Found by an outside audit: Node's fetch sending 8 MiB got EPIPE, not the answer: the host
  // closed the connection while the body was still coming.
  test('REST and /mcp: a client that sends a whole 8 MiB body before it reads gets the 413, every time', { timeout: TEST_TIMEOUT }, async () => {
    // As Node's own fetch sends it (in a process of its own, as a client is): the whole body, then it reads the answer.
    const client = `
      const [port, token, path, bytes] = process.argv.slice(1);
      fetch('http://127.0.0.1:' + port + path, {
        method: 'POST',
        headers: { authorization: 'Bearer ' + token, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: Buffer.alloc(Number(bytes), 0x20),
      }).then((r) => console.log(r.status), (e) => console.log(String(e.cause ?? e)));
    `;
    const sendWhole = async (path: string, bytes: number) =>
      (await promisify(execFile)(process.execPath, ['-e', client, String(h.port), h.token, path, String(bytes)], { timeout: 20_000 })).stdout.trim();
    for (let i = 0; i < 3; i++) {
      assert.equal(await sendWhole(`/sessions/${sessionId}/resize`, 8 * MAX_BODY_BYTES), '413');
      assert.equal(await sendWhole('/mcp', 8 * MAX_BODY_BYTES), '413');
    }
    const r = await request(h.port, 'GET', '/sessions', { token: h.token });
    assert.equal(r.status, 200, 'the host serves on');
  });

  test('/mcp: a body over the limit is 413 with a JSON-RPC Invalid Request error', { timeout: TEST_TIMEOUT }, async () => {
    const call = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    const body = call.slice(0, -1) + ' '.repeat(MAX_BODY_BYTES) + '}';
    const r = await request(h.port, 'POST', '/mcp', { token: h.token, body, headers: { accept: 'application/json, text/event-stream' } });
    assert.equal(r.status, 413, r.text);
    assert.equal(r.json.jsonrpc, '2.0');
    assert.equal(r.json.id, null);
    assert.equal(r.json.error.code, -32600);
    assert.match(r.json.error.message, /larger than 1048576 bytes/);
    const streamed = await streamBody('/mcp', 2 * MAX_BODY_BYTES);
    assert.equal(streamed.status, 413, streamed.text);
  });
});

describe('HTTP header limit', () => {
  test('headers (the URL and its query string included) over 16 KiB are refused with 431', { timeout: TEST_TIMEOUT }, async () => {
    const r = await request(h.port, 'GET', `/sessions/${sessionId}?since=0&pad=${'x'.repeat(20 * 1024)}`, { token: h.token });
    assert.equal(r.status, 431);
    const ok = await request(h.port, 'GET', `/sessions/${sessionId}?since=0`, { token: h.token });
    assert.equal(ok.status, 200, ok.text);
  });
});

describe("/rpc message limit (the host's line limit)", () => {
  /** A host whose JSON-RPC lines may be at most this long (`serve --max-line-bytes 65536`). */
  const LIMIT = 64 * 1024;
  /** A pty/status call on `session` padded to exactly `bytes` bytes. */
  const paddedStatus = (session: string, id: number, bytes: number): string => {
    const core = JSON.stringify({ jsonrpc: '2.0', id, method: 'pty/status', params: { session } });
    return core.slice(0, -1) + ' '.repeat(bytes - core.length) + '}';
  };

  test(
    'a message of the limit is served; longer, whole or in fragments: -32600 with id null naming the limit, then 1009',
    { timeout: TEST_TIMEOUT },
    async () => {
      const small = await startHttpHost([], { maxLineBytes: LIMIT });
      try {
        const created = await request(small.port, 'POST', '/sessions', { token: small.token, body: { ...BASH } });
        assert.equal(created.status, 200, created.text);
        const id = created.json.data.id;
        const status = (n: number, bytes: number) => paddedStatus(id, n, bytes);
        const refusal = {
          jsonrpc: '2.0',
          id: null,
          error: { code: -32600, message: `Invalid Request: message longer than ${LIMIT} bytes; closing the connection` },
        };

        const c = await wsOpen(small.port, '/rpc', { queryToken: small.token });
        c.send(status(1, LIMIT));
        const ok = await c.next((m) => m.id === 1, 'the answer to a message of the limit');
        assert.equal(ok.result?.running, true, JSON.stringify(ok));
        c.send(status(2, LIMIT + 1));
        assert.deepEqual((await withTimeout(c.closed, 10_000, 'the close')).code, 1009);
        assert.deepEqual(c.received.slice(1), [refusal]);

        // A client streaming one message in frames is refused at the fragment that passes the limit.
        const f = await wsOpen(small.port, '/rpc', { queryToken: small.token });
        const half = 'x'.repeat(LIMIT / 2 + 1);
        f.ws.send(half, { fin: false });
        f.ws.send(half, { fin: true });
        assert.deepEqual((await withTimeout(f.closed, 10_000, 'the close')).code, 1009);
        assert.deepEqual(f.received, [refusal]);

        // Nothing else noticed.
        const after = await wsOpen(small.port, '/rpc', { queryToken: small.token });
        after.send(status(3, 100));
        assert.equal((await after.next((m) => m.id === 3, 'a new connection')).result?.running, true);
        await after.close();
      } finally {
        await small.close();
      }
    },
  );
});
