// A command line node-pty cannot take is refused with a clear error before anything starts, on
// every way in: node-pty's native spawn ends the whole process with SIGSEGV on an argument that is
// no string (docs/protocol.md#sessioncreate). A real host, real sessions.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, rejectsWith, startHost } from '../../../../helpers/host';
import { ensureNoDisposablesAreLeakedBySuite } from '../../../../helpers/leak-tracker';
import { RpcError } from '../../../../../src/core/base/errors';
import { Session } from '../../../../../src/core/session/session';

const INVALID_PARAMS = -32602;

const hostP = startHost();
after(async () => (await hostP).close());
// Once the host is closed, nothing the suite made is left, a refused session included (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedBySuite();

/** Whether the host still opens a session and runs its program to its end. */
async function stillOpens(): Promise<void> {
  const { host } = await hostP;
  const s = await host.createSession({ command: 'sh', args: ['-c', 'exit 7'] });
  assert.equal((await s.exited).exitCode, 7);
  host.registry.remove(s.id);
}

test('session/create over the control socket with args, command or env that are no strings: -32602 naming the field; the host goes on', async () => {
  const { host } = await hostP;
  const c = await connect(host.controlAddress);
  try {
    for (const [params, field] of [
      [{ command: 'sh', args: [null] }, /args/],
      [{ command: 'sh', args: ['-c', 1] }, /args/],
      [{ command: 'sh', args: 'echo hi' }, /args/],
      [{ command: 5 }, /command/],
      [{ command: 'sh', env: { A: 1 } }, /env/],
    ] as const) {
      const e = await rejectsWith(c.request('session/create', params), INVALID_PARAMS);
      assert.match(e.message, field, JSON.stringify(params));
    }
    assert.ok(Array.isArray((await c.request<{ sessions: unknown[] }>('session/list')).sessions), 'the host answers');
  } finally {
    c.close();
  }
  await stillOpens();
});

test("the host's own callers: an undefined argument is refused with -32602, not a crash of the host", async () => {
  const { host } = await hostP;
  const refused = (await host.createSession({ command: 'sh', args: ['-c', undefined as unknown as string] }).then(
    () => undefined,
    (e: unknown) => e,
  )) as RpcError | undefined;
  assert.ok(refused instanceof RpcError, String(refused));
  assert.equal(refused.code, INVALID_PARAMS);
  assert.equal(refused.message, 'Cannot start the session: args[1] must be a string (got undefined)');
  assert.equal(host.registry.list().length, 0, 'nothing was opened');
  // A NUL byte would cut the argument short in the program's argv: refused as well.
  await assert.rejects(host.createSession({ command: 'sh', args: ['-c', 'echo a\0b'] }), /args\[1\] must not contain a NUL byte/);
  await stillOpens();
});

test('a Session made directly with an argument that is no string throws -32602 before it spawns', async () => {
  const make = (args: unknown[]) =>
    new Session({ id: 'direct', name: 'direct', command: 'sh', args: args as string[], cwd: '/', cols: 80, rows: 24, origin: 'script' });
  assert.throws(
    () => make([undefined]),
    (e: unknown) => e instanceof RpcError && e.code === INVALID_PARAMS && /args\[0\] must be a string \(got undefined\)/.test(e.message),
  );
  assert.throws(() => make([{}]), /args\[0\] must be a string \(got object\)/);
  await stillOpens();
});
