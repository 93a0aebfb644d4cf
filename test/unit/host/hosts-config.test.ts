// docs/hosts.md#remote-hosts: hosts.json is found where the user's configuration lives, a file that
// cannot be used says what is wrong and where, and `NAME:SELECTOR` names a remote host only when
// NAME is one (a local session whose name has a colon is still found).
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { HostsConfigError, hostsConfigPath, readHostsConfig, splitHostSelector, unknownHostError } from '../../../src/host/hosts-config';
import { ensureNoDisposablesAreLeakedInTestSuite } from '../../helpers/leak-tracker';

const base = fs.mkdtempSync(path.join(os.tmpdir(), 'spt-hosts-'));
after(() => fs.rmSync(base, { recursive: true, force: true }));
// Every test leaves nothing undisposed (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedInTestSuite();

function withFile(text: string | undefined): NodeJS.ProcessEnv {
  const dir = fs.mkdtempSync(path.join(base, 'cfg-'));
  if (text !== undefined) {
    fs.mkdirSync(path.join(dir, 'shared-pty'));
    fs.writeFileSync(path.join(dir, 'shared-pty', 'hosts.json'), text);
  }
  return { XDG_CONFIG_HOME: dir };
}

test('hosts.json is under $XDG_CONFIG_HOME when set, else ~/.config; no file is no remote host', () => {
  assert.equal(hostsConfigPath({ XDG_CONFIG_HOME: '/x/cfg' }), '/x/cfg/shared-pty/hosts.json');
  assert.equal(hostsConfigPath({}), path.join(os.homedir(), '.config', 'shared-pty', 'hosts.json'));
  assert.equal(readHostsConfig(withFile(undefined)).hosts.size, 0);
  const c = readHostsConfig(
    withFile(JSON.stringify({ hosts: { build: 'ssh build-box shared-pty bridge', 'pod.0': 'kubectl exec -i pod-0 -- shared-pty bridge' } })),
  );
  assert.deepEqual([...c.hosts.keys()], ['build', 'pod.0']);
});

test('a file that cannot be used is an error naming the file and what is wrong', () => {
  const cases: Array<[string, RegExp]> = [
    ['{ not json', /hosts\.json is not JSON/],
    ['{"build": "ssh b shared-pty bridge"}', /needs \{ "hosts": \{ "NAME": "COMMAND" \} \}/],
    ['{"hosts": {"build": 7}}', /host "build" needs a command/],
    ['{"hosts": {"build": "  "}}', /host "build" needs a command/],
    ['{"hosts": {"local": "ssh b shared-pty bridge"}}', /"local" cannot name a host/],
    ['{"hosts": {"a:b": "ssh b shared-pty bridge"}}', /"a:b" cannot name a host/],
    // JSON.parse would keep the last one and say nothing (found by an outside audit).
    ['{"hosts": {"build": "ssh b shared-pty bridge", "web": "x", "build": "false"}}', /host "build" is named twice/],
    ['{ "hosts" : { "b\\u0075ild": "x", "build": "y" } }', /host "build" is named twice/],
  ];
  for (const [text, message] of cases) {
    const env = withFile(text);
    assert.throws(
      () => readHostsConfig(env),
      (e: Error) => e instanceof HostsConfigError && message.test(e.message) && e.message.includes(hostsConfigPath(env)),
      text,
    );
  }
});

test('a hosts.json another user could change is not used: the file or a folder above it writable by others, or theirs', () => {
  const good = JSON.stringify({ hosts: { build: 'ssh build-box shared-pty bridge' } });
  const refused = (env: NodeJS.ProcessEnv, message: RegExp) =>
    assert.throws(
      () => readHostsConfig(env),
      (e: Error) => e instanceof HostsConfigError && message.test(e.message) && /its commands would run as you/.test(e.message),
      String(message),
    );
  const file = (env: NodeJS.ProcessEnv) => hostsConfigPath(env);
  let env = withFile(good);
  fs.chmodSync(file(env), 0o666);
  refused(env, /hosts\.json is writable by others \(mode 666\)/);
  fs.chmodSync(file(env), 0o644);
  assert.equal(readHostsConfig(env).hosts.size, 1, 'mode 644 is the usual one');
  fs.chmodSync(path.dirname(file(env)), 0o777);
  refused(env, /shared-pty is writable by others \(mode 777\) \(chmod go-w \S+shared-pty\)/);
  fs.chmodSync(path.dirname(file(env)), 0o755);
  // Writable by the user's private group (umask 002, as Debian and Ubuntu make a login's files) is the user's alone.
  const gid = process.getgid?.() ?? 0;
  fs.chownSync(file(env), process.getuid?.() ?? 0, gid);
  fs.chmodSync(file(env), 0o664);
  if (privateGroup(gid)) assert.equal(readHostsConfig(env).hosts.size, 1, "664 with the user's own group");
  if (process.getuid?.() === 0) {
    fs.chownSync(file(env), 0, 65534); // a group with other users in it (nogroup)
    refused(env, /hosts\.json is writable by others \(mode 664\)/);
    fs.chownSync(file(env), 0, gid);
  }
  // A path that cannot be examined (a link to itself) is one clear line, not a raw error.
  env = withFile(undefined);
  fs.mkdirSync(path.dirname(file(env)));
  fs.symlinkSync(file(env), file(env));
  refused(env, /hosts\.json cannot be examined \(ELOOP\)/);
  if (process.getuid?.() === 0) {
    // Another user's file, or a link another user made in the folder (root alone can hand them over here).
    env = withFile(good);
    fs.chownSync(file(env), 65534, 65534);
    refused(env, /hosts\.json is another user's file/);
    env = withFile(undefined);
    const real = path.join(base, `theirs-${Date.now()}.json`);
    fs.writeFileSync(real, good);
    fs.mkdirSync(path.dirname(file(env)));
    fs.symlinkSync(real, file(env));
    fs.lchownSync(file(env), 65534, 65534);
    refused(env, /hosts\.json is a link another user made/);
  }
});

/** Whether `gid` is a group of one: named as the user, no other member listed (`getent group`). */
function privateGroup(gid: number): boolean {
  const r = spawnSync('getent', ['group', String(gid)], { encoding: 'utf8' });
  const [name, , , members = ''] = r.status === 0 ? r.stdout.trim().split(':') : [];
  return name === os.userInfo().username && members.split(',').every((m) => m === '' || m === name);
}

test('the same name in other objects, or as a value, is no host named twice', () => {
  const env = withFile('{"note": {"build": 1, "x": {"build": 2}}, "hosts": {"build": "ssh build", "web": "build"}, "more": [{"build": 3}, {"build": 4}]}');
  assert.deepEqual([...readHostsConfig(env).hosts.keys()], ['build', 'web']);
});

test('NAME:SELECTOR splits only on a configured host or "local"; an unknown name lists the known ones', () => {
  const c = readHostsConfig(withFile(JSON.stringify({ hosts: { build: 'ssh b shared-pty bridge' } })));
  assert.deepEqual(splitHostSelector(c, 'build:bash-1'), { host: 'build', selector: 'bash-1' });
  assert.deepEqual(splitHostSelector(c, 'local:bash-1'), { host: 'local', selector: 'bash-1' });
  assert.deepEqual(splitHostSelector(c, 'notes:today'), { host: undefined, selector: 'notes:today' });
  assert.deepEqual(splitHostSelector(c, 'bash-1'), { host: undefined, selector: 'bash-1' });
  assert.match(unknownHostError(c, 'biuld').message, /no host named "biuld" in .*hosts\.json \(it names build; "local" is this machine\)/);
});
