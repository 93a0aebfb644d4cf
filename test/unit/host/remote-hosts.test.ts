// docs/hosts.md#remote-hosts: a host whose command ends before answering is one error naming the
// host, the command and how it ended, so a user can tell a crash from a refusal; and a client done
// with its hosts ends every command it started, those still connecting too.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { RemoteHosts } from '../../../src/host/remote-hosts';
import { until } from '../../helpers/host';

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

/** Pids of the live processes whose command line holds `mark`. */
function holding(mark: string): number[] {
  const found: number[] = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'latin1');
      if (fs.readFileSync(`/proc/${name}/cmdline`, 'latin1').includes(mark) && stat.charAt(stat.lastIndexOf(')') + 2) !== 'Z') found.push(Number(name));
    } catch {
      // exited
    }
  }
  return found;
}

test('dispose ends a bridge command still connecting, with what it started, and its connect fails as closing', { timeout: 30_000 }, async () => {
  // A command that never answers (an ssh stuck in its handshake), one of them ignoring SIGTERM.
  const mark = `8${process.pid % 1000}.${Date.now() % 100_000}`;
  const remotes = new RemoteHosts({
    file: '/nowhere/hosts.json',
    hosts: new Map([
      ['hang', `sleep ${mark}1`],
      ['stubborn', `trap '' TERM; sleep ${mark}2`],
    ]),
  });
  try {
    const connecting = ['hang', 'stubborn'].map((name) => remotes.connect(name));
    await until(() => holding(`${mark}1`).length > 0 && holding(`${mark}2`).length > 0, 10_000, 'the commands started');
    const started = Date.now();
    remotes.dispose();
    assert.ok(remotes.closing);
    for (const c of connecting) await assert.rejects(c, /the connection is being closed/);
    // SIGTERM at once; the one that ignores it is killed EXIT_WAIT_MS (2 s) later.
    await until(() => holding(`${mark}1`).length === 0, 1000, 'the sleep that takes SIGTERM ended at once');
    await until(() => holding(mark).length === 0, 4000, 'the one that ignores SIGTERM killed');
    assert.ok(Date.now() - started < 4000);
  } finally {
    for (const pid of holding(mark)) process.kill(pid, 'SIGKILL');
  }
});
