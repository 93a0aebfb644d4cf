import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { BASH, connect, startHost, until } from '../../../helpers/host';
import { isAlive as pidAlive } from '../../../../src/host/discovery';
import { ensureNoDisposablesAreLeakedBySuite } from '../../../helpers/leak-tracker';

// Editor-owned sessions carry a lease: when the window that showed them is gone for good (no
// client for leaseSeconds) they end, unless the user chose "Keep running" (session/keep).
// A test that shows a session outliving a lease does not sleep for the lease: a witness session,
// created later with the same lease and no client, ends first. Lease timers of the same length
// fire in the order they were set, so a lease that was (wrongly) running on the session under
// test would have ended it before the witness, however slow the machine.

/** Creates a session with `leaseSeconds` and no client, and waits until its lease ends it. */
async function witnessLease(host: Awaited<typeof hostP>['host'], leaseSeconds: number): Promise<void> {
  const w = await host.createSession({ ...BASH, leaseSeconds });
  await until(() => !host.registry.get(w.id), 10_000, `a witness session's ${leaseSeconds} s lease to end it`);
}

const hostP = startHost();

after(async () => (await hostP).close());
// Once the shared host is closed, nothing the suite made is left (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedBySuite();

test('a leased session with no client ends after its lease', async () => {
  const { host } = await hostP;
  const s = await host.createSession({ ...BASH, leaseSeconds: 0.3 });
  await until(() => !host.registry.get(s.id), 5000, 'the lease to end the session');
  // Its program goes too (SIGHUP, as a closing terminal sends it).
  await until(() => !pidAlive(s.pid), 5000, 'the shell to end');
});

test('a subscribed client keeps a leased session; leaving starts the lease', async () => {
  const { host } = await hostP;
  const s = await host.createSession({ ...BASH, leaseSeconds: 1.5 });
  const client = await connect(host.controlAddress);
  await client.request('pty/subscribe', { session: s.id });
  await witnessLease(host, 1.5);
  assert.ok(host.registry.get(s.id), 'still there while a client is attached');
  assert.equal(host.describe(s).clients, 1);
  client.close();
  await until(() => !host.registry.get(s.id), 5000, 'the lease to end the session after the client left');
});

test('session/keep (Keep running) clears the lease', async () => {
  const { host } = await hostP;
  const s = await host.createSession({ ...BASH, leaseSeconds: 1.5 });
  const client = await connect(host.controlAddress);
  const r = await client.request<{ leaseSeconds: number | null }>('session/keep', { session: s.id });
  assert.equal(r.leaseSeconds, null);
  client.close();
  await witnessLease(host, 1.5);
  assert.ok(host.registry.get(s.id), 'kept running with no client');
  assert.equal(host.registry.get(s.id)?.running, true);
  host.registry.remove(s.id);
});

test('a session without a lease runs on with no client', async () => {
  const { host } = await hostP;
  const s = await host.createSession({ ...BASH });
  await witnessLease(host, 0.3);
  assert.equal(host.registry.get(s.id)?.running, true);
  host.registry.remove(s.id);
});

test('clients counts each client once: a session-socket connection that subscribes, a control subscriber', async () => {
  const { host } = await hostP;
  const s = await host.createSession({ ...BASH });
  const own = await connect(host.describe(s).address);
  await own.request('pty/subscribe', {});
  await until(() => host.describe(s).clients === 1, 5000, 'one client');
  const control = await connect(host.controlAddress);
  await control.request('pty/subscribe', { session: s.id });
  await until(() => host.describe(s).clients === 2, 5000, 'two clients');
  own.close();
  control.close();
  await until(() => host.describe(s).clients === 0, 5000, 'no client');
  host.registry.remove(s.id);
});
