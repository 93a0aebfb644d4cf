// The `shared-pty` command (docs/cli.md, docs/guarantees.md#cli-details "CLI"), driven as a user would: child processes of the
// built bin/shared-pty.js against a `shared-pty serve` host running real bash in a real PTY, and
// `attach` inside a private tmux server.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { SessionInfo } from '../../../src/core/methods/types';
import { readLiveRecords } from '../../../src/host/discovery';
import type { RpcClient } from '../../../src/transport/client/rpc-client';
import { interruptedEvents, runCli, runEach, startCli, startedPids, startServeHost, stopPid, Tmux, type CliResult, type ServeHost } from '../../helpers/cli';
import { connect, tempRuntimeDir, until } from '../../helpers/host';
import { bashEnv, buildCli, childrenOf, CLI, connectionsTo, pidAlive, REPO_ROOT, settledConnectionsTo } from '../../helpers/protocol';
import { descriptorsOfSleeping } from '../../helpers/descriptors';

/** Per-test bound: generous for a noisy machine, finite so a hang fails instead of blocking. */
const TEST_TIMEOUT = 60_000;

/** Every SessionInfo field of a host without HTTP or per-session TCP (docs/hosts.md#sessioninfo). */
const SESSION_INFO_KEYS = [
  'address',
  'args',
  'clients',
  'command',
  'createdAt',
  'cols',
  'cwd',
  'exitCode',
  'id',
  'integration',
  'name',
  'origin',
  'pid',
  'rows',
  'running',
  'secretInput',
  'workspace',
];

const dirs: string[] = [];
const sessionPids = new Set<number>();
let dir: string;
let env: NodeJS.ProcessEnv;
/** A runtime directory no host uses. */
let emptyEnv: NodeJS.ProcessEnv;
let serve: ServeHost;
let sid: string;
let sname: string;
let tmux: Tmux | undefined;

function privateDir(): string {
  const d = tempRuntimeDir();
  dirs.push(d);
  return d;
}

/** Runs the CLI against the test host. */
function cli(...args: string[]): Promise<CliResult> {
  return runCli(args, env);
}

/** Asserts a successful run and returns its stdout. */
function ok(r: CliResult, what: string): string {
  assert.equal(r.code, 0, `${what}: exit ${r.code} ${r.signal ?? ''}; stderr: ${r.stderr}; stdout: ${r.stdout}`);
  assert.equal(r.stderr, '', `${what}: nothing on stderr`);
  return r.stdout;
}

/** Asserts a failed run: non-zero status, nothing on stdout, exactly one line on stderr. */
function failsWithOneLine(r: CliResult, what: string, pattern?: RegExp): string {
  assert.notEqual(r.code, 0, `${what}: expected a failure; stdout: ${r.stdout}`);
  assert.equal(r.signal, null, `${what}: exited by itself`);
  assert.equal(r.stdout, '', `${what}: nothing on stdout`);
  assert.match(r.stderr, /^[^\n]+\n$/, `${what}: one line on stderr, got ${JSON.stringify(r.stderr)}`);
  if (pattern) assert.match(r.stderr, pattern, what);
  return r.stderr;
}

async function listJson(e: NodeJS.ProcessEnv = env): Promise<Array<SessionInfo & { hostId?: string }>> {
  const out = ok(await runCli(['list', '--json'], e), 'list --json');
  return JSON.parse(out);
}

/** The shell's screen as `read` prints it. */
async function screen(): Promise<string> {
  return ok(await cli('read', sid), 'read');
}

/** Sends a command line through the CLI and returns the printed output. */
async function send(text: string, ...flags: string[]): Promise<string> {
  return ok(await cli('send', sid, text, ...flags), `send ${text}`);
}

/** Clears the shell's screen and scrollback so a test starts from a known screen. */
async function clearScreen(): Promise<void> {
  await send('clear');
  await until(async () => (await screen()) === '$\n', 10_000, 'a cleared screen');
}

/** Every descendant of `pid`, from /proc. */
function descendantsOf(pid: number): Array<{ pid: number; comm: string }> {
  const out: Array<{ pid: number; comm: string }> = [];
  for (const c of childrenOf(pid)) out.push(c, ...descendantsOf(c.pid));
  return out;
}

before(async () => {
  buildCli();
  dir = privateDir();
  env = bashEnv({ SHARED_PTY_DIR: dir });
  emptyEnv = bashEnv({ SHARED_PTY_DIR: privateDir() });
  serve = await startServeHost(['--cmd', 'bash --norc --noprofile', '--no-http'], env);
  const s = serve.record.sessions[0];
  sid = s.id;
  sname = s.name;
  sessionPids.add(s.pid);
  // The shell's first prompt.
  const r = await runCli(['wait', sid, '$', '--timeout', '10000'], env);
  assert.equal(r.code, 0, r.stderr);
});

after(async () => {
  tmux?.killServer();
  await serve?.stop();
  for (const pid of startedPids) await stopPid(pid);
  await until(() => [...sessionPids].every((p) => !pidAlive(p)), 5000).catch(() => undefined);
  for (const pid of sessionPids) if (pidAlive(pid)) await stopPid(pid, 500);
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

describe('list', () => {
  test('a table of the running sessions, and --json with every SessionInfo field', { timeout: TEST_TIMEOUT }, async () => {
    const table = ok(await cli('list'), 'list');
    const lines = table.trimEnd().split('\n');
    assert.equal(lines.length, 2, table);
    assert.match(lines[0], /^ID\s+NAME\s+STATE\s+SIZE\s+CLIENTS\s+ORIGIN\s+COMMAND\s+ADDRESS$/);
    assert.match(lines[1], new RegExp(`^${sid}\\s+${sname}\\s+running\\s+100x30\\s+\\d+\\s+user\\s+bash --norc --noprofile\\s+unix:/`));

    const list = await listJson();
    assert.equal(list.length, 1);
    const s = list[0];
    for (const k of SESSION_INFO_KEYS) assert.ok(k in s, `SessionInfo has ${k}: ${JSON.stringify(s)}`);
    assert.equal(s.id, sid);
    assert.equal(s.name, sname);
    assert.equal(s.command, 'bash');
    assert.deepEqual(s.args, ['--norc', '--noprofile']);
    assert.equal(s.running, true);
    assert.equal(s.exitCode, null);
    assert.equal(s.origin, 'user');
    assert.equal(s.cols, 100);
    assert.equal(s.rows, 30);
    assert.equal(typeof s.clients, 'number');
    assert.ok(pidAlive(s.pid));
    assert.ok(!Number.isNaN(Date.parse(s.createdAt)));
    assert.equal(s.cwd, REPO_ROOT, 'serve starts the session in its working directory');
    assert.match(s.address, /^unix:\//);
    assert.ok(fs.existsSync(s.address.slice(5)), 'the session socket exists');
    assert.ok(s.address.startsWith(`unix:${dir}/`), 'sockets live in the runtime directory');
  });

  test("control characters in a session's command line are shown as ?, never sent to the terminal of whoever lists", { timeout: TEST_TIMEOUT }, async () => {
    const own = bashEnv({ SHARED_PTY_DIR: privateDir() });
    const host = await startServeHost(['--cmd', 'sh', '--no-http', '--', '-c', 'sleep 60 # \x1b]0;pwned\x07\x1b[31m'], own);
    try {
      sessionPids.add(host.record.sessions[0].pid);
      const table = ok(await runCli(['list'], own), 'list');
      assert.doesNotMatch(table, /[\x00-\x09\x0b-\x1f\x7f]/, `no control character but newlines: ${JSON.stringify(table)}`);
      assert.match(table, /sleep 60 # \?\]0;pwned\?\?\[31m/);
    } finally {
      await host.stop();
    }
  });

  test('no host running: list prints nothing and exits 0; --json prints []', { timeout: TEST_TIMEOUT }, async () => {
    assert.equal(ok(await runCli(['list'], emptyEnv), 'list (no host)'), '');
    assert.equal(ok(await runCli(['list', '--json'], emptyEnv), 'list --json (no host)').trim(), '[]');
    // A runtime directory that does not exist yet is the same as one with no host.
    const missing = bashEnv({ SHARED_PTY_DIR: path.join(privateDir(), 'not-created-yet') });
    assert.equal(ok(await runCli(['list'], missing), 'list (no runtime dir)'), '');
    assert.equal(ok(await runCli(['list', '--json'], missing), 'list --json (no runtime dir)').trim(), '[]');

    // A record left by a host that died is ignored (and cleaned up).
    const staleDir = privateDir();
    const dead = startCli(['--version'], env);
    await dead.result;
    const stale = {
      hostId: 'hdead1',
      pid: dead.pid,
      kind: 'serve',
      version: '0.0.0',
      startedAt: new Date().toISOString(),
      control: `unix:${staleDir}/hdead1/control.sock`,
      http: null,
      sessions: [{ id: 'abcdef', name: 'ghost' }],
    };
    fs.writeFileSync(path.join(staleDir, 'hdead1.json'), JSON.stringify(stale), { mode: 0o600 });
    const staleEnv = bashEnv({ SHARED_PTY_DIR: staleDir });
    assert.equal(ok(await runCli(['list'], staleEnv), 'list (stale record)'), '');
    assert.equal(ok(await runCli(['list', '--json'], staleEnv), 'list --json (stale record)').trim(), '[]');
    failsWithOneLine(await runCli(['read', 'ghost'], staleEnv), 'read on a dead host', /no .*host/i);

    // A live host's record whose sessions lack fields (another version's, or made by hand) is
    // listed with what it says (found by an outside audit: a JavaScript TypeError).
    const partialDir = privateDir();
    fs.writeFileSync(path.join(partialDir, 'hpart1.json'), JSON.stringify({ ...stale, hostId: 'hpart1', pid: process.pid }), { mode: 0o600 });
    const partialEnv = bashEnv({ SHARED_PTY_DIR: partialDir });
    assert.match(ok(await runCli(['list'], partialEnv), 'list (partial record)'), /^abcdef\s+ghost\s/m);
    assert.equal(JSON.parse(ok(await runCli(['list', '--json'], partialEnv), 'list --json (partial record)'))[0].name, 'ghost');
  });
});

describe('errors: non-zero exit status and one line on stderr', () => {
  test('no host running', { timeout: TEST_TIMEOUT }, async () => {
    const cases = [
      ['read', 'bash-1'],
      ['send', 'bash-1', 'echo hi'],
      ['keys', 'bash-1', 'Enter'],
      ['wait', 'bash-1', 'x'],
      ['attach', 'bash-1'],
    ];
    const results = await Promise.all(cases.map((args) => runCli(args, emptyEnv)));
    cases.forEach((args, i) => failsWithOneLine(results[i], args.join(' '), /no .*host.*running/i));
  });

  test('unknown session', { timeout: TEST_TIMEOUT }, async () => {
    const cases = [
      ['read', 'nosuch'],
      ['send', 'nosuch', 'echo hi'],
      ['keys', 'nosuch', 'Enter'],
      ['wait', 'nosuch', 'x'],
      ['attach', 'nosuch'],
      ['read', 'nosuch', '--scrollback'],
    ];
    const results = await Promise.all(cases.map((args) => cli(...args)));
    cases.forEach((args, i) => failsWithOneLine(results[i], args.join(' '), /unknown session.*nosuch/i));
    // An empty selector matches no session uniquely.
    failsWithOneLine(await cli('read', ''), 'read ""');
    // A newline in what the user typed is shown escaped: the error stays one line (found by the CLI fuzzer).
    const multi = await cli('attach', 'no\nsuch');
    failsWithOneLine(multi, 'attach "no\\nsuch"', /unknown session: no\\nsuch\n$/);
  });

  test('bad flags and bad arguments', { timeout: TEST_TIMEOUT }, async () => {
    const cases: string[][] = [
      ['list', '--nope'],
      ['read', sid, '--bogus'],
      ['read', sid, '--top'],
      ['read', sid, '--top', 'x'],
      ['read', sid, '--top', '1', '--bottom', '1'],
      ['read', sid, '--start', '2'],
      ['read', sid, '--start', '5', '--end', '2'],
      ['read', sid, '--scrollback', '--lines', '0'],
      ['read'],
      ['send', sid],
      ['send', sid, 'echo x', '--timeout', 'soon'],
      ['send', sid, 'echo x', '--no-submit=yes'],
      ['send', sid, 'echo x', '--timeout', '100', '--timeout', '200'],
      ['keys', sid],
      ['keys', sid, 'NoSuchKey'],
      ['wait', sid],
      ['wait', sid, 'x', '--timeout', '-5'],
      ['wait', sid, '(', '--regex', '--timeout', '100'],
      ['attach'],
      ['frobnicate'],
    ];
    const results = await runEach(cases, env);
    cases.forEach((args, i) => failsWithOneLine(results[i], args.join(' ')));
    // A usage error is exit status 2, whether the CLI or the host finds it (an invalid regex, an
    // unknown key name): `wait` keeps 1 for "not seen before the timeout".
    cases.forEach((args, i) => assert.equal(results[i].code, 2, `${args.join(' ')}: exit status 2, got ${results[i].code}: ${results[i].stderr}`));
    // The line names what the user typed, never the JSON-RPC method the CLI called.
    cases.forEach((args, i) => assert.doesNotMatch(results[i].stderr, /\b(pty|session|host)\/\w|Invalid params/, `${args.join(' ')}: ${results[i].stderr}`));
    // None of it reached the shell.
    assert.doesNotMatch(await screen(), /echo x|NoSuchKey/);
  });

  test(
    "read's flags are alternatives and a word after -- is an argument: a combination or a surplus word is never ignored",
    { timeout: TEST_TIMEOUT },
    async () => {
      const cases: Array<[string[], RegExp]> = [
        [['read', sid, '--offset', '2'], /--offset goes with --scrollback/],
        [['read', sid, '--lines', '2'], /--lines goes with --scrollback/],
        [['read', sid, '--scrollback', '--top', '3'], /--scrollback and --top exclude each other/],
        [['read', sid, '--top', '1', '--bottom', '1'], /--top and --bottom exclude each other/],
        [['read', sid, '--bottom', '1', '--end', '3'], /--bottom and --end exclude each other/],
        [['read', sid, '--start', '2'], /--start and --end go together/],
        [['read', sid, '--start', '5', '--end', '2'], /--start must not be greater than --end/],
        [['list', '--', 'x'], /unexpected argument "x"/],
        [['kill', sid, '--', 'x'], /unexpected argument "x"/],
        [['send', sid, 'echo x', '--', 'y'], /unexpected argument "y"/],
      ];
      const results = await runEach(
        cases.map(([args]) => args),
        env,
      );
      cases.forEach(([args, pattern], i) => {
        failsWithOneLine(results[i], args.join(' '), pattern);
        assert.equal(results[i].code, 2, `${args.join(' ')}: exit status 2, got ${results[i].code}`);
      });
      assert.ok(
        (await listJson()).some((s) => s.id === sid),
        'kill with a surplus word killed nothing',
      );
      // After --, a text that looks like a flag is typed as it is.
      await clearScreen();
      const out = ok(await cli('send', sid, '--no-submit', '--', '--not-a-flag'), 'send -- --not-a-flag');
      assert.match(out, /--not-a-flag/);
      assert.equal(await screen(), '$ --not-a-flag\n');
      ok(await cli('wait', sid, '--timeout', '5000', '--', '--not-a-flag'), 'wait -- --not-a-flag');
      ok(await cli('keys', sid, '--', 'Ctrl+U'), 'keys -- Ctrl+U');
      await until(async () => (await screen()) === '$\n', 10_000, 'the typed line erased');
    },
  );

  test('serve: --socket with --port, and ports out of range, are refused before anything starts', { timeout: TEST_TIMEOUT }, async () => {
    const sockPath = path.join(privateDir(), 'x.sock');
    const cases: Array<[string[], RegExp]> = [
      [['--no-http', '--socket', sockPath, '--port', '5000'], /--socket.*--port|--port.*--socket|exclusive/i],
      [['--no-http', '--port', '0'], /--port/],
      [['--no-http', '--port', '70000'], /--port/],
      [['--no-http', '--port', 'abc'], /--port/],
      [['--no-http', '--port', '-1'], /--port/],
      [['--http-port', '70000'], /--http-port/],
      [['--no-http', '--http-port', '8080'], /--http-port.*--no-http|--no-http.*--http-port|exclusive/i],
      [['--no-http', '--cols', '5000'], /--cols/],
      [['--no-http', '--rows', '0'], /--rows/],
      // (After `--cmd bash`, a word is bash's argument: `serve --cmd CMD [ARGS…]`.)
      [['--no-http', 'stray-argument', '--cmd', 'bash'], /unexpected argument "stray-argument"/],
      [['--no-http', '--cmd', 'bash "unclosed'], /--cmd/],
      [['--no-http', '--frob'], /--frob/],
      [['--no-http', '--command-log-mb', 'lots'], /--command-log-mb/],
      [['--no-http', '--command-log-mb', '5000'], /--command-log-mb/],
      [['--no-http', '--max-sessions', '0'], /--max-sessions needs a whole number from 1 to 4096, got "0"/],
      [['--no-http', '--max-sessions', 'lots'], /--max-sessions needs a whole number/],
      [['--no-http', '--max-in-flight', '99999999'], /--max-in-flight needs a whole number from 1 to 65536/],
      [['--no-http', '--max-session-connections', '-3'], /--max-session-connections needs a whole number/],
      [['--no-http', '--max-control-connections', '1.5'], /--max-control-connections needs a whole number/],
      [['--no-http', '--max-http-connections', '8'], /--max-http-connections and --no-http are mutually exclusive/],
      [['--no-http', '--cols', '80', '--cols', '100'], /--cols is given twice; give it once/],
      [['--no-http', '--agent-deny', '^ok', '--agent-deny', '(unclosed'], /--agent-deny: Invalid regular expression/],
      // listen() says EACCES for a folder that is not there: the user would look at permissions.
      [['--no-http', '--socket', path.join(sockPath, 'no-folder', 'x.sock')], /cannot listen on .*: no such directory: .*no-folder$/m],
      [['--no-http', '--socket', path.join(process.execPath, 'x.sock')], /cannot listen on .*: not a directory: /],
    ];
    const results = await runEach(
      cases.map(([args]) => ['serve', ...args]),
      emptyEnv,
    );
    cases.forEach(([args, pattern], i) => failsWithOneLine(results[i], `serve ${args.join(' ')}`, pattern));
    assert.equal(fs.existsSync(sockPath), false, 'no socket was created');
    assert.deepEqual(readLiveRecords(emptyEnv.SHARED_PTY_DIR!), [], 'no host was started');
  });

  test('daemon: flags it cannot use are refused before anything starts, leaving no host and no lock', { timeout: TEST_TIMEOUT }, async () => {
    const daemonDir = privateDir();
    const daemonEnv = bashEnv({ SHARED_PTY_DIR: daemonDir });
    const cases: Array<[string[], RegExp]> = [
      [['--http-port', '99999'], /--http-port/],
      [['--allow-origin', 'not an origin'], /--allow-origin/],
      [['--no-http', '--http-port', '8080'], /exclusive/],
      [['--no-http', '--allow-origin', 'http://localhost:3000'], /exclusive/],
      [['--scrollback', '5'], /--scrollback/],
      [['--idle-exit-ms', 'soon'], /--idle-exit-ms/],
    ];
    // One at a time, each bounded: a daemon that started its host before finding the bad flag runs on.
    for (const [args, pattern] of cases) {
      const r = await runCli(['daemon', ...args], daemonEnv, 10_000);
      failsWithOneLine(r, `daemon ${args.join(' ')}`, pattern);
      assert.deepEqual(readLiveRecords(daemonDir), [], `daemon ${args.join(' ')}: no host was started`);
      assert.deepEqual(
        fs.readdirSync(daemonDir).filter((f) => f.startsWith('daemon-')),
        [],
        `daemon ${args.join(' ')}: no daemon lock was left`,
      );
    }
  });
});

describe('read', () => {
  test('the screen, --top, --bottom, --start/--end and --json', { timeout: TEST_TIMEOUT }, async () => {
    await clearScreen();
    // `clear` first in the same line: only the rows under test stay on the screen.
    await send('clear; printf "r%s\\n" 1 2 3 4 5');
    await until(async () => (await screen()) === 'r1\nr2\nr3\nr4\nr5\n$\n', 10_000, 'the five rows and the prompt');
    assert.equal(ok(await cli('read', sid, '--top', '2'), '--top 2'), 'r1\nr2\n');
    assert.equal(ok(await cli('read', sid, '--start', '2', '--end', '4'), '--start 2 --end 4'), 'r2\nr3\nr4\n');
    assert.equal(ok(await cli('read', sid, '--start=5', '--end=6'), '--start=5 --end=6'), 'r5\n$\n');
    assert.equal(ok(await cli('read', sid, '--bottom', '26'), '--bottom 26'), 'r5\n$\n');
    assert.equal(ok(await cli('read', sid, '--bottom', '24'), '--bottom 24'), '');
    const j = JSON.parse(ok(await cli('read', sid, '--json'), 'read --json'));
    assert.equal(j.screen, 'r1\nr2\nr3\nr4\nr5\n$\n');
    assert.deepEqual(j.size, { cols: 100, rows: 30 });
    assert.deepEqual(j.cursor, { row: 6, col: 3 });
  });

  test('--scrollback with --offset and --lines', { timeout: TEST_TIMEOUT }, async () => {
    await send('clear; seq 1 200');
    await until(async () => /^172\n173\n[\s\S]*\n200\n\$\n$/.test(await screen()), 10_000, 'seq on screen');
    assert.equal(ok(await cli('read', sid, '--scrollback', '--lines', '3'), '--lines 3'), '199\n200\n$\n');
    assert.equal(ok(await cli('read', sid, '--scrollback', '--offset', '1', '--lines', '3'), '--offset 1 --lines 3'), '198\n199\n200\n');
    assert.equal(ok(await cli('read', sid, '--scrollback', '--offset', '10', '--lines', '5'), '--offset 10 --lines 5'), '187\n188\n189\n190\n191\n');
    // The default page is 100 lines, ending at the newest.
    const page = ok(await cli('read', sid, '--scrollback'), '--scrollback')
      .trimEnd()
      .split('\n');
    assert.equal(page.length, 100);
    assert.deepEqual(page.slice(-2), ['200', '$']);
    assert.equal(page[0], '102');
    // Older than anything retained: an empty page, not an error.
    assert.equal(ok(await cli('read', sid, '--scrollback', '--offset', '100000'), 'far offset'), '');
    const j = JSON.parse(ok(await cli('read', sid, '--scrollback', '--offset', '1', '--lines', '3', '--json'), '--scrollback --json'));
    assert.equal(j.text, '198\n199\n200');
    assert.equal(j.lastLine - j.firstLine, 2);
    assert.equal(j.totalLines - j.lastLine, 1);
  });
});

describe('send, keys and wait', () => {
  test('send prints the output and the wait reason', { timeout: TEST_TIMEOUT }, async () => {
    await clearScreen();
    const out = await send('echo hi');
    assert.match(out, /^\$ echo hi$/m);
    assert.match(out, /^hi$/m);
    // The host's bash --norc has shell integration: the wait ends with the command, and its exit code.
    assert.match(out, /\[wait reason: command_done, exit code: 0\]\n$/);
    // Quoting survives: the text is typed as given.
    const out2 = await send(`printf '%s|%s\\n' "a b" 'c'`);
    assert.match(out2, /^a b\|c$/m);
  });

  test('--no-submit types without Enter; keys Ctrl+C abandons the line', { timeout: TEST_TIMEOUT }, async () => {
    await clearScreen();
    const out = await send('echo typed-only', '--no-submit');
    assert.match(out, /\[wait reason: (stdin_read|inferred_idle)\]/);
    assert.equal(await screen(), '$ echo typed-only\n', 'typed, not run');
    assert.equal(ok(await cli('keys', sid, 'Ctrl+C'), 'keys Ctrl+C'), '');
    await until(async () => /^\$ echo typed-only\^C\n\$\n$/.test(await screen()), 10_000, 'a fresh prompt after ^C');
    const after = await send('echo $((6*7))-ok');
    assert.match(after, /^42-ok$/m);
    assert.doesNotMatch(after, /typed-only/);
  });

  test('--timeout: a send that outlives it says so; keys Ctrl+C interrupts the program', { timeout: TEST_TIMEOUT }, async () => {
    await clearScreen();
    const timedOut = await cli('send', sid, 'sleep 30', '--timeout', '300');
    assert.equal(timedOut.code, 124, 'send exits 124 when the wait timed out');
    assert.match(timedOut.stdout, /\[wait reason: timeout\]/);
    const shell = (await listJson())[0];
    assert.ok(
      descendantsOf(shell.pid).some((p) => p.comm === 'sleep'),
      'sleep is still running',
    );
    ok(await cli('keys', sid, 'Ctrl+C'), 'keys Ctrl+C');
    const back = await send('echo back-$((1+1))');
    assert.match(back, /^back-2$/m);
    assert.match(back, /\[wait reason: command_done, exit code: 0\]/);
    await until(() => descendantsOf(shell.pid).length === 0, 5000, 'sleep was interrupted');
  });

  test("send to a shell with integration prints the command's exit code and exits with it", { timeout: TEST_TIMEOUT }, async () => {
    const home = privateDir();
    fs.writeFileSync(path.join(home, '.bashrc'), "PS1='my> '\nHISTFILE=/dev/null\n");
    const control = await connect(serve.record.control);
    try {
      const info = await control.request<SessionInfo>('session/create', { command: 'bash', env: { HOME: home }, cwd: home, name: 'integrated' });
      sessionPids.add(info.pid);
      ok(await cli('wait', info.id, 'my>', '--timeout', '10000'), 'the first prompt');
      const failed = await cli('send', info.id, 'ls /nonexistent-dir-zzz');
      assert.equal(failed.code, 2, failed.stderr);
      assert.match(failed.stdout, /No such file or directory/);
      assert.match(failed.stdout, /\[wait reason: command_done, exit code: 2\]\n$/);
      assert.equal(failed.stderr, '');
      const fine = await cli('send', info.id, 'true');
      assert.equal(fine.code, 0);
      assert.match(fine.stdout, /\[wait reason: command_done, exit code: 0\]\n$/);
      await control.request('pty/kill', { session: info.id });
    } finally {
      control.close();
    }
  });

  test('serve --max-sessions and --max-in-flight: the host keeps to them on every surface', { timeout: TEST_TIMEOUT }, async () => {
    const limited = await startServeHost(
      ['--cmd', 'bash --norc --noprofile', '--max-sessions', '1', '--max-in-flight', '1'],
      bashEnv({ SHARED_PTY_DIR: privateDir() }),
    );
    const control = await connect(limited.record.control);
    try {
      sessionPids.add(limited.record.sessions[0].pid);
      // Its own session is the one it may have.
      const e = await control.request('session/create', { command: 'cat' }).then(
        () => undefined,
        (err: Error) => err,
      );
      assert.match(String(e?.message), /Too many sessions: this host has 1, the limit is 1/);
      const { url, token } = limited.record.http!;
      const rest = await fetch(`${url}/sessions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: '{"command":"cat"}',
      });
      assert.equal(rest.status, 429);
      assert.match(((await rest.json()) as { error: { message: string } }).error.message, /the limit is 1/);
      // One request in flight per connection: a wait holds it, the next call is refused at once.
      const id = limited.record.sessions[0].id;
      // (It ends with the host, below.)
      const wait = control.request('pty/wait', { session: id, match: 'never-shown', timeout: 20_000 }).catch(() => undefined);
      const over = await control.request('pty/status', { session: id }).then(
        () => undefined,
        (err: Error) => err,
      );
      assert.match(String(over?.message), /Too many requests in flight on this connection: the limit is 1/);
      await limited.stop();
      await wait;
    } finally {
      control.close();
      await limited.stop();
    }
  });

  test(
    "a command the host refuses for its connection limit says so in the host's words, not only that the connection closed",
    { timeout: TEST_TIMEOUT },
    async () => {
      const dirOf = privateDir();
      const limited = await startServeHost(['--cmd', 'cat', '--no-http', '--max-control-connections', '1'], bashEnv({ SHARED_PTY_DIR: dirOf }));
      const holder = await connect(limited.record.control);
      try {
        sessionPids.add(limited.record.sessions[0].pid);
        await holder.request('session/list');
        const r = await runCli(['read', limited.record.sessions[0].id], bashEnv({ SHARED_PTY_DIR: dirOf }));
        failsWithOneLine(r, 'read over the connection limit', /refused the connection: Too many connections.*the limit is 1/);
      } finally {
        holder.close();
        await limited.stop();
      }
    },
  );

  test(
    "a session's program holds its own terminal and nothing else of the host's: not what the host was started with, not another session's terminal",
    { timeout: TEST_TIMEOUT },
    async () => {
      // Started with two pipes beyond stdio left open (fds 3 and 4), as an editor or a script may start it.
      const h = await startServeHost(['--cmd', 'sleep 60', '--no-http'], bashEnv({ SHARED_PTY_DIR: privateDir() }), 20_000, 2);
      const control = await connect(h.record.control);
      try {
        const first = h.record.sessions[0];
        sessionPids.add(first.pid);
        const second = (await control.request('session/create', { command: 'sleep', args: ['60'] })) as { id: string; pid: number };
        sessionPids.add(second.pid);
        for (const pid of [first.pid, second.pid]) {
          const held = (await descriptorsOfSleeping(pid)).filter((line) => !/^[012] /.test(line));
          assert.deepEqual(held, [], `program ${pid} holds only its terminal`);
        }
      } finally {
        control.close();
        await h.stop();
      }
    },
  );

  test(
    'serve --agent-deny and --allow-origin given more than once: every rule and every origin holds, each as a browser writes it',
    { timeout: TEST_TIMEOUT },
    async () => {
      const h = await startServeHost(
        [
          ...['--cmd', 'bash --norc --noprofile', '--agent-deny', '^rm -rf', '--agent-deny', '^git push'],
          // An origin written in capitals, with its default port and a slash, is the one a browser sends.
          ...['--allow-origin', 'https://a.example', '--allow-origin', 'https://b.example,HTTPS://C.Example:443/'],
        ],
        bashEnv({ SHARED_PTY_DIR: privateDir() }),
      );
      const control = await connect(h.record.control);
      try {
        sessionPids.add(h.record.sessions[0].pid);
        // Before, the last value silently replaced the others: agents could run `rm -rf`.
        const policy = await control.request<{ denyCommands: string[] }>('host/agentPolicy', {});
        assert.deepEqual(policy.denyCommands, ['^rm -rf', '^git push']);
        const { url, token } = h.record.http!;
        for (const origin of ['https://a.example', 'https://b.example', 'https://c.example']) {
          const r = await fetch(`${url}/health`, { headers: { authorization: `Bearer ${token}`, origin } });
          assert.equal(r.status, 200, origin);
          assert.equal(r.headers.get('access-control-allow-origin'), origin);
        }
        const stranger = await fetch(`${url}/health`, { headers: { authorization: `Bearer ${token}`, origin: 'https://d.example' } });
        assert.equal(stranger.status, 403);
      } finally {
        control.close();
        await h.stop();
      }
    },
  );

  test('serve --command-log-mb: the command logs each session keeps (0: none)', { timeout: TEST_TIMEOUT }, async () => {
    const home = privateDir();
    fs.writeFileSync(path.join(home, '.bashrc'), "PS1='my> '\nHISTFILE=/dev/null\n");
    const hosts = await Promise.all(
      ['0', '1'].map((mb) =>
        startServeHost(['--cmd', 'bash --norc --noprofile', '--no-http', '--command-log-mb', mb], bashEnv({ SHARED_PTY_DIR: privateDir() })),
      ),
    );
    try {
      const [none, small] = await Promise.all(
        hosts.map(async (h) => {
          const control = await connect(h.record.control);
          const info = await control.request<SessionInfo>('session/create', { command: 'bash', env: { HOME: home }, cwd: home });
          sessionPids.add(info.pid);
          await until(
            async () => (await control.request<{ screen: string }>('pty/read', { session: info.id })).screen.includes('my>'),
            10_000,
            'the first prompt',
          );
          const sent = await control.request<{ command: { id: number; log: string | null } }>('pty/send', {
            session: info.id,
            text: "head -c 1200000 /dev/zero | tr '\\0' x",
            timeout: 20_000,
          });
          const page = await control
            .request<{ totalBytes: number; truncated: boolean }>('pty/commandOutput', { session: info.id, id: sent.command.id })
            .catch((e: Error) => e);
          control.close();
          return { log: sent.command.log, page };
        }),
      );
      assert.equal(none.log, null, 'no log is kept');
      assert.match((none.page as Error).message, /keeps no command logs/);
      assert.equal(typeof small.log, 'string');
      assert.deepEqual(small.page, { ...(small.page as object), totalBytes: 1024 * 1024, truncated: true }, 'the log stops at 1 MiB');
    } finally {
      await Promise.all(hosts.map((h) => h.stop()));
    }
  });

  test('keys: single characters and named keys reach the program', { timeout: TEST_TIMEOUT }, async () => {
    await clearScreen();
    await send('read -n1 k; echo "key=[$k]"');
    ok(await cli('keys', sid, 'q'), 'keys q');
    ok(await cli('wait', sid, 'key=[q]', '--timeout', '10000'), 'wait for key=[q]');
    await send('read line; echo "line=[$line]"');
    ok(await cli('keys', sid, 'x', 'y', 'Space', 'z', 'Enter'), 'keys x y Space z Enter');
    ok(await cli('wait', sid, 'line=[xy z]', '--timeout', '10000'), 'wait for line=[xy z]');
    // A pager: `q` quits it.
    await send('seq 1 100 | less');
    await until(async () => /^1\n2\n/.test(await screen()), 10_000, 'less showing the first page');
    ok(await cli('keys', sid, 'q'), 'keys q (less)');
    await until(async () => /^\$ seq 1 100 \| less\n\$\n$/m.test(await screen()), 10_000, 'the prompt after less');
  });

  test('wait: exit 0 when shown, 1 on timeout, --regex, and waiting for output still to come', { timeout: TEST_TIMEOUT }, async () => {
    await clearScreen();
    await send('echo wait-$((5*5))');
    assert.equal(ok(await cli('wait', sid, 'wait-25'), 'wait (already shown)'), '');
    const miss = await cli('wait', sid, 'never-shown-zzz', '--timeout', '200');
    assert.equal(miss.code, 1);
    assert.equal(miss.stdout, '');
    assert.match(miss.stderr, /^[^\n]*never-shown-zzz[^\n]*\n$/);
    ok(await cli('wait', sid, '^wait-2\\d$', '--regex', '--timeout', '5000'), 'wait --regex');
    const reMiss = await cli('wait', sid, '^wait-3\\d$', '--regex', '--timeout', '200');
    assert.equal(reMiss.code, 1);
    assert.match(reMiss.stderr, /^[^\n]+\n$/);
    // The literal text is not a pattern without --regex.
    assert.equal((await cli('wait', sid, 'wait-2\\d', '--timeout', '200')).code, 1);

    // A wait started before the text appears returns when it does: the text is printed only once
    // the wait's connection is open on the host (the CLI sends its pty/wait as soon as it connects).
    const connected = await settledConnectionsTo(serve.record.control);
    const pending = startCli(['wait', sid, 'later-99', '--timeout', '20000'], env);
    await until(() => connectionsTo(serve.record.control) > connected, 10_000, 'the wait to connect to the host');
    await send('echo later-$((99))');
    const r = await pending.result;
    assert.equal(r.code, 0, r.stderr);
  });

  test('selectors: id, exact name and unique id prefix', { timeout: TEST_TIMEOUT }, async () => {
    await clearScreen();
    await send('echo sel-$((2*21))');
    const expected = ok(await cli('read', sid), 'read by id');
    assert.match(expected, /^sel-42$/m);
    assert.equal(ok(await cli('read', sname), 'read by name'), expected);
    assert.equal(ok(await cli('read', sid.slice(0, 3)), 'read by id prefix'), expected);

    // A second session on the same host: both listed, each reachable by its own selectors.
    const control: RpcClient = await connect(serve.record.control);
    try {
      const second = await control.request<SessionInfo>('session/create', {
        command: 'bash',
        args: ['--norc', '--noprofile'],
        env: { PS1: '$ ', HISTFILE: '/dev/null' },
        name: 'second',
      });
      sessionPids.add(second.pid);
      await until(async () => (await listJson()).length === 2, 5000, 'the second session listed');
      const table = ok(await cli('list'), 'list');
      assert.equal(table.trimEnd().split('\n').length, 3);
      assert.match(table, new RegExp(`^${second.id}\\s+second\\s+running`, 'm'));
      ok(await cli('wait', 'second', '$', '--timeout', '10000'), 'wait on second');
      assert.match(ok(await cli('send', 'second', 'echo on-second'), 'send to second'), /^on-second$/m);
      // The shortest prefix that tells the two apart.
      let n = 1;
      while (second.id.slice(0, n) === sid.slice(0, n)) n++;
      assert.match(ok(await cli('read', second.id.slice(0, n)), 'second by prefix'), /^on-second$/m);
      assert.doesNotMatch(ok(await cli('read', sid.slice(0, n)), 'first by prefix'), /on-second/);
      if (n > 1) failsWithOneLine(await cli('read', sid.slice(0, n - 1)), 'ambiguous prefix', /ambiguous/);
      await control.request('pty/kill', { session: second.id });
      await until(async () => (await listJson()).length === 1, 5000, 'the second session gone');
      await until(() => !pidAlive(second.pid), 5000, 'the second shell ended');
    } finally {
      control.close();
    }
  });
});

describe('attach', () => {
  test('an interactive terminal in tmux: screen, hint, typing, live output, Ctrl+] detaches', { timeout: 90_000 }, async () => {
    await clearScreen();
    // Rows above the screen: a taller screen pulls them back down.
    await send('seq 1 40');
    await send('echo before-attach-$((4*4))');
    // The session is smaller than the pane: attach sizes it to the pane before the picture is drawn
    // (drawn for the old size, the cursor and what was typed landed on other rows; an outside audit).
    const sizer = await connect(serve.record.control);
    await sizer.request('pty/resize', { session: sid, cols: 80, rows: 24 }).finally(() => sizer.close());
    const tdir = privateDir();
    tmux = new Tmux(tdir, { env });
    const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
    const command = `env SHARED_PTY_DIR=${q(dir)} ${q(process.execPath)} ${q(CLI)} attach ${q(sname)}; echo "[attach-exit=$?]"; exec sleep 600`;
    tmux.newSession('att', 100, 30, command);
    const capture = () => tmux!.capture('att');
    const shown = (re: RegExp, what: string) => until(() => re.test(capture()), 15_000, `${what}; pane:\n${capture()}`);
    const paneShell = tmux.panePid('att');
    startedPids.add(paneShell);

    // The session's screen is drawn, and the detach key is named (in the scrollback above the
    // picture: written at the cursor, the notice shifted the picture a row; an outside audit).
    await shown(/^before-attach-16$/m, 'the session screen in the pane');
    const history = () => tmux!.run('capture-pane', '-p', '-S', '-', '-t', 'att');
    await until(() => /detach with Ctrl\+\]/.test(history()), 15_000, 'the detach hint');
    const trimmed = (text: string) => text.replace(/\s+$/, '');
    await until(async () => trimmed(capture()) === trimmed(await screen()), 15_000, `the pane shows the session's screen, row for row; pane:\n${capture()}`);
    const attachProc = childrenOf(paneShell).find((c) => c.comm === 'node' || c.comm.startsWith('MainThread'));
    assert.ok(attachProc, `the attach process runs under the pane: ${JSON.stringify(childrenOf(paneShell))}`);

    // Typing in the attached terminal reaches the shell everyone shares.
    tmux.run('send-keys', '-t', 'att', '-l', 'echo from-attach-$((3+4))');
    tmux.run('send-keys', '-t', 'att', 'Enter');
    ok(await cli('wait', sid, '^from-attach-7$', '--regex', '--timeout', '10000'), 'typed input reached the shell');
    await shown(/^from-attach-7$/m, 'the echo in the pane');

    // What another user sends shows live in the attached terminal.
    assert.match(await send('echo via-send-$((6*7))'), /^via-send-42$/m);
    await shown(/^via-send-42$/m, 'the send output in the pane');

    // A program on the alternate screen with mouse reports on, in the outer terminal too.
    await send("printf '\\033[?1049h\\033[?1000h\\033[?1006hfull-screen-%s' $((2*3)); cat");
    await shown(/full-screen-6/, 'the program in the pane');
    const modes = () => tmux!.run('display-message', '-p', '-t', 'att', '#{alternate_on} #{mouse_any_flag} #{mouse_sgr_flag}').trim();
    assert.equal(modes(), '1 1 1');

    // Ctrl+] detaches: the attach process exits 0, the session keeps running; the outer terminal
    // has its own screen and no mouse reports again, and the shell goes on below the picture (the
    // scroll region's reset had put it at the top, over the picture).
    tmux.run('send-keys', '-t', 'att', 'C-]');
    await shown(/\[attach-exit=0\]/, 'the attach process exited with 0');
    assert.match(capture(), /detached/i);
    assert.equal(modes(), '0 0 0');
    // (The picture fills the pane's 30 rows: the detach line is at its foot, not at its top.)
    assert.ok(
      capture()
        .split('\n')
        .findIndex((r) => /detached/.test(r)) >= 20,
      `the detach line below the picture:\n${capture()}`,
    );
    ok(await cli('keys', sid, 'Ctrl+C'), 'keys Ctrl+C');
    await send("printf '\\033[?1049l\\033[?1000l\\033[?1006l'");
    await until(() => !pidAlive(attachProc.pid), 5000, 'the attach process is gone');
    const after = await listJson();
    assert.equal(after.length, 1);
    assert.equal(after[0].running, true);
    assert.match(await send('echo still-here'), /^still-here$/m);
    // Keys typed after the detach go nowhere near the session.
    tmux.run('send-keys', '-t', 'att', '-l', 'echo after-detach');
    tmux.run('send-keys', '-t', 'att', 'Enter');
    // Fences instead of a pause: the pane has the keys (its own terminal echoed them to `sleep 600`,
    // or an attach still running would have echoed the session's screen), and a send started after
    // them has run in the session, so keys that had reached it would be on its screen by now.
    await shown(/echo after-detach/, 'the keys in the pane');
    assert.match(await send('echo fence-$((6*7))'), /^fence-42$/m);
    assert.doesNotMatch(await screen(), /after-detach/);

    const server = tmux.serverPid();
    tmux.killServer();
    if (server) await until(() => !pidAlive(server), 5000, 'the tmux server ended');
    await until(() => !pidAlive(paneShell), 5000, 'the pane process ended');
    startedPids.delete(paneShell);
    tmux = undefined;
  });
});

/**
 * Resizes the test's session back and forth until `events --json` (`run`) prints a resize: the
 * command is listening once the host counts its call, and then a resize is an event.
 */
async function resizeUntilPrinted(run: ReturnType<typeof startCli>, what: string): Promise<void> {
  let out = '';
  run.child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  const control = await connect(serve.record.control);
  try {
    await until(
      async () => {
        await control.request('pty/resize', { session: sid, cols: 91, rows: 30 });
        await control.request('pty/resize', { session: sid, cols: 100, rows: 30 });
        return out.includes('"resize"');
      },
      10_000,
      what,
    );
  } finally {
    control.close();
  }
}

describe('events', () => {
  test(
    'events <session> prints each event as it happens (--json: one object a line); SIGINT ends it with 0; --since needs a session',
    { timeout: TEST_TIMEOUT },
    async () => {
      const run = startCli(['events', sname, '--json'], env);
      await resizeUntilPrinted(run, 'a resize event on stdout');
      const events = await interruptedEvents(run);
      const resize = events.find((e) => e.type === 'resize')!;
      assert.deepEqual(
        { ...resize, at: undefined, seq: undefined },
        { host: serve.record.hostId, session: sid, at: undefined, seq: undefined, type: 'resize', cols: resize.cols, rows: 30 },
      );
      assert.ok(events.every((e) => e.session === sid));
      failsWithOneLine(await cli('events', '--since', '3'), 'events --since without a session', /needs a <session>/);
    },
  );
});

describe('events', () => {
  test(
    'events of every host: a record whose host cannot be reached (a live pid, no socket) is said in one line, and the others are followed; SIGINT ends it with 0',
    { timeout: TEST_TIMEOUT },
    async () => {
      // A process that is alive but no host: its pid makes the record look live.
      const alive = spawn('sleep', ['60'], { stdio: 'ignore' });
      const record = path.join(dir, 'hghost.json');
      try {
        const ghost = { ...serve.record, hostId: 'hghost', pid: alive.pid, control: `unix:${dir}/hghost/control.sock`, sessions: [] };
        fs.writeFileSync(record, JSON.stringify(ghost), { mode: 0o600 });
        const run = startCli(['events', '--json'], env);
        await resizeUntilPrinted(run, 'a resize event of the reachable host');
        process.kill(run.pid, 'SIGINT');
        const r = await run.result;
        assert.equal(r.code, 0, r.stderr);
        assert.match(r.stderr, /^shared-pty: cannot reach host hghost: [^\n]*\n$/);
      } finally {
        fs.rmSync(record, { force: true });
        alive.kill();
      }
    },
  );
});

describe('events', () => {
  test('events whose reader has gone (`| head -1`) ends with 0 at its next event, no stack trace', { timeout: TEST_TIMEOUT }, async () => {
    const run = startCli(['events', sname, '--json'], env);
    const control = await connect(serve.record.control);
    try {
      // Listening once an event reaches stdout; then the reader goes, as head does once it has its line.
      let first = false;
      run.child.stdout!.once('data', () => (first = true));
      const resize = async () => {
        await control.request('pty/resize', { session: sid, cols: 91, rows: 30 });
        await control.request('pty/resize', { session: sid, cols: 100, rows: 30 });
      };
      await until(async () => (await resize(), first), 10_000, 'an event on stdout');
      run.child.stdout!.destroy();
      // The next events meet a closed pipe (EPIPE): the command ends instead of crashing.
      let ended = false;
      void run.result.then(
        () => (ended = true),
        () => (ended = true),
      );
      await until(async () => (await resize(), ended), 10_000, 'events to end');
    } finally {
      control.close();
    }
    const r = await run.result;
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, '');
  });
});

describe('help', () => {
  test('--help / -h for the CLI and for each command: usage on stdout, exit 0', { timeout: TEST_TIMEOUT }, async () => {
    const all = ok(await runCli(['--help'], emptyEnv), '--help');
    for (const name of ['list', 'read', 'send', 'keys', 'wait', 'attach', 'events', 'serve', 'mcp']) assert.match(all, new RegExp(`shared-pty ${name}\\b`));
    for (const args of [
      ['serve', '--help'],
      ['serve', '-h', '--cmd', 'bash'],
      ['send', '--help'],
    ]) {
      const out = ok(await runCli(args, emptyEnv), args.join(' '));
      assert.match(out, new RegExp(`^Usage:\\n  shared-pty ${args[0]} `), out);
    }
    // serve's help names every limit a user may change, with its default.
    const serveHelp = ok(await runCli(['serve', '--help'], emptyEnv), 'serve --help');
    for (const flag of [
      '--max-sessions 256',
      '--max-session-connections 64',
      '--max-control-connections 256',
      '--max-http-connections 256',
      '--max-in-flight 1024',
      '--max-line-bytes 1048576',
    ]) {
      assert.ok(serveHelp.includes(flag), `serve --help shows ${flag}:\n${serveHelp}`);
    }
  });
});
