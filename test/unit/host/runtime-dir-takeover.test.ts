// Issue 21 item 2: the runtime directory cannot be taken over. Before, when a tmp cleaner deleted
// the directory under a running host, another local user who re-created it first (mode 0777) got
// the host's sockets and record written into a directory they own, and a symlink planted at the
// record's predictable temporary name (`<hostId>.json.<pid>.tmp`) received the host's token. Now
// the directory is checked (ours, mode 0700) before every write, files are made O_EXCL|O_NOFOLLOW
// under random names, and a taken-over directory stops the host listening there, in one line.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { readLiveRecords, type HostRecord } from '../../../src/host/discovery';
import { connect, rejectsWith, startHost, until, clientsClosed } from '../../helpers/host';
import { startHttpHost } from '../../helpers/http';
import { buildCli, CLI } from '../../helpers/protocol';
import { runCli } from '../../helpers/cli';
import { LocalUser, localUserSkip as secondUserSkip } from '../../helpers/local-user';
import { ensureNoDisposablesAreLeakedInTestSuite } from '../../helpers/leak-tracker';

const TEST_TIMEOUT = 60_000;
const SERVER_ERROR = -32000;

const base = fs.mkdtempSync(path.join(os.tmpdir(), 'spt-takeover-'));
after(() => fs.rmSync(base, { recursive: true, force: true }));
// Every test leaves nothing undisposed (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedInTestSuite(clientsClosed);

/** The entries of `dir` with their owner, for comparing before and after. */
function entries(dir: string): string[] {
  return fs
    .readdirSync(dir)
    .sort()
    .map((name) => `${name} uid=${fs.lstatSync(path.join(dir, name)).uid}`);
}

describe('a runtime directory another local user re-creates under a running host', () => {
  let attacker: LocalUser;
  let host: ChildProcess | undefined;
  before(() => {
    buildCli();
    if (!secondUserSkip) attacker = LocalUser.create({}, 'sptatk');
  });
  after(() => {
    host?.kill('SIGKILL');
    attacker?.remove();
  });

  test(
    'the host writes neither its record nor its sockets there, follows no planted link, and says why in one line',
    { timeout: TEST_TIMEOUT, skip: secondUserSkip },
    async () => {
      // Like /tmp: anyone may make an entry, nobody may remove another's.
      fs.chmodSync(base, 0o711); // the attacker may pass through to it
      const shared = path.join(base, 'tmp');
      fs.mkdirSync(shared);
      fs.chmodSync(shared, 0o1777);
      const dir = path.join(shared, 'shared-pty');
      host = spawn(process.execPath, [CLI, 'serve', '--cmd', 'cat', '--quiet'], {
        env: { ...process.env, SHARED_PTY_DIR: dir },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      host.stderr!.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
      const rec: HostRecord = await until(
        () => fs.existsSync(dir) && readLiveRecords(dir).find((r) => r.pid === host!.pid && r.http !== null && r.sessions.length === 1),
        20_000,
        'the host record with its HTTP server and session',
      );
      assert.ok(rec.http?.token, 'the record holds the HTTP token');
      const before = await connect(rec.control);

      try {
        // The attacker prepares a directory of their own, open to all, with a link at the temporary
        // name the host used to write its record through, to a file they can read.
        const evil = path.join(shared, 'evil');
        const loot = path.join(shared, 'loot');
        attacker.run(`mkdir ${evil}; chmod 777 ${evil}; : > ${loot}; chmod 666 ${loot}; ln -s ${loot} ${evil}/${rec.hostId}.json.${rec.pid}.tmp`);
        const planted = entries(evil);

        // The host is slow for a moment (stopped), a tmp cleaner deletes the directory, the
        // attacker's takes its place: the host sees it all at once when it runs on.
        process.kill(rec.pid, 'SIGSTOP');
        try {
          fs.rmSync(dir, { recursive: true, force: true });
          attacker.run(`mv ${evil} ${dir}`);
        } finally {
          process.kill(rec.pid, 'SIGCONT');
        }

        // Before: "files of host … were deleted; put back 2 socket(s) and the record" (into their folder).
        const said = await until(() => stderr.trim().split('\n').filter(Boolean).length > 0 && stderr, 20_000, 'the host to say something');
        assert.equal(fs.readFileSync(loot, 'utf8'), '', 'nothing was written through the planted link');
        assert.deepEqual(entries(dir), planted, 'no record, no socket folder: only what the attacker put there');
        const lines = said.trim().split('\n');
        assert.equal(lines.length, 1, said);
        assert.match(
          lines[0],
          new RegExp(
            `^shared-pty: the runtime directory was taken over: ${dir} is owned by uid ${attacker.uid}, not by you \\(uid 0\\).*; host ${rec.hostId} stopped listening there`,
          ),
        );

        // Its session goes on for the client already connected; it takes no new session there.
        const listed = await before.request<{ sessions: unknown[] }>('session/list', {});
        assert.equal(listed.sessions.length, 1);
        const refused = await rejectsWith(before.request('session/create', { command: 'cat' }), SERVER_ERROR);
        assert.match(refused.message, /takes no new sessions: the runtime directory was taken over/);

        // Stopped, it leaves the attacker's directory as it found it.
        const exited = new Promise((r) => host!.once('exit', r));
        host.kill('SIGTERM');
        await exited;
        assert.deepEqual(entries(dir), planted, 'nothing there was removed or added on the way out');
        assert.equal(fs.readFileSync(loot, 'utf8'), '');
      } finally {
        before.close();
      }
    },
  );
});

describe('writes after start-up', () => {
  test("a link planted at the record's old temporary name (<hostId>.json.<pid>.tmp) is never written through", { timeout: TEST_TIMEOUT }, async () => {
    const h = await startHttpHost();
    try {
      const loot = path.join(base, 'loot-planted');
      fs.writeFileSync(loot, '');
      fs.symlinkSync(loot, path.join(h.dir, `${h.host.hostId}.json.${process.pid}.tmp`));
      await h.host.createSession({ command: 'cat' }); // rewrites the record
      h.host.writeRecordNow();
      assert.equal(fs.readFileSync(loot, 'utf8'), '', 'the token did not go through the link');
      const record = path.join(h.dir, `${h.host.hostId}.json`);
      assert.ok(fs.lstatSync(record).isFile());
      assert.equal(fs.lstatSync(record).mode & 0o777, 0o600);
      assert.equal(JSON.parse(fs.readFileSync(record, 'utf8')).sessions.length, 1);
      // Temporary files are not left behind: only the record, the host's folder and the planted link.
      assert.deepEqual(fs.readdirSync(h.dir).sort(), [h.host.hostId, `${h.host.hostId}.json`, `${h.host.hostId}.json.${process.pid}.tmp`].sort());
    } finally {
      await h.close();
    }
  });

  test(
    'a runtime directory whose mode was opened (0777) is found at the next write: the host stops listening there, in one line, and writes nothing more',
    { timeout: TEST_TIMEOUT },
    async () => {
      const h = await startHost();
      const said: string[] = [];
      const write = process.stderr.write.bind(process.stderr);
      const open = await connect(h.host.controlAddress);
      await h.host.createSession({ command: 'cat' });
      const recordFile = path.join(h.dir, `${h.host.hostId}.json`);
      const recordBefore = fs.readFileSync(recordFile, 'utf8');
      process.stderr.write = ((chunk: string | Uint8Array) => {
        said.push(String(chunk));
        return true;
      }) as typeof process.stderr.write;
      try {
        fs.chmodSync(h.dir, 0o777);
        await assert.rejects(
          h.host.createSession({ command: 'cat' }),
          /This host takes no new sessions: the runtime directory was taken over: .* is writable by group or others \(mode 777\)/,
        );
        assert.equal(said.length, 1, said.join(''));
        assert.match(said[0], /^shared-pty: the runtime directory was taken over: .*; host \w+ stopped listening there and writes nothing more in it .*\n$/);
        // Before, the refused session was counted too: "its 2 sessions go on".
        assert.match(said[0], /\(its 1 session goes on for the clients already connected\)\n$/, 'only the session that goes on is counted');
        assert.equal(h.host.runtimeDirLost !== undefined, true);
        assert.equal(fs.readFileSync(recordFile, 'utf8'), recordBefore, 'the record was not rewritten');

        // New clients are refused at the control socket, told why in one error and nothing served;
        // the one connected before is served.
        const told = await new Promise<string>((resolve) => {
          let got = '';
          const s = net.connect(h.host.controlAddress.replace(/^unix:/, ''));
          s.on('error', () => resolve(got));
          s.on('close', () => resolve(got));
          s.on('data', (d) => (got += d.toString('utf8')));
          s.write('{"jsonrpc":"2.0","id":1,"method":"session/list"}\n');
        });
        const lines = told.split('\n').filter(Boolean);
        assert.equal(lines.length, 1, told);
        const refusal = JSON.parse(lines[0]) as { id: unknown; error?: { code: number; message: string } };
        assert.equal(refusal.id, null);
        assert.equal(refusal.error?.code, SERVER_ERROR);
        assert.match(
          refusal.error!.message,
          new RegExp(
            `^it stopped serving in its runtime directory, as the runtime directory was taken over: .* \\(mode 777\\).* \\(its 1 session goes on for the clients already connected; end it, kill ${process.pid}, for a new host to start there\\)$`,
          ),
        );
        assert.ok(Array.isArray((await open.request<{ sessions: unknown[] }>('session/list', {})).sessions));

        // The directory put right (chmod 700, as said), a CLI command there is told the same in one line
        // (it was "Connection closed" or "the connection to the Shared PTY host … closed", no more).
        fs.chmodSync(h.dir, 0o700);
        const read = await runCli(['read', h.host.registry.list()[0]!.id], { ...process.env, SHARED_PTY_DIR: h.dir });
        assert.equal(read.code, 1, read.stderr);
        assert.match(
          read.stderr,
          new RegExp(
            `^shared-pty: the Shared PTY host ${h.host.hostId} refused the connection: it stopped serving in its runtime directory, as the runtime directory was taken over: .*; end it, kill ${process.pid}, for a new host to start there\\)\n$`,
          ),
        );
      } finally {
        process.stderr.write = write;
        open.close();
        await h.host.close();
        assert.ok(fs.existsSync(recordFile), 'a directory not ours: nothing in it is removed');
        fs.rmSync(h.dir, { recursive: true, force: true });
      }
    },
  );
});

test('after a takeover, commands still run in a session opened before, and no command log is written there', { timeout: TEST_TIMEOUT }, async () => {
  const h = await startHost();
  const c = await connect(h.host.controlAddress);
  const write = process.stderr.write.bind(process.stderr);
  const home = fs.mkdtempSync(path.join(base, 'home-'));
  try {
    fs.writeFileSync(path.join(home, '.bashrc'), "PS1='my> '\nHISTFILE=/dev/null\n");
    const info = await c.request<{ id: string }>('session/create', { command: 'bash', cwd: home, env: { HOME: home } });
    await until(async () => (await c.request<{ screen: string }>('pty/read', { session: info.id })).screen.trimEnd().endsWith('>'), 15_000, 'the first prompt');
    const logs = path.join(h.host.hostDir, 'logs', info.id);
    const logFiles = () => (fs.existsSync(logs) ? fs.readdirSync(logs).sort() : []);
    await c.request('pty/send', { session: info.id, text: 'echo one', timeout: 30_000 });
    const before = logFiles();
    assert.equal(before.length, 1, 'the first command has its log (shell integration works here)');

    process.stderr.write = (() => true) as typeof process.stderr.write; // its one line is checked above
    fs.chmodSync(h.dir, 0o777);
    const sent = await c.request<{ output: string }>('pty/send', { session: info.id, text: 'echo two-$((1+1))', timeout: 30_000 });
    assert.match(sent.output, /two-2/, 'the session goes on');
    assert.equal(h.host.runtimeDirLost !== undefined, true, 'found before a write');
    assert.deepEqual(logFiles(), before, 'no new log file there');
  } finally {
    process.stderr.write = write;
    c.close();
    await h.host.close();
    fs.rmSync(h.dir, { recursive: true, force: true });
  }
});

test('a takeover while a command prints: its log gets not one byte more, and the host says so', { timeout: TEST_TIMEOUT }, async () => {
  const h = await startHost();
  const c = await connect(h.host.controlAddress);
  const write = process.stderr.write.bind(process.stderr);
  const said: string[] = [];
  const home = fs.mkdtempSync(path.join(base, 'home-'));
  try {
    fs.writeFileSync(path.join(home, '.bashrc'), "PS1='my> '\nHISTFILE=/dev/null\n");
    const info = await c.request<{ id: string }>('session/create', { command: 'bash', cwd: home, env: { HOME: home } });
    await until(async () => (await c.request<{ screen: string }>('pty/read', { session: info.id })).screen.trimEnd().endsWith('>'), 15_000, 'the first prompt');
    await c.request('pty/send', { session: info.id, text: 'for i in $(seq 1 100); do echo line-$i; sleep 0.05; done', timeout: 100 });
    const logs = path.join(h.host.hostDir, 'logs', info.id);
    const size = () => (fs.existsSync(logs) ? fs.readdirSync(logs).reduce((n, f) => n + fs.statSync(path.join(logs, f)).size, 0) : 0);
    await until(() => size() > 0, 10_000, 'the command log written');

    process.stderr.write = ((chunk: string | Uint8Array) => {
      said.push(String(chunk));
      return true;
    }) as typeof process.stderr.write;
    fs.chmodSync(h.dir, 0o777);
    await until(() => h.host.runtimeDirLost !== undefined, 10_000, "the takeover found by the log's next write, with no other write");
    const atLoss = size();
    await until(async () => (await c.request<{ screen: string }>('pty/read', { session: info.id })).screen.includes('line-100'), 20_000, 'the command to end');
    assert.equal(size(), atLoss, 'nothing more in the log');
    assert.equal(said.length, 1, said.join(''));
    assert.match(said[0], /runtime directory was taken over/);
  } finally {
    process.stderr.write = write;
    c.close();
    await h.host.close();
    fs.rmSync(h.dir, { recursive: true, force: true });
  }
});

test('the runtime directory chmod-ed while the host is idle: found at once (its own watch), not at the next write', { timeout: TEST_TIMEOUT }, async () => {
  const h = await startHost();
  const write = process.stderr.write.bind(process.stderr);
  const said: string[] = [];
  try {
    process.stderr.write = ((chunk: string | Uint8Array) => {
      said.push(String(chunk));
      return true;
    }) as typeof process.stderr.write;
    fs.chmodSync(h.dir, 0o777);
    // Nothing writes meanwhile: no session, no client, no request.
    await until(() => h.host.runtimeDirLost !== undefined, 10_000, 'the takeover found with no write to find it');
    assert.equal(said.length, 1, said.join(''));
    assert.match(said[0], /runtime directory was taken over: .*mode 777/);
  } finally {
    process.stderr.write = write;
    await h.host.close();
    fs.rmSync(h.dir, { recursive: true, force: true });
  }
});
