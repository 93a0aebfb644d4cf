// Property-based fuzzing of the JSON-RPC dispatcher on its three doors: a session's own socket,
// the host control socket and `/rpc` (WebSocket). Each case is a batch of messages — requests
// shaped like a method's params but wrong in places, hostile JSON values, raw bytes — sent one at
// a time; every one must get a well-formed answer (a result of the method's schema, or an error
// with a protocol code) within a bound, and after the batch a bystander on another connection
// must still be served. See test/helpers/fuzz.ts for seeds and long runs (`npm run fuzz`).
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import * as net from 'node:net';
import assert from 'node:assert/strict';
import type { z } from 'zod';
import { METHODS } from '../../../../src/core/methods/table';
import { selector as sessionSelector } from '../../../../src/core/methods/schemas';
import type { MethodSpec } from '../../../../src/core/methods/spec';
import {
  boundWaits,
  Entries,
  jsonText,
  keyName,
  nastyString,
  objectOf,
  RawJson,
  rawLine,
  wildJson,
  FUZZ_WAIT_MS,
  type Wild,
} from '../../../helpers/arbitraries';
import { fuzz } from '../../../helpers/fuzz';
import { fillText, FuzzHost } from '../../../helpers/fuzz-host';
import { LineClient } from '../../../helpers/protocol';
import { assertAnswer, hostView, socketWire, webSocketWire, type Wire } from '../../../helpers/fuzz-wire';
import { clientsClosed } from '../../../helpers/host';
import { ensureNoDisposablesAreLeakedBySuite } from '../../../helpers/leak-tracker';

/** Cases per door in `npm test` (a few seconds each). */
const SHORT_RUNS = 60;
/** Longest a single answer may take: every wait of a case is bounded by FUZZ_WAIT_MS. */
const ANSWER_MS = 15_000;
/** Messages over this are the line limit's business (tested on its own), not the dispatcher's. */
const MAX_MESSAGE_CHARS = 900_000;

type Door = 'session' | 'control' | 'rpc';

let fh: FuzzHost;

before(async () => {
  // Each session on a TCP port too: the port's first-line rule is fuzzed below.
  fh = await FuzzHost.start({ sessionTcp: true });
});

after(async () => {
  await fh?.close();
});
// Once the shared host is closed, nothing the suite made is left (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedBySuite(clientsClosed);

/** A selector: usually the target (by id, name or prefix), sometimes nothing that exists. */
const selector: fc.Arbitrary<Wild> = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('@target', '@target-name', '@target-prefix') },
  { weight: 1, arbitrary: fc.constantFrom('no-such-session', '') },
  { weight: 1, arbitrary: nastyString },
);

/** Field values a fuzz case picks itself, so its requests reach past validation into the handlers. */
const FIELDS = {
  session: selector,
  key: keyName,
  // Only the sandbox's programs exist; anything else must be a clear error.
  command: fc.oneof(fc.constantFrom('cat', 'true', 'no-such-program', './', '/'), nastyString),
  cwd: fc.oneof(fc.constantFrom('.', '/nonexistent', '/'), nastyString),
  regex: fc.oneof(fc.constantFrom('(a+)+$', '(', '[', '.*', '\\', '(?<n>x)\\k<n>', 'a{1,99999}'), nastyString),
};

/** Waits a method does when not told otherwise: a fuzz case bounds them. */
const WAIT_DEFAULTS: Record<string, Record<string, number>> = {
  'pty/send': { timeout: FUZZ_WAIT_MS },
  'pty/wait': { timeout: FUZZ_WAIT_MS },
  'pty/waitEvent': { timeoutMs: FUZZ_WAIT_MS },
};

/** Waits with no maximum: a longer one is a day's (socket-pty's), not an error. */
const NO_MAXIMUM: Record<string, readonly string[]> = { 'pty/wait': ['timeout'] };

/** A value of an envelope member: usually `good`, now and then hostile, rarely missing. */
function member(good: fc.Arbitrary<Wild>, hostile: fc.Arbitrary<Wild> = wildJson): fc.Arbitrary<Wild | undefined> {
  return fc.oneof({ weight: 24, arbitrary: good }, { weight: 1, arbitrary: hostile }, { weight: 1, arbitrary: fc.constant(undefined) });
}

/** A request to one method of the table: an envelope that is usually right around params that often are not. */
function requestTo(spec: MethodSpec, door: Door): fc.Arbitrary<Wild> {
  // On the control socket and /rpc a session method also names its session.
  const shape: Record<string, z.ZodType> =
    door !== 'session' && spec.target === 'session' ? { ...spec.params.shape, session: sessionSelector } : spec.params.shape;
  const defaults = WAIT_DEFAULTS[spec.name];
  return fc
    .tuple(
      member(fc.constant('2.0')),
      member(fc.oneof(fc.integer(), fc.string({ maxLength: 8 }))),
      member(fc.constant(spec.name), nastyString),
      member(objectOf(shape, FIELDS)),
    )
    .map(([jsonrpc, id, method, params]) => {
      // Calls that wait by default (a day at most) are bounded, with or without params.
      const bounded =
        params instanceof Entries || params instanceof RawJson
          ? boundWaits(params, defaults, NO_MAXIMUM[spec.name])
          : params === undefined && defaults
            ? boundWaits(new Entries([]), defaults, NO_MAXIMUM[spec.name])
            : params;
      const members: Array<[string, Wild | undefined]> = [
        ['jsonrpc', jsonrpc],
        ['id', id],
        ['method', method],
        ['params', bounded],
      ];
      return new Entries(members.filter((m): m is [string, Wild] => m[1] !== undefined)) as Wild;
    });
}

/** One message of a batch: a request to some method, a hostile value, or raw bytes. */
function message(door: Door): fc.Arbitrary<string | Buffer> {
  const methods = (METHODS as readonly MethodSpec[]).filter((m) => door !== 'session' || m.target === 'session');
  const asText = (w: Wild) => {
    const t = jsonText(w);
    return t.length > MAX_MESSAGE_CHARS ? '{"jsonrpc":"2.0","id":"too-big","method":"pty/status"}' : t;
  };
  return fc.oneof(
    {
      weight: 10,
      arbitrary: fc
        .constantFrom(...methods)
        .chain((m) => requestTo(m, door))
        .map(asText),
    },
    { weight: 1, arbitrary: wildJson.map(asText) },
    { weight: 1, arbitrary: rawLine },
  );
}

/** The connection of a door (a session's socket is the target's). */
async function open(door: Door): Promise<Wire> {
  if (door === 'session') {
    await fh.restore({ fresh: true }); // the last message may have ended the target, or given it a lease
    return socketWire(fh.target.address);
  }
  if (door === 'control') return socketWire(fh.host.controlAddress);
  return webSocketWire(`ws://127.0.0.1:${fh.http.port}/rpc`, fh.http.token);
}

/** Sends a batch one message at a time; each must be answered well; then the bystander must be served. */
async function runBatch(door: Door, batch: Array<string | Buffer>): Promise<void> {
  let wire = await open(door);
  try {
    for (const raw of batch) {
      const data = typeof raw === 'string' ? fillText(raw, fh.placeholders) : raw;
      const request = hostView(data, door !== 'rpc');
      const params = (request as { params?: { session?: unknown } } | undefined)?.params;
      // A unique prefix may happen to name the bystander: a case must not end its witness.
      if (params && typeof params === 'object' && fh.namesBystander(params.session)) continue;
      if (wire.closed) wire = await open(door);
      wire.send(data);
      // A blank line on a socket is skipped, unanswered: an answer to it would come before the next one's.
      if (door !== 'rpc' && isBlank(data)) continue;
      const what = `${door}: ${String(data).slice(0, 300)}`;
      const res = await wire.nextResponse(ANSWER_MS, what);
      assertAnswer(request, res, what);
      // pty/kill on a session's own socket ends the session, and its socket with it.
      if (door === 'session' && (request as { method?: unknown } | undefined)?.method === 'pty/kill' && 'result' in res) {
        await fh.restore({ fresh: true });
        wire.close();
        wire = await open(door);
      }
    }
  } finally {
    wire.close();
  }
  await fh.afterBatch({ fresh: true });
}

/** Spaces, tabs and carriage returns alone: a blank line between messages on a socket. */
function isBlank(data: string | Buffer): boolean {
  return [...Buffer.from(data)].every((b) => b === 0x20 || b === 0x09 || b === 0x0d);
}

describe('fuzz: JSON-RPC', () => {
  for (const door of ['session', 'control', 'rpc'] as const) {
    test(
      `${door === 'rpc' ? '/rpc (WebSocket)' : `the ${door} socket`}: every message gets a clear error or a correct answer; the bystander is served`,
      { timeout: 600_000 },
      async () => {
        await fuzz([fc.array(message(door), { minLength: 1, maxLength: 6 })], (batch) => runBatch(door, batch), SHORT_RUNS, 60_000);
      },
    );
  }
});

/** First lines an HTTP client sends (a browser's `fetch`, curl): a request line or a header. */
const httpFirstLine: fc.Arbitrary<string> = fc.oneof(
  fc
    .tuple(
      fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'HEAD', 'PATCH', 'CONNECT', 'PRI'),
      fc.webPath(),
      fc.constantFrom('HTTP/1.1', 'HTTP/1.0', 'HTTP/2.0'),
    )
    .map(([verb, p, version]) => `${verb} ${p || '/'} ${version}\r`),
  fc.tuple(fc.constantFrom('Host', 'host', 'HOST', 'Origin', 'Content-Type', 'Upgrade'), fc.string({ maxLength: 30 })).map(([k, v]) => `${k}: ${v}\r`),
);

/** A first line that is a JSON-RPC message, harmless to the target, possibly wrong in its members. */
const jsonRpcFirstLine: fc.Arbitrary<string> = fc
  .tuple(member(fc.constant('2.0')), fc.constantFrom('pty/status', 'pty/info', 'pty/read', 'no/such'), fc.oneof(fc.integer(), fc.constant('first')))
  .map(([jsonrpc, method, id]) =>
    jsonText(
      new Entries([
        ['jsonrpc', jsonrpc ?? null],
        ['id', id],
        ['method', method],
      ]),
    ),
  );

/** Any first line for the TCP port; never one of whitespace only (those are skipped, as between messages). */
const tcpFirstLine: fc.Arbitrary<Buffer> = fc
  .oneof(
    { weight: 3, arbitrary: httpFirstLine.map((t) => Buffer.from(t)) },
    { weight: 2, arbitrary: jsonRpcFirstLine.map((t) => Buffer.from(t)) },
    { weight: 1, arbitrary: wildJson.map((w) => Buffer.from(jsonText(w))) },
    { weight: 1, arbitrary: rawLine },
  )
  .map((b) => Buffer.from(b.filter((x) => x !== 0x0a)))
  .filter((b) => b.some((x) => ![0x20, 0x09, 0x0d].includes(x)));

/** What the port must take as a JSON-RPC message: JSON (valid UTF-8) of an object with a `jsonrpc` member. */
function isJsonRpcMessage(line: Buffer): boolean {
  try {
    const v = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(line));
    // A request or a notification of JSON-RPC 2.0: an invalid one is not served either.
    return typeof v === 'object' && v !== null && !Array.isArray(v) && v.jsonrpc === '2.0' && typeof v.method === 'string';
  } catch {
    return false;
  }
}

/**
 * The code a first line that is not JSON-RPC gets, as on later lines: -32600 for JSON (a batch,
 * `null`, an object without `method`: JSON, just not a request), -32700 for anything else.
 */
function refusalCode(line: Buffer): number {
  try {
    JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(line));
    return -32600;
  } catch {
    return -32700;
  }
}

/** The id a refusal carries: the line's own when it is a JSON object with a string or number id, else null. */
function refusalId(line: Buffer): unknown {
  try {
    const v: unknown = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(line));
    const id = typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as { id?: unknown }).id : undefined;
    return typeof id === 'string' || typeof id === 'number' ? id : null;
  } catch {
    return null;
  }
}

let caseNumber = 0;

/**
 * One connection to the target's TCP port: `first`, then a `pty/write` of a marker. A first line
 * that is JSON-RPC: the connection is served (the marker's write is answered). Any other: one
 * error line (refusalCode's, with refusalId's id), the connection closed, and the marker never typed.
 */
async function runFirstLine(first: Buffer): Promise<void> {
  await fh.restore({ fresh: true });
  const port = Number(fh.target.tcp!.split(':').pop());
  const marker = `tcpmark${++caseNumber}x`;
  const write = JSON.stringify({ jsonrpc: '2.0', id: 'marker', method: 'pty/write', params: { action: { text: `${marker}\n` } } });
  const socket = net.connect(port, '127.0.0.1');
  let text = '';
  const closed = new Promise<void>((r) => socket.once('close', () => r()));
  socket.on('error', () => undefined);
  socket.on('data', (c: Buffer) => (text += c.toString('utf8')));
  socket.write(Buffer.concat([first, Buffer.from(`\n${write}\n`)]));
  const what = `first line ${JSON.stringify(first.toString('latin1')).slice(0, 200)}`;
  try {
    if (isJsonRpcMessage(first)) {
      const end = Date.now() + ANSWER_MS;
      while (!text.split('\n').some((l) => l.includes('"id":"marker"'))) {
        assert.ok(Date.now() < end, `${what}: the marker's write was not answered; got ${text.slice(0, 300)}`);
        await new Promise((r) => setTimeout(r, 10));
      }
      return;
    }
    await closed;
    const lines = text.split('\n').filter((l) => l.trim() !== '');
    assert.equal(lines.length, 1, `${what}: ${text.slice(0, 300)}`);
    const answer = JSON.parse(lines[0]);
    assert.equal(answer.id, refusalId(first), what);
    assert.equal(answer.error.code, refusalCode(first), what);
    // Input is taken in order: a probe typed after it shows whether the marker ever was.
    const probe = await LineClient.connect({ port });
    try {
      await probe.result('pty/write', { action: { text: `probe${caseNumber}\n` } });
      assert.equal((await probe.result('pty/wait', { match: `probe${caseNumber}`, timeout: ANSWER_MS })).matched, true);
      const out = await probe.result('pty/output', { since: 0, strip: true });
      assert.ok(!String(out.data).includes(marker), `${what}: the marker was typed`);
    } finally {
      probe.close();
    }
  } finally {
    socket.destroy();
  }
}

describe("fuzz: the per-session TCP port's first line", () => {
  test(
    'a first line that is not a JSON-RPC message closes the connection with one error, typing nothing; one that is, is served',
    { timeout: 600_000 },
    async () => {
      await fuzz([tcpFirstLine], (first) => runFirstLine(first), SHORT_RUNS, 60_000);
      await fh.afterBatch();
    },
  );
});
