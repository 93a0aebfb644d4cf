// docs/hosts.md#remote-hosts: a host whose command ends before answering is one error naming the
// host, the command and how it ended, so a user can tell a crash from a refusal.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RemoteHosts } from '../../../src/host/remote-hosts';

async function reachError(command: string): Promise<string> {
  const remotes = new RemoteHosts({ file: '/nowhere/hosts.json', hosts: new Map([['box', command]]) });
  try {
    await remotes.connect('box');
    assert.fail('the connection was made');
  } catch (e) {
    return (e as Error).message;
  } finally {
    remotes.dispose();
  }
}

test('a bridge command killed by a signal is said to be, not only its status', { timeout: 30_000 }, async () => {
  // The shell that runs the command reports 128+15 for a child that died of SIGTERM.
  assert.match(
    await reachError(`sh -c 'echo bridge down >&2; kill -TERM $$'; exit $?`),
    /^cannot reach host "box" with: .* \(it exited with status 143 \(ended by SIGTERM\): bridge down/,
  );
  // A plain failure keeps its status alone (255 is ssh's own).
  assert.match(await reachError('echo no route >&2; exit 255'), /\(it exited with status 255: no route\)$/);
});
