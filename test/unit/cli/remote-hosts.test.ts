// docs/hosts.md#remote-hosts: sessions on other machines, reached by the command hosts.json names.
// The far machine is played by a real sshd on 127.0.0.1 (its own host key, a user key, its own
// config, stopped by pid afterwards) and by a plain `sh -c` command standing in for `docker exec`;
// behind each, a second runtime directory with its own per-user host, started by `shared-pty
// bridge` as it would be on another machine. Driven as users do: the built CLI as child processes,
// `attach` in a real PTY, `shared-pty mcp` with the official MCP client.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { SessionInfo } from '../../../src/core/methods/types';
import { loadNodePty } from '../../../src/core/session/pty-loader';
import { readLiveRecords } from '../../../src/host/discovery';
import { interruptedEvents, runCli, startCli, startedPids, stopPid, type CliResult } from '../../helpers/cli';
import { FloodCheck, makeFlood } from '../../helpers/flood';
import { connect, tempRuntimeDir, until, withTimeout } from '../../helpers/host';
import type { RpcClient } from '../../../src/transport/client/rpc-client';
import { bashEnv, buildCli, childrenOf, CLI, freePort, pidAlive, REPO_ROOT } from '../../helpers/protocol';

/**
 * Per-test bound: generous for a loaded machine (each ssh login there starts sshd's child, the far
 * Node and ours: seconds each on 2 busy cores), finite so a hang fails instead of blocking.
 */
const TEST_TIMEOUT = 120_000;
/** The sleep the `stubborn` host's command runs once its bridge ended: a number no other process uses. */
const STUBBORN_SLEEP = '97.3141';

/** Pids of the processes running `sleep STUBBORN_SLEEP` (ours: nothing else sleeps that long). */
function stubbornSleeps(): number[] {
  const found: number[] = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (fs.readFileSync(`/proc/${name}/cmdline`, 'latin1') === `sleep\0${STUBBORN_SLEEP}\0`) found.push(Number(name));
    } catch {
      // exited
    }
  }
  return found;
}
/** The flood sent through ssh to an attached terminal: 20 MB, a big build log or a `cat` of a large file. */
const FLOOD_BYTES = 20_000_000;
/** What the person types at the remote password prompt; it must show in no MCP result. */
const SECRET = 'remote-secret-Qx7';

const dirs: string[] = [];
let env: NodeJS.ProcessEnv;
/** `env` with a hosts.json that names only the `stubborn` host. */
let stubbornEnv: NodeJS.ProcessEnv;
/** The runtime directories of the "other machines": behind ssh, and behind the exec stand-in. */
let sshSide: string;
let execSide: string;
let sshd: ChildProcess | undefined;
let sshLog = '';
/** The command that reaches the box through ssh (the transport a test kills). */
let sshCommand: string;
/** The far side's home (its .bashrc sets the prompt `far> `). */
let farHome: string;

function dir(): string {
  const d = tempRuntimeDir();
  dirs.push(d);
  return d;
}

function cli(...args: string[]): Promise<CliResult> {
  return runCli(args, env);
}

function ok(r: CliResult, what: string): string {
  assert.equal(r.code, 0, `${what}: exit ${r.code}; stderr: ${r.stderr}; stdout: ${r.stdout}`);
  return r.stdout;
}

/** A one-line error on stderr, nothing on stdout, exit 1. */
function oneLineError(r: CliResult, what: string): string {
  assert.equal(r.code, 1, `${what}: exit 1, got ${r.code}; stderr: ${r.stderr}; stdout: ${r.stdout}`);
  assert.match(r.stderr, /^shared-pty: [^\n]+\n$/, `${what}: one line on stderr`);
  return r.stderr;
}

/** The remote side's environment, as the far machine's login would give it: its own runtime directory and home. */
function farSide(runtime: string, home: string): string {
  return `SHARED_PTY_DIR=${runtime} HOME=${home} SHELL=/bin/bash LANG=C.UTF-8 exec ${process.execPath} ${CLI} bridge`;
}

function ssh(key: string, port: number, remote: string): string {
  const options = [
    '-F /dev/null',
    `-i ${key}`,
    `-p ${port}`,
    '-o BatchMode=yes',
    '-o StrictHostKeyChecking=no',
    '-o UserKnownHostsFile=/dev/null',
    '-o LogLevel=ERROR',
  ];
  return `ssh ${options.join(' ')} ${process.env.USER ?? 'root'}@127.0.0.1 '${remote}'`;
}

/** Starts sshd on a free port with its own keys and config; resolves with the user key and the port. */
async function startSshd(base: string): Promise<{ key: string; port: number }> {
  const keygen = (file: string) => {
    const r = spawnSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', file], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
  };
  keygen(path.join(base, 'host_key'));
  keygen(path.join(base, 'user_key'));
  fs.copyFileSync(path.join(base, 'user_key.pub'), path.join(base, 'authorized_keys'));
  // Run as root, sshd wants its privilege separation directory (the package's service makes it).
  if (process.getuid?.() === 0) fs.mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
  const port = await freePort();
  const config = [
    `Port ${port}`,
    'ListenAddress 127.0.0.1',
    `HostKey ${path.join(base, 'host_key')}`,
    `PidFile ${path.join(base, 'sshd.pid')}`,
    `AuthorizedKeysFile ${path.join(base, 'authorized_keys')}`,
    'PasswordAuthentication no',
    'KbdInteractiveAuthentication no',
    'UsePAM no',
    // The keys live in a temporary directory under /tmp, which StrictModes would refuse.
    'StrictModes no',
    'PermitRootLogin prohibit-password',
  ];
  fs.writeFileSync(path.join(base, 'sshd_config'), config.join('\n') + '\n');
  sshd = spawn('/usr/sbin/sshd', ['-D', '-e', '-f', path.join(base, 'sshd_config')], { stdio: ['ignore', 'pipe', 'pipe'] });
  startedPids.add(sshd.pid!);
  sshd.stderr!.setEncoding('utf8').on('data', (d: string) => (sshLog += d));
  await until(
    () =>
      new Promise<boolean>((resolve) => {
        const s = net.connect(port, '127.0.0.1');
        s.once('connect', () => (s.destroy(), resolve(true)));
        s.once('error', () => resolve(false));
      }),
    15_000,
    `sshd listening (${sshLog})`,
  );
  return { key: path.join(base, 'user_key'), port };
}

/**
 * The far side's own per-user host, reached directly (as a person on that machine would): the test
 * watches through it what happens there, without going through the transport under test.
 */
async function onFarSide<T>(runtime: string, fn: (far: RpcClient) => Promise<T>): Promise<T> {
  const [record] = readLiveRecords(runtime);
  assert.ok(record, `a host runs in ${runtime}`);
  const far = await connect(record.control);
  try {
    return await fn(far);
  } finally {
    far.close();
  }
}

/** Waits on the far side until `session`'s screen shows `text`. */
function farScreenShows(runtime: string, session: string, text: string): Promise<unknown> {
  return onFarSide(runtime, async (far) => {
    const r = await far.request<{ matched: boolean }>('pty/wait', { session, match: text, timeout: 30_000 });
    assert.ok(r.matched, `the far screen shows ${text}`);
  });
}

/** The pid of the process named `comm` among the descendants of `pid`. */
function descendant(pid: number, comm: string): number | undefined {
  for (const c of childrenOf(pid)) {
    if (c.comm === comm) return c.pid;
    const deeper = descendant(c.pid, comm);
    if (deeper) return deeper;
  }
  return undefined;
}

before(async () => {
  buildCli();
  const base = dir();
  sshSide = dir();
  execSide = dir();
  const home = (farHome = dir());
  // The shell's rc file is read (integration is injected beside it): a known prompt to wait for.
  fs.writeFileSync(path.join(home, '.bashrc'), "PS1='far> '\nHISTFILE=/dev/null\n");
  const { key, port } = await startSshd(base);
  const closed = await freePort(); // nothing listens there: ssh fails as it does for a box that is off
  sshCommand = ssh(key, port, farSide(sshSide, home));
  const hosts = {
    box: sshCommand,
    // What `docker exec -i web shared-pty bridge` is to a container: a command that runs the bridge there.
    web: `sh -c '${farSide(execSide, home)}'`,
    off: ssh(key, closed, farSide(sshSide, home)),
  };
  const config = dir();
  fs.mkdirSync(path.join(config, 'shared-pty'));
  fs.writeFileSync(path.join(config, 'shared-pty', 'hosts.json'), JSON.stringify({ hosts }, null, 2));
  env = bashEnv({ SHARED_PTY_DIR: dir(), XDG_CONFIG_HOME: config });
  // A command that goes on after its bridge ended (as an ssh stuck on a dead link does), in a hosts.json of its own.
  const stubbornConfig = dir();
  fs.mkdirSync(path.join(stubbornConfig, 'shared-pty'));
  // Once its bridge ended it ignores SIGTERM too, and so does its sleep (an ignored signal is inherited).
  const stubborn = `sh -c '${farSide(execSide, home)}'; trap '' TERM HUP INT; sleep ${STUBBORN_SLEEP}`;
  // One that never answers and ignores SIGTERM, with a line of commands: killed youngest first, its
  // shell started the next sleep between its child's SIGKILL and its own (found by an outside audit).
  const hangtrap = `trap '' TERM HUP INT; sleep ${STUBBORN_SLEEP}; sleep ${STUBBORN_SLEEP}`;
  // One whose shell ignores SIGTERM around the bridge: the command's own shell dies of the SIGTERM,
  // this one starts its sleep after it (found by an audit of the fix above).
  const innertrap = `sh -c 'trap "" TERM; ${farSide(execSide, home)
    .replace(/^SHARED_PTY_DIR/, 'env SHARED_PTY_DIR')
    .replace(' exec ', ' ')}; sleep ${STUBBORN_SLEEP}; sleep ${STUBBORN_SLEEP}'`;
  fs.writeFileSync(path.join(stubbornConfig, 'shared-pty', 'hosts.json'), JSON.stringify({ hosts: { stubborn, hangtrap, innertrap } }));
  stubbornEnv = { ...env, XDG_CONFIG_HOME: stubbornConfig };
});

after(async () => {
  // The per-user hosts the bridges started, by their pids; then sshd and anything left of ours.
  for (const d of [sshSide, execSide, env?.SHARED_PTY_DIR ?? '']) if (d) for (const r of readLiveRecords(d)) await stopPid(r.pid);
  for (const pid of startedPids) await stopPid(pid);
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

/** The far session the tests share: `box:<id>`, opened by the first CLI test. */
let id: string;

describe('remote hosts through ssh and exec', () => {
  test('shared-pty bridge passes calls and notifications both ways and ends when its stdin closes', { timeout: TEST_TIMEOUT }, async () => {
    const bridge = spawn('sh', ['-c', farSide(execSide, dir())], { stdio: ['pipe', 'pipe', 'pipe'] });
    startedPids.add(bridge.pid!);
    let out = '';
    bridge.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
    const exited = new Promise<number | null>((resolve) => bridge.once('exit', (code) => resolve(code)));
    const send = (m: object) => bridge.stdin!.write(JSON.stringify({ jsonrpc: '2.0', ...m }) + '\n');
    send({ id: 1, method: 'session/create', params: { command: 'sh', args: ['-c', 'read x; echo "got $x"; sleep 30'] } });
    const created = await until(() => /"id":1,"result":\{"id":"(\w+)"/.exec(out), 20_000, `the session (${out})`);
    send({ id: 2, method: 'pty/subscribe', params: { session: created[1] } });
    send({ id: 3, method: 'pty/write', params: { session: created[1], action: { text: 'over-the-bridge\r' } } });
    await until(() => out.includes('"method":"pty/output"') && /got over-the-bridge/.test(out), 10_000, `output notifications (${out.slice(-300)})`);
    send({ id: 4, method: 'pty/kill', params: { session: created[1] } });
    await until(() => out.includes('"id":4'), 10_000, 'the kill answered');
    bridge.stdin!.end();
    assert.equal(await withTimeout(exited, 10_000, 'the bridge ends'), 0);
  });

  test('open --host through ssh, list with host, send with the exit code, wait by name with --host', { timeout: TEST_TIMEOUT }, async () => {
    id = ok(await cli('open', '--host', 'box', '--name', 'far-1'), 'open --host box').trim();
    assert.match(id, /^box:[a-z0-9]+$/, 'the printed selector names the host');
    assert.equal(readLiveRecords(sshSide).length, 1, 'the bridge started the per-user host on the far side');
    ok(await cli('wait', 'far-1', 'far>', '--host', 'box', '--timeout', '30000'), 'wait by name with --host');
    const sent = await cli('send', id, 'echo remote-$((6*7)); (exit 3)', '--timeout', '30000');
    assert.equal(sent.code, 3, `send exits with the remote command's code: ${sent.stdout} ${sent.stderr}`);
    assert.match(sent.stdout, /remote-42/);
    const listed = JSON.parse(ok(await cli('list', '--host', 'box', '--json'), 'list --host box')) as SessionInfo[];
    assert.deepEqual(
      listed.map((s) => [s.host, s.name]),
      [['box', 'far-1']],
    );
    const all = await cli('list');
    assert.equal(all.code, 1, 'a host that cannot be reached makes list fail, after listing the others');
    assert.match(all.stdout, new RegExp(`^${id}\\s+far-1\\s+running`, 'm'), all.stdout);
    assert.match(all.stderr, /^shared-pty: cannot reach host "off"[^\n]*\n$/);
  });

  test('the exec stand-in works as ssh does, and SHARED_PTY_HOST picks the host', { timeout: TEST_TIMEOUT }, async () => {
    const web = ok(await runCli(['open', '--', 'sh', '-c', 'echo in-the-container; exec cat'], { ...env, SHARED_PTY_HOST: 'web' }), 'open on web').trim();
    assert.match(web, /^web:/);
    assert.equal(readLiveRecords(execSide).length, 1);
    await farScreenShows(execSide, web.slice(4), 'in-the-container');
    // A command of this machine only (a link opens here) does not quietly take a session of this machine for it.
    for (const command of ['view', 'share']) {
      const refused = oneLineError(await runCli([command, web.slice(4)], { ...env, SHARED_PTY_HOST: 'web' }), `${command} with SHARED_PTY_HOST`);
      assert.match(
        refused,
        new RegExp(`shared-pty ${command} works on this machine's sessions, and SHARED_PTY_HOST names host "web": say local:${web.slice(4)}`),
      );
    }
    ok(await runCli(['kill', web.slice(4)], { ...env, SHARED_PTY_HOST: 'web' }), 'kill by its id alone on SHARED_PTY_HOST');
    const left = JSON.parse(ok(await cli('list', '--host', 'web', '--json'), 'list web')) as SessionInfo[];
    assert.equal(left.length, 0, 'killed on its host');
  });

  test('a command that goes on after its bridge ended is ended with what it started, before the CLI command exits', { timeout: TEST_TIMEOUT }, async () => {
    try {
      const listed = await runCli(['list', '--host', 'stubborn'], stubbornEnv);
      assert.equal(listed.code, 0, listed.stderr);
      // Time for the bridge to see its stdin close and the command to go on to its sleep, were it still there.
      await new Promise((r) => setTimeout(r, 1500));
      assert.deepEqual(stubbornSleeps(), [], 'no sleep of its command outlives `list`');
    } finally {
      for (const pid of stubbornSleeps()) process.kill(pid, 'SIGKILL');
    }
  });

  test('a command that ignores SIGTERM and runs a line of commands is ended whole when the CLI command is interrupted', { timeout: TEST_TIMEOUT }, async () => {
    try {
      for (let i = 0; i < 3; i++) {
        const run = startCli(['read', 'hangtrap:x'], stubbornEnv, 60_000);
        await until(() => stubbornSleeps().length > 0, 20_000, 'the host command to run its first sleep');
        process.kill(run.pid, 'SIGINT');
        const ended = await run.result;
        assert.equal(ended.signal, 'SIGINT', `ended by the signal: ${ended.code} ${ended.stderr}`);
        // Time for a shell left behind to go on to its next sleep.
        await new Promise((r) => setTimeout(r, 1000));
        assert.deepEqual(stubbornSleeps(), [], 'no sleep of its command outlives the CLI command');
      }
    } finally {
      for (const pid of stubbornSleeps()) process.kill(pid, 'SIGKILL');
    }
  });

  test('a command whose inner shell ignores SIGTERM is ended whole when the CLI command ends by a signal mid-call', { timeout: TEST_TIMEOUT }, async () => {
    try {
      const opened = await runCli(['open', '--host', 'innertrap', '--', 'sleep', '600'], stubbornEnv);
      assert.equal(opened.code, 0, opened.stderr);
      const run = startCli(['wait', opened.stdout.trim(), 'never-there', '--timeout', '60000'], stubbornEnv, 60_000);
      await until(async () => (await runCli(['list', '--host', 'innertrap'], stubbornEnv)).stdout.includes('sleep 600'), 20_000, 'the far session listed');
      await new Promise((r) => setTimeout(r, 500));
      process.kill(run.pid, 'SIGTERM');
      const ended = await run.result;
      assert.equal(ended.signal, 'SIGTERM', `ended by the signal: ${ended.code} ${ended.stderr}`);
      // Time for a shell left behind to go on to its next sleep.
      await new Promise((r) => setTimeout(r, 1500));
      assert.deepEqual(stubbornSleeps(), [], 'no sleep of its command outlives the CLI command');
      await runCli(['kill', opened.stdout.trim()], stubbornEnv);
    } finally {
      for (const pid of stubbornSleeps()) process.kill(pid, 'SIGKILL');
    }
  });

  test(
    'a host that stops answering once connected, or answers no list, costs list its wait and one line; the others are listed',
    { timeout: TEST_TIMEOUT },
    async () => {
      // A bridge that answers its first call and then nothing (stall), or no list of sessions (garbled).
      const fake = (mode: string) =>
        `${JSON.stringify(process.execPath)} -e 'require("readline").createInterface({input: process.stdin}).on("line", (l) => { const m = JSON.parse(l); ` +
        `if (m.method === "host/info") process.stdout.write(JSON.stringify({jsonrpc: "2.0", id: m.id, result: {hostId: "fake"}}) + "\\n"); ` +
        `else if (${JSON.stringify(mode)} === "garbled") process.stdout.write(JSON.stringify({jsonrpc: "2.0", id: m.id, result: {sessions: "nope"}}) + "\\n"); })'`;
      const config = dir();
      fs.mkdirSync(path.join(config, 'shared-pty'));
      fs.writeFileSync(
        path.join(config, 'shared-pty', 'hosts.json'),
        JSON.stringify({ hosts: { stall: fake('stall'), garbled: fake('garbled'), web: `sh -c '${farSide(execSide, dir())}'` } }),
      );
      const web = ok(
        await runCli(['open', '--name', 'still-listed', '--', 'cat'], { ...env, XDG_CONFIG_HOME: config, SHARED_PTY_HOST: 'web' }),
        'open on web',
      ).trim();
      try {
        const listed = await runCli(['list'], { ...env, XDG_CONFIG_HOME: config });
        assert.equal(listed.code, 1, listed.stderr);
        assert.match(listed.stdout, /still-listed/, 'the host that answers is listed');
        const lines = listed.stderr.trim().split('\n').sort();
        assert.equal(lines.length, 2, listed.stderr);
        assert.match(lines[0], /^shared-pty: host "garbled" answered something that is not a list of sessions$/);
        assert.match(lines[1], /^shared-pty: host "stall" did not list its sessions within 10 s/);
        // A command naming a session there finds it by the same listing: the same one line, in the same time.
        const cfg = { ...env, XDG_CONFIG_HOME: config };
        assert.match(
          oneLineError(await runCli(['read', 'garbled:x'], cfg), 'read on garbled'),
          /^shared-pty: host "garbled" answered something that is not a list of sessions\n$/,
        );
        assert.match(
          oneLineError(await runCli(['send', 'stall:x', 'hi'], cfg), 'send on stall'),
          /^shared-pty: host "stall" did not list its sessions within 10 s/,
        );
        // Nor does open wait for ever on it (it gives a program 15 s to start there).
        const stalled = await runCli(['open', '--host', 'stall'], cfg);
        assert.equal(stalled.stdout, '', 'no id printed');
        assert.match(oneLineError(stalled, 'open on stall'), /^shared-pty: host "stall" did not open the session within 15 s/);
        // Nor is an answer that is no session printed as one.
        const opened = await runCli(['open', '--host', 'garbled'], cfg);
        assert.equal(opened.stdout, '', 'no id printed');
        assert.match(oneLineError(opened, 'open on garbled'), /^shared-pty: host "garbled" answered something that is not a session\n$/);
      } finally {
        ok(await runCli(['kill', web], { ...env, XDG_CONFIG_HOME: config }), 'kill on web');
      }
    },
  );

  test('a wrong host name, or a command that fails, is one line naming the host and what the command said', { timeout: TEST_TIMEOUT }, async () => {
    assert.match(
      oneLineError(await cli('read', 'nowhere:bash-1'), 'unknown host in a selector'),
      /no host named "nowhere" in .*hosts\.json; it names box, web, off/,
    );
    assert.match(oneLineError(await cli('list', '--host', 'nowhere'), 'unknown --host'), /no host named "nowhere"/);
    // `local:` then a configured host's name: a selector of this machine, not a host hosts.json lacks.
    assert.doesNotMatch(oneLineError(await cli('read', 'local:box:x1'), 'local: before a host name'), /no host named/);
    const off = oneLineError(await cli('read', 'off:bash-1'), 'a host whose ssh fails');
    assert.match(off, /cannot reach host "off" with: ssh .* \(it exited with status 255: .*Connection refused/);
  });

  test(
    'events of a far session through ssh, by name with --host and as HOST:ID: each as it happens, with host (a line names HOST:NAME); SIGINT ends it with 0',
    { timeout: TEST_TIMEOUT },
    async () => {
      assert.ok(id, 'the far session of the first test');
      const far = await connect(readLiveRecords(sshSide)[0].control);
      try {
        for (const args of [
          ['events', 'far-1', '--host', 'box', '--json'],
          ['events', id, '--json'],
          ['events', '--host', 'box'],
        ]) {
          const run = startCli(args, env, TEST_TIMEOUT);
          let out = '';
          run.child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
          // Listening once the far host counts the call; then a resize there is an event here.
          await until(
            async () => {
              await far.request('pty/resize', { session: id.slice('box:'.length), cols: 91, rows: 30 });
              await far.request('pty/resize', { session: id.slice('box:'.length), cols: 100, rows: 30 });
              return /resize/.test(out);
            },
            30_000,
            `a resize event on stdout (${args.join(' ')})`,
          );
          if (!args.includes('--json')) {
            // A session opened meanwhile is named from its first line on (the names are asked of the
            // far host before that line, not after it; an outside audit saw its id).
            const late = await far.request<{ id: string }>('session/create', { command: 'sh', args: ['-c', "printf '\\a'; sleep 5"], name: 'late-bell' });
            await until(async () => /\tbox:late-bell\tbell$/m.test(out), 30_000, `the new session's bell, by name; got:\n${out}`);
            assert.doesNotMatch(out, new RegExp(`box:${late.id}\t`), 'never by its id');
            // A line names the session as the other commands take it: its host, then its name.
            process.kill(run.pid, 'SIGINT');
            assert.equal((await run.result).code, 0);
            assert.match(out, /^\d+\t[\d:]+\tbox:far-1\tresize 91x30$/m);
            continue;
          }
          const events = await interruptedEvents(run);
          assert.ok(events.some((e) => e.type === 'resize'));
          assert.ok(
            events.every((e) => e.host === 'box' && e.session === id.slice('box:'.length)),
            JSON.stringify(events),
          );
        }
      } finally {
        far.close();
      }
    },
  );

  test("attach through ssh shows every byte of a flood (sha256) and the person's keys reach the far session", { timeout: TEST_TIMEOUT }, async () => {
    assert.ok(id, 'the far session of the first test'); // node-pty must not be handed an undefined argument
    const flood = makeFlood(dir(), FLOOD_BYTES);
    const view = loadNodePty().spawn(process.execPath, [CLI, 'attach', id], {
      name: 'xterm-256color',
      cols: 100,
      rows: 30,
      cwd: REPO_ROOT,
      env: env as Record<string, string>,
    });
    const check = new FloodCheck(true); // the view's own PTY turns \n into \r\n: compare without \r
    let seen = '';
    view.onData((d) => {
      check.push(d);
      if (seen.length < 100_000) seen += d;
    });
    try {
      await until(() => seen.includes('attached to far-1'), 20_000, `attached (${seen})`);
      view.write(flood.command);
      await until(() => check.done, TEST_TIMEOUT - 15_000, `the end of the flood (${check.received} bytes so far)`);
      assert.equal(check.received, flood.size, 'every byte');
      assert.equal(check.digest(), flood.fileSha256);
    } finally {
      view.write('\x1d'); // Ctrl+]: detach
      await until(() => !pidAlive(view.pid), 10_000, 'attach ended').catch(() => view.kill());
    }
  });

  test('the transport killed mid-wait: one line saying so, and the session is still there for the next command', { timeout: TEST_TIMEOUT }, async () => {
    assert.ok(id, 'the far session of the first test');
    const session = id.slice('box:'.length);
    const waiting = startCli(['send', id, 'sleep 41', '--timeout', '90000'], env);
    // The send waits for the command's end once the far screen shows it typed.
    await farScreenShows(sshSide, session, 'far> sleep 41');
    const sshPid = await until(() => descendant(waiting.pid, 'ssh'), 5000, 'the ssh under send');
    process.kill(sshPid, 'SIGKILL');
    const r = await waiting.result;
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /^shared-pty: the connection to host "box" \(ssh [^\n]*\) dropped: [^\n]*it is made again on the next use\n$/);
    // Nothing of the session was lost: it runs on its own host, and the next command reaches it.
    assert.match(ok(await cli('read', id), 'the next command'), /far> sleep 41/);
    await onFarSide(sshSide, (far) => far.request('pty/write', { session, action: { key: 'Ctrl+C' } }));
  });
});

test('the far host killed under a call: one line saying it is gone and its sessions with it, never that they run on', { timeout: TEST_TIMEOUT }, async () => {
  const doomedSide = dir();
  const config = dir();
  fs.mkdirSync(path.join(config, 'shared-pty'));
  fs.writeFileSync(path.join(config, 'shared-pty', 'hosts.json'), JSON.stringify({ hosts: { doomed: `sh -c '${farSide(doomedSide, farHome)}'` } }));
  const doomedEnv = { ...env, XDG_CONFIG_HOME: config };
  const opened = ok(await runCli(['open', '--host', 'doomed', '--name', 'victim'], doomedEnv), 'open on doomed').trim();
  assert.match(opened, /^doomed:/);
  const [far] = readLiveRecords(doomedSide);
  assert.ok(far, 'a host runs on the far side');
  const waiting = startCli(['send', 'doomed:victim', 'sleep 41', '--timeout', '90000'], doomedEnv);
  await farScreenShows(doomedSide, opened.slice('doomed:'.length), 'far> sleep 41');
  process.kill(far.pid, 'SIGKILL');
  const r = await waiting.result;
  assert.equal(r.code, 1, r.stderr);
  assert.match(
    r.stderr,
    new RegExp(
      `^shared-pty: host "doomed": the Shared PTY host ${far.hostId} is gone \\(process ${far.pid} ended\\); its sessions ended with it \\(the next use starts a new host there\\)\n$`,
    ),
  );
  assert.doesNotMatch(r.stderr, /made again|run on/, 'nothing says the session is still there');
  for (const rec of readLiveRecords(doomedSide)) await stopPid(rec.pid);
});

/** `shared-pty mcp` with a hosts.json of its own holding `hostsJson`, connected: the SDK's client. */
async function mcpWithHostsFile(hostsJson: string, name: string): Promise<Client> {
  const config = dir();
  fs.mkdirSync(path.join(config, 'shared-pty'));
  fs.writeFileSync(path.join(config, 'shared-pty', 'hosts.json'), hostsJson);
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, 'mcp'],
    env: { ...env, XDG_CONFIG_HOME: config } as Record<string, string>,
    cwd: REPO_ROOT,
    stderr: 'pipe',
  });
  const agent = new Client({ name, version: '0.0.0' });
  await withTimeout(agent.connect(transport), 30_000, 'MCP stdio connect');
  return agent;
}

// Each with a hosts.json and far side of its own: side by side, the 30 s one waits while the others run.
describe('shared-pty mcp, hosts of its own', { concurrency: true }, () => {
  test(
    'shared-pty mcp: a session whose host died between calls is said to have ended with it; a name not found while a host could not be asked says so',
    { timeout: TEST_TIMEOUT },
    async () => {
      const doomedSide = dir();
      const agent = await mcpWithHostsFile(
        JSON.stringify({ hosts: { doomed: `sh -c '${farSide(doomedSide, farHome)}'`, bad: 'echo nope-from-bad >&2; exit 5' } }),
        'gone-test',
      );
      type Answer = { isError?: boolean; content: Array<{ text?: string }>; structuredContent?: any };
      const said = (r: Answer) => r.content.map((c) => c.text ?? '').join('');
      try {
        const opened = (await agent.callTool({ name: 'open_session', arguments: { host: 'doomed', command: 'cat', name: 'victim' } })) as Answer;
        assert.notEqual(opened.isError, true, said(opened));
        const [far] = readLiveRecords(doomedSide);
        assert.ok(far, 'a host runs on the far side');
        process.kill(far.pid, 'SIGKILL');
        // Between calls: the bridge sees its host go and ends; the next call names the session there.
        await until(() => !pidAlive(far.pid), 10_000, 'the far host to be gone');
        await new Promise((r) => setTimeout(r, 500));
        const read = (await agent.callTool({ name: 'read_screen', arguments: { session: `doomed:${opened.structuredContent.id}` } })) as Answer;
        assert.equal(read.isError, true, said(read));
        assert.match(
          said(read),
          new RegExp(
            `Unknown session: doomed:${opened.structuredContent.id} \\(host "doomed": the Shared PTY host ${far.hostId} is gone \\(process ${far.pid} ended\\); its sessions ended with it\\)`,
          ),
        );
        // A bare name not found here, while host "bad" could not be asked: it may be there.
        const bare = (await agent.callTool({ name: 'read_screen', arguments: { session: 'no-such-name' } })) as Answer;
        assert.equal(bare.isError, true, said(bare));
        assert.match(
          said(bare),
          /Unknown session: no-such-name.*not looked for on host "bad", which could not be reached; name it as HOST:SESSION to try again/,
        );
      } finally {
        await agent.close().catch(() => undefined);
        for (const rec of readLiveRecords(doomedSide)) await stopPid(rec.pid);
      }
    },
  );

  test('shared-pty mcp: a host that gave no answer in time costs its 30 s once, not at every listing', { timeout: 120_000 }, async () => {
    // No answer on stdout, only a line that is not JSON-RPC (an rc file's echo); what it says on
    // stderr (a banner, a prompt it cannot show) is passed on, and so is that line.
    const agent = await mcpWithHostsFile(
      JSON.stringify({ hosts: { hang: 'echo "Welcome to the box"; echo "Enter passphrase for key" >&2; exec sleep 1000' } }),
      'hang-test',
    );
    try {
      type Listing = { isError?: boolean; content: Array<{ text?: string }>; structuredContent: { unreachable?: Array<{ host: string; reason: string }> } };
      const first = (await agent.callTool({ name: 'list_sessions', arguments: {} }, undefined, { timeout: 90_000 })) as Listing;
      assert.notEqual(first.isError, true, 'the hosts that answer are listed; the silent one is left out');
      // …and the agent is told so, at every listing (it sees no stderr): "none there" is not "not reached".
      const leftOut = (r: Listing, what: string) => {
        assert.deepEqual(
          r.structuredContent.unreachable?.map((u) => u.host),
          ['hang'],
          `${what}: ${JSON.stringify(r.structuredContent)}`,
        );
        assert.match(
          r.content.map((c) => c.text ?? '').join(''),
          /Not listed: host "hang" could not be reached \(cannot reach host "hang" .*no answer within 30 s.*\); its sessions may still run\./,
          what,
        );
      };
      leftOut(first, 'the first listing');
      // The next listing does not wait for it again (it would take another 30 s).
      const again = (await withTimeout(agent.callTool({ name: 'list_sessions', arguments: {} }), 15_000, 'the second listing, at once')) as Listing;
      assert.notEqual(again.isError, true);
      leftOut(again, 'the second listing');
      const named = (await withTimeout(agent.callTool({ name: 'read_screen', arguments: { session: 'hang:x' } }), 15_000, 'a call naming it, at once')) as {
        isError?: boolean;
        content: Array<{ text?: string }>;
      };
      assert.equal(named.isError, true);
      assert.match(
        named.content.map((c) => c.text ?? '').join(''),
        /cannot reach host "hang" .*no answer within 30 s; it printed what is not JSON-RPC: "Welcome to the box"; it said on stderr: Enter passphrase for key\).*tried again after/,
      );
    } finally {
      await agent.close().catch(() => undefined);
    }
  });

  test(
    'shared-pty mcp: a host that stops answering once it listed its sessions fails the call 15 s past its wait; one that lists fewer fields is listed all the same',
    { timeout: 90_000 },
    async () => {
      // Bridges that answer host/info and session/list, and then nothing (stall); or an older host's
      // sessions, with no secretInput nor integration (old).
      const fake = (sessions: object[]) =>
        `${JSON.stringify(process.execPath)} -e 'require("readline").createInterface({input: process.stdin}).on("line", (l) => { const m = JSON.parse(l); ` +
        `const result = m.method === "host/info" ? {hostId: "fake"} : m.method === "session/list" ? {sessions: ${JSON.stringify(sessions)}} : undefined; ` +
        `if (result) process.stdout.write(JSON.stringify({jsonrpc: "2.0", id: m.id, result}) + "\\n"); })'`;
      const agent = await mcpWithHostsFile(
        JSON.stringify({
          hosts: { stall: fake([{ id: 's1', name: 'stuck' }]), old: fake([{ id: 'o1', name: 'older', pid: 7, running: true, command: 'bash' }]) },
        }),
        'stalled-remote-test',
      );
      type Answer = { isError?: boolean; content: Array<{ text?: string }>; structuredContent?: any };
      const said = (r: Answer) => r.content.map((c) => c.text ?? '').join('');
      try {
        const listed = (await agent.callTool({ name: 'list_sessions', arguments: {} })) as Answer;
        assert.notEqual(listed.isError, true, said(listed));
        const older = listed.structuredContent.sessions.find((x: { host?: string }) => x.host === 'old');
        assert.deepEqual([older.id, older.name, older.pid, older.command], ['o1', 'older', 7, 'bash'], 'what the old host says is kept');
        assert.deepEqual([older.secretInput, older.integration], [false, false], 'what it does not say is filled in as not known there');
        const send = (await agent.callTool({ name: 'send', arguments: { session: 'stall:stuck', text: 'true', timeout: 2000 } }, undefined, {
          timeout: 55_000,
        })) as Answer;
        assert.equal(send.isError, true, said(send));
        // (Its first call there, a look at the session before the send, is the one that stalls: 15 s.)
        assert.match(said(send), /no answer from host "stall" within 1[57] s.*: it, or the way to it, is stalled/);
        // The link was dropped: the next call makes a new one, which stalls the same way.
        const open = (await agent.callTool({ name: 'open_session', arguments: { host: 'stall' } }, undefined, { timeout: 55_000 })) as Answer;
        assert.equal(open.isError, true, said(open));
        assert.match(said(open), /no answer from host "stall" within 15 s: it, or the way to it, is stalled/);
      } finally {
        await agent.close().catch(() => undefined);
      }
    },
  );

  test(
    "shared-pty mcp with a broken hosts.json: this machine's sessions still listed; a host named anywhere is told the file is why",
    { timeout: 60_000 },
    async () => {
      const agent = await mcpWithHostsFile('{ "hosts": { "far": "ssh far shared-pty bridge", } }', 'broken-config-test');
      const said = (r: unknown) => (r as { content: Array<{ text?: string }> }).content.map((c) => c.text ?? '').join('');
      try {
        const listed = (await agent.callTool({ name: 'list_sessions', arguments: {} })) as { isError?: boolean; structuredContent?: { hostsFile?: string } };
        assert.notEqual(listed.isError, true, said(listed));
        // The agent, who sees no stderr, is told why no remote host is listed.
        assert.match(listed.structuredContent?.hostsFile ?? '', /hosts\.json is not JSON/);
        assert.match(said(listed), /Not listed: no remote host's sessions, as .*hosts\.json is not JSON/);
        const opened = (await agent.callTool({ name: 'open_session', arguments: { host: 'far', command: 'sh' } })) as { isError?: boolean };
        assert.equal(opened.isError, true);
        assert.match(said(opened), /no host "far": .*hosts\.json is not JSON/);
        const read = (await agent.callTool({ name: 'read_screen', arguments: { session: 'far:bash-1' } })) as { isError?: boolean };
        assert.equal(read.isError, true);
        assert.match(said(read), /Unknown session: far:bash-1 \(.*hosts\.json is not JSON/);
      } finally {
        await agent.close().catch(() => undefined);
      }
    },
  );
});

describe('shared-pty mcp across hosts', () => {
  let client: Client;
  let transport: StdioClientTransport;
  const results: unknown[] = [];
  const call = async (name: string, args: Record<string, unknown>) => {
    const r = (await client.callTool({ name, arguments: args })) as { isError?: boolean; content: Array<{ text?: string }>; structuredContent?: any };
    results.push(r);
    return r;
  };
  const text = (r: { content: Array<{ text?: string }> }) => r.content.map((c) => c.text ?? '').join('');

  before(async () => {
    transport = new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp'], env: env as Record<string, string>, cwd: REPO_ROOT, stderr: 'pipe' });
    client = new Client({ name: 'remote-test', version: '0.0.0' });
    await withTimeout(client.connect(transport), 30_000, 'MCP stdio connect');
  });
  after(async () => {
    await client?.close().catch(() => undefined);
  });

  test('list_sessions across hosts, open_session { host }, and a remote secret prompt refused to the agent', { timeout: TEST_TIMEOUT }, async () => {
    const listed = await call('list_sessions', {});
    assert.ok(
      (listed.structuredContent.sessions as SessionInfo[]).some((s) => s.host === 'box' && s.name === 'far-1'),
      text(listed),
    );
    assert.match(text(listed), /^box:\w+ {2}far-1 /m);
    const opened = await call('open_session', { host: 'web', command: 'bash', args: ['--norc', '--noprofile', '-i'], name: 'agent-far' });
    assert.ok(!opened.isError, text(opened));
    assert.equal(opened.structuredContent.host, 'web');
    const session = `web:${opened.structuredContent.id}`;
    const asked = await call('send', { session, text: 'read -s x; echo "len=${#x}"', timeout: 15_000 });
    assert.equal(asked.structuredContent?.waitReason, 'secret_input', text(asked));
    const refused = await call('send', { session, text: 'agent-typed' });
    assert.equal(refused.isError, true, text(refused));
    assert.match(text(refused), /asks for a secret/);
    // The person types it (here through the CLI, through the same kind of bridge).
    ok(await cli('send', session, SECRET, '--timeout', '10000'), 'the person types the secret');
    const screen = await call('read_screen', { session });
    assert.match(text(screen), new RegExp(`len=${SECRET.length}`));
    for (const r of results) assert.ok(!JSON.stringify(r).includes(SECRET), 'the secret shows in no result');
    // A name on two hosts is ambiguous, and the error says how to name each; an unknown one names its host.
    const twin = await call('open_session', { host: 'box', command: 'cat', name: 'agent-far' });
    assert.ok(!twin.isError, text(twin));
    const ambiguous = await call('read_screen', { session: 'agent-far' });
    assert.equal(ambiguous.isError, true, text(ambiguous));
    assert.match(text(ambiguous), new RegExp(`ambiguous: agent-far names .*box:${twin.structuredContent.id}`));
    const unknown = await call('read_screen', { session: 'web:no-such-session' });
    assert.match(text(unknown), /^Error -32001: Unknown session: web:no-such-session$/);
    // A host hosts.json does not name is said, as the CLI says it.
    const typo = await call('read_screen', { session: 'nowhere:no-such-session' });
    assert.match(text(typo), /^Error -32001: Unknown session: nowhere:no-such-session \(no host named "nowhere" in .*hosts\.json; it names box, web, off\)$/);
    await call('close_session', { session: `box:${twin.structuredContent.id}` });
    await call('close_session', { session });
  });

  for (const where of ['web', 'local'] as const) {
    test(
      `a call its client cancels ends the ${where === 'web' ? "far host's" : "local host's"} wait: the session's one send is free at once`,
      { timeout: TEST_TIMEOUT },
      async () => {
        const opened = await call('open_session', {
          ...(where === 'web' ? { host: 'web' } : {}),
          command: 'bash',
          args: ['--norc', '--noprofile', '-i'],
          name: `cancel-${where}`,
        });
        assert.ok(!opened.isError, text(opened));
        const session = where === 'web' ? `web:${opened.structuredContent.id}` : (opened.structuredContent.id as string);
        // The client cancels its own request (MCP's notifications/cancelled) while the host waits.
        const stop = new AbortController();
        const waiting = client.callTool({ name: 'send', arguments: { session, text: 'sleep 600', timeout: 90_000 } }, undefined, { signal: stop.signal });
        await until(async () => /sleep 600/.test(text(await call('read_screen', { session }))), 30_000, 'the command typed');
        stop.abort();
        await assert.rejects(waiting);
        // The host no longer waits for it (its timeout is 90 s): the next send is not refused as busy.
        const keys = await call('send_keys', { session, keys: ['Ctrl+C'], wait: true, timeout: 30_000 });
        assert.notEqual(keys.isError, true, text(keys));
        await call('close_session', { session });
      },
    );
  }

  test('the transport killed under a call: a one-line error, and the next call reconnects', { timeout: TEST_TIMEOUT }, async () => {
    const waiting = call('send', { session: 'box:far-1', text: 'sleep 42', timeout: 90_000 });
    await farScreenShows(sshSide, id.slice('box:'.length), 'far> sleep 42');
    const sshPid = await until(() => descendant(transport.pid!, 'ssh'), 5000, 'the ssh under shared-pty mcp');
    process.kill(sshPid, 'SIGKILL');
    const r = await waiting;
    assert.equal(r.isError, true, text(r));
    assert.match(text(r), /^Error -32000: the connection to host "box" \(ssh [^\n]*\) dropped: [^\n]*it is made again on the next use$/);
    const again = await call('send_keys', { session: 'box:far-1', keys: ['Ctrl+C'] });
    assert.ok(!again.isError, text(again));
    assert.notEqual(descendant(transport.pid!, 'ssh'), sshPid, 'a new transport');
  });
});
