// docs/hosts.md#remote-hosts: "nothing of it outlives the client". A remote host's command is a
// process tree of the CLI's (`/bin/sh -c`, and the ssh or sleep under it): when the client is done
// while the host is still connecting, or is ended by a signal, the tree ends too, and a command that
// ignores SIGTERM is killed. The hosts here never answer (a `sleep`, one that traps SIGTERM, a
// bridge that answers its first call and then nothing); the built CLI runs as users run it, and the
// processes are found by what their command lines hold.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startCli, startedPids, stopPid } from '../../helpers/cli';
import { tempRuntimeDir, until, withTimeout } from '../../helpers/host';
import { bashEnv, buildCli, CLI, REPO_ROOT } from '../../helpers/protocol';

/** Numbers no other process sleeps for: the hosts' commands are found by them. */
const MARK = `7${process.pid % 1000}.${Date.now() % 100_000}`;
const HANG = `${MARK}1`;
const STUBBORN = `${MARK}2`;
const STALL = `${MARK}3`;
const GRACEFUL = `${MARK}4`;
/** Where the host that cleans up on SIGTERM says it was let finish. */
let cleanedUp = '';

const dirs: string[] = [];
let env: NodeJS.ProcessEnv;

/** Pids of the processes whose command line holds `mark` (the tests' hosts' commands). */
function holding(mark: string): number[] {
  const found: number[] = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cmdline = fs.readFileSync(`/proc/${name}/cmdline`, 'latin1');
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'latin1');
      if (cmdline.includes(mark) && stat.charAt(stat.lastIndexOf(')') + 2) !== 'Z') found.push(Number(name));
    } catch {
      // exited
    }
  }
  return found;
}

/** Waits until nothing of the hosts' commands runs any more (within `ms`). */
async function noneLeft(ms: number, what: string): Promise<void> {
  await until(() => holding(MARK).length === 0, ms, `${what}: nothing of the hosts' commands left (${holding(MARK).join(', ')})`).catch((e: unknown) => {
    for (const pid of holding(MARK)) process.kill(pid, 'SIGKILL');
    throw e;
  });
}

before(() => {
  buildCli();
  const runtime = tempRuntimeDir();
  const config = tempRuntimeDir();
  dirs.push(runtime, config);
  cleanedUp = path.join(runtime, 'cleaned-up');
  // A bridge that answers its first call (it is connected) and then nothing.
  const answerer = (mark: string) =>
    `${JSON.stringify(process.execPath)} -e 'require("readline").createInterface({input: process.stdin}).on("line", (l) => { const m = JSON.parse(l); ` +
    `if (m.method === "host/info") process.stdout.write(JSON.stringify({jsonrpc: "2.0", id: m.id, result: {hostId: "stall"}}) + "\\n"); }); setInterval(() => {}, 1000)' ${mark}`;
  const stall = answerer(STALL);
  // A connected one that cleans up for a second and a half on SIGTERM (within the 2 s before
  // SIGKILL), and says so on stderr first, as ssh and bash do: a pipe closed under it ended it with
  // SIGPIPE, and the relay's exit SIGKILLed it a second in. (In the background with its input
  // kept: a shell gives a background command /dev/null.)
  const graceful = `trap 'echo cleaning up >&2; sleep 1.5; touch ${cleanedUp}; exit 0' TERM; ${answerer(GRACEFUL)} <&0 & wait`;
  const hosts = { hang: `sleep ${HANG}`, stubborn: `trap '' TERM; sleep ${STUBBORN}`, stall, graceful };
  fs.mkdirSync(path.join(config, 'shared-pty'));
  fs.writeFileSync(path.join(config, 'shared-pty', 'hosts.json'), JSON.stringify({ hosts }));
  env = bashEnv({ SHARED_PTY_DIR: runtime, XDG_CONFIG_HOME: config });
});

after(async () => {
  for (const pid of startedPids) await stopPid(pid);
  for (const pid of holding(MARK)) process.kill(pid, 'SIGKILL');
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

describe('bridge commands end with the CLI', { timeout: 60_000 }, () => {
  test('shared-pty mcp whose client closes its input while a host is still connecting leaves nothing of its command behind', async () => {
    const mcp = spawn(process.execPath, [CLI, 'mcp'], { cwd: REPO_ROOT, env, stdio: ['pipe', 'pipe', 'pipe'] });
    startedPids.add(mcp.pid!);
    mcp.stdout.resume();
    mcp.stderr.resume();
    const exited = new Promise<number | null>((resolve) => mcp.once('exit', (code) => resolve(code)));
    const send = (m: object) => mcp.stdin.write(JSON.stringify({ jsonrpc: '2.0', ...m }) + '\n');
    send({ id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bridges-end', version: '0' } } });
    send({ method: 'notifications/initialized' });
    // The listing starts every host's command, and waits for their first answers (up to 30 s).
    send({ id: 2, method: 'tools/call', params: { name: 'list_sessions', arguments: {} } });
    await until(() => holding(HANG).length > 0 && holding(STUBBORN).length > 0 && holding(GRACEFUL).length > 0, 20_000, "the hosts' commands started");
    mcp.stdin.end();
    assert.equal(await withTimeout(exited, 10_000, 'shared-pty mcp exits once its input ends'), 0);
    // Nothing of them was left to run on, re-parented to init: not even the one that ignores SIGTERM.
    await noneLeft(3000, 'after shared-pty mcp');
    // One that ends of SIGTERM had its time to: not killed at the relay's own exit, a second in.
    assert.ok(fs.existsSync(cleanedUp), 'the host command that cleans up on SIGTERM was let finish');
  });

  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
    test(`list ended by ${signal} while hosts connect (or stall) ends their commands, then ends by ${signal} (status ${128 + os.constants.signals[signal]})`, async () => {
      const run = startCli(['list'], env);
      await until(() => holding(HANG).length > 0 && holding(STUBBORN).length > 0 && holding(STALL).length > 0, 20_000, "the hosts' commands started");
      // The stalled one answered its first call: connected, it waits for its listing.
      await new Promise((r) => setTimeout(r, 500));
      process.kill(run.pid, signal);
      const r = await run.result;
      assert.equal(r.signal ?? r.code, r.signal ? signal : 128 + os.constants.signals[signal], `ended by the signal; stderr: ${r.stderr}`);
      assert.equal(r.stdout, '', 'nothing listed after the signal');
      assert.equal(r.stderr, '', 'no host said to have failed: they were ended on purpose');
      await noneLeft(1000, `list after ${signal}`);
    });
  }

  test('events keeps its own way: SIGTERM while it waits for a host ends it with 0, and the host command with it', async () => {
    const run = startCli(['events', '--host', 'stubborn'], env);
    await until(() => holding(STUBBORN).length > 0, 20_000, "the host's command started");
    process.kill(run.pid, 'SIGTERM');
    const r = await run.result;
    assert.equal(r.code, 0, r.stderr);
    await noneLeft(1000, 'events after SIGTERM');
  });
});
