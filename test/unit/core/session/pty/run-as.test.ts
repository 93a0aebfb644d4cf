// docs/protocol.md#sessioncreate: pty-session-mcp's uid/gid switch users only for a host running as root.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rootNames, runAsLaunch, runAsOf } from '../../../../../src/core/session/pty/run-as';
import { ensureNoDisposablesAreLeakedInTestSuite } from '../../../../helpers/leak-tracker';

ensureNoDisposablesAreLeakedInTestSuite();

test('uid/gid: only a root host switches, and root asking for root (or nothing) is no switch', () => {
  assert.deepEqual(runAsOf(65534, 65534, 0), { uid: 65534, gid: 65534 });
  // A uid alone runs in that user's own group, never in root's (found by a checking audit); a gid alone is root's user.
  assert.deepEqual(runAsOf(1000, undefined, 0), { uid: 1000, gid: undefined });
  assert.deepEqual(runAsOf(undefined, 1000, 0), { uid: 0, gid: 1000 });
  assert.equal(runAsOf(0, 0, 0), undefined);
  assert.equal(runAsOf(0, undefined, 0), undefined, "root without a group is in root's own: no switch either");
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
  assert.equal(runAsLaunch({ uid: 65534 }, 'sh', []).args[1], '--regid=65534', "nobody's own group, from its account");
  const unknown = runAsLaunch({ uid: 4_000_000_000 }, 'sh', []);
  assert.deepEqual(unknown.args.slice(0, 3), ['--reuid=4000000000', '--regid=4000000000', '--clear-groups']);
  assert.deepEqual(unknown.names, { HOME: '/', USER: '4000000000', LOGNAME: '4000000000' });
});

test(
  'a root host running the program as itself names root: USER and LOGNAME always, HOME only when the host has none',
  { skip: process.getuid!() !== 0 && "needs root (root's account is read from the running user)" },
  () => {
    assert.deepEqual(rootNames(0, {}), { HOME: '/root', USER: 'root', LOGNAME: 'root' });
    assert.deepEqual(rootNames(0, { HOME: '/srv/home', USER: 'someone' }), { USER: 'root', LOGNAME: 'root' });
    assert.equal(rootNames(1000, {}), undefined, 'any other host leaves its environment as it is');
  },
);
