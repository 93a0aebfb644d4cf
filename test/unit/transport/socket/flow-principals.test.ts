// Who may make the program wait (issue 21 item 6): only a client that may type (an `input` or
// `control` token) may flow-control a session; a view token's `flow: true` subscription is lossy.
// A client that acknowledges nothing is demoted once its patience (5 s) is spent, and subscribing
// again, on the same connection or a new one with the same token, does not give it new patience.
// A real host, bash, real WebSockets.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { RpcClient } from '../../../../src/transport/client/rpc-client';
import { BASH, connect, until, clientsClosed } from '../../../helpers/host';
import { startHttpHost, wsOpen, type HttpHost, type WsClient } from '../../../helpers/http';
import { ensureNoDisposablesAreLeakedBySuite } from '../../../helpers/leak-tracker';

let nextId = 1;
function call(c: WsClient, method: string, params: Record<string, unknown>): Promise<{ result?: any; error?: { code: number; message: string } }> {
  const id = nextId++;
  c.send({ jsonrpc: '2.0', id, method, params });
  return c.next((m) => m && m.id === id, `${method} answer`);
}

/** A flood of `bytes` x's, then a line the test waits for (spelt so the typed command does not show it). */
function flood(bytes: number): string {
  return `head -c ${bytes} /dev/zero | tr '\\0' x; echo; echo FLOOD-$((1+1))\r`;
}

// Once the shared host is closed, nothing the suite made is left (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedBySuite(clientsClosed);

describe('flow control is for clients that may type', () => {
  let h: HttpHost;
  let ctl: RpcClient;
  const sockets: WsClient[] = [];
  before(async () => {
    h = await startHttpHost();
    ctl = await connect(h.host.controlAddress);
  });
  after(async () => {
    for (const s of sockets) await s.close();
    ctl?.close();
    await h?.close();
  });

  async function session(): Promise<string> {
    const id = (await ctl.call('session/create', { ...BASH, cols: 80, rows: 24 })).id;
    await until(async () => (await ctl.call('pty/read', { session: id })).screen.includes('$'), 10_000, 'a prompt');
    return id;
  }

  async function open(token: string): Promise<WsClient> {
    const c = await wsOpen(h.port, '/rpc', { token });
    sockets.push(c);
    return c;
  }

  test("a view token's flow: true subscription is lossy: it never holds the program, and is never demoted", { timeout: 90_000 }, async () => {
    const id = await session();
    const { token } = (await ctl.call('session/share', { session: id, scope: 'view', reusable: true })) as { token: string };
    const view = await open(token);
    const sub = await call(view, 'pty/subscribe', { session: id, flow: true, window: 1024 });
    assert.equal(sub.result?.flow, false, JSON.stringify(sub));
    // It never acknowledges; the program runs to its end all the same.
    await ctl.call('pty/write', { session: id, action: { text: flood(2_000_000) } });
    const done = await ctl.call('pty/wait', { session: id, match: 'FLOOD-2', timeout: 60_000 });
    assert.equal(done.reason, 'matched');
    assert.ok(!view.received.some((m) => m?.method === 'pty/flow'), 'a lossy subscriber is never demoted');
    // An input token's may make it wait.
    const input = ((await ctl.call('session/share', { session: id, scope: 'input', reusable: true })) as { token: string }).token;
    assert.equal((await call(await open(input), 'pty/subscribe', { session: id, flow: true })).result?.flow, true);
    await ctl.call('pty/kill', { session: id });
  });

  test(
    'an input token that never acknowledges and subscribes again after each demotion stalls the program once, not each time',
    { timeout: 90_000 },
    async () => {
      const id = await session();
      const { token } = (await ctl.call('session/share', { session: id, scope: 'input', reusable: true })) as { token: string };
      let dancer = await open(token);
      let demotions = 0;
      let dancing = true;
      /** The dance's subscribes in flight: the session ends only after they are answered. */
      const pending: Promise<unknown>[] = [];
      const subscribe = async (c: WsClient) => {
        if (!dancing) return;
        const answer = call(c, 'pty/subscribe', { session: id, flow: true, window: 1024 });
        pending.push(answer);
        const r = await answer;
        assert.ok(r.result, JSON.stringify(r));
      };
      // After each demotion: subscribe again, every other time over a new connection with the same token.
      const dance = (c: WsClient) =>
        c.ws.on('message', (raw) => {
          const m = JSON.parse(raw.toString());
          if (m.method !== 'pty/flow' || !dancing) return;
          demotions++;
          if (demotions % 2 === 0) {
            pending.push(
              open(token).then(async (next) => {
                dancer = next;
                dance(next);
                await subscribe(next);
              }),
            );
          } else pending.push(subscribe(c));
        });
      dance(dancer);
      await subscribe(dancer);
      // Each demotion lets one read through: a few megabytes take hundreds of them.
      await ctl.call('pty/write', { session: id, action: { text: flood(1_000_000) } });
      const done = await ctl.call('pty/wait', { session: id, match: 'FLOOD-2', timeout: 80_000 });
      dancing = false;
      assert.equal(done.reason, 'matched', `the program finished while the client danced (${demotions} demotions)`);
      assert.ok(demotions > 1, `it did dance (${demotions} demotions)`);
      // Every subscribe the dance started was answered while the session ran.
      for (const r of await Promise.allSettled(pending)) assert.equal(r.status, 'fulfilled', r.status === 'rejected' ? String(r.reason) : '');
      await ctl.call('pty/kill', { session: id });
    },
  );
});
