// RpcClient (src/transport/client/rpc-client.ts): the JSON-RPC peer as a client on a line wire,
// over real Unix sockets. Most cases talk to a scripted host, a socket whose every byte the test
// writes, so what a host may send (a 16 MiB answer, a longer line, garbage, a request, a close in
// the middle of a call, a socket-pty host's answers) is sent exactly; the refusal case talks to a
// real in-process host.
import { after, afterEach, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { CLIENT_MAX_LINE_BYTES, ConnectionClosedError, RpcCallError, RpcClient, type Notification } from '../../../../src/transport/client/rpc-client';
import { DEFAULT_MAX_LINE_BYTES } from '../../../../src/transport/base/line-reader';
import { startHost, tempRuntimeDir, until, withTimeout } from '../../../helpers/host';
import { ensureNoDisposablesAreLeakedInTestSuite } from '../../../helpers/leak-tracker';

/** Per-test bound: generous for a loaded machine, finite so a hang fails instead of blocking. */
const TEST_TIMEOUT = 60_000;
/** How long a test waits for one thing the other end does before it fails. */
const STEP_MS = 20_000;

type Msg = Record<string, any>;

/** One connection to the scripted host: the lines the client sent, parsed, and the socket to answer on. */
class Conn {
  private readonly _lines: Msg[] = [];
  private readonly _waiters: Array<(m: Msg) => void> = [];
  private _rest = '';
  readonly ended: Promise<void>;

  constructor(readonly socket: net.Socket) {
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => {
      const parts = (this._rest + d).split('\n');
      this._rest = parts.pop()!;
      for (const p of parts) {
        const m = JSON.parse(p) as Msg;
        const w = this._waiters.shift();
        if (w) w(m);
        else this._lines.push(m);
      }
    });
    socket.on('error', () => {});
    this.ended = new Promise((resolve) => socket.once('close', () => resolve()));
  }

  /** The next message the client sent. */
  next(): Promise<Msg> {
    const m = this._lines.shift();
    if (m) return Promise.resolve(m);
    return withTimeout(new Promise((resolve) => this._waiters.push(resolve)), STEP_MS, 'a message from the client');
  }

  write(bytes: string | Buffer): void {
    this.socket.write(bytes);
  }
}

/** A host whose every byte the test writes: a real Unix socket, nothing of JSON-RPC behind it. */
class ScriptedHost {
  private readonly _waiters: Array<(c: Conn) => void> = [];
  private readonly _conns: Conn[] = [];

  private constructor(
    private readonly _server: net.Server,
    readonly address: string,
  ) {
    _server.on('connection', (s) => {
      const c = new Conn(s);
      const w = this._waiters.shift();
      if (w) w(c);
      else this._conns.push(c);
    });
  }

  static async start(dir: string): Promise<ScriptedHost> {
    const file = path.join(dir, `scripted-${process.hrtime.bigint()}.sock`);
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(file, resolve));
    return new ScriptedHost(server, `unix:${file}`);
  }

  /** The next connection a client made. */
  accepted(): Promise<Conn> {
    const c = this._conns.shift();
    if (c) return Promise.resolve(c);
    return withTimeout(new Promise((resolve) => this._waiters.push(resolve)), STEP_MS, 'a connection');
  }

  /** A client connected, and the scripted end of its connection. */
  async connect(): Promise<{ client: RpcClient; conn: Conn }> {
    const client = await RpcClient.connect(this.address);
    return { client, conn: await this.accepted() };
  }

  close(): Promise<void> {
    return new Promise((resolve) => this._server.close(() => resolve()));
  }
}

/** An answer line of exactly `bytes` bytes (the newline not counted) for request `id`: a string result of x's. */
function answerOfBytes(id: number, bytes: number): string {
  const head = `{"jsonrpc":"2.0","id":${id},"result":"`;
  const tail = '"}';
  return head + 'x'.repeat(bytes - head.length - tail.length) + tail;
}

let dir: string;
let host: ScriptedHost;
const clients: RpcClient[] = [];

before(async () => {
  dir = tempRuntimeDir();
  host = await ScriptedHost.start(dir);
});
after(async () => {
  await host.close();
  fs.rmSync(dir, { recursive: true, force: true });
});
afterEach(() => {
  for (const c of clients.splice(0)) c.close();
});
ensureNoDisposablesAreLeakedInTestSuite();

/** A client of the scripted host, closed after the test. */
async function scripted(): Promise<{ client: RpcClient; conn: Conn }> {
  const made = await host.connect();
  clients.push(made.client);
  return made;
}

describe('RpcClient on the one JSON-RPC peer', () => {
  test('an answer line of exactly 16 MiB is read, and the connection goes on', { timeout: TEST_TIMEOUT }, async () => {
    assert.equal(CLIENT_MAX_LINE_BYTES, 16 * DEFAULT_MAX_LINE_BYTES);
    const { client, conn } = await scripted();
    const big = client.request<string>('pty/output', {});
    const asked = await conn.next();
    conn.write(answerOfBytes(asked.id, CLIENT_MAX_LINE_BYTES) + '\n');
    const result = await withTimeout(big, STEP_MS, 'the 16 MiB answer');
    assert.equal(result.length, CLIENT_MAX_LINE_BYTES - `{"jsonrpc":"2.0","id":${asked.id},"result":""}`.length);
    const small = client.request('pty/status');
    conn.write(JSON.stringify({ jsonrpc: '2.0', id: (await conn.next()).id, result: { running: true } }) + '\n');
    assert.deepEqual(await small, { running: true });
    assert.equal(client.closed, false);
  });

  test(
    'a longer line ends the connection: every pending call fails saying why, onClose fires once, the process goes on',
    { timeout: TEST_TIMEOUT },
    async () => {
      const { client, conn } = await scripted();
      let closes = 0;
      client.onClose(() => closes++);
      const first = client.request('pty/output', {});
      const second = client.request('pty/status', {});
      const asked = await conn.next();
      await conn.next();
      // One byte over, sent without its newline: the client stops at the limit, not at the line's end.
      conn.write(answerOfBytes(asked.id, CLIENT_MAX_LINE_BYTES + 1));
      for (const call of [first, second]) {
        await assert.rejects(call, (e: Error) => {
          assert.ok(e instanceof ConnectionClosedError, String(e));
          assert.match(e.message, new RegExp(`longer than ${CLIENT_MAX_LINE_BYTES} bytes`));
          return true;
        });
      }
      assert.equal(client.closed, true);
      assert.equal(closes, 1);
      await withTimeout(conn.ended, STEP_MS, 'the client closes its socket');
      await assert.rejects(client.request('pty/status'), ConnectionClosedError);
      // Nothing else was harmed: another client of the same host works.
      const again = await scripted();
      const call = again.client.request('pty/status');
      again.conn.write(JSON.stringify({ jsonrpc: '2.0', id: (await again.conn.next()).id, result: {} }) + '\n');
      assert.deepEqual(await call, {});
    },
  );

  test(
    'a host that closes in the middle of calls fails each pending call with ConnectionClosedError and lets listeners go',
    { timeout: TEST_TIMEOUT },
    async () => {
      const { client, conn } = await scripted();
      const seen: Notification[] = [];
      client.onNotification((n) => seen.push(n));
      const closed = new Promise<void>((resolve) => client.onClose(resolve));
      const calls = [client.request('pty/wait', { timeout: 60_000 }), client.request('pty/read')];
      await conn.next();
      await conn.next();
      conn.socket.destroy();
      for (const call of calls) await assert.rejects(call, (e: Error) => e instanceof ConnectionClosedError && e.message === 'Connection closed');
      await withTimeout(closed, STEP_MS, 'onClose');
      assert.equal(client.closed, true);
      await assert.rejects(client.call('host/info', {}), ConnectionClosedError);
      // A listener added once the connection is gone holds nothing (the leak guard checks the rest).
      client.onNotification(() => assert.fail('a closed client fires nothing')).dispose();
      assert.deepEqual(seen, []);
    },
  );

  test(
    'lines that are not messages are skipped, a socket-pty host answers as it does, and the answers around them arrive',
    { timeout: TEST_TIMEOUT },
    async () => {
      const { client, conn } = await scripted();
      const status = client.request('pty/status');
      const read = client.request('pty/read');
      const write = client.request('pty/write', { action: { text: 'x' } });
      const [s, r, w] = [await conn.next(), await conn.next(), await conn.next()];
      conn.write('this is not JSON\n');
      conn.write('{"jsonrpc":"2.0","id":' + s.id + ',"result":\n'); // cut short
      conn.write('[1,2,3]\n"a string"\nnull\n\n   \n');
      conn.write(Buffer.from([0xff, 0xfe, 0x0a])); // not UTF-8 at all
      conn.write(JSON.stringify({ jsonrpc: '2.0', id: 999_999, result: 'for nobody' }) + '\n');
      // As socket-pty writes them: result before id; one with CRLF; one whose text holds a byte that is not UTF-8.
      conn.write(`{"jsonrpc":"2.0","result":{"running":true,"exitCode":null,"pid":42},"id":${s.id}}\n`);
      conn.write(`{"jsonrpc":"2.0","result":{"written":1},"id":${w.id}}\r\n`);
      conn.write(Buffer.concat([Buffer.from(`{"jsonrpc":"2.0","result":{"screen":"a`), Buffer.from([0xff]), Buffer.from(`b"},"id":${r.id}}\n`)]));
      assert.deepEqual(await status, { running: true, exitCode: null, pid: 42 });
      assert.deepEqual(await write, { written: 1 });
      assert.deepEqual(await read, { screen: 'a\ufffdb' });
      // An error answer keeps its code, message and data.
      const bad = client.request('pty/resize', { cols: 'wide' });
      conn.write(`{"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params: cols","data":{"field":"cols"}},"id":${(await conn.next()).id}}\n`);
      await assert.rejects(bad, (e: Error) => e instanceof RpcCallError && e.code === -32602 && e.message === 'Invalid params: cols');
      assert.equal(client.closed, false);
    },
  );

  test(
    'notifications reach the listeners in the order they came, between the answers; a disposed listener hears no more',
    { timeout: TEST_TIMEOUT },
    async () => {
      const { client, conn } = await scripted();
      const heard: string[] = [];
      const early: string[] = [];
      client.onNotification((n) => heard.push(`${n.method} ${JSON.stringify(n.params)}`));
      const stop = client.onNotification((n) => early.push(n.method));
      const sub = client.request('pty/subscribe', {});
      const { id } = await conn.next();
      conn.write('{"jsonrpc":"2.0","method":"pty/output","params":{"data":"a","cursor":1}}\n');
      conn.write(`{"jsonrpc":"2.0","id":${id},"result":{"cursor":1}}\n{"jsonrpc":"2.0","method":"pty/exit"}\n`);
      assert.deepEqual(await sub, { cursor: 1 });
      await until(() => heard.length === 2, STEP_MS, 'pty/exit');
      const status = client.request('pty/status');
      const next = await conn.next();
      stop.dispose();
      conn.write('{"jsonrpc":"2.0","method":"pty/flow","params":{"paused":false}}\n');
      conn.write(`{"jsonrpc":"2.0","id":${next.id},"result":{}}\n`);
      await status;
      // A notification without params is heard with {}.
      assert.deepEqual(heard, ['pty/output {"data":"a","cursor":1}', 'pty/exit {}', 'pty/flow {"paused":false}']);
      assert.deepEqual(early, ['pty/output', 'pty/exit']);
    },
  );

  test(
    'a request from the host is answered "method not found" and is not taken for the answer to a call of the same id',
    { timeout: TEST_TIMEOUT },
    async () => {
      const { client, conn } = await scripted();
      const call = client.request('pty/status');
      const asked = await conn.next();
      conn.write(JSON.stringify({ jsonrpc: '2.0', id: asked.id, method: 'client/ping', params: {} }) + '\n');
      const answer = await conn.next();
      assert.deepEqual(answer, { jsonrpc: '2.0', id: asked.id, error: { code: -32601, message: 'Method not found: client/ping (this end is a client)' } });
      conn.write(JSON.stringify({ jsonrpc: '2.0', id: asked.id, result: { running: true } }) + '\n');
      assert.deepEqual(await call, { running: true });
    },
  );

  test('close() sends what was asked just before, fails the pending calls, and fires onClose once', { timeout: TEST_TIMEOUT }, async () => {
    const { client, conn } = await scripted();
    let closes = 0;
    client.onClose(() => closes++);
    const pending = client.request('pty/wait', { match: 'never', timeout: 60_000 });
    const last = client.request('pty/write', { action: { text: 'bye' } });
    client.close();
    await assert.rejects(pending, ConnectionClosedError);
    await assert.rejects(last, ConnectionClosedError);
    assert.equal(client.closed, true);
    assert.equal(closes, 1);
    client.close(); // twice is harmless
    assert.equal(closes, 1);
    assert.equal((await conn.next()).method, 'pty/wait');
    assert.deepEqual((await conn.next()).params, { action: { text: 'bye' } });
    await withTimeout(conn.ended, STEP_MS, 'the socket closes');
  });
});

describe('RpcClient and a real host', () => {
  test("a request line over the host's limit: the pending call's error carries the host's refusal", { timeout: TEST_TIMEOUT }, async () => {
    const h = await startHost();
    try {
      const client = await RpcClient.connect(h.host.controlAddress);
      clients.push(client);
      const info = await client.call('host/info', {});
      assert.equal(typeof info.hostId, 'string');
      const tooLong = client.request('pty/write', { session: 'none', action: { text: 'y'.repeat(DEFAULT_MAX_LINE_BYTES) } });
      await assert.rejects(tooLong, (e: Error) => {
        assert.ok(e instanceof ConnectionClosedError, String(e));
        assert.match(e.message, new RegExp(`^Connection closed: the other end answered "Invalid Request: line longer than ${DEFAULT_MAX_LINE_BYTES} bytes`));
        return true;
      });
      assert.equal(client.closed, true);
    } finally {
      for (const c of clients.splice(0)) c.close();
      await h.close();
    }
  });
});
