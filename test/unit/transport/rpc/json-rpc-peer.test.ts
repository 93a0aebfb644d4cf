// The JSON-RPC peer's limits, once, through every transport that carries it: the control socket
// (one message per line), the WebSocket `/rpc` (one per frame) and the in-memory linked pair
// (docs/protocol.md#2-framing). An in-process host with real sessions (node-pty); raw clients, so
// what is checked is what goes over the wire.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as net from 'node:net';
import WebSocket from 'ws';
import type { Session } from '../../../../src/core/session/session';
import { JsonRpcPeer, REQUEST_HIGH_WATER_BYTES, type MessageWire } from '../../../../src/transport/rpc/json-rpc-peer';
import { linkedPair, type MemoryWire } from '../../../../src/transport/rpc/linked-pair';
import { TablePeer } from '../../../../src/transport/rpc/table-peer';
import { TEST_WRITER, until } from '../../../helpers/host';
import { toDisposable } from '../../../../src/core/base/lifecycle';
import { startHttpHost, type HttpHost } from '../../../helpers/http';
import { ensureNoDisposablesAreLeakedBySuite } from '../../../helpers/leak-tracker';

/** Per-test bound: generous for a noisy machine, finite so a hang fails instead of blocking. */
const TEST_TIMEOUT = 120_000;
/** The host's in-flight limit here: low, so a test fills it with a few waits. */
const MAX_IN_FLIGHT = 3;
/** How long a test waits for one message before it fails. */
const MESSAGE_MS = 30_000;
/** Pipelined requests in the ordering case: more than the peer starts in one event-loop turn (16). */
const PIPELINED = 40;
/** `pty/output` reads of a full ring (about 1 MiB each) a slow reader asks for: several times the requests' high-water mark. */
const BIG_ANSWERS = 24;

type Msg = Record<string, any>;

/** Messages received, and the waits for them. */
class Inbox {
  private readonly _queue: Msg[] = [];
  private readonly _waiters: Array<{ pred: (m: Msg) => boolean; resolve(m: Msg): void }> = [];
  count = 0;

  push(m: Msg): void {
    this.count++;
    const i = this._waiters.findIndex((w) => w.pred(m));
    if (i >= 0) this._waiters.splice(i, 1)[0].resolve(m);
    else this._queue.push(m);
  }

  next(pred: (m: Msg) => boolean, what: string): Promise<Msg> {
    const i = this._queue.findIndex(pred);
    if (i >= 0) return Promise.resolve(this._queue.splice(i, 1)[0]);
    return new Promise((resolve, reject) => {
      const w = {
        pred,
        resolve: (m: Msg) => {
          clearTimeout(timer);
          resolve(m);
        },
      };
      const timer = setTimeout(() => {
        this._waiters.splice(this._waiters.indexOf(w), 1);
        reject(new Error(`timed out waiting for ${what}`));
      }, MESSAGE_MS);
      this._waiters.push(w);
    });
  }
}

/** A raw client of one transport: sends text as one message, reads messages, can stop reading. */
interface Raw {
  readonly inbox: Inbox;
  send(text: string): void;
  pauseReading(): void;
  resumeReading(): void;
  close(): void;
}

/** A client peer of the linked pair that keeps every message as it came (errors with id null too). */
class RawPeer extends JsonRpcPeer {
  readonly inbox = new Inbox();
  override receive(message: string | Uint8Array): void {
    this.inbox.push(JSON.parse(String(message)));
  }
}

/** A host with the real limits, and one whose in-flight limit is MAX_IN_FLIGHT; a `cat` on each. */
let real: HttpHost;
let limited: HttpHost;
let h: HttpHost;
let cat: Session;
const cats = new Map<HttpHost, Session>();
let fulls = 0;

before(async () => {
  real = await startHttpHost();
  limited = await startHttpHost([], { maxInFlightRequests: MAX_IN_FLIGHT });
  for (const host of [real, limited]) cats.set(host, await host.host.createSession({ command: 'cat', name: 'cat' }));
});

after(async () => {
  await real?.close();
  await limited?.close();
});
// Once the shared host is closed, nothing the suite made is left (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedBySuite();

/** Runs a test's body against `host` (what the clients below connect to). */
function on(host: () => HttpHost, body: () => Promise<void>): () => Promise<void> {
  return () => {
    h = host();
    cat = cats.get(h)!;
    return body();
  };
}

async function socketClient(): Promise<Raw> {
  const sock = net.connect(h.host.controlAddress.slice('unix:'.length));
  await new Promise<void>((resolve, reject) => {
    sock.once('connect', resolve);
    sock.once('error', reject);
  });
  const inbox = new Inbox();
  let buffered = '';
  sock.setEncoding('utf8');
  sock.on('data', (chunk: string) => {
    buffered += chunk;
    for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
      const line = buffered.slice(0, nl).trim();
      buffered = buffered.slice(nl + 1);
      if (line) inbox.push(JSON.parse(line));
    }
  });
  sock.on('error', () => undefined);
  return { inbox, send: (t) => void sock.write(t + '\n'), pauseReading: () => sock.pause(), resumeReading: () => sock.resume(), close: () => sock.destroy() };
}

async function webSocketClient(): Promise<Raw> {
  const ws = new WebSocket(`ws://127.0.0.1:${h.port}/rpc`, { headers: { authorization: `Bearer ${h.token}` } });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  const inbox = new Inbox();
  ws.on('message', (raw) => inbox.push(JSON.parse(raw.toString())));
  ws.on('error', () => undefined);
  return { inbox, send: (t) => ws.send(t), pauseReading: () => ws.pause(), resumeReading: () => ws.resume(), close: () => ws.terminate() };
}

/** The last linked pair made, for a look at its host end's wire. */
let lastHostWire: MemoryWire | undefined;

async function pairClient(): Promise<Raw> {
  const pair = linkedPair(
    (w) =>
      new TablePeer(w, {
        mode: { kind: 'control' },
        services: h.host,
        maxInFlightRequests: h === limited ? MAX_IN_FLIGHT : undefined,
        link: { origin: 'script', transport: 'control' },
      }),
    (w) => new RawPeer(w),
  );
  const [hostWire, clientWire] = pair.wires;
  lastHostWire = hostWire;
  return {
    inbox: pair.b.inbox,
    send: (t) => clientWire.send(t),
    pauseReading: () => clientWire.pauseInput(),
    resumeReading: () => clientWire.resumeInput(),
    close: () => pair.dispose(),
  };
}

const TRANSPORTS = [
  { name: 'the control socket', open: socketClient },
  { name: 'the WebSocket /rpc', open: webSocketClient },
  { name: 'the in-memory linked pair', open: pairClient },
] as const;

function request(id: number | string, method: string, params: Record<string, unknown> = {}): string {
  return JSON.stringify({ jsonrpc: '2.0', id, method, params });
}

for (const transport of TRANSPORTS) {
  describe(`the JSON-RPC peer over ${transport.name}`, () => {
    test(
      'an unparsable message is answered -32700 with id null; the connection goes on',
      { timeout: TEST_TIMEOUT },
      on(
        () => real,
        async () => {
          const c = await transport.open();
          try {
            c.send('{"jsonrpc":"2.0","id":1,"method":');
            const e = await c.inbox.next((m) => 'error' in m, 'the parse error');
            assert.deepEqual(e, { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error: invalid JSON' } });
            c.send(request(2, 'pty/status', { session: cat.id }));
            assert.equal((await c.inbox.next((m) => m.id === 2, 'pty/status after it')).result.running, true);
          } finally {
            c.close();
          }
        },
      ),
    );

    test(
      `past ${MAX_IN_FLIGHT} waits in flight one more is answered with -32000 and the limit (before any wait), a notification gets nothing; room comes back as calls end`,
      { timeout: TEST_TIMEOUT },
      on(
        () => limited,
        async () => {
          const c = await transport.open();
          try {
            const marker = `go-${Math.random().toString(36).slice(2)}`;
            for (let id = 1; id <= MAX_IN_FLIGHT; id++) c.send(request(id, 'pty/wait', { session: cat.id, match: marker, timeout: 60_000 }));
            c.send(JSON.stringify({ jsonrpc: '2.0', method: 'pty/status', params: { session: cat.id } }));
            c.send(request('over', 'pty/status', { session: cat.id }));
            const over = await c.inbox.next((m) => m.id !== undefined, 'the first answer: the one past the limit');
            assert.deepEqual(over, {
              jsonrpc: '2.0',
              id: 'over',
              error: {
                code: -32000,
                message: `Too many requests in flight on this connection: the limit is ${MAX_IN_FLIGHT}; wait for some answers`,
                data: { limit: 'inFlightRequests', max: MAX_IN_FLIGHT, reason: 'limit_reached' },
              },
            });
            cat.write(`${marker}\n`, TEST_WRITER);
            for (let id = 1; id <= MAX_IN_FLIGHT; id++) assert.equal((await c.inbox.next((m) => m.id === id, `wait ${id}`)).result.matched, true);
            c.send(request('after', 'pty/status', { session: cat.id }));
            assert.equal((await c.inbox.next((m) => m.id === 'after', 'pty/status after the waits')).result.running, true);
          } finally {
            c.close();
          }
        },
      ),
    );

    test(
      '$/cancelRequest { id } ends that call at once (a wait answers as its timeout would) and frees its room; an unknown id changes nothing',
      { timeout: TEST_TIMEOUT },
      on(
        () => limited,
        async () => {
          const c = await transport.open();
          try {
            const marker = `go-${Math.random().toString(36).slice(2)}`;
            for (let id = 1; id <= MAX_IN_FLIGHT; id++) c.send(request(id, 'pty/wait', { session: cat.id, match: marker, timeout: 60_000 }));
            const cancel = (id: unknown) => c.send(JSON.stringify({ jsonrpc: '2.0', method: '$/cancelRequest', params: { id } }));
            cancel('no-such-call');
            cancel({ not: 'an id' });
            cancel(2);
            const ended = await c.inbox.next((m) => m.id !== undefined, 'the first answer: the cancelled wait');
            assert.equal(ended.id, 2, JSON.stringify(ended));
            assert.equal(ended.result.matched, false);
            assert.equal(ended.result.reason, 'timeout');
            // Its room is free: one more call is answered, not refused past the limit.
            c.send(request('after', 'pty/status', { session: cat.id }));
            assert.equal((await c.inbox.next((m) => m.id === 'after', 'a call in the freed room')).result.running, true);
            // The other waits still wait, and end as they would.
            cat.write(`${marker}\n`, TEST_WRITER);
            for (const id of [1, 3]) assert.equal((await c.inbox.next((m) => m.id === id, `wait ${id}`)).result.matched, true);
          } finally {
            c.close();
          }
        },
      ),
    );

    test(
      `with ${MAX_IN_FLIGHT - 1} of ${MAX_IN_FLIGHT} slots held by waits, ${PIPELINED} pipelined quick calls wait in line for the last one: each is answered, none refused`,
      { timeout: TEST_TIMEOUT },
      on(
        () => limited,
        async () => {
          const c = await transport.open();
          try {
            const marker = `go-${Math.random().toString(36).slice(2)}`;
            for (let id = 1; id < MAX_IN_FLIGHT; id++) c.send(request(`wait-${id}`, 'pty/wait', { session: cat.id, match: marker, timeout: 60_000 }));
            for (let i = 0; i < PIPELINED; i++) c.send(request(i, 'pty/status', { session: cat.id }));
            for (let i = 0; i < PIPELINED; i++) {
              const a = await c.inbox.next((m) => m.id === i, `status ${i}`);
              assert.equal(a.error, undefined, `status ${i}: ${JSON.stringify(a.error)}`);
              assert.equal(a.result.running, true);
            }
            cat.write(`${marker}\n`, TEST_WRITER);
            for (let id = 1; id < MAX_IN_FLIGHT; id++) assert.equal((await c.inbox.next((m) => m.id === `wait-${id}`, `wait ${id}`)).result.matched, true);
          } finally {
            c.close();
          }
        },
      ),
    );

    test(
      `${PIPELINED} pipelined writes run in the order they came (past one turn's batch); each is answered`,
      { timeout: TEST_TIMEOUT },
      on(
        () => real,
        async () => {
          const c = await transport.open();
          try {
            const tag = Math.random().toString(36).slice(2, 8);
            const since = cat.cursor;
            const words = Array.from({ length: PIPELINED }, (_, i) => `${tag}-${i};`);
            for (const [i, word] of words.entries()) c.send(request(i, 'pty/write', { session: cat.id, action: { text: word } }));
            for (let i = 0; i < PIPELINED; i++) assert.equal((await c.inbox.next((m) => m.id === i, `write ${i}`)).result.written, words[i].length);
            cat.write('\n', TEST_WRITER);
            const expected = words.join('');
            await until(() => cat.ring.read(since).text.includes(expected), MESSAGE_MS, 'the words echoed in order');
          } finally {
            c.close();
          }
        },
      ),
    );

    test(
      "a subscription's notifications carry the session and the output",
      { timeout: TEST_TIMEOUT },
      on(
        () => real,
        async () => {
          const c = await transport.open();
          try {
            c.send(request(1, 'pty/subscribe', { session: cat.id }));
            await c.inbox.next((m) => m.id === 1, 'the subscribe answer');
            const marker = `note-${Math.random().toString(36).slice(2)}`;
            cat.write(`${marker}\n`, TEST_WRITER);
            const n = await c.inbox.next((m) => m.method === 'pty/output' && String(m.params.data).includes(marker), 'the output notification');
            assert.equal(n.params.session, cat.id);
            assert.equal(n.id, undefined);
          } finally {
            c.close();
          }
        },
      ),
    );

    test(
      'a client that does not read its answers: nothing is lost; once it reads, every answer comes, in the order asked',
      { timeout: TEST_TIMEOUT },
      on(
        () => real,
        async () => {
          const full = await h.host.createSession({ command: 'sh', args: ['-c', "head -c 1200000 /dev/zero | tr '\\0' y; exec cat"], name: `full-${++fulls}` });
          await until(() => full.cursor >= 1_200_000, MESSAGE_MS, 'the ring to fill');
          const c = await transport.open();
          try {
            c.pauseReading();
            for (let i = 0; i < BIG_ANSWERS; i++) c.send(request(i, 'pty/output', { session: full.id, since: 0 }));
            if (lastHostWire && transport.open === pairClient) {
              // In memory the host's side is in sight: it stops reading the client once answers the client
              // has not read pass the mark, with some requests still to start.
              const hostWire = lastHostWire;
              await until(() => hostWire.inputPaused && hostWire.unsentBytes > REQUEST_HIGH_WATER_BYTES, MESSAGE_MS, 'the host to hold the requests back');
              assert.ok(hostWire.unsentBytes < REQUEST_HIGH_WATER_BYTES + 16 * 1_100_000, `bounded: ${hostWire.unsentBytes} bytes unsent`);
              assert.equal(c.inbox.count, 0);
            }
            c.resumeReading();
            for (let i = 0; i < BIG_ANSWERS; i++) {
              const a = await c.inbox.next(() => true, `answer ${i}`);
              assert.equal(a.id, i, 'answers in the order asked');
              assert.ok(a.result.data.length >= 1_000_000, `a full ring (${a.result.data.length})`);
            }
          } finally {
            c.close();
            full.kill();
          }
        },
      ),
    );
  });
}

/** A wire that keeps, in order, what the peer wrote (each frame once its batch is written) and the marks a test puts between. */
class WriteLog implements MessageWire {
  readonly log: string[] = [];
  /** The text of every `pty/output` written. */
  output = '';
  private _corked = 0;
  private _gathered: string[] = [];
  readonly writable = true;
  readonly unsentBytes = 0;
  send(text: string): void {
    this._gathered.push(text);
    if (this._corked === 0) this._write();
  }
  cork(): void {
    this._corked++;
  }
  uncork(): void {
    if (this._corked > 0 && --this._corked === 0) this._write();
  }
  whenDrained(fn: () => void) {
    setImmediate(fn);
    return toDisposable(() => undefined);
  }
  pauseInput(): void {}
  resumeInput(): void {}
  end(): void {}
  mark(what: string): void {
    this.log.push(what);
  }
  /** Each write to the socket, as what it carried: `answer 10 + output "a"` is one write of both. */
  readonly writes: string[] = [];
  private _write(): void {
    const carried: string[] = [];
    for (const text of this._gathered) {
      const m = JSON.parse(text) as Msg;
      if (m.method === 'pty/output') this.output += m.params.data;
      carried.push(m.method === 'pty/output' ? `output ${JSON.stringify(m.params.data)}` : `answer ${m.id}`);
    }
    this.log.push(...carried);
    if (carried.length > 0) this.writes.push(carried.join(' + '));
    this._gathered = [];
  }
}

describe('an echo on a session socket', () => {
  /** A turn of the event loop. */
  const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
  /** A program that reads its input with echo off (a password prompt): a write brings no output. */
  const noEcho = (name: string) => h.host.createSession({ command: 'sh', args: ['-c', 'stty -echo; echo ready; exec cat >/dev/null'], name });
  /** A script's connection to `s`'s own socket; `answerWaitsForOutputMs` as the peer's option (the host's own when absent). */
  const sessionPeer = (wire: WriteLog, s: Session, answerWaitsForOutputMs?: number) =>
    new TablePeer(wire, {
      mode: { kind: 'session', session: s },
      services: h.host,
      link: { origin: 'script', transport: 'socket', home: s },
      answerWaitsForOutputMs,
    });

  test(
    'is written in the event-loop turn of the PTY read that brought it, in one write with the answer to the write that caused it',
    { timeout: TEST_TIMEOUT },
    on(
      () => real,
      async () => {
        const s = await h.host.createSession({ command: 'cat', name: 'echo-turn' });
        const wire = new WriteLog();
        // The echo comes within the wait whatever the load (the host's own wait is 1 ms).
        const peer = sessionPeer(wire, s, MESSAGE_MS);
        // Whatever the loop runs after the read (another client's request, a timer) comes after this mark.
        const marks = s.onOutput(() => setImmediate(() => wire.mark('next turn')));
        try {
          peer.receive(request(1, 'pty/subscribe'));
          await until(() => wire.log.includes('answer 1'), MESSAGE_MS, 'the subscribe answer');
          for (const [i, key] of ['a', 'b', 'c'].entries()) {
            wire.log.length = 0;
            wire.writes.length = 0;
            peer.receive(request(10 + i, 'pty/write', { action: { text: key } }));
            await until(() => wire.log.includes('next turn') && wire.log.some((l) => l.startsWith('output')), MESSAGE_MS, `the echo of ${key}`);
            assert.deepEqual(wire.log.slice(0, 3), [`output ${JSON.stringify(key)}`, `answer ${10 + i}`, 'next turn']);
            // The client is woken once for the key, not once for the answer and again for the echo.
            assert.deepEqual(wire.writes, [`output ${JSON.stringify(key)} + answer ${10 + i}`]);
          }
          // Every byte, in order: the keys' echo, then cat's copy of the line.
          s.write('xyz\r', TEST_WRITER);
          await until(() => wire.output.length >= 'abcxyz\r\nabcxyz\r\n'.length, MESSAGE_MS, 'the line and its echo');
          assert.equal(wire.output, 'abcxyz\r\nabcxyz\r\n');
        } finally {
          marks.dispose();
          peer.dispose();
          s.kill();
        }
      },
    ),
  );

  test(
    "is on its way as the request is read: a key reaches the program in the read's own call, with no promise or microtask before it",
    { timeout: TEST_TIMEOUT },
    on(
      () => real,
      async () => {
        const s = await h.host.createSession({ command: 'cat', name: 'echo-at-once' });
        const wire = new WriteLog();
        const peer = sessionPeer(wire, s, MESSAGE_MS);
        try {
          peer.receive(request(1, 'pty/subscribe'));
          await until(() => wire.log.includes('answer 1'), MESSAGE_MS, 'the subscribe answer');
          const before = s.lastInput;
          peer.receive(request(2, 'pty/write', { action: { text: 'k' } }));
          // Nothing awaited since: only work done inside receive() can have written it.
          assert.notEqual(s.lastInput, before, 'the key was written before receive() returned');
          await until(() => wire.writes.includes('output "k" + answer 2'), MESSAGE_MS, 'the echo with its answer');
        } finally {
          peer.dispose();
          s.kill();
        }
      },
    ),
  );

  test(
    'on the control socket rides with the answer only for the session the client follows',
    { timeout: TEST_TIMEOUT },
    on(
      () => real,
      async () => {
        const followed = await h.host.createSession({ command: 'cat', name: 'followed' });
        const other = await h.host.createSession({ command: 'cat', name: 'not-followed' });
        const wire = new WriteLog();
        const peer = new TablePeer(wire, {
          mode: { kind: 'control' },
          services: h.host,
          link: { origin: 'script', transport: 'control' },
          answerWaitsForOutputMs: MESSAGE_MS,
        });
        try {
          peer.receive(request(1, 'pty/subscribe', { session: followed.id }));
          await until(() => wire.log.includes('answer 1'), MESSAGE_MS, 'the subscribe answer');
          wire.writes.length = 0;
          peer.receive(request(2, 'pty/write', { session: followed.id, action: { text: 'f' } }));
          await until(() => wire.log.includes('answer 2'), MESSAGE_MS, 'the answer to the followed write');
          assert.deepEqual(wire.writes, ['output "f" + answer 2']);
          // Its echo goes to no one here: the answer waits for nothing (written at its turn's end, the second mark).
          peer.receive(request(3, 'pty/write', { session: other.id, action: { text: 'o' } }));
          await turn();
          await turn();
          assert.ok(wire.log.includes('answer 3'), `answered in its turn (got ${JSON.stringify(wire.log)})`);
          assert.equal(wire.writes.at(-1), 'answer 3');
        } finally {
          peer.dispose();
          followed.kill();
          other.kill();
        }
      },
    ),
  );

  test(
    'is not overtaken: an answer ready later makes the one waiting for output leave first',
    { timeout: TEST_TIMEOUT },
    on(
      () => real,
      async () => {
        const s = await noEcho('answer-order');
        const wire = new WriteLog();
        // A wait longer than the test: the write's answer leaves only when something else makes it.
        const peer = sessionPeer(wire, s, 10 * MESSAGE_MS);
        try {
          peer.receive(request(1, 'pty/subscribe'));
          await until(() => wire.output.includes('ready'), MESSAGE_MS, 'echo off');
          const before = s.lastInput;
          peer.receive(request(2, 'pty/write', { action: { text: 'x' } }));
          await until(() => s.lastInput !== before, MESSAGE_MS, 'the key written');
          await turn();
          assert.ok(!wire.log.includes('answer 2'), `the answer waits for output that does not come: ${JSON.stringify(wire.log)}`);
          peer.receive(request(3, 'pty/status'));
          await until(() => wire.log.includes('answer 3'), MESSAGE_MS, 'the status');
          assert.deepEqual(
            wire.log.filter((l) => l.startsWith('answer')).slice(-2),
            ['answer 2', 'answer 3'],
            `the waiting answer left first: ${JSON.stringify(wire.log)}`,
          );
        } finally {
          peer.dispose();
          s.kill();
        }
      },
    ),
  );

  test(
    'leaves a write that brings no output answered: after one such write, the next is answered in its own turn',
    { timeout: TEST_TIMEOUT },
    on(
      () => real,
      async () => {
        const s = await noEcho('no-echo');
        const wire = new WriteLog();
        const peer = sessionPeer(wire, s);
        try {
          peer.receive(request(1, 'pty/subscribe'));
          await until(() => wire.output.includes('ready'), MESSAGE_MS, 'echo off');
          peer.receive(request(2, 'pty/write', { action: { text: 'secret' } }));
          await until(() => wire.log.includes('answer 2'), MESSAGE_MS, 'the answer to a write that echoes nothing');
          // Writes have stopped bringing output: the next answer does not wait for any. The
          // answer is written at the end of the turn that ran the request (the second mark).
          peer.receive(request(3, 'pty/write', { action: { text: 'more' } }));
          await turn();
          await turn();
          assert.ok(wire.log.includes('answer 3'), `answered in its turn (got ${JSON.stringify(wire.log)})`);
          assert.equal(wire.writes.at(-1), 'answer 3');
        } finally {
          peer.dispose();
          s.kill();
        }
      },
    ),
  );
});
