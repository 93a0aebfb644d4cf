// Issue #14, faults: files deleted under a running host (a tmp cleaner, a user's `rm`). The host
// runs on, but nobody could find or reach it; it puts its record and sockets back at once, and
// connections already open are not disturbed.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { readLiveRecords } from '../../../src/host/discovery';
import { BASH, startHost, until, connect, clientsClosed } from '../../helpers/host';
import type { SessionInfo } from '../../../src/core/methods/types';
import { ensureNoDisposablesAreLeakedBySuite } from '../../helpers/leak-tracker';

let host: Awaited<ReturnType<typeof startHost>>;
before(async () => {
  host = await startHost();
});
after(async () => {
  await host.close();
});
// Once the shared host is closed, nothing the suite made is left (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedBySuite(clientsClosed);

/** True once a fresh client can connect to `address` and get an answer. */
async function answers(address: string, method: string): Promise<boolean> {
  try {
    const c = await connect(address);
    try {
      await c.request(method, {});
      return true;
    } finally {
      c.close();
    }
  } catch {
    return false;
  }
}

test('a deleted control socket, session socket, record or socket folder is put back; open connections go on', { timeout: 30_000 }, async () => {
  const { host: h, dir } = host;
  const s = await h.createSession({ ...BASH });
  const info = h.describe(s);
  const sessionSock = info.address.replace(/^unix:/, '');
  const controlSock = h.controlAddress.replace(/^unix:/, '');
  const open = await connect(h.controlAddress);
  try {
    fs.rmSync(controlSock);
    fs.rmSync(sessionSock);
    await until(() => fs.existsSync(controlSock) && fs.existsSync(sessionSock), 10_000, 'the sockets to be put back');
    assert.ok(await answers(h.controlAddress, 'session/list'), 'the control socket answers new clients');
    assert.ok(await answers(info.address, 'pty/status'), 'the session socket answers new clients');
    assert.equal(fs.statSync(controlSock).mode & 0o777, 0o600);

    fs.rmSync(path.join(dir, `${h.hostId}.json`));
    await until(() => readLiveRecords(dir).some((r) => r.hostId === h.hostId), 10_000, 'the record to be put back');

    fs.rmSync(h.hostDir, { recursive: true });
    await until(() => fs.existsSync(controlSock) && fs.existsSync(sessionSock), 10_000, 'the folder and its sockets to be put back');
    assert.equal(fs.statSync(h.hostDir).mode & 0o777, 0o700);
    assert.ok(await answers(h.controlAddress, 'session/list'));

    const listed = await open.request<{ sessions: SessionInfo[] }>('session/list', {});
    assert.deepEqual(
      listed.sessions.map((x) => x.id),
      [s.id],
      'the connection opened before is undisturbed',
    );
  } finally {
    open.close();
    h.registry.remove(s.id);
  }
});
