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
