// Property-based fuzzing of a host's HTTP surfaces: REST bodies, query strings and paths; the
// stream WebSocket's messages; MCP tool arguments over `/mcp`, and over stdio (`shared-pty mcp`). Every request gets a clear answer
// (the REST envelope with a 2xx/4xx status, an MCP result or error with a protocol code), never a
// 500, a crash or a hang, and after each batch a bystander on its own connection is served.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { z } from 'zod';
import { METHODS } from '../../../../src/core/methods/table';
import { selector as sessionSelector } from '../../../../src/core/methods/schemas';
import type { MethodSpec } from '../../../../src/core/methods/spec';
import { REST_ROUTES } from '../../../../src/transport/http/rest-routes';
import { boundWaits, Entries, FUZZ_WAIT_MS, jsonText, keyName, nastyKey, nastyString, objectOf, wildJson, type Wild } from '../../../helpers/arbitraries';
import { fuzz } from '../../../helpers/fuzz';
import { fillText, FuzzHost, RAW_CAT } from '../../../helpers/fuzz-host';
import { request, wsConnect, type WsClient } from '../../../helpers/http';
import { withTimeout, clientsClosed } from '../../../helpers/host';
import { spawn } from 'node:child_process';
import * as net from 'node:net';
import { CLI, REPO_ROOT } from '../../../helpers/protocol';
import { readLiveRecords } from '../../../../src/host/discovery';
import { ensureNoDisposablesAreLeakedBySuite } from '../../../helpers/leak-tracker';

/** Cases per surface in `npm test`. */
const SHORT_RUNS = 40;
/** Longest one answer may take (every wait of a case is bounded by FUZZ_WAIT_MS). */
const ANSWER_MS = 15_000;
/** Messages over this are the WebSocket frame limit's business (tested on its own). */
const MAX_MESSAGE_CHARS = 900_000;
/** The statuses a REST request may be answered with. */
const REST_STATUSES = new Set([200, 400, 404, 413]);

let fh: FuzzHost;

before(async () => {
  fh = await FuzzHost.start({ target: RAW_CAT });
});

after(async () => {
  await fh?.close();
});
// Once the shared host is closed, nothing the suite made is left (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedBySuite(clientsClosed);

/** A session in a path: usually the target, sometimes unknown, sometimes not even valid percent-encoding. */
const pathSelector: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('@target', '@target-name', '@target-prefix') },
  { weight: 1, arbitrary: nastyString.map(percentEncode) },
  { weight: 1, arbitrary: fc.constantFrom('%', '%zz', '%E0%A4%A', '%ED%A0%80', '..', '%2F', 'a%00b') },
);

/** Every byte of the string's UTF-8 as %XX (lone surrogates included, which encodeURIComponent refuses). */
function percentEncode(s: string): string {
  return [...Buffer.from(s, 'utf8')].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('');
}

/** The placeholders of a path (plain, not JSON-quoted as in bodies). */
function fillPath(p: string): string {
  const ph = fh.placeholders as unknown as Record<string, string>;
  return p.replace(/@target(-name|-prefix)?/g, (m) => encodeURIComponent(ph[m]));
}

/** Field values a case picks itself (a selector, key names, bounded waits). */
const FIELDS = {
  session: fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom<Wild>('@target', '@target-name', '@target-prefix') },
    { weight: 1, arbitrary: nastyString as fc.Arbitrary<Wild> },
  ),
  key: keyName as fc.Arbitrary<Wild>,
  keys: fc.array(keyName, { maxLength: 4 }) as fc.Arbitrary<Wild>,
  command: fc.oneof(fc.constantFrom<Wild>('cat', 'true', 'no-such-program'), nastyString as fc.Arbitrary<Wild>),
};

/** Waits a tool does when not told otherwise (wait_event names its own timeoutMs): a fuzz case bounds them. */
const WAIT_DEFAULTS = { timeout: FUZZ_WAIT_MS };
const TOOL_WAIT_DEFAULTS: Record<string, Record<string, number>> = { wait_event: { timeoutMs: FUZZ_WAIT_MS } };

/** A query string from arbitrary pairs: the route's own names with edge values, and strangers. */
function queryOf(shape: Record<string, z.ZodType>): fc.Arbitrary<string> {
  const names = Object.keys(shape);
  const pair = fc.tuple(
    names.length ? fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...names) }, { weight: 1, arbitrary: nastyKey }) : nastyKey,
    fc.oneof(fc.constantFrom('', '0', '1', '50', '-1', '1e400', 'true', 'false', 'NaN', '99999999999', '0x10', ' 5'), nastyString),
  );
  return fc.array(pair, { maxLength: 4 }).map((pairs) => {
    const q = new URLSearchParams();
    for (const [k, v] of pairs) q.append(k, TIMING.has(k) && Number(v) > FUZZ_WAIT_MS ? String(FUZZ_WAIT_MS) : v);
    const s = q.toString();
    return s ? `?${s}` : '';
  });
}
const TIMING = new Set(['waitMs', 'timeout', 'idleMs']);

/** One REST request: a route of the table, a path that may be wrong, and a body or query that may be too. */
const restRequest = fc.constantFrom(...REST_ROUTES).chain((route) => {
  const input = route.input.shape as Record<string, z.ZodType>;
  const path = fc.tuple(pathSelector, route.rest.from === 'query' ? queryOf(input) : fc.constant('')).map(([id, q]) => route.rest.path.replace(':id', id) + q);
  const body: fc.Arbitrary<string | undefined> =
    route.rest.from === 'body'
      ? fc.oneof(
          { weight: 8, arbitrary: objectOf(input, FIELDS).map((b) => jsonText(boundWaits(b))) },
          { weight: 1, arbitrary: wildJson.map(jsonText) },
          { weight: 1, arbitrary: fc.constantFrom('', '{', 'null', '[]', '\u0000', '{"a":1}{"b":2}') },
        )
      : fc.constant(undefined);
  return fc.record({
    verb: fc.oneof({ weight: 12, arbitrary: fc.constant(route.rest.verb) }, { weight: 1, arbitrary: fc.constantFrom('PUT', 'PATCH', 'GET') }),
    path,
    body,
  });
});

/** The bystander, through HTTP this time: the host still answers /health and a read of it. */
async function assertServed(): Promise<void> {
  const health = await request(fh.http.port, 'GET', '/health', { token: fh.http.token, timeoutMs: ANSWER_MS });
  assert.equal(health.status, 200);
  await fh.afterBatch({ fresh: true }); // a case may have signalled the target (POST …/signal)
}

describe('fuzz: REST', () => {
  test('every request gets the envelope with a 2xx/4xx status, never a 500; the host serves on', { timeout: 600_000 }, async () => {
    await fuzz(
      [fc.array(restRequest, { minLength: 1, maxLength: 4 })],
      async (batch) => {
        for (const r of batch) {
          const path = fillPath(r.path);
          const body = r.body === undefined ? undefined : fillText(r.body, fh.placeholders);
          const what = `${r.verb} ${path} ${body?.slice(0, 200) ?? ''}`;
          const res = await request(fh.http.port, r.verb, path, { token: fh.http.token, body, timeoutMs: ANSWER_MS });
          assert.ok(REST_STATUSES.has(res.status), `${what}: status ${res.status} ${res.text.slice(0, 300)}`);
          assert.ok(res.json && typeof res.json === 'object', `${what}: not JSON: ${res.text.slice(0, 200)}`);
          if (res.status === 200) assert.equal(res.json.ok, true, what);
          else {
            assert.equal(res.json.ok, false, what);
            assert.equal(typeof res.json.error?.code, 'string', what);
            assert.ok(res.json.error.message.length > 0, what);
          }
        }
        await assertServed();
      },
      SHORT_RUNS,
      60_000,
    );
  });
});

/** One message on the stream WebSocket: the stream's message types with wrong fields, hostile JSON, raw text or bytes. */
const streamMessage: fc.Arbitrary<string | Buffer> = fc
  .oneof(
    {
      weight: 6,
      arbitrary: fc
        .record(
          {
            type: fc.oneof({ weight: 6, arbitrary: fc.constantFrom<Wild>('write', 'resize') }, { weight: 1, arbitrary: wildJson }),
            data: fc.oneof(nastyString as fc.Arbitrary<Wild>, wildJson),
            submit: fc.oneof(fc.boolean() as fc.Arbitrary<Wild>, wildJson),
            cols: fc.oneof(fc.integer({ min: 2, max: 300 }) as fc.Arbitrary<Wild>, wildJson),
            rows: fc.oneof(fc.integer({ min: 1, max: 100 }) as fc.Arbitrary<Wild>, wildJson),
          },
          { requiredKeys: ['type'] },
        )
        .map((r) => jsonText(new Entries(Object.entries(r) as Array<[string, Wild]>))),
    },
    { weight: 1, arbitrary: wildJson.map(jsonText) },
    { weight: 1, arbitrary: nastyString },
    { weight: 1, arbitrary: fc.uint8Array({ minLength: 1, maxLength: 32 }).map((b) => Buffer.from(b)) },
  )
  .filter((m) => m.length <= MAX_MESSAGE_CHARS); // past the frame limit the stream closes with 1009 (request-limits)

describe('fuzz: the stream WebSocket', () => {
  test('any message: the stream stays open and well-formed, input still works, the host serves on', { timeout: 600_000 }, async () => {
    let probe = 0;
    await fuzz(
      [fc.array(streamMessage, { minLength: 1, maxLength: 6 }), pathSelector],
      async (batch, selector) => {
        // A stream of a path that may be malformed: refused or closed with 4004, never a crash.
        const stray = await withTimeout(
          wsConnect(fh.http.port, `/sessions/${fillPath(selector)}/stream`, { token: fh.http.token }),
          ANSWER_MS,
          'a stream upgrade',
        );
        if (stray.kind === 'open') await withTimeout(stray.client.close(), ANSWER_MS, 'closing a stray stream');

        const opened = await wsConnect(fh.http.port, `/sessions/${fh.target.id}/stream`, { token: fh.http.token });
        assert.equal(opened.kind, 'open');
        const ws = (opened as { client: WsClient }).client;
        try {
          for (const m of batch) ws.ws.send(m, { binary: typeof m !== 'string' });
          const mark = `probe-${++probe}-ok`;
          ws.send({ type: 'write', data: mark });
          await ws.streamUntil((t) => t.includes(mark), 'the probe to echo', ANSWER_MS);
          for (const m of ws.received) {
            assert.ok(
              m && typeof m === 'object' && ['data', 'error', 'snapshot'].includes(m.type),
              `an unexpected message: ${JSON.stringify(m).slice(0, 200)}`,
            );
            if (m.type === 'error') assert.ok(typeof m.message === 'string' && m.message.length > 0);
          }
        } finally {
          await ws.close();
        }
        await assertServed();
      },
      SHORT_RUNS,
      60_000,
    );
  });
});

/** A value a browser or a forger might put in a link's `?token=` or the page cookie: real ones (spent or not), the host's, junk. */
const credential: fc.Arbitrary<string> = fc.oneof(
  { weight: 2, arbitrary: fc.constantFrom('@link', '@spent', '@reusable', '@host') },
  { weight: 2, arbitrary: nastyString },
  { weight: 1, arbitrary: fc.constantFrom('', '%', '%zz', '%E0%A4%A', 'a;b', 'x=y', '"quoted"') },
);

describe('fuzz: links and page cookies', () => {
  test(
    'any link token and cookie on any page: a 303, 401, 403, 404 or 405 (HTML for a browser), never the host token in a cookie or an answer; the host serves on',
    { timeout: 600_000 },
    async () => {
      const session = fh.host.registry.get(fh.target.id)!;
      const spent = session && fh.http.tokens.share(session, 'view', 600).token;
      const spentUrl = new URL(fh.http.tokens.share(session, 'view', 600).url);
      await request(fh.http.port, 'GET', spentUrl.pathname + spentUrl.search);
      await fuzz(
        [
          fc.constantFrom(
            '/sessions/@target/view',
            '/sessions/@target-name/view',
            '/view/view.js',
            '/replay',
            `/replay/${'0'.repeat(32)}`,
            '/replay/assets/replay.js',
            '/sessions/%zz/view',
          ),
          fc.option(credential, { nil: undefined }),
          fc.option(credential, { nil: undefined }),
          fc.boolean(),
          fc.constantFrom('GET', 'HEAD', 'POST'),
        ],
        async (pagePath, query, cookie, browser, method) => {
          const real = (v: string) =>
            v === '@link'
              ? fh.http.tokens.share(session, 'input', 600).token
              : v === '@spent'
                ? spent
                : v === '@reusable'
                  ? fh.http.tokens.share(session, 'view', 600, true).token
                  : v === '@host'
                    ? fh.http.token
                    : v;
          const headers: Record<string, string> = browser ? { accept: 'text/html' } : {};
          // Percent-encoded as the host decodes it (a raw control character is no valid header at all).
          if (cookie !== undefined) headers.cookie = `shared_pty_${fh.http.port}=${percentEncode(real(cookie))}`;
          const path = fillPath(pagePath) + (query !== undefined ? `?token=${percentEncode(real(query))}` : '');
          const r = await request(fh.http.port, method, path, { headers, timeoutMs: ANSWER_MS });
          assert.ok([200, 303, 401, 403, 404, 405].includes(r.status), `${method} ${path}: ${r.status} ${r.text.slice(0, 200)}`);
          const setCookie = String(r.headers['set-cookie'] ?? '');
          assert.ok(!setCookie.includes(fh.http.token) && !r.text.includes(fh.http.token), 'the host token never comes back');
          if (r.status === 303)
            assert.match(setCookie, new RegExp(`^shared_pty_${fh.http.port}=[A-Za-z0-9_-]{43}; HttpOnly; SameSite=Strict; Path=/; Max-Age=\\d+$`));
          if (browser && method === 'GET' && (r.status === 401 || r.status === 403)) assert.match(String(r.headers['content-type']), /^text\/html/);
          await assertServed();
        },
        SHORT_RUNS,
      );
    },
  );
});

/** The tools and their arguments, from the table (what `/mcp` serves). */
const TOOLS = (METHODS as readonly MethodSpec[]).flatMap((m) => {
  if (!m.mcp) return [];
  const own =
    m.mcp.input?.shape ?? Object.fromEntries(Object.entries(m.params.shape).filter(([k]) => !(m.mcp!.omit as readonly string[] | undefined)?.includes(k)));
  const shape: Record<string, z.ZodType> = m.target === 'session' ? { session: sessionSelector, ...own } : own;
  return [{ tool: m.mcp.tool, shape }];
});

const mcpCall = fc.constantFrom(...TOOLS).chain(({ tool, shape }) =>
  fc.tuple(
    fc.oneof({ weight: 12, arbitrary: fc.constant<Wild>(tool) }, { weight: 1, arbitrary: nastyString as fc.Arbitrary<Wild> }),
    fc.oneof(
      {
        weight: 12,
        arbitrary: objectOf(shape, FIELDS).map((a) => boundWaits(a, TOOL_WAIT_DEFAULTS[tool] ?? WAIT_DEFAULTS, tool === 'wait_for' ? ['timeout'] : [])),
      },
      { weight: 1, arbitrary: wildJson },
    ),
  ),
);

describe('fuzz: MCP tool arguments over /mcp', () => {
  test('every tool call gets a result (or a tool error) or a JSON-RPC error with a protocol code; the host serves on', { timeout: 600_000 }, async () => {
    let id = 0;
    await fuzz(
      [fc.array(mcpCall, { minLength: 1, maxLength: 4 })],
      async (batch) => {
        for (const [name, args] of batch) {
          const body = fillText(
            jsonText(
              new Entries([
                ['jsonrpc', '2.0'],
                ['id', ++id],
                ['method', 'tools/call'],
                [
                  'params',
                  new Entries([
                    ['name', name],
                    ['arguments', args],
                  ]),
                ],
              ]),
            ),
            fh.placeholders,
          );
          const res = await request(fh.http.port, 'POST', '/mcp', {
            token: fh.http.token,
            body,
            headers: { accept: 'application/json, text/event-stream' },
            timeoutMs: ANSWER_MS,
          });
          const what = `tools/call ${body.slice(0, 300)}`;
          assert.ok(res.json, `${what}: status ${res.status}, not JSON: ${res.text.slice(0, 200)}`);
          if (res.json.error) {
            assert.ok([-32600, -32601, -32602, -32700].includes(res.json.error.code), `${what}: ${JSON.stringify(res.json.error)}`);
          } else {
            assert.equal(res.status, 200, what);
            const r = res.json.result;
            assert.ok(Array.isArray(r?.content) && r.content.length > 0, `${what}: ${res.text.slice(0, 300)}`);
            if (r.isError) assert.doesNotMatch(r.content[0].text, /Internal error|\n\s+at /, `${what}: ${r.content[0].text.slice(0, 300)}`);
          }
        }
        await assertServed();
      },
      SHORT_RUNS,
      60_000,
    );
  });
});

/** What an MCP answer may be: a result (maybe a tool error, never an internal one) or a protocol error. */
function assertMcpAnswer(what: string, json: any): void {
  if (json.error) {
    assert.ok([-32600, -32601, -32602, -32700].includes(json.error.code), `${what}: ${JSON.stringify(json.error)}`);
    return;
  }
  const r = json.result;
  assert.ok(Array.isArray(r?.content) && r.content.length > 0, `${what}: ${JSON.stringify(json).slice(0, 300)}`);
  if (r.isError) assert.doesNotMatch(r.content[0].text, /Internal error|\n\s+at /, `${what}: ${r.content[0].text.slice(0, 300)}`);
}

describe('fuzz: MCP tool arguments over stdio (shared-pty mcp)', () => {
  test('every tool call over stdio gets a result (or a tool error) or a protocol error; the relay and the host serve on', { timeout: 600_000 }, async () => {
    const child = spawn(process.execPath, [CLI, 'mcp'], {
      cwd: REPO_ROOT,
      env: { ...process.env, SHARED_PTY_DIR: fh.host.runtimeDir },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const waiting = new Map<number, (msg: any) => void>();
    let buffered = '';
    let exited = false;
    child.on('exit', () => (exited = true));
    child.stderr.resume();
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      buffered += d;
      for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        const msg = JSON.parse(line);
        if (typeof msg.id === 'number') waiting.get(msg.id)?.(msg);
      }
    });
    const answer = (id: number, line: string) => {
      const got = new Promise<any>((resolve) => waiting.set(id, resolve));
      child.stdin.write(line + '\n');
      return withTimeout(got, ANSWER_MS, `the stdio answer to ${line.slice(0, 200)}`).finally(() => waiting.delete(id));
    };
    try {
      const init = await answer(
        0,
        JSON.stringify({
          jsonrpc: '2.0',
          id: 0,
          method: 'initialize',
          params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'fuzz', version: '0' } },
        }),
      );
      assert.ok(init.result?.serverInfo, JSON.stringify(init));
      child.stdin.write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) + '\n');
      let id = 0;
      await fuzz(
        [fc.array(mcpCall, { minLength: 1, maxLength: 4 })],
        async (batch) => {
          for (const [name, args] of batch) {
            const n = ++id;
            const line = fillText(
              jsonText(
                new Entries([
                  ['jsonrpc', '2.0'],
                  ['id', n],
                  ['method', 'tools/call'],
                  [
                    'params',
                    new Entries([
                      ['name', name],
                      ['arguments', args],
                    ]),
                  ],
                ]),
              ),
              fh.placeholders,
            );
            assertMcpAnswer(`stdio tools/call ${line.slice(0, 300)}`, await answer(n, line));
          }
          assert.equal(exited, false, 'shared-pty mcp is still running');
          await assertServed();
        },
        SHORT_RUNS,
        60_000,
      );
    } finally {
      child.kill();
      // A per-user host the relay may have started for open_session ends with the test.
      for (const r of readLiveRecords(fh.host.runtimeDir)) if (r.kind === 'daemon') process.kill(r.pid, 'SIGTERM');
    }
  });
});

/** What a client without a token may leave open: nothing, part of a request, a whole one without a token, garbage. */
const unauthenticatedOpening: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constant('') },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      'GET /health HTTP/1.1\r\n',
      'GET /health HTTP/1.1\r\nHost: 127.0.0.1:@port\r\n',
      'POST /sessions HTTP/1.1\r\nHost: 127.0.0.1:@port\r\nContent-Length: 100\r\n\r\n{"co',
    ),
  },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      'GET /health HTTP/1.1\r\nHost: 127.0.0.1:@port\r\n\r\n',
      'GET /sessions/x/stream HTTP/1.1\r\nHost: 127.0.0.1:@port\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n',
      'OPTIONS /sessions HTTP/1.1\r\nHost: 127.0.0.1:@port\r\n\r\n',
    ),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 40 }).map((b) => Buffer.from(b).toString('latin1')) },
);

/** Opens a connection and sends `opening` (the port filled in); resolves once it is connected. */
function openUnauthenticated(port: number, opening: string): Promise<net.Socket> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.on('error', () => undefined); // the host may close it first: that is allowed
    socket.once('connect', () => {
      if (opening) socket.write(Buffer.from(opening.replace(/@port/g, String(port)), 'latin1'));
      resolve(socket);
    });
    socket.once('close', () => resolve(socket));
  });
}

describe('fuzz: connections without a token', () => {
  test('whatever clients without a token hold open, an authenticated request is served', { timeout: 600_000 }, async () => {
    await fuzz(
      // How many (up to past the old bound of 320 that reset everyone), each opening as one of a few.
      [fc.integer({ min: 0, max: 400 }), fc.array(unauthenticatedOpening, { minLength: 1, maxLength: 12 })],
      async (count, openings) => {
        const port = fh.http.port;
        const sockets = await Promise.all(Array.from({ length: count }, (_, i) => openUnauthenticated(port, openings[i % openings.length])));
        try {
          const health = await request(port, 'GET', '/health', { token: fh.http.token, timeoutMs: ANSWER_MS });
          assert.equal(health.status, 200, health.text);
        } finally {
          for (const s of sockets) s.destroy();
        }
      },
      10,
    );
    await assertServed();
  });
});
