// A one-shot client that half-closes its socket after sending (`nc -U -N`, `socat`, a script's
// `socket.end()`) still gets its answers: end of input is not "client gone" (docs/protocol.md#2-framing). Raw
// net.Sockets against an in-process host, real bash.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as net from 'node:net';
import type { SessionInfo } from '../../../../src/core/methods/types';
import type { RpcClient } from '../../../../src/transport/client/rpc-client';
import { BASH, connect, startHost, withTimeout } from '../../../helpers/host';
import type { Msg } from '../../../helpers/protocol';
import { ensureNoDisposablesAreLeakedBySuite } from '../../../helpers/leak-tracker';

const TEST_TIMEOUT = 30_000;

let h: Awaited<ReturnType<typeof startHost>>;
let control: RpcClient;
let shell: SessionInfo;

before(async () => {
  h = await startHost();
  control = await connect(h.host.controlAddress);
  shell = await control.request<SessionInfo>('session/create', { ...BASH, name: 'half-close' });
});

after(async () => {
  // The client is let go when its socket's close arrives: wait for it, so the leak check below sees it gone.
  if (control && !control.closed) {
    const closed = new Promise<void>((resolve) => control.onClose(() => resolve()));
    control.close();
    await closed;
  }
  await h?.close();
});
// Once the shared host is closed, nothing the suite made is left (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedBySuite();

/**
 * Connects, writes `text`, half-closes (end of input, as `nc -N` does) and collects every line the
 * host sends until it closes the connection.
 */
function oneShot(address: string, text: string): Promise<{ messages: Msg[]; closedByHost: boolean }> {
  return new Promise((resolve, reject) => {
    const sock = net.connect({ path: address.slice('unix:'.length), allowHalfOpen: true });
    let buffered = '';
    let hostEnded = false;
    sock.setEncoding('utf8');
    sock.on('data', (d: string) => (buffered += d));
    sock.on('end', () => {
      hostEnded = true;
      sock.end();
    });
    sock.on('error', reject);
    sock.on('close', () =>
      resolve({
        messages: buffered
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as Msg),
        closedByHost: hostEnded,
      }),
    );
    sock.once('connect', () => {
      sock.write(text);
      sock.end();
    });
  });
}

const line = (id: number, method: string, params: Msg) => JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n';

describe('a client that half-closes after sending', () => {
  test('gets the answer to a pty/wait that ends a second later, then the host closes', { timeout: TEST_TIMEOUT }, async () => {
    for (const [address, params] of [
      [shell.address, {}],
      [h.host.controlAddress, { session: shell.id }],
    ] as const) {
      const r = await withTimeout(oneShot(address, line(1, 'pty/wait', { ...params, match: 'never-shown-7f3', timeout: 1000 })), 15_000, 'the one-shot client');
      assert.equal(r.messages.length, 1, JSON.stringify(r.messages));
      assert.equal(r.messages[0].id, 1);
      assert.equal(r.messages[0].result?.matched, false, JSON.stringify(r.messages[0]));
      assert.equal(r.messages[0].result?.reason, 'timeout');
      assert.equal(r.closedByHost, true);
    }
  });

  test('every request sent before the end is answered, a last line without a newline too', { timeout: TEST_TIMEOUT }, async () => {
    const text =
      line(1, 'pty/status', {}) +
      line(2, 'pty/wait', { match: 'never-shown-7f3', timeout: 300 }) +
      JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'pty/info' });
    const r = await withTimeout(oneShot(shell.address, text), 15_000, 'the one-shot client');
    assert.deepEqual(r.messages.map((m) => m.id).sort(), [1, 2, 3]);
    assert.equal(r.messages.find((m) => m.id === 1)?.result?.running, true);
    assert.equal(r.messages.find((m) => m.id === 3)?.result?.id, shell.id);
  });

  test('a subscription streams until the session exits, then the host closes', { timeout: TEST_TIMEOUT }, async () => {
    const s = await control.request<SessionInfo>('session/create', { ...BASH, name: 'half-close-sub' });
    const done = oneShot(s.address, line(1, 'pty/subscribe', { since: 0 }));
    // The subscriber has half-closed and is still served: what the program prints later arrives.
    await control.request('pty/write', { session: s.id, action: { text: 'echo late-$((6*7)); exit 3\r' } });
    const r = await withTimeout(done, 15_000, 'the subscriber to be closed after the exit');
    assert.equal(r.messages[0].id, 1);
    const output = r.messages
      .filter((m) => m.method === 'pty/output')
      .map((m) => m.params.data)
      .join('');
    assert.match(output, /late-42/);
    assert.equal(r.messages.at(-1)?.method, 'pty/exit');
    assert.equal(r.messages.at(-1)?.params.exitCode, 3);
    assert.equal(r.closedByHost, true);
    await control.request('pty/kill', { session: s.id });
  });

  test('a client that only half-closes, with nothing asked, is closed at once', { timeout: TEST_TIMEOUT }, async () => {
    const r = await withTimeout(oneShot(shell.address, ''), 10_000, 'the host to close');
    assert.deepEqual(r.messages, []);
    assert.equal(r.closedByHost, true);
  });
});

describe('a session killed while clients of its own socket wait', () => {
  test('a pending pty/wait and a long pty/output are answered (session_exit) before the host closes their connection', { timeout: TEST_TIMEOUT }, async () => {
    const s = await control.request<SessionInfo>('session/create', { command: 'sleep', args: ['60'], name: 'killed-while-waiting' });
    const sock = net.connect({ path: s.address.slice('unix:'.length) });
    let buffered = '';
    sock.setEncoding('utf8');
    sock.on('data', (d: string) => (buffered += d));
    const closed = new Promise<void>((resolve) => sock.on('close', () => resolve()));
    await new Promise<void>((resolve) => sock.once('connect', () => resolve()));
    sock.write(line(1, 'pty/wait', { match: 'NEVER-SHOWN', timeout: 20_000 }) + line(2, 'pty/output', { since: 999_999, waitMs: 20_000 }));
    await new Promise((r) => setTimeout(r, 300));
    await control.request('pty/kill', { session: s.id });
    await withTimeout(closed, 10_000, 'the host to close the connection');
    const messages = buffered
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => JSON.parse(l) as Msg);
    const wait = messages.find((m) => m.id === 1);
    assert.equal(wait?.result?.matched, false, JSON.stringify(messages));
    assert.equal(wait?.result?.reason, 'session_exit');
    assert.equal(messages.find((m) => m.id === 2)?.result?.running, false, JSON.stringify(messages));
  });
});
