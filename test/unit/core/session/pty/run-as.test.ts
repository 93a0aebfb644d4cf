// docs/protocol.md#sessioncreate: pty-session-mcp's uid/gid switch users only for a host running as root.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runAsLaunch, runAsOf } from '../../../../../src/core/session/pty/run-as';
import { ensureNoDisposablesAreLeakedInTestSuite } from '../../../../helpers/leak-tracker';

ensureNoDisposablesAreLeakedInTestSuite();

test('uid/gid: only a root host switches, and root asking for root (or nothing) is no switch', () => {
  assert.deepEqual(runAsOf(65534, 65534, 0), { uid: 65534, gid: 65534 });
  assert.deepEqual(runAsOf(1000, undefined, 0), { uid: 1000, gid: 0 }, "pty-session-mcp's default for the other one is 0");
  assert.equal(runAsOf(0, 0, 0), undefined);
  assert.equal(runAsOf(undefined, undefined, 0), undefined);
  // A host that is not root runs the program as itself, as pty-session-mcp does.
  assert.equal(runAsOf(65534, 65534, 1000), undefined);
  assert.equal(runAsOf(0, 0, 1000), undefined);
});

test("the launch: setpriv with the ids and the account's groups (none for a uid no account has), and the account's names", () => {
  const nobody = runAsLaunch({ uid: 65534, gid: 65534 }, 'sh', ['-c', 'id']);
  assert.deepEqual(nobody.args, ['--reuid=65534', '--regid=65534', '--init-groups', '--', 'sh', '-c', 'id']);
  assert.equal(nobody.command, 'setpriv');
  assert.deepEqual(nobody.names, { HOME: '/nonexistent', USER: 'nobody', LOGNAME: 'nobody' });
  const unknown = runAsLaunch({ uid: 4_000_000_000, gid: 4_000_000_000 }, 'sh', []);
  assert.equal(unknown.args[2], '--clear-groups');
  assert.deepEqual(unknown.names, {});
});
