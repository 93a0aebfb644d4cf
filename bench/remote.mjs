#!/usr/bin/env node
// Shared PTY through ssh against tmux through ssh (issue #27): keystroke echo and a screen read on a
// session of another machine, the way each is used remotely. The "other machine" is this one,
// reached by a real sshd the bench starts on 127.0.0.1 (its own host key, user key and config,
// ended by pid), with its own runtime directory and home, as the tests do:
//
//   Shared PTY: `shared-pty attach box:ID` (one bridge over ssh, hosts.json), and reads by
//               `shared-pty read box:ID` (a new ssh each) and by `shared-pty mcp`'s read_screen
//               (one bridge kept, as an agent uses it);
//   tmux:       `ssh -t box tmux attach` (how people use tmux remotely), and reads by
//               `ssh box tmux capture-pane -p` (a new ssh each).
//
// Both run `cat` at 80x24; keys typed one at a time into a local PTY running the client, each timed
// from the write to its echo there; rounds alternate. Needs tmux, ssh, sshd and ssh-keygen; the
// built CLI (`npm run build`). Standalone: `node bench/remote.mjs` (BENCH_REPS rounds, default 3;
// BENCH_KEYS keys a round, default 200; BENCH_READS reads a round, default 5). bench/run.mjs calls
// `runRemote({ reps, tmp, log })`, which returns the tables as text.
import { spawn, spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.dirname(here);
const CLI = path.join(root, 'bin', 'shared-pty.js');
const require = createRequire(import.meta.url);
/** How long one key may take to echo before the round is called broken (ssh on a loaded machine is slow, not that slow). */
const ECHO_LIMIT_MS = 10_000;
/** How long a client may take to show its first screen (an ssh login, a bridge, a host started on the far side). */
const START_LIMIT_MS = 60_000;
/** Untimed keys first: the first echoes pay for ssh's and the host's warm-up. */
const WARM_KEYS = 10;
/** Keys typed into one line of `cat` before it is cleared (Ctrl+U), far below the tty's 4096-character line. */
const KEYS_PER_LINE = 60;

const now = () => Number(process.hrtime.bigint()) / 1e6;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const percentile = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(p * s.length) - 1))];
};
const median = (xs) => percentile(xs, 0.5);
const fmt = (x, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : 'n/a');
const ratio = (x) => (Number.isFinite(x) ? `${x.toFixed(2)}x` : 'n/a');
/** Escape sequences taken out before looking for a typed letter (a redraw's `\x1b[?25l` holds an `l`). */
const ESCAPES = /\x1b\[[0-9;?<>=]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][0-9A-Za-z]|\x1b[=>78M]/g;

function table(rows) {
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => String(r[c]).length)));
  return rows
    .map((r, i) => {
      const line = r.map((cell, c) => (c === 0 ? String(cell).padEnd(widths[c]) : String(cell).padStart(widths[c]))).join('  ');
      return i === 0 ? `${line}\n${widths.map((w) => '-'.repeat(w)).join('  ')}` : line;
    })
    .join('\n');
}

async function waitFor(what, ms, poll) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await poll();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', timeout: START_LIMIT_MS, ...opts });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')}: exit ${r.status ?? r.signal}: ${r.stderr || r.stdout}`);
  return r.stdout;
}

/** What the bench needs that a machine may lack; undefined when all is there. */
export function remoteBenchMissing() {
  for (const [cmd, args] of [
    ['tmux', ['-V']],
    ['ssh', ['-V']],
    ['ssh-keygen', ['-?']],
    ['/usr/sbin/sshd', ['-?']],
  ]) {
    const r = spawnSync(cmd, args, { stdio: 'ignore' });
    if (r.error) return `${cmd} is not installed`;
  }
  return undefined;
}

/** The machine behind ssh: sshd on a free 127.0.0.1 port, a runtime directory, a home, a tmux server. */
async function farMachine(dir, track) {
  const ssh = path.join(dir, 'ssh');
  fs.mkdirSync(ssh, { mode: 0o700 });
  for (const k of ['host_key', 'user_key']) run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', path.join(ssh, k)]);
  fs.copyFileSync(path.join(ssh, 'user_key.pub'), path.join(ssh, 'authorized_keys'));
  if (process.getuid?.() === 0) fs.mkdirSync('/run/sshd', { recursive: true, mode: 0o755 }); // sshd's privilege separation directory
  const port = await freePort();
  const config = [
    `Port ${port}`,
    'ListenAddress 127.0.0.1',
    `HostKey ${path.join(ssh, 'host_key')}`,
    `PidFile ${path.join(ssh, 'sshd.pid')}`,
    `AuthorizedKeysFile ${path.join(ssh, 'authorized_keys')}`,
    'PasswordAuthentication no',
    'KbdInteractiveAuthentication no',
    'UsePAM no',
    'StrictModes no', // the keys are in a temporary directory under /tmp
    'PermitRootLogin prohibit-password',
  ];
  fs.writeFileSync(path.join(ssh, 'sshd_config'), config.join('\n') + '\n');
  let sshdLog = '';
  const sshd = track(spawn('/usr/sbin/sshd', ['-D', '-e', '-f', path.join(ssh, 'sshd_config')], { stdio: ['ignore', 'ignore', 'pipe'] }));
  sshd.stderr.setEncoding('utf8').on('data', (d) => (sshdLog += d));
  await waitFor(
    `sshd on port ${port} (${sshdLog})`,
    15_000,
    () =>
      new Promise((resolve) => {
        const s = net.connect(port, '127.0.0.1');
        s.once('connect', () => (s.destroy(), resolve(true)));
        s.once('error', () => resolve(false));
      }),
  );
  const sshArgs = [
    '-F',
    '/dev/null',
    '-i',
    path.join(ssh, 'user_key'),
    '-p',
    String(port),
    '-o',
    'BatchMode=yes',
    '-o',
    'StrictHostKeyChecking=no',
    '-o',
    'UserKnownHostsFile=/dev/null',
    '-o',
    'LogLevel=ERROR',
    `${os.userInfo().username}@127.0.0.1`,
  ];

  const runtime = path.join(dir, 'far-runtime');
  const home = path.join(dir, 'far-home');
  fs.mkdirSync(runtime, { mode: 0o700 });
  fs.mkdirSync(home, { mode: 0o700 });
  const farEnv = `SHARED_PTY_DIR=${runtime} HOME=${home} SHELL=/bin/bash LANG=C.UTF-8`;
  // tmux on the far machine: a private socket and config (no status line, no escape delay), as in bench/run.mjs.
  const tmuxConf = path.join(dir, 'far-tmux.conf');
  fs.writeFileSync(tmuxConf, 'set -g status off\nset -g default-size 80x24\nset -sg escape-time 0\n');
  const tmuxSock = path.join(dir, 'far-tmux.sock');
  const tmux = `tmux -u -S ${tmuxSock} -f ${tmuxConf}`;
  run('sh', ['-c', `${farEnv} ${tmux} new-session -d -s echo -x 80 -y 24 cat`]);
  const tmuxPid = Number(run('sh', ['-c', `${tmux} display -p -t echo '#{pid}'`]).trim());
  track({ pid: tmuxPid });
  // Shared PTY on the far machine: its per-user host, started by `open` there, with the same `cat`.
  const info = JSON.parse(run('sh', ['-c', `${farEnv} exec ${process.execPath} ${CLI} open --name echo --cols 80 --rows 24 --json -- cat`]));
  const sshLine = ['ssh', ...sshArgs].join(' ');
  return {
    sshArgs,
    tmux,
    sessionId: info.id,
    bridge: `${sshLine} '${farEnv} exec ${process.execPath} ${CLI} bridge'`,
  };
}

/** The pids in a runtime directory's discovery records (docs/hosts.md#discovery-records). */
function hostPids(runtime) {
  const pids = [];
  let files = [];
  try {
    files = fs.readdirSync(runtime);
  } catch {
    return pids;
  }
  for (const f of files) {
    if (!f.endsWith('.json')) continue;
    try {
      const { pid } = JSON.parse(fs.readFileSync(path.join(runtime, f), 'utf8'));
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid) pids.push(pid);
    } catch {
      // not a record
    }
  }
  return pids;
}

/** A client of the far session in a local PTY; resolves once a key typed ahead has come back (it is attached). */
async function startClient(pty, file, args, env) {
  const p = pty.spawn(file, args, { name: 'xterm-256color', cols: 80, rows: 24, cwd: root, env });
  p.write('z');
  let seen = '';
  let waiter;
  p.onData((d) => {
    seen += d.replace(ESCAPES, '');
    if (seen.length > 65536) seen = seen.slice(-4096);
    waiter?.();
  });
  await waitFor(`${file} ${args.join(' ')} to start`, START_LIMIT_MS, () => seen.includes('z'));
  return {
    pid: p.pid,
    /** Writes `key` and resolves with the ms until it shows in the output. */
    type(key) {
      seen = '';
      const t0 = now();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no echo of ${JSON.stringify(key)} within ${ECHO_LIMIT_MS} ms`)), ECHO_LIMIT_MS);
        waiter = () => {
          if (!seen.includes(key)) return;
          waiter = undefined;
          clearTimeout(timer);
          resolve(now() - t0);
        };
        p.write(key);
      });
    },
    async clearLine() {
      p.write('\x15'); // Ctrl+U: the tty erases the line
      await sleep(50);
    },
    write: (d) => p.write(d),
    kill: () => p.kill('SIGKILL'),
  };
}

async function echoRound(client, keys) {
  const out = [];
  for (let i = 0; i < WARM_KEYS + keys; i++) {
    if (i % KEYS_PER_LINE === 0) await client.clearLine();
    const ms = await client.type(String.fromCharCode(97 + (i % 26)));
    if (i >= WARM_KEYS) out.push(ms);
  }
  await client.clearLine();
  return out;
}

/** Runs a command to the end; resolves with its wall time in ms and its output. */
function timed(cmd, args, env) {
  return new Promise((resolve, reject) => {
    const t0 = now();
    const p = spawn(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    p.stdout.setEncoding('utf8').on('data', (d) => (out += d));
    p.stderr.setEncoding('utf8').on('data', (d) => (err += d));
    p.on('error', reject);
    p.on('close', (code) => (code === 0 ? resolve({ ms: now() - t0, out }) : reject(new Error(`${cmd} ${args.join(' ')}: exit ${code}: ${err}`))));
  });
}

/**
 * Echo and screen reads through ssh, Shared PTY against `ssh -t tmux`, `reps` rounds alternating.
 * Returns the tables as text; every process it starts is ended by pid.
 */
export async function runRemote({ reps = 3, keys = 200, reads = 5, tmp, log = () => undefined }) {
  const missing = remoteBenchMissing();
  if (missing) return `(g) through ssh: skipped (${missing})`;
  const dir = fs.mkdtempSync(path.join(tmp ?? os.tmpdir(), 'spt-remote-'));
  const started = [];
  const track = (p) => (started.push(p), p);
  const clients = [];
  let mcp;
  try {
    const far = await farMachine(dir, track);
    const config = path.join(dir, 'config');
    fs.mkdirSync(path.join(config, 'shared-pty'), { recursive: true });
    fs.writeFileSync(path.join(config, 'shared-pty', 'hosts.json'), JSON.stringify({ hosts: { box: far.bridge } }));
    const localRuntime = path.join(dir, 'local-runtime');
    fs.mkdirSync(localRuntime, { mode: 0o700 });
    const env = { ...process.env, XDG_CONFIG_HOME: config, SHARED_PTY_DIR: localRuntime, TERM: 'xterm-256color' };
    const session = `box:${far.sessionId}`;
    const pty = require('node-pty');

    const shared = await startClient(pty, process.execPath, [CLI, 'attach', session], env);
    clients.push(shared);
    const tmuxAttach = await startClient(pty, 'ssh', ['-t', ...far.sshArgs, `${far.tmux} attach -t echo`], env);
    clients.push(tmuxAttach);
    const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
    const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
    mcp = new Client({ name: 'bench-remote', version: '0.0.0' });
    await mcp.connect(new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp'], env, stderr: 'ignore' }));
    const mcpRead = async () => {
      const t0 = now();
      const r = await mcp.callTool({ name: 'read_screen', arguments: { session } });
      if (r.isError) throw new Error(`read_screen: ${JSON.stringify(r.content)}`);
      return now() - t0;
    };
    await mcpRead(); // makes its bridge

    const echo = { shared: [], tmux: [] };
    const read = { cli: [], mcp: [], tmux: [] };
    for (let round = 0; round < reps; round++) {
      log();
      // Alternating which goes first, so neither always meets a warmer machine.
      const order = round % 2 === 0 ? ['shared', 'tmux'] : ['tmux', 'shared'];
      for (const which of order) echo[which].push(await echoRound(which === 'shared' ? shared : tmuxAttach, keys));
      for (let i = 0; i < reads; i++) {
        read.cli.push((await timed(process.execPath, [CLI, 'read', session], env)).ms);
        read.tmux.push((await timed('ssh', [...far.sshArgs, `${far.tmux} capture-pane -p -t echo`], env)).ms);
        read.mcp.push(await mcpRead());
      }
    }
    const roundStat = (runs, p) => median(runs.map((r) => percentile(r, p)));
    const rows = [['keystroke echo through ssh, ms', 'p50', 'p99', 'max']];
    const row = (name, runs) => [name, fmt(roundStat(runs, 0.5), 2), fmt(roundStat(runs, 0.99), 2), fmt(Math.max(...runs.flat()), 1)];
    rows.push(row('Shared PTY: shared-pty attach box:ID', echo.shared), row('tmux: ssh -t box tmux attach', echo.tmux));
    rows.push([
      'ratio (Shared PTY / tmux; below 1 is faster)',
      ratio(roundStat(echo.shared, 0.5) / roundStat(echo.tmux, 0.5)),
      ratio(roundStat(echo.shared, 0.99) / roundStat(echo.tmux, 0.99)),
      '',
    ]);
    const readRows = [['screen read through ssh, ms', 'p50', 'max', 'vs tmux (p50)']];
    const tmuxRead = median(read.tmux);
    readRows.push(
      ['Shared PTY: shared-pty read box:ID (new ssh each)', fmt(median(read.cli), 1), fmt(Math.max(...read.cli), 1), ratio(median(read.cli) / tmuxRead)],
      ['Shared PTY: MCP read_screen (bridge kept)', fmt(median(read.mcp), 2), fmt(Math.max(...read.mcp), 1), ratio(median(read.mcp) / tmuxRead)],
      ['tmux: ssh box tmux capture-pane -p (new ssh each)', fmt(tmuxRead, 1), fmt(Math.max(...read.tmux), 1), '1.00x'],
    );
    return [
      `(g) through ssh (issue #27): a \`cat\` session on "another machine" (this one, behind a real sshd on 127.0.0.1), ${keys} keys a round typed one at a time into the local client's PTY, each timed to its echo there; ${reads} screen reads a round; ${reps} rounds alternating; median of each round's percentile`,
      table(rows),
      '',
      table(readRows),
      `  load average ${os
        .loadavg()
        .map((x) => x.toFixed(1))
        .join(' ')}; a new ssh login (key exchange, sshd's child, the far Node) dominates both "new ssh each" rows`,
    ].join('\n');
  } finally {
    await mcp?.close().catch(() => undefined);
    for (const c of clients) c.kill();
    // The per-user hosts the bench's commands started, far and local, by the pids in their records.
    for (const sub of ['far-runtime', 'local-runtime']) for (const pid of hostPids(path.join(dir, sub))) track({ pid });
    for (const p of started.reverse()) {
      try {
        process.kill(p.pid, 'SIGTERM');
      } catch {
        // gone
      }
    }
    await sleep(200);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const reps = Number(process.env.BENCH_REPS ?? 3);
  const keys = Number(process.env.BENCH_KEYS ?? 200);
  const reads = Number(process.env.BENCH_READS ?? 5);
  runRemote({ reps, keys, reads, log: () => process.stderr.write('.') })
    .then((text) => console.log(`\n${text}`))
    .catch((e) => {
      console.error(`bench failed: ${e?.stack ?? e}`);
      process.exitCode = 1;
    });
}
