// Property-based fuzzing of the `shared-pty` command line: `node bin/shared-pty.js` with arbitrary
// arguments against a test host (`serve --cmd cat`, so text sent is echoed, not run). Every run
// ends by itself with status 0, 1 or 2; a failure says so in one line on stderr, never with a
// stack trace. The commands that start servers (serve, daemon, mcp) are left out: a valid
// command line would start one, which is what they are for.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import fc from 'fast-check';
import { runCli, startedPids, startServeHost, stopPid, type ServeHost } from '../../helpers/cli';
import { nastyString } from '../../helpers/arbitraries';
import { fuzz } from '../../helpers/fuzz';
import { tempRuntimeDir } from '../../helpers/host';
import { bashEnv, buildCli } from '../../helpers/protocol';

/** Runs per `npm test` (each is a node process: a few hundred ms). */
const SHORT_RUNS = 30;
/** Longest a run may take: every wait is bounded below. */
const RUN_MS = 20_000;
/** A `wait` gets at most this timeout, so a run never waits long by design. */
const WAIT_MS = 100;

let dir: string;
let env: NodeJS.ProcessEnv;
let serve: ServeHost;

before(
  async () => {
    buildCli();
    dir = tempRuntimeDir();
    env = bashEnv({ SHARED_PTY_DIR: dir });
    serve = await startServeHost(['--cmd', 'cat', '--no-http', '--name', 'fuzzcat'], env);
  },
  { timeout: 180_000 },
);

after(async () => {
  await serve?.stop();
  for (const pid of startedPids) await stopPid(pid);
  fs.rmSync(dir, { recursive: true, force: true });
});

/** One argument: a flag of some command (maybe with =value), a value, the session, or anything. */
const arg: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom('@id', '@name', '@prefix', 'no-such-session') },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      '--json',
      '--top',
      '--bottom',
      '--start',
      '--end',
      '--scrollback',
      '--offset',
      '--lines',
      '--no-submit',
      '--timeout',
      '--idle',
      '--regex',
      '--read-only',
      '--help',
      '-h',
      '--',
      '--top=3',
      '--timeout=50',
      '--lines=0',
      '--bogus',
      '-x',
      '-1',
      '--timeout=',
      '--scope',
      '--scope=input',
      '--expires',
      '--expires=1h',
      '--expires=0s',
    ),
  },
  { weight: 2, arbitrary: fc.constantFrom('0', '1', '5', '-3', '1e3', '99999999999999999999', 'NaN', '', ' ', 'Enter', 'Ctrl+C', 'ArrowUp', '(', 'x') },
  { weight: 2, arbitrary: nastyString.filter((s) => !s.includes('\u0000')) }, // NUL cannot be in an argv
);

const commandLine = fc.tuple(
  fc.oneof(
    { weight: 8, arbitrary: fc.constantFrom('list', 'read', 'send', 'keys', 'wait', 'view', 'attach', 'share', 'tokens', 'revoke') },
    { weight: 1, arbitrary: fc.constantFrom('', 'help', '--version', 'nope', 'LIST', 'toString', 'constructor') },
  ),
  fc.array(arg, { maxLength: 6 }),
);

/** The placeholders of the session, and a bound on every wait. */
function realize(command: string, args: string[]): string[] {
  const s = serve.record.sessions[0];
  const out = args.map((a) => (a === '@id' ? s.id : a === '@name' ? s.name : a === '@prefix' ? s.id.slice(0, -1) : a));
  for (let i = 0; i < out.length; i++) {
    const n = Number(out[i]);
    if (out[i - 1] === '--timeout' && Number.isInteger(n) && n > WAIT_MS) out[i] = String(WAIT_MS);
    if (out[i].startsWith('--timeout=') && Number(out[i].slice(10)) > WAIT_MS) out[i] = `--timeout=${WAIT_MS}`;
  }
  // wait's default is 10 s and send's 30 s: a run bounds them (a later --timeout still wins).
  const bounded = command === 'wait' || command === 'send' ? ['--timeout', String(WAIT_MS), ...out] : out;
  return command === '' ? bounded : [command, ...bounded];
}

describe('fuzz: the CLI', () => {
  test(
    'any arguments: exit status 0, 1 or 2 (send: 124 when its wait runs out); a failure is one line on stderr, never a stack trace',
    { timeout: 600_000 },
    async () => {
      await fuzz(
        [commandLine],
        async ([command, args]) => {
          const argv = realize(command, args);
          const r = await runCli(argv, env, RUN_MS);
          const what = `shared-pty ${JSON.stringify(argv)} → ${r.code ?? r.signal}; stderr: ${r.stderr.slice(0, 500)}`;
          assert.equal(r.signal, null, what);
          // `send` ends as `timeout(1)` does when its wait runs out (124, nothing on stderr: the output
          // so far is on stdout); the fuzz session runs no shell, so no command's own status comes back.
          const timedOut = command === 'send' && r.code === 124;
          assert.ok(r.code === 0 || r.code === 1 || r.code === 2 || timedOut, what);
          assert.doesNotMatch(r.stderr, /\n\s+at |Error: .*\n.*node:internal/, what);
          if (timedOut) assert.equal(r.stderr, '', what);
          // A bare `shared-pty` prints its usage on stderr (exit 2), as the help test expects.
          else if (r.code !== 0 && argv.length > 0) {
            const lines = r.stderr.trimEnd().split('\n');
            assert.equal(lines.length, 1, what);
            assert.match(lines[0], /^shared-pty: \S/, what);
          }
        },
        SHORT_RUNS,
        RUN_MS + 5000,
      );
    },
  );
});
