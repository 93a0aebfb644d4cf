// `shared-pty record` and `shared-pty play` (docs/protocol.md#ptyrecord), as a user runs them: the built CLI as
// child processes, against a real host (found through discovery) running real bash.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { killPid, runCli, runEach, startCli, startedPids, stopPid } from '../../helpers/cli';
import { BASH, connect, startHost, until, clientsClosed } from '../../helpers/host';
import { buildCli } from '../../helpers/protocol';
import type { RpcClient } from '../../../src/transport/client/rpc-client';
import { ensureNoDisposablesAreLeakedBySuite } from '../../helpers/leak-tracker';

type Host = Awaited<ReturnType<typeof startHost>>;

let h: Host;
let c: RpcClient;
let env: NodeJS.ProcessEnv;
let out: string;

before(async () => {
  buildCli();
  h = await startHost();
  c = await connect(h.host.controlAddress);
  env = { ...process.env, SHARED_PTY_DIR: h.dir };
  out = fs.mkdtempSync(path.join(os.tmpdir(), 'spt-rec-cli-'));
});

after(async () => {
  for (const pid of startedPids) await stopPid(pid);
  c?.close();
  await h?.close();
  fs.rmSync(out, { recursive: true, force: true });
});
// Once the shared host is closed, nothing the suite made is left (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedBySuite(clientsClosed);

const rpc = (method: string, params: Record<string, unknown>) => c.request<any>(method, params);

async function bash(): Promise<string> {
  const info = await rpc('session/create', { ...BASH, cols: 80, rows: 24 });
  await until(async () => (await rpc('pty/read', { session: info.id })).screen.includes('$'), 10_000, 'a prompt');
  return info.id;
}

/** Resolves once a foreground `record` says it records (its Ctrl+C handler is in place by then). */
async function recordingStarted(run: ReturnType<typeof startCli>): Promise<void> {
  let err = '';
  run.child.stderr!.on('data', (d: Buffer | string) => (err += d.toString()));
  await until(() => err.includes('Ctrl+C stops'), 10_000, 'record to start');
}

const outputOf = (file: string) =>
  fs
    .readFileSync(file, 'utf8')
    .trimEnd()
    .split('\n')
    .slice(1)
    .map((l) => JSON.parse(l))
    .filter((e) => e[1] === 'o')
    .map((e) => e[2])
    .join('');

describe('shared-pty record', () => {
  test('records until Ctrl+C: prints the path first, says where it saved, and the recording has stopped', { timeout: 60_000 }, async () => {
    const session = await bash();
    const file = path.join(out, 'ctrl-c.cast');
    const run = startCli(['record', session, file], env);
    await recordingStarted(run);
    await rpc('pty/send', { session, text: 'echo recorded-$((3*5))', timeout: 20_000 });
    killPid(run.pid, 'SIGINT');
    const r = await run.result;
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, `${file}\n`);
    assert.match(r.stderr, /Ctrl\+C stops/);
    assert.match(r.stderr, new RegExp(`Saved ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
    assert.match(outputOf(file), /recorded-15/);
    assert.equal((await rpc('pty/record', { session, stop: true })).path, null, 'nothing records any more');
    await rpc('pty/kill', { session });
  });

  test('ends by itself when the session exits, the exit status last in the file', { timeout: 60_000 }, async () => {
    const session = await bash();
    const file = path.join(out, 'exit.cast');
    const run = startCli(['record', session, file], env);
    await recordingStarted(run);
    await rpc('pty/write', { session, action: { text: 'exit 7\r' } });
    const r = await run.result;
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /\(the session ended\)/);
    const last = JSON.parse(fs.readFileSync(file, 'utf8').trimEnd().split('\n').at(-1)!);
    assert.deepEqual(last.slice(1), ['x', '7']);
  });

  test('--detach leaves it recording; --stop stops it and prints the path; a second --stop fails in one line', { timeout: 60_000 }, async () => {
    const session = await bash();
    const file = path.join(out, 'detached.cast');
    const started = await runCli(['record', session, file, '--detach'], env);
    assert.equal(started.code, 0, started.stderr);
    assert.equal(started.stdout, `${file}\n`);
    await rpc('pty/send', { session, text: 'echo while-detached', timeout: 20_000 });
    const stopped = await runCli(['record', session, '--stop'], env);
    assert.equal(stopped.code, 0, stopped.stderr);
    assert.equal(stopped.stdout, `${file}\n`);
    assert.match(outputOf(file), /while-detached/);
    const again = await runCli(['record', session, '--stop'], env);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /^shared-pty: session \S+ is not being recorded\n$/);
    const exists = await runCli(['record', session, file, '--detach'], env);
    assert.equal(exists.code, 1);
    assert.match(exists.stderr, /file exists/);
    const usage = await runCli(['record', session, file, '--stop'], env);
    assert.equal(usage.code, 2);
    // Paths the system cannot take are told in the command's words, the path shown by its start.
    const [tooLong, longName, notFolder, folder] = await runEach(
      [
        ['record', session, path.join(out, 'x'.repeat(5000)), '--detach'],
        ['record', session, path.join(out, 'y'.repeat(300)), '--detach'],
        ['record', session, path.join(file, 'inside.cast'), '--detach'],
        ['record', session, out, '--detach'],
      ],
      env,
    );
    assert.equal(folder.code, 1);
    assert.match(folder.stderr, /^shared-pty: Cannot record to \S+: it is a folder\n$/);
    assert.equal(tooLong.code, 2);
    assert.match(tooLong.stderr, /^shared-pty: Cannot record to \S+…: the path is longer than 4095 characters/);
    assert.equal(longName.code, 1);
    assert.match(longName.stderr, /^shared-pty: Cannot record to \S+…: its path, or a name in it, is too long\n$/);
    assert.equal(notFolder.code, 1);
    assert.match(notFolder.stderr, /^shared-pty: Cannot record to \S+: a part of its path is not a folder\n$/);
    await rpc('pty/kill', { session });
  });

  test('--input keeps the text typed; without it only who typed and how many bytes', { timeout: 60_000 }, async () => {
    const session = await bash();
    const typed = (file: string) =>
      fs
        .readFileSync(file, 'utf8')
        .trimEnd()
        .split('\n')
        .slice(1)
        .map((l) => JSON.parse(l))
        .filter((e) => e[1] === 'i' || (e[1] === 'm' && String(e[2]).startsWith('input from')))
        .map((e) => `${e[1]} ${e[2]}`);
    const withText = path.join(out, 'input.cast');
    assert.equal((await runCli(['record', session, withText, '--input', '--detach'], env)).code, 0);
    await rpc('pty/write', { session, action: { text: 'echo kept\r' } });
    await until(async () => (await rpc('pty/read', { session })).screen.includes('kept\n'), 10_000, 'the command');
    assert.equal((await runCli(['record', session, '--stop'], env)).code, 0);
    assert.deepEqual(typed(withText), ['m input from script via control', 'i echo kept\r']);
    const without = path.join(out, 'no-input.cast');
    assert.equal((await runCli(['record', session, without, '--detach'], env)).code, 0);
    await rpc('pty/write', { session, action: { text: 'echo not-kept\r' } });
    await until(async () => (await rpc('pty/read', { session })).screen.includes('not-kept\n'), 10_000, 'the command');
    assert.equal((await runCli(['record', session, '--stop'], env)).code, 0);
    assert.deepEqual(typed(without), ['m input from script via control: 14 bytes']);
    assert.equal((await runCli(['record', session, '--stop', '--input'], env)).code, 2, '--input is for starting one');
    await rpc('pty/kill', { session });
  });
});

describe('shared-pty play', () => {
  test('refuses what it cannot play with one clear line', { timeout: 30_000 }, async () => {
    const missing = await runCli(['play', path.join(out, 'nope.cast')], env);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /^shared-pty: cannot read .*nope\.cast: no such file\n$/);
    const v2 = path.join(out, 'v2.cast');
    fs.writeFileSync(v2, '{"version": 2, "width": 80, "height": 24}\n[0.1, "o", "hi"]\n');
    const old = await runCli(['play', v2], env);
    assert.equal(old.code, 1);
    assert.match(old.stderr, /not an asciicast v3 recording/);
    const broken = path.join(out, 'broken.cast');
    fs.writeFileSync(broken, '{"version": 3, "term": {"cols": 80, "rows": 24}}\n[0.1, "o"]\n');
    assert.match((await runCli(['play', broken], env)).stderr, /line 2: not an asciicast event/);
    const speed = await runCli(['play', broken, '--speed', '0'], env);
    assert.equal(speed.code, 2);
    assert.match(speed.stderr, /--speed needs a positive number/);
  });

  test('plays the output in order, comments and other events skipped, long pauses capped', { timeout: 30_000 }, async () => {
    const file = path.join(out, 'hand.cast');
    // A pause of an hour: capped to --idle-limit, so the replay ends at once.
    fs.writeFileSync(
      file,
      '{"version": 3, "term": {"cols": 80, "rows": 24}}\n# a comment\n[0.5, "o", "one "]\n[3600, "i", "x"]\n[0.1, "m", "mark"]\n[0.1, "o", "two\\r\\n"]\n[0.1, "x", "0"]\n',
    );
    const r = await runCli(['play', file, '--idle-limit', '0.01'], env, 20_000);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'one two\r\n');
  });
});
