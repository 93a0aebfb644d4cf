// Raw JSON-RPC connections for the fuzzers (no use of our own client: the point is what goes over
// the wire), and the check every answer must pass: a JSON-RPC 2.0 response with the request's id,
// and either a result of the method's result schema or an error with one of the codes the
// protocol names. An internal error (-32603) is a bug the fuzzer found.
import assert from 'node:assert/strict';
import * as net from 'node:net';
import WebSocket from 'ws';
import { METHOD_INDEX } from '../../src/core/methods/table';

/**
 * The error codes a client may be answered with: the interface's, and no other
 * (docs/protocol.md#4-error-codes, docs/guarantees.md#error-codes-beyond-json-rpc); -32603 is not among them.
 */
export const EXPECTED_ERROR_CODES = new Set([-32700, -32600, -32601, -32602, -32000, -32001, -32002]);

export type Msg = Record<string, any>;

/** One connection carrying JSON-RPC messages: lines on a socket, or frames on a WebSocket. */
export interface Wire {
  send(data: string | Buffer): void;
  /** The next response (a message with an `id` member); notifications are dropped. */
  nextResponse(timeoutMs: number, what: string): Promise<Msg>;
  readonly closed: boolean;
  close(): void;
}

class Inbox {
  private readonly _queue: Msg[] = [];
  private _waiter: ((m: Msg) => void) | undefined;
  closed = false;
  private _onClose: (() => void) | undefined;

  push(m: Msg): void {
    if (!('id' in m)) return; // a notification (subscriptions of the case)
    if (this._waiter) {
      const w = this._waiter;
      this._waiter = undefined;
      w(m);
    } else this._queue.push(m);
  }

  markClosed(): void {
    this.closed = true;
    this._onClose?.();
  }

  next(timeoutMs: number, what: string): Promise<Msg> {
    const queued = this._queue.shift();
    if (queued) return Promise.resolve(queued);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this._waiter = undefined;
        reject(new Error(`no answer within ${timeoutMs} ms to ${what}`));
      }, timeoutMs);
      this._onClose = () => {
        clearTimeout(timer);
        this._waiter = undefined;
        reject(new Error(`the host closed the connection instead of answering ${what}`));
      };
      if (this.closed) return this._onClose();
      this._waiter = (m) => {
        clearTimeout(timer);
        resolve(m);
      };
    });
  }
}

/** A newline-delimited JSON-RPC connection to a Unix socket. */
export async function socketWire(address: string): Promise<Wire> {
  const sock = net.connect(address.slice('unix:'.length));
  await new Promise<void>((resolve, reject) => {
    sock.once('connect', resolve);
    sock.once('error', reject);
  });
  const inbox = new Inbox();
  let buffered = Buffer.alloc(0);
  sock.on('data', (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk]);
    for (let nl = buffered.indexOf(0x0a); nl >= 0; nl = buffered.indexOf(0x0a)) {
      const line = buffered.subarray(0, nl).toString('utf8');
      buffered = buffered.subarray(nl + 1);
      inbox.push(JSON.parse(line)); // a line that is not JSON fails the case loudly
    }
  });
  sock.on('error', () => undefined);
  sock.on('close', () => inbox.markClosed());
  return {
    send: (data) => void sock.write(Buffer.concat([typeof data === 'string' ? Buffer.from(data) : data, Buffer.from('\n')])),
    nextResponse: (ms, what) => inbox.next(ms, what),
    get closed() {
      return inbox.closed;
    },
    close: () => sock.destroy(),
  };
}

/** A WebSocket carrying one JSON-RPC message per frame (`/rpc`). */
export async function webSocketWire(url: string, token: string): Promise<Wire> {
  const ws = new WebSocket(url, { headers: { authorization: `Bearer ${token}` } });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  const inbox = new Inbox();
  ws.on('message', (raw) => inbox.push(JSON.parse(raw.toString())));
  ws.on('error', () => undefined);
  ws.on('close', () => inbox.markClosed());
  return {
    send: (data) => ws.send(data, { binary: typeof data !== 'string' }),
    nextResponse: (ms, what) => inbox.next(ms, what),
    get closed() {
      return inbox.closed;
    },
    close: () => ws.terminate(),
  };
}

/** The request as the host reads it: the parsed message, or undefined when it is not JSON. */
export function hostView(data: string | Buffer, fatalUtf8: boolean): unknown {
  let text: string;
  try {
    text = typeof data === 'string' ? data : new TextDecoder('utf-8', { fatal: fatalUtf8 }).decode(data);
  } catch {
    return undefined;
  }
  if (text.endsWith('\r')) text = text.slice(0, -1);
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The id an answer must carry: the request's when it is a string or a number, else null. */
export function expectedId(request: unknown): unknown {
  if (!request || typeof request !== 'object' || Array.isArray(request)) return null;
  const id = (request as Msg).id;
  // Echoed as written: `-0` comes back `-0` (a number a double cannot hold, `1e400`, is refused: null).
  if (typeof id === 'number') return Number.isFinite(id) ? id : null;
  return typeof id === 'string' ? id : null;
}

/** Asserts `res` is a well-formed answer to `request` (as the host read it); returns it. */
export function assertAnswer(request: unknown, res: Msg, what: string): Msg {
  const keys = Object.keys(res).sort();
  assert.equal(res.jsonrpc, '2.0', `${what}: ${JSON.stringify(res)}`);
  assert.deepEqual(res.id, expectedId(request), `${what}: the answer's id`);
  if ('error' in res) {
    assert.deepEqual(keys, ['error', 'id', 'jsonrpc'], what);
    assert.ok(EXPECTED_ERROR_CODES.has(res.error.code), `${what}: unexpected error ${JSON.stringify(res.error)}`);
    assert.equal(typeof res.error.message, 'string', what);
    assert.ok(res.error.message.length > 0, what);
    assert.ok(!/\n\s+at /.test(res.error.message), `${what}: a stack trace in the message`);
    return res;
  }
  assert.deepEqual(keys, ['id', 'jsonrpc', 'result'], what);
  const method = (request as Msg).method as string;
  const spec = METHOD_INDEX.get(method);
  assert.ok(spec, `${what}: a result for an unknown method`);
  const r = spec.result.safeParse(res.result);
  assert.ok(r.success, `${what}: the result does not match ${method}'s result schema: ${JSON.stringify(res.result).slice(0, 300)}`);
  return res;
}
