// The CLI as software people script with (docs/cli.md#open-kill-and-commands): `open` starts the per-user host when
// none runs and opens a session on it, `kill` ends one, `commands` lists what its shell ran, `send`
// exits with the command's status (124 on timeout); every command answers --help; extra arguments
// and no arguments are usage errors; messages name CLI commands, and flag errors come before "no host".
// Driven as a user would: child processes of the built bin/shared-pty.js, real bash in real PTYs.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { SessionInfo } from '../../../src/core/methods/types';
import { readLiveRecords } from '../../../src/host/discovery';
import { runCli, runEach, startedPids, startServeHost, stopPid, type CliResult } from '../../helpers/cli';
import { connect, tempRuntimeDir, until } from '../../helpers/host';
import { bashEnv, buildCli, mcpStdio, pidAlive } from '../../helpers/protocol';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

/** Per-test bound: generous for a noisy machine, finite so a hang fails instead of blocking. */
const TEST_TIMEOUT = 60_000;
/** For the tests that start the CLI a few dozen times (each a Node start): a loaded machine takes seconds per start. */
const MANY_RUNS_TIMEOUT = 240_000;

const dirs: string[] = [];
/** The runtime directory of the per-user host `open` starts, and a HOME whose .bashrc sets a prompt. */
let env: NodeJS.ProcessEnv;
let runtimeDir: string;

function privateDir(): string {
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

/** A usage error: exit 2, nothing on stdout, one line on stderr. */
function usageError(r: CliResult, what: string, pattern?: RegExp): void {
  assert.equal(r.code, 2, `${what}: exit 2, got ${r.code}; stderr: ${r.stderr}; stdout: ${r.stdout}`);
  assert.equal(r.stdout, '', `${what}: nothing on stdout`);
  assert.match(r.stderr, /^shared-pty: [^\n]+\n$/, `${what}: one line on stderr`);
  if (pattern) assert.match(r.stderr, pattern, what);
}

before(() => {
  buildCli();
  runtimeDir = privateDir();
  const home = privateDir();
  // The shell's rc file is read (integration is injected beside it): a known prompt to wait for.
  fs.writeFileSync(path.join(home, '.bashrc'), "PS1='my> '\nHISTFILE=/dev/null\n");
  env = bashEnv({ SHARED_PTY_DIR: runtimeDir, HOME: home, SHELL: '/bin/bash' });
});

after(async () => {
  // The per-user host `open` started, by its pid (it would exit by itself after 10 idle minutes).
  for (const r of readLiveRecords(runtimeDir)) await stopPid(r.pid);
  for (const pid of startedPids) await stopPid(pid);
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

describe('open, send, commands, kill', () => {
  let id: string;

  test("open starts the per-user host and prints the new session's id; --json its SessionInfo", { timeout: TEST_TIMEOUT }, async () => {
    assert.equal(readLiveRecords(runtimeDir).length, 0, 'no host runs yet');
    id = ok(await cli('open', '--name', 'work', '--cols', '90', '--rows', '20'), 'open').trim();
    assert.match(id, /^[a-z0-9]+$/, 'one id on stdout');
    const hosts = readLiveRecords(runtimeDir);
    assert.equal(hosts.length, 1);
    assert.equal(hosts[0].kind, 'daemon', 'the per-user host');
    const listed = JSON.parse(ok(await cli('list', '--json'), 'list --json')) as SessionInfo[];
    const s = listed.find((x) => x.id === id);
    assert.ok(s, 'list shows it');
    assert.equal(s.name, 'work');
    assert.equal(s.cols, 90);
    assert.equal(s.rows, 20);
    assert.equal(s.command, '/bin/bash', "the user's shell");

    const cwd = privateDir();
    const info = JSON.parse(ok(await cli('open', '--json', '--cwd', cwd, '--', 'sh', '-c', 'echo opened-$((2+3)); exec cat'), 'open --json')) as SessionInfo;
    assert.equal(info.command, 'sh');
    assert.deepEqual(info.args, ['-c', 'echo opened-$((2+3)); exec cat']);
    assert.equal(info.cwd, cwd);
    assert.equal(readLiveRecords(runtimeDir).length, 1, 'the same host, not a second one');
    // Its host named as `list --json` names it.
    assert.equal((info as SessionInfo & { hostId?: string }).hostId, readLiveRecords(runtimeDir)[0].hostId);
    ok(await cli('wait', info.id, 'opened-5', '--timeout', '10000'), 'the command ran');
    ok(await cli('kill', info.id), 'kill');
    const after = JSON.parse(ok(await cli('list', '--json'), 'list --json')) as SessionInfo[];
    assert.ok(!after.some((x) => x.id === info.id), 'kill: the session is gone from list at once');
    assert.ok(!pidAlive(info.pid) || (await until(() => !pidAlive(info.pid), 5000, 'its program ended')));
  });

  test("send exits with the command's exit code, and 124 when the wait timed out (so && stops)", { timeout: TEST_TIMEOUT }, async () => {
    ok(await cli('wait', id, 'my>', '--timeout', '10000'), 'the first prompt');
    const failed = await cli('send', id, '(exit 3)');
    assert.equal(failed.code, 3, failed.stdout);
    assert.match(failed.stdout, /\[wait reason: command_done, exit code: 3\]/);
    // A command that never ends by itself: the send's wait can only time out.
    const timedOut = await cli('send', id, 'sleep 600', '--timeout', '500');
    assert.equal(timedOut.code, 124, timedOut.stdout);
    assert.match(timedOut.stdout, /\[wait reason: timeout\]/);
    // Ctrl+C ends it: the next send is answered once the shell is back at the prompt.
    ok(await cli('keys', id, 'Ctrl+C'), 'keys Ctrl+C');
    await until(async () => (await cli('send', id, 'true', '--timeout', '10000')).code === 0, 20_000, 'the shell is back');
  });

  test('send and keys to a session whose program has ended: one line, exit 1, nothing typed (so && stops)', { timeout: TEST_TIMEOUT }, async () => {
    const ended = ok(await cli('open', '--name', 'ended', '--', 'sh', '-c', 'exit 7'), 'open').trim();
    await until(
      async () => (JSON.parse(ok(await cli('list', '--json'), 'list')) as Array<{ id: string; running: boolean }>).some((s) => s.id === ended && !s.running),
      10_000,
      'the program to end',
    );
    for (const args of [
      ['send', ended, 'echo never'],
      ['keys', ended, 'Enter'],
    ]) {
      const r = await cli(...args);
      assert.equal(r.code, 1, `${args[0]}: ${r.stdout}${r.stderr}`);
      assert.match(r.stderr, /^shared-pty: [^\n]*exited[^\n]*\n$/, args[0]);
    }
    ok(await cli('kill', ended), 'kill');
  });

  test('commands lists what the shell ran: id, exit code, cwd, command line; --json the records', { timeout: TEST_TIMEOUT }, async () => {
    const rows = ok(await cli('commands', id), 'commands');
    assert.match(rows, /^\d+\texit 3 \d+ ms\t[^\t]+\t\(exit 3\)$/m, rows);
    const json = JSON.parse(ok(await cli('commands', id, '--limit', '1', '--json'), 'commands --json')) as {
      integration: boolean;
      commands: Array<{ command: string; exitCode: number }>;
    };
    assert.equal(json.integration, true);
    assert.equal(json.commands.length, 1);
    assert.equal(json.commands[0].command, 'true');
    usageError(await cli('commands', id, '--limit', '0'), 'commands --limit 0', /--limit/);
  });

  // Found by an outside audit: after `exec`, `commands` printed only "no shell integration" and hid
  // the records the shell had made (which --json still returned).
  test('commands after the shell was replaced by exec: the records it made, then why no more come', { timeout: TEST_TIMEOUT }, async () => {
    const replaced = ok(await cli('open', '--name', 'to-replace'), 'open').trim();
    ok(await cli('send', replaced, 'echo before-exec'), 'send');
    await cli('send', replaced, 'exec env PS1=plain$ sh', '--timeout', '5000');
    await until(async () => /replaced \(exec\)/.test((await cli('commands', replaced)).stderr), 10_000, 'commands to say the shell was replaced');
    const r = await cli('commands', replaced);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /^\d+\texit 0 \d+ ms\t[^\t]+\techo before-exec$/m, r.stdout);
    assert.equal(r.stderr, 'shared-pty: the shell that reported these commands was replaced (exec): later commands are not known\n');
    ok(await cli('kill', replaced), 'kill');
  });

  test("a command line too long for the host, or a long surplus word, is one short line in the CLI's words", { timeout: TEST_TIMEOUT }, async () => {
    // 1.2 MB of arguments: over the 1 MiB a host reads in one request (found by an outside audit:
    // `Connection closed: the other end answered "Invalid Request: line longer than …"`).
    const long = await cli('open', '--', 'echo', ...Array.from({ length: 10 }, () => 'x'.repeat(120_000)));
    assert.equal(long.code, 1, long.stderr);
    assert.match(
      long.stderr,
      /^shared-pty: the Shared PTY host \w+ takes requests of at most 1048576 bytes, and this one is longer \(its command line or text\): send less at a time\n$/,
    );
    // A word of 100 KB the command does not take is named by its start, not printed whole.
    const surplus = await cli('send', id, 'echo x', 'y'.repeat(100_000));
    assert.equal(surplus.code, 2);
    assert.match(surplus.stderr, /^shared-pty: unexpected argument "y{60}…"/);
    assert.ok(surplus.stderr.length < 300, surplus.stderr.slice(0, 300));
    // So in every message that names one: an unknown session, a text not seen before the timeout.
    const unknown = await cli('read', 'z'.repeat(100_000));
    assert.match(unknown.stderr, /z{60}…/);
    assert.ok(unknown.stderr.length < 300, unknown.stderr.slice(0, 300));
    const unseen = await cli('wait', id, 'w'.repeat(100_000), '--timeout', '100');
    assert.equal(unseen.code, 1);
    assert.match(unseen.stderr, /^shared-pty: not seen before the timeout: w{60}…\n$/);
    // A long text with spaces in it: its start and its end, a line of about 1000 characters.
    const spaced = await cli('wait', id, 'ab '.repeat(2000), '--timeout', '100');
    assert.match(spaced.stderr, /^shared-pty: not seen before the timeout: (ab )+[^\n]*…[^\n]*\n$/);
    assert.ok(spaced.stderr.length < 1100, `${spaced.stderr.length} characters`);
  });

  test('kill ends the session; a second kill says it is unknown', { timeout: TEST_TIMEOUT }, async () => {
    ok(await cli('kill', 'work'), 'kill work');
    const again = await cli('kill', id);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /unknown session/);
  });
});

describe('usage', () => {
  test('every command answers --help with its usage on stdout; daemon is in the global help', { timeout: MANY_RUNS_TIMEOUT }, async () => {
    const all = ok(await cli('--help'), '--help');
    const names = [
      'list',
      'open',
      'kill',
      'read',
      'send',
      'keys',
      'wait',
      'commands',
      'attach',
      'view',
      'share',
      'tokens',
      'revoke',
      'events',
      'record',
      'play',
      'serve',
      'mcp',
      'daemon',
    ];
    // A few commands' help at a time: each is a process of its own, and none depends on another.
    const helps = await runEach(
      names.map((name) => [name, '--help']),
      env,
    );
    for (const [i, name] of names.entries()) {
      assert.match(all, new RegExp(`^  shared-pty ${name}\\b`, 'm'), `the global help shows ${name}`);
      const own = ok(helps[i], `${name} --help`);
      assert.match(own, new RegExp(`^Usage:\\n  shared-pty ${name}\\b`), `${name} --help`);
      assert.ok(!own.includes('terminals shared between people'), `${name} --help is its own, not the global help`);
    }
    assert.match(ok(await cli('send', '--help'), 'send --help'), /124/);
  });

  test('no arguments: a usage error in one line on stderr, exit 2; the usage on stdout', { timeout: TEST_TIMEOUT }, async () => {
    const r = await runCli([], env);
    assert.equal(r.code, 2);
    assert.match(r.stdout, /Usage:\n  shared-pty list/);
    assert.equal(r.stderr, 'shared-pty: no command given (the commands are listed above; shared-pty --help lists them too)\n');
  });

  test('extra arguments are a usage error, before anything is done', { timeout: MANY_RUNS_TIMEOUT }, async () => {
    const empty = { ...env, SHARED_PTY_DIR: privateDir() };
    const cases = [
      ['list', 'extra'],
      ['tokens', 'x'],
      ['share', 's', 'extra'],
      ['revoke', 'a', 'b'],
      ['read', 's', 'extra'],
      ['send', 's', 'text', 'extra'],
      ['kill', 's', 'extra'],
      ['commands', 's', 'x'],
      ['mcp', 'x'],
      ['daemon', 'x'],
      ['view', 's', 'x'],
      ['attach', 's', 'x'],
    ];
    const [open, ...results] = await runEach([['open', 'htop'], ...cases], empty);
    cases.forEach((args, i) => usageError(results[i], args.join(' '), /unexpected argument|too many arguments/));
    usageError(open, 'open htop', /the command goes after --/);
    assert.equal(readLiveRecords(empty.SHARED_PTY_DIR).length, 0, 'no host was started');
  });

  test('with no host: revoke says there is none; a bad flag is reported before that', { timeout: TEST_TIMEOUT }, async () => {
    const empty = { ...env, SHARED_PTY_DIR: privateDir() };
    const revoke = await runCli(['revoke', 'tX'], empty);
    assert.equal(revoke.code, 1);
    assert.match(revoke.stderr, /no Shared PTY host is running/);
    assert.doesNotMatch(revoke.stderr, /unknown token/);
    usageError(await runCli(['share', 'work', '--expires', 'never'], empty), 'share --expires never', /--expires/);
  });
});

describe('messages and the agent policy', () => {
  test('the session limit names the CLI command that ends one', { timeout: TEST_TIMEOUT }, async () => {
    const limited = await startServeHost(['--cmd', 'bash --norc --noprofile', '--no-http', '--max-sessions', '1'], bashEnv({ SHARED_PTY_DIR: privateDir() }));
    const control = await connect(limited.record.control);
    try {
      const e = await control.request('session/create', { command: 'cat' }).then(
        () => undefined,
        (err: Error) => err,
      );
      assert.match(String(e?.message), /end some first \(shared-pty kill <session>\)/);
      assert.doesNotMatch(String(e?.message), /pty\/kill/);
    } finally {
      control.close();
      await limited.stop();
    }
  });

  test('serve --agent-approval ask with no editor says at start-up that agents are allowed, and pty/info tells', { timeout: TEST_TIMEOUT }, async () => {
    const asking = await startServeHost(
      ['--cmd', 'bash --norc --noprofile', '--no-http', '--agent-approval', 'ask'],
      bashEnv({ SHARED_PTY_DIR: privateDir() }),
    );
    const control = await connect(asking.record.control);
    try {
      await until(() => /agent approval ask:/.test(asking.output()), 10_000, 'the start-up line');
      const line = asking
        .output()
        .split('\n')
        .find((l) => l.includes('agent approval ask:'));
      assert.match(String(line), /no editor window is connected to ask.*allowed \(as with allow\)/);
      const info = await control.request<{ agentApproval: { policy: string; effective: string; reason?: string } }>('pty/info', {
        session: asking.record.sessions[0].id,
      });
      assert.equal(info.agentApproval.policy, 'ask');
      assert.equal(info.agentApproval.effective, 'allow');
      assert.match(String(info.agentApproval.reason), /no editor window is connected/);
      // A window that watches (host/watchAgents) is someone to ask.
      await control.request('host/watchAgents', {});
      const now = await control.request<{ agentApproval: { effective: string; reason?: string } }>('pty/info', { session: asking.record.sessions[0].id });
      assert.equal(now.agentApproval.effective, 'ask');
      assert.equal(now.agentApproval.reason, undefined);
    } finally {
      control.close();
      await asking.stop();
    }
  });
});

describe('a broken hosts.json', () => {
  test(
    "names no remote host: this machine's sessions are listed (the file's error said, exit 1), read, sent to and killed; a selector naming a host meets the error",
    { timeout: TEST_TIMEOUT },
    async () => {
      const config = privateDir();
      fs.mkdirSync(path.join(config, 'shared-pty'));
      fs.writeFileSync(path.join(config, 'shared-pty', 'hosts.json'), 'not json');
      const broken = { ...env, XDG_CONFIG_HOME: config };
      const run = (...args: string[]) => runCli(args, broken);
      const id = ok(await run('open', '--name', 'badcfg', '--', 'sh', '-c', 'echo opened-here; exec cat'), 'open').trim();
      const listed = await run('list');
      assert.equal(listed.code, 1, listed.stderr);
      assert.match(listed.stdout, /\bbadcfg\b/, 'the local session is listed');
      assert.match(listed.stderr, /^shared-pty: .*hosts\.json is not JSON/m);
      assert.match(ok(await run('read', 'badcfg'), 'read'), /opened-here/);
      // The relay serves this machine's sessions, and says why no remote one, on stderr.
      const relay = new StdioClientTransport(mcpStdio(broken));
      let relayErr = '';
      relay.stderr?.on('data', (d: Buffer) => (relayErr += d.toString()));
      const agent = new Client({ name: 'broken-hosts', version: '0' });
      try {
        await agent.connect(relay);
        const r = (await agent.callTool({ name: 'list_sessions', arguments: {} })) as { isError?: boolean; content: Array<{ text?: string }> };
        assert.notEqual(r.isError, true, JSON.stringify(r));
        assert.match(r.content.map((c) => c.text ?? '').join(''), /\bbadcfg\b/);
        assert.match(relayErr, /hosts\.json is not JSON.*this machine's sessions only/);
      } finally {
        await agent.close();
      }
      ok(await run('keys', 'badcfg', 'x'), 'keys');
      const named = await run('read', 'far:badcfg');
      assert.equal(named.code, 1);
      assert.match(named.stderr, /hosts\.json is not JSON/);
      ok(await run('kill', id), 'kill');
      const after = await run('list', '--json');
      assert.equal(after.code, 1, 'the broken file is still said');
      assert.ok(!(JSON.parse(after.stdout) as SessionInfo[]).some((s) => s.id === id), 'the session is gone');
    },
  );
});
