import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DAEMON_LOG, ensureDaemon, findDaemon } from '../../src/host/daemon';
import { tempRuntimeDir, until } from '../helpers/host';

// The per-user host starts detached on first need; when it cannot start, the caller hears why
// (the last line it wrote to daemon.log), not a bare timeout.

const dir = tempRuntimeDir();
after(() => {
  const rec = findDaemon(dir);
  if (rec) process.kill(rec.pid, 'SIGTERM');
  fs.rmSync(dir, { recursive: true, force: true });
});

test('a host that cannot start is reported with its last words, and its log is 0600', async () => {
  const script = path.join(dir, 'broken-cli.js');
  fs.writeFileSync(script, "process.stderr.write('node-pty failed to load: boom\\n'); process.exit(3);\n");
  await assert.rejects(ensureDaemon({ cliPath: script, runtimeDir: dir }), /exited with 3: node-pty failed to load: boom/);
  assert.equal(fs.statSync(path.join(dir, DAEMON_LOG)).mode & 0o777, 0o600);
});

test('the real host starts once, detached, and a second call finds it', async () => {
  const cli = path.join(__dirname, '..', '..', 'bin', 'shared-pty.js');
  const first = await ensureDaemon({ cliPath: cli, runtimeDir: dir });
  assert.equal(first.kind, 'daemon');
  const second = await ensureDaemon({ cliPath: cli, runtimeDir: dir });
  assert.equal(second.hostId, first.hostId);
  process.kill(first.pid, 'SIGTERM');
  await until(() => !findDaemon(dir), 10000, 'the daemon to stop');
});
