// docs/hosts.md: when the host stops, its sessions end with it. What clients wait for is answered
// as at a kill (pty/send and pty/wait with session_exit, a subscription's pty/exit) before the
// sockets close: on SIGTERM a send got an error, and a wait and a subscription nothing (an outside
// audit). A real host, bash, and its sockets.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Notification } from '../../../src/transport/client/rpc-client';
import type { SessionInfo } from '../../../src/core/methods/types';
import { BASH, clientsClosed, connect, startHost, until } from '../../helpers/host';
import { ensureNoDisposablesAreLeakedBySuite } from '../../helpers/leak-tracker';

ensureNoDisposablesAreLeakedBySuite(clientsClosed);

test('a host that stops answers what its clients wait for as a kill does: session_exit and pty/exit', { timeout: 60_000 }, async () => {
  const h = await startHost();
  let closed = false;
  try {
    const control = await connect(h.host.controlAddress);
    const info = (await control.request('session/create', { ...BASH, cols: 80, rows: 24 })) as SessionInfo;
    await control.request('pty/wait', { session: info.id, match: '$', timeout: 15_000 });
    const sender = await connect(info.address);
    const waiter = await connect(info.address);
    const subscriber = await connect(info.address);
    const seen: Notification[] = [];
    subscriber.onNotification((n) => seen.push(n));
    await subscriber.request('pty/subscribe', {});
    const sent = sender.request('pty/send', { text: 'sleep 20', timeout: 30_000 });
    const waited = waiter.request('pty/wait', { match: 'never-printed', timeout: 30_000 });
    const waitedOnControl = control.request('pty/wait', { session: info.id, match: 'never-printed', timeout: 30_000 });
    await until(
      async () => (await control.request<{ screen: string }>('pty/read', { session: info.id })).screen.includes('sleep 20'),
      10_000,
      'the command typed',
    );
    await h.close();
    closed = true;
    const send = (await sent) as { waitReason: string; status: { kind: string } };
    assert.equal(send.waitReason, 'session_exit');
    assert.equal(send.status.kind, 'exited');
    assert.equal(((await waited) as { reason: string }).reason, 'session_exit');
    assert.equal(((await waitedOnControl) as { reason: string }).reason, 'session_exit');
    assert.ok(
      seen.some((n) => n.method === 'pty/exit'),
      `pty/exit; got ${seen.map((n) => n.method).join(' ')}`,
    );
    for (const c of [control, sender, waiter, subscriber]) c.close();
  } finally {
    if (!closed) await h.close();
  }
});
