// The command line as a user meets it (docs/cli.md#flags): a number a flag takes is checked by the
// CLI against the host's own bounds and refused naming the flag, never the param the host checks;
// --help and --version take no other word; --host first needs a name and a command; each command's
// --help names exactly the flags its parser takes (src/cli/command-flags.ts).
// Driven as a user would: child processes of the built bin/shared-pty.js against a `shared-pty
// serve` host running real bash in a real PTY.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { MAX_COLS, MAX_COMMAND_RECORDS, MAX_ROWS, MAX_SCROLLBACK_PAGE, MAX_WAIT_MS } from '../../../src/core/base/param-limits';
import { MAX_SESSION_NAME_CHARS } from '../../../src/core/base/limits';
import type { FlagSpec } from '../../../src/cli/args';
import { COMMAND_FLAGS, HOST_COMMANDS } from '../../../src/cli/command-flags';
import { runCli, runEach, startedPids, startServeHost, stopPid, type CliResult, type ServeHost } from '../../helpers/cli';
import { tempRuntimeDir } from '../../helpers/host';
import { bashEnv, buildCli, REPO_ROOT } from '../../helpers/protocol';

/** Per-test bound: generous for a noisy machine (each case is a Node start), finite so a hang fails. */
const TEST_TIMEOUT = 120_000;

const dirs: string[] = [];
let env: NodeJS.ProcessEnv;
let serve: ServeHost;
let sid: string;

function privateDir(): string {
  const d = tempRuntimeDir();
  dirs.push(d);
  return d;
}

/** Asserts a usage error: exit 2, nothing on stdout, one line on stderr matching `pattern`. */
function usageError(r: CliResult, what: string, pattern: RegExp): void {
  assert.equal(r.code, 2, `${what}: exit status 2, got ${r.code} ${r.signal ?? ''}; stderr: ${r.stderr}`);
  assert.equal(r.stdout, '', `${what}: nothing on stdout`);
  assert.match(r.stderr, /^shared-pty: [^\n]+\n$/, `${what}: one line on stderr, got ${JSON.stringify(r.stderr)}`);
  assert.match(r.stderr, pattern, what);
}

before(async () => {
  buildCli();
  env = bashEnv({ SHARED_PTY_DIR: privateDir() });
  serve = await startServeHost(['--cmd', 'bash --norc --noprofile', '--no-http'], env);
  sid = serve.record.sessions[0].id;
  const r = await runCli(['wait', sid, '$', '--timeout', '10000'], env);
  assert.equal(r.code, 0, r.stderr);
});

after(async () => {
  await serve?.stop();
  for (const pid of startedPids) await stopPid(pid);
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

describe('numeric flags', () => {
  test("one past the host's bound is refused by the CLI naming the flag; the bound itself is taken", { timeout: TEST_TIMEOUT }, async () => {
    const huge = String(Number.MAX_SAFE_INTEGER);
    const refused: Array<[string[], string, number, number]> = [
      [['send', sid, 'echo nope', '--timeout', String(MAX_WAIT_MS + 1)], '--timeout', 1, MAX_WAIT_MS],
      [['send', sid, 'echo nope', '--timeout', huge], '--timeout', 1, MAX_WAIT_MS],
      [['send', sid, 'echo nope', '--idle', String(MAX_WAIT_MS + 1)], '--idle', 1, MAX_WAIT_MS],
      [['wait', sid, 'nope', '--timeout', String(MAX_WAIT_MS + 1)], '--timeout', 0, MAX_WAIT_MS],
      [['commands', sid, '--limit', String(MAX_COMMAND_RECORDS + 1)], '--limit', 1, MAX_COMMAND_RECORDS],
      [['read', sid, '--scrollback', '--lines', String(MAX_SCROLLBACK_PAGE + 1)], '--lines', 1, MAX_SCROLLBACK_PAGE],
      [['open', '--cols', String(MAX_COLS + 1)], '--cols', 2, MAX_COLS],
      [['open', '--rows', String(MAX_ROWS + 1)], '--rows', 1, MAX_ROWS],
      [['serve', '--no-http', '--cols', String(MAX_COLS + 1)], '--cols', 2, MAX_COLS],
      [['serve', '--no-http', '--rows', String(MAX_ROWS + 1)], '--rows', 1, MAX_ROWS],
    ];
    const results = await runEach(
      refused.map(([args]) => args),
      env,
    );
    refused.forEach(([args, flag, min, max], i) => {
      const what = args.join(' ');
      usageError(results[i], what, new RegExp(`^shared-pty: ${flag} needs a whole number from ${min} to ${max}, got "\\d+"`));
      // The host's words for its param (`timeout: Too big: expected number to be <=…`) never show.
      assert.doesNotMatch(results[i].stderr, /Too big|expected number|^shared-pty: (timeout|idleMs|limit|lines|cols|rows):/, what);
    });

    // At the bound the host takes the call.
    const taken: string[][] = [
      ['send', sid, 'true', '--timeout', String(MAX_WAIT_MS), '--idle', String(MAX_WAIT_MS)],
      ['wait', sid, '$', '--timeout', String(MAX_WAIT_MS)],
      ['commands', sid, '--limit', String(MAX_COMMAND_RECORDS)],
      ['read', sid, '--scrollback', '--lines', String(MAX_SCROLLBACK_PAGE)],
    ];
    const ok = await runEach(taken, env);
    taken.forEach((args, i) => assert.equal(ok[i].code, 0, `${args.join(' ')}: exit 0, got ${ok[i].code}; stderr: ${ok[i].stderr}`));
    // Nothing refused reached the shell.
    const screen = await runCli(['read', sid], env);
    assert.doesNotMatch(screen.stdout, /nope/);
  });

  test(
    "--name empty, too long or with a control character is refused by the CLI naming the flag, never in the host's words",
    { timeout: TEST_TIMEOUT },
    async () => {
      const cases = [
        ['open', '--name', ''],
        ['open', '--name', 'n'.repeat(MAX_SESSION_NAME_CHARS + 1)],
        ['serve', '--no-http', '--name', ''],
      ];
      const results = await runEach(cases, env);
      cases.forEach((args, i) => {
        usageError(results[i], args.join(' ').slice(0, 40), new RegExp(`^shared-pty: --name needs a name of 1 to ${MAX_SESSION_NAME_CHARS} characters`));
        assert.doesNotMatch(results[i].stderr, /Too small|Too big|^shared-pty: name:/m);
      });
      const escaped = await runEach([['open', '--name', 'x\x1b]0;pwn\x07y', '--', 'true']], env);
      usageError(escaped[0], 'open --name <an escape>', /^shared-pty: --name: a session name may not hold control characters/);
      // An empty --cwd is no folder (it opened in the current one, unasked).
      const noFolder = await runEach([['open', '--cwd', '', '--', 'true']], env);
      usageError(noFolder[0], 'open --cwd ""', /^shared-pty: --cwd needs a folder/);
      // A folder that is not there, or a file, is the CLI's usage error too, found before any host is
      // started (found by an outside audit: exit 1 in the host's words, and a per-user host left idle).
      const records = () => fs.readdirSync(env.SHARED_PTY_DIR!).filter((f) => f.endsWith('.json')).length;
      const before = records();
      const [missing, file] = await runEach(
        [
          ['open', '--cwd', '/nonexistent/dir', '--', 'true'],
          ['open', '--cwd', '/etc/passwd', '--', 'true'],
        ],
        env,
      );
      usageError(missing, 'open --cwd /nonexistent/dir', /^shared-pty: --cwd: no such folder: \/nonexistent\/dir/);
      usageError(file, 'open --cwd /etc/passwd', /^shared-pty: --cwd: not a folder: \/etc\/passwd/);
      assert.equal(records(), before, 'no host started');
    },
  );
});

describe('help', () => {
  test(
    "a command that works on this machine's sessions only does not offer NAME:<session>; one that works through a bridge does",
    { timeout: TEST_TIMEOUT },
    async () => {
      const [view, share, record, send] = await runEach(
        [
          ['view', '--help'],
          ['share', '--help'],
          ['record', '--help'],
          ['send', '--help'],
        ],
        env,
      );
      for (const [r, what] of [
        [view, 'view'],
        [share, 'share'],
        [record, 'record'],
      ] as const) {
        assert.equal(r.code, 0, r.stderr);
        assert.doesNotMatch(r.stdout + r.stderr, /NAME:<session>/, `${what} --help`);
        assert.match(r.stdout + r.stderr, /this machine's sessions/, `${what} --help`);
      }
      assert.match(send.stdout + send.stderr, /NAME:<session> is one on the remote host NAME/);
    },
  );
});

describe('words the CLI itself takes', () => {
  test('a word after --help or --version is a usage error, as a surplus word is for every command', { timeout: TEST_TIMEOUT }, async () => {
    const empty = bashEnv({ SHARED_PTY_DIR: privateDir() });
    const cases: Array<[string[], RegExp]> = [
      [['--version', 'extra'], /^shared-pty: unexpected argument "extra" after --version \(see shared-pty --help\)$/m],
      [['-v', 'extra'], /unexpected argument "extra" after -v/],
      [['--help', 'extra'], /^shared-pty: unexpected argument "extra" after --help \(see shared-pty --help\)$/m],
      [['-h', 'extra'], /unexpected argument "extra" after -h/],
      // `help send` wants send's usage: the line says how to get it.
      [['help', 'send'], /unexpected argument "send" after help; for its usage: shared-pty send --help$/m],
      [['--help', 'serve'], /unexpected argument "serve" after --help; for its usage: shared-pty serve --help$/m],
    ];
    const results = await runEach(
      cases.map(([args]) => args),
      empty,
    );
    cases.forEach(([args, pattern], i) => usageError(results[i], args.join(' '), pattern));
    // Alone they still answer.
    const [version, help] = await runEach([['--version'], ['--help']], empty);
    assert.equal(version.code, 0, version.stderr);
    assert.match(version.stdout, /^\d+\.\d+\.\d+\S*\n$/);
    assert.equal(help.code, 0, help.stderr);
    assert.match(help.stdout, /^shared-pty .*\n\nUsage:\n/);
  });
});

describe('--host before the command', () => {
  test('a flag whose value is left out before another flag says so, and nothing starts (no socket named "--no-http")', { timeout: TEST_TIMEOUT }, async () => {
    const dir = privateDir();
    const socket = path.join(privateDir(), 'x.sock');
    const runs = await runEach(
      [
        // (--port too: the old parser then stopped at "mutually exclusive" before making the socket.)
        ['serve', '--cmd', 'bash', '--socket', '--no-http', '--port', '1'],
        ['serve', '--cmd', '--socket', socket],
        ['serve', '--cols', '--rows', '5'],
        ['open', '--name', '--json'],
        ['list', '--host', '--json'],
      ],
      bashEnv({ SHARED_PTY_DIR: dir }),
    );
    usageError(runs[0], 'serve --socket --no-http', /^shared-pty: --socket needs a value before --no-http/m);
    usageError(runs[1], 'serve --cmd --socket PATH', /^shared-pty: --cmd needs a value before --socket/m);
    usageError(runs[2], 'serve --cols --rows 5', /^shared-pty: --cols needs a value before --rows/m);
    usageError(runs[3], 'open --name --json', /^shared-pty: --name needs a value before --json/m);
    usageError(runs[4], 'list --host --json', /^shared-pty: --host needs a host name before --json/m);
    assert.ok(!fs.existsSync(socket), 'no socket made');
    assert.deepEqual(fs.readdirSync(dir), [], 'no host started');
  });

  test('daemon: --idle-exit-ms and --stay together is a usage error, before any host starts', { timeout: TEST_TIMEOUT }, async () => {
    const dir = privateDir();
    const [r] = await runEach([['daemon', '--idle-exit-ms', '5000', '--stay']], bashEnv({ SHARED_PTY_DIR: dir }));
    usageError(r, 'daemon --idle-exit-ms 5000 --stay', /^shared-pty: --idle-exit-ms and --stay cannot be given together \(see shared-pty daemon --help\)$/m);
    assert.deepEqual(fs.readdirSync(dir), [], 'no host started');
  });

  test('--host with no command after it, or with no name, says so, never "unknown command"', { timeout: TEST_TIMEOUT }, async () => {
    const empty = bashEnv({ SHARED_PTY_DIR: privateDir() });
    const needsCommand =
      /^shared-pty: --host box needs a command after it \(list, open, kill, commands, read, send, keys, wait, attach, events\), as in: shared-pty --host box list$/m;
    const needsName = /^shared-pty: --host needs a host name, as in: shared-pty --host NAME list/m;
    const cases: Array<[string[], RegExp]> = [
      [['--host', 'box'], needsCommand],
      [['--host=box'], needsCommand],
      [['--host', 'box', '--help'], needsCommand],
      [['--host'], needsName],
      [['--host='], needsName],
      [['--host', '--json', 'list'], needsName],
      // Given twice, as any other flag: a usage error, not the last one silently taken.
      [['list', '--host', 'box', '--host', 'local'], /^shared-pty: --host is given twice; give it once$/m],
      [['--host', 'box', 'list', '--host=local'], /^shared-pty: --host is given twice; give it once$/m],
      [['--host', 'box', '--host', 'local', 'list'], /^shared-pty: --host is given twice; give it once$/m],
      [['--host=box', '--host=local', 'list'], /^shared-pty: --host is given twice; give it once$/m],
    ];
    const results = await runEach(
      cases.map(([args]) => args),
      empty,
    );
    cases.forEach(([args, pattern], i) => {
      usageError(results[i], args.join(' '), pattern);
      assert.doesNotMatch(results[i].stderr, /unknown command/, args.join(' '));
    });
    // With a command it still comes first: `local` is this machine, whose list is empty here.
    const listed = await runCli(['--host', 'local', 'list', '--json'], empty);
    assert.equal(listed.code, 0, listed.stderr);
    assert.deepEqual(JSON.parse(listed.stdout), []);
  });
});

describe("each command's --help", () => {
  /** The flags a help text names: words that start with - or --, as a flag is written in a usage line. */
  const flagsIn = (text: string): Set<string> => new Set([...text.matchAll(/(?:^|[\s[(|])(--?[a-z][a-z0-9-]*)/g)].map((m) => m[1]));
  /** The flags a command's parser takes: its entry in COMMAND_FLAGS, and --host where main.ts takes it. */
  const flagsOf = (name: string, spec: FlagSpec): Set<string> =>
    new Set([...(spec.values ?? []), ...(spec.booleans ?? []), ...(HOST_COMMANDS.has(name) ? ['--host'] : [])]);

  test('names every flag its parser takes, and no other', { timeout: TEST_TIMEOUT }, async () => {
    const empty = bashEnv({ SHARED_PTY_DIR: privateDir() });
    // The table is the parsers' own: every command parses its arguments against its entry.
    for (const file of fs.readdirSync(path.join(REPO_ROOT, 'src', 'cli')).filter((f) => f.endsWith('.ts') && f !== 'args.ts')) {
      const source = fs.readFileSync(path.join(REPO_ROOT, 'src', 'cli', file), 'utf8');
      for (const call of source.matchAll(/parseArgs\(([^)]*)\)/g)) {
        assert.match(call[1], /^argv, COMMAND_FLAGS\.\w+$/, `src/cli/${file}: ${call[0]} takes its flags from COMMAND_FLAGS`);
      }
    }
    const names = Object.keys(COMMAND_FLAGS);
    const all = await runCli(['--help'], empty);
    assert.equal(all.code, 0, all.stderr);
    assert.deepEqual(
      new Set([...all.stdout.matchAll(/^ {2}shared-pty (\w+)/gm)].map((m) => m[1])),
      new Set(names),
      'every command in --help has its flags in COMMAND_FLAGS',
    );
    const helps = await runEach(
      names.map((name) => [name, '--help']),
      empty,
    );
    const missing: Record<string, string[]> = {};
    const extra: Record<string, string[]> = {};
    names.forEach((name, i) => {
      assert.equal(helps[i].code, 0, `${name} --help: ${helps[i].stderr}`);
      const shown = flagsIn(helps[i].stdout);
      const taken = flagsOf(name, COMMAND_FLAGS[name as keyof typeof COMMAND_FLAGS]);
      const notShown = [...taken].filter((f) => !shown.has(f));
      const notTaken = [...shown].filter((f) => !taken.has(f));
      if (notShown.length) missing[name] = notShown;
      if (notTaken.length) extra[name] = notTaken;
    });
    assert.deepEqual(missing, {}, 'flags a command takes that its --help does not name');
    assert.deepEqual(extra, {}, 'flags a --help names that its command does not take');
  });
});
