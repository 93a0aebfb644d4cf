// A client's regex cannot freeze the host: `pty/wait` with a pattern that backtracks
// catastrophically answers -32602 ("too costly") after its budget, and a bystander on another
// connection is answered meanwhile. A real `shared-pty serve` host (its own process, so a frozen
// host fails this test instead of freezing it), real bash, real sockets.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import type { RpcClient } from '../../../../src/transport/client/rpc-client';
import { startServeHost, type ServeHost } from '../../../helpers/cli';
import { connect, rejectsWith, tempRuntimeDir, until, withTimeout } from '../../../helpers/host';
import { bashEnv, buildCli } from '../../../helpers/protocol';
import { ensureNoDisposablesAreLeakedInTestSuite } from '../../../helpers/leak-tracker';

// Every disposable a test makes is disposed by its end (docs/testing.md).
ensureNoDisposablesAreLeakedInTestSuite();

let dir: string;
let serve: ServeHost;
let waiter: RpcClient;
let bystander: RpcClient;
let session: string;

before(
  async () => {
    buildCli();
    dir = tempRuntimeDir();
    serve = await startServeHost(['--cmd', 'bash --norc --noprofile', '--no-http'], bashEnv({ SHARED_PTY_DIR: dir, PS1: '$ ' }));
    session = serve.record.sessions[0].id;
    waiter = await connect(serve.record.control);
    bystander = await connect(serve.record.control);
    await waiter.request('pty/write', { session, action: { text: "printf 'a%.0s' $(seq 1 40); echo b\n" } });
    await until(async () => /a{40}b/.test((await waiter.request<{ screen: string }>('pty/read', { session })).screen), 10_000, "the line of a's");
  },
  { timeout: 180_000 },
);

after(async () => {
  waiter?.close();
  bystander?.close();
  await serve?.stop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

test('a catastrophic regex in pty/wait is stopped with -32602, and the host answers a bystander meanwhile', { timeout: 60_000 }, async () => {
  const waiting = rejectsWith(waiter.request('pty/wait', { session, regex: '^(a+)+$', timeout: 20_000 }), -32602);
  const status = await withTimeout(bystander.request<{ running: boolean }>('pty/status', { session }), 20_000, "the bystander's pty/status");
  assert.equal(status.running, true);
  const err = await withTimeout(waiting, 20_000, "the costly wait's answer");
  assert.match(err.message, /too costly/);
  // The session and the host go on: an ordinary regex still matches.
  const ok = await waiter.request<{ matched: boolean }>('pty/wait', { session, regex: 'a{40}b', timeout: 5_000 });
  assert.equal(ok.matched, true);
});

// A wait on the output since a cursor reads each piece of output once as it comes: it used to
// strip the whole output since the cursor again at every look, and a 1.6 MB flood then took the
// host 40-46 s instead of under one, past this wait's own 20 s timeout (its answer, not a clock of
// the test's, is what is checked).
test(
  'a pty/wait for a regex in the output since a cursor keeps up with a flood and sees text whose sequences and backspaces span writes',
  { timeout: 120_000 },
  async () => {
    const since = (await waiter.request<{ cursor: number }>('pty/output', { session, since: Number.MAX_SAFE_INTEGER })).cursor;
    const waiting = waiter.request<{ reason: string; matched: boolean }>('pty/wait', { session, since, regex: '^flood-done$', timeout: 20_000 });
    const line = 'x'.repeat(70);
    await bystander.request('pty/write', {
      session,
      action: { text: `seq -f 'line %g ${line}' 1 20000; printf 'flood-d\\033['; sleep 0.3; printf '1mo\\033[0mx'; sleep 0.3; printf '\\bne\\n'\n` },
    });
    const r = await withTimeout(waiting, 90_000, 'the wait');
    assert.deepEqual([r.reason, r.matched], ['matched', true]);
  },
);
