#!/usr/bin/env node
// Shared PTY benchmark: throughput, memory per session and idle CPU, against tmux and raw node-pty,
// all in one run on this machine. `npm run bench` (builds first). See bench/README.md.
//
// Environment knobs: BENCH_MB (default 50), BENCH_REPS (3), BENCH_SESSIONS (10),
// BENCH_LINES (12000), BENCH_IDLE_MS (5000).
import { fork, spawn, spawnSync, execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
import { screenUnderLoad } from './screen-under-load.mjs';
import { runInteractive } from './interactive.mjs';
import { scale } from './scale.mjs';
import { memoryServe } from './memory-serve.mjs';
import { runRemote } from './remote.mjs';
import { rpc } from './serve-client.mjs';
import { writeBase64Lines } from './data.mjs';
const require = createRequire(import.meta.url);
const root = path.dirname(here);
const MB = Number(process.env.BENCH_MB ?? 50);
const REPS = Number(process.env.BENCH_REPS ?? 3);
const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 10);
const LINES = Number(process.env.BENCH_LINES ?? 12000);
const IDLE_MS = Number(process.env.BENCH_IDLE_MS ?? 5000);
const ONLY = process.env.BENCH_ONLY ?? ''; // 'throughput', 'load', 'interactive', 'memory', 'scale' or 'remote' to run one part
const FLOOD_MS = Number(process.env.BENCH_FLOOD_MS ?? 3000);
const DEADLINE_MS = 1_020_000; // the whole bench stays under 17 minutes: 9 before (h) and (i), which take 5-8 (100 and 256 sessions, each against tmux)

const started = Date.now();
const now = () => Number(process.hrtime.bigint()) / 1e6;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'spt-bench-'));
const children = new Set(); // pids we started, ended by pid on the way out
let tmuxServerPid;
const hasTmux = spawnSync('tmux', ['-V']).status === 0;

function checkDeadline(what) {
  if (Date.now() - started > DEADLINE_MS) throw new Error(`bench over its time budget before ${what}`);
}

// ---------------------------------------------------------------- workers

/** Runs bench/worker.mts in a fresh node process; `onMessage` gets every IPC message, returns the last. */
function worker(args, onMessage, extraExecArgv = []) {
  return new Promise((resolve, reject) => {
    const child = fork(path.join(here, 'worker.mts'), args, {
      cwd: root,
      execArgv: ['--import', 'tsx', ...extraExecArgv, ...(process.env.BENCH_WORKER_ARGS ?? '').split(' ').filter(Boolean)],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      // Hosts get the environment a user's shell gives them: nothing tuned by hand.
      env: process.env,
    });
    children.add(child.pid);
    let last;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`worker ${args[0]} timed out`));
    }, 120_000);
    child.on('message', async (m) => {
      if (m && m.error) {
        clearTimeout(timer);
        reject(new Error(`worker ${args[0]}: ${m.error}`));
        return;
      }
      last = m;
      try {
        await onMessage?.(m, child);
      } catch (e) {
        child.kill('SIGKILL');
        reject(e);
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      children.delete(child.pid);
      if (code === 0) resolve(last);
      else reject(new Error(`worker ${args[0]} exited with ${code}`));
    });
  });
}

/** A JSON-RPC subscriber on a session socket, in this process (another process than the host). */
async function subscribe(address) {
  const conn = await rpc(address.replace(/^unix:/, ''));
  const stats = { notifications: 0, lastOutput: 0, exitAt: 0, cursor: 0, dropped: 0, cpu0: process.cpuUsage(), cpuMs: 0 };
  let onExit;
  const exited = new Promise((r) => (onExit = r));
  conn.onMessage = (msg) => {
    if (msg.method === 'pty/output') {
      stats.notifications++;
      stats.lastOutput = now();
      stats.cursor = msg.params.cursor;
      stats.dropped += msg.params.dropped ?? 0;
    } else if (msg.method === 'pty/exit') {
      stats.exitAt = now();
      const c = process.cpuUsage(stats.cpu0);
      stats.cpuMs = (c.user + c.system) / 1000;
      onExit();
    }
  };
  await conn.call('pty/subscribe', {});
  return { stats, exited, close: conn.close };
}

// ---------------------------------------------------------------- tmux

const tmuxConf = path.join(tmp, 'tmux.conf');
const tmuxSock = path.join(tmp, 'tmux.sock');
fs.writeFileSync(tmuxConf, 'set -g status off\nset -g history-limit 10000\nset -g default-size 80x24\nset -sg escape-time 0\n');
const tmuxEnv = Object.fromEntries(
  Object.entries({ ...process.env, PS1: '$ ', HISTFILE: '/dev/null', LANG: 'C.UTF-8' }).filter(([k]) => !k.startsWith('TMUX')),
);
// Through env: tmux starts a command line with `$SHELL -c`, and a non-interactive bash drops PS1.
const TMUX_BASH = ['env', 'PS1=$ ', 'HISTFILE=/dev/null', 'bash', '--norc', '--noprofile', '-i'];
const tmux = (...a) => execFileSync('tmux', ['-u', '-S', tmuxSock, '-f', tmuxConf, ...a], { env: tmuxEnv, encoding: 'utf8' });

function tmuxStart() {
  tmux('new-session', '-d', '-s', 'keep', '-x', '80', '-y', '24', 'sleep 3600');
  tmuxServerPid = Number(tmux('display', '-p', '-t', 'keep', '#{pid}').trim());
  children.add(tmuxServerPid);
}

function tmuxStop() {
  if (!tmuxServerPid) return;
  try {
    tmux('kill-server');
  } catch {
    // gone already
  }
  try {
    process.kill(tmuxServerPid, 'SIGKILL');
  } catch {
    // gone
  }
  children.delete(tmuxServerPid);
  tmuxServerPid = undefined;
}

function rssKb(pid) {
  return Number(execFileSync('ps', ['-o', 'rss=', '-p', String(pid)], { encoding: 'utf8' }).trim());
}

/** utime + stime of a process in ms. */
function cpuMs(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  return (ticks * 1000) / Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
}

// ---------------------------------------------------------------- measurements

function makeData() {
  // The terminal turns each \n into \r\n: expected bytes = size + lines.
  // Printable text like a build log: base64 of random bytes in 76-column lines (as `base64` prints).
  const file = path.join(tmp, 'data.txt');
  const size = writeBase64Lines(file, MB);
  return { file, bytes: size, ptyBytes: size + Math.round(size / 77) };
}

async function throughputRaw(file) {
  const r = await worker(['raw', file]);
  return { ms: r.tLast - r.t0, bytes: r.bytes, cpuMs: r.cpuMs };
}

/** A Shared PTY host runs `cat`; with `subscribed`, a socket client in this process follows its output. */
async function throughputShared(file, subscribed) {
  let sub;
  let result;
  await worker(['shared', file], async (m, child) => {
    if (m.address) {
      if (subscribed) sub = await subscribe(m.address);
      child.send('go');
    } else if (m.tParsed) {
      if (sub) await Promise.race([sub.exited, sleep(30000)]);
      result = { ...m, sub: sub ? { ...sub.stats } : undefined };
      sub?.close();
      child.send('done');
    }
  });
  const r = result;
  return {
    rawMs: r.tRaw - r.t0,
    parsedMs: r.tParsed - r.t0,
    subscriberMs: r.sub ? r.sub.lastOutput - r.t0 : NaN,
    bytes: r.bytes,
    subscriberBytes: r.sub ? r.sub.cursor - r.startCursor - r.sub.dropped : NaN,
    dropped: r.sub?.dropped ?? 0,
    cpuMs: r.cpuMs,
    mainMs: r.mainMs,
    subscriberCpuMs: r.sub?.cpuMs ?? NaN,
  };
}

/** Runs `tmux wait-for <channel>` without blocking this process (an attached client must be read meanwhile). */
function tmuxWaitFor(channel) {
  return new Promise((resolve, reject) => {
    const p = spawn('tmux', ['-S', tmuxSock, 'wait-for', channel], { env: tmuxEnv, stdio: 'ignore' });
    children.add(p.pid);
    p.on('exit', (code) => {
      children.delete(p.pid);
      if (code === 0) resolve();
      else reject(new Error(`tmux wait-for ${channel} exited with ${code}`));
    });
  });
}

/**
 * tmux runs `cat` in a new window: detached (no client: tmux only parses), or with a client
 * attached in an 80x24 PTY that this process reads (tmux also draws the pane for it).
 */
async function throughputTmux(file, i, attached) {
  const channel = `done${i}${attached ? 'a' : ''}`;
  let client;
  if (attached) {
    const pty = require('node-pty');
    client = pty.spawn('tmux', ['-u', '-S', tmuxSock, '-f', tmuxConf, 'attach', '-t', 'keep'], {
      name: 'xterm-256color',
      cols: 80,
      rows: 24,
      cwd: tmp,
      env: tmuxEnv,
      encoding: null,
    });
    children.add(client.pid);
    client.onData(() => {});
    await sleep(300); // attached and drawn
  }
  const c0 = cpuMs(tmuxServerPid);
  const cc0 = client ? cpuMs(client.pid) : 0;
  const t0 = now();
  // Without -d the new window becomes the current one: an attached client shows it.
  tmux('new-window', ...(attached ? [] : ['-d']), '-t', 'keep', `cat '${file}'; tmux -S '${tmuxSock}' wait-for -S ${channel}`);
  await tmuxWaitFor(channel);
  const ms = now() - t0;
  const result = { ms, cpuMs: cpuMs(tmuxServerPid) - c0, clientCpuMs: client ? cpuMs(client.pid) - cc0 : 0 };
  if (client) {
    client.kill();
    children.delete(client.pid);
  }
  return result;
}

async function memoryShared() {
  return worker(['memory', String(SESSIONS), String(LINES)], undefined, ['--expose-gc']);
}

async function memoryTmux() {
  // Warm-up, as the Shared PTY worker does: one pane prints 200000 rows and is closed.
  tmux('new-session', '-d', '-s', 'warm', '-x', '80', '-y', '24', ...TMUX_BASH);
  await tmuxSeq('warm', 200000);
  tmux('kill-session', '-t', 'warm');
  await sleep(300);
  const names = [];
  const batch = async () => {
    const added = [];
    for (let i = 0; i < SESSIONS; i++) {
      const name = `m${names.length + added.length}`;
      tmux('new-session', '-d', '-s', name, '-x', '80', '-y', '24', ...TMUX_BASH);
      added.push(name);
    }
    await Promise.all(added.map((n) => tmuxSeq(n)));
    names.push(...added);
    await sleep(300);
  };
  const before = rssKb(tmuxServerPid);
  await batch();
  const mid = rssKb(tmuxServerPid);
  await batch();
  const after = rssKb(tmuxServerPid);
  const history = names.map((n) => Number(tmux('display', '-p', '-t', n, '#{history_size}').trim()));
  for (const n of names) tmux('kill-session', '-t', n);
  return { beforeKb: before, midKb: mid, afterKb: after, history };
}

/** A shell command printing `n` coloured rows, `#i i`; the same as bench/worker.mts's. */
const colouredLines = (n) => `awk 'BEGIN{for(i=1;i<=${n};i++) printf "\\033[3%dm#%d\\033[0m %d\\n", i%8, i, i}'`;

async function tmuxSeq(name, lines = LINES) {
  const screen = () => tmux('capture-pane', '-p', '-t', name).replace(/\n+$/, '');
  const until = async (re) => {
    const end = Date.now() + 30000;
    while (!re.test(screen())) {
      if (Date.now() > end) throw new Error(`tmux pane ${name} never showed ${re}`);
      await sleep(30);
    }
  };
  await until(/\$$/);
  const command = lines === LINES ? colouredLines(lines) : `seq 1 ${lines}`; // the warm-up prints plain rows, as the worker's
  tmux('send-keys', '-t', name, command, 'Enter');
  await until(new RegExp(lines === LINES ? `\\n#${lines} ${lines}\\n\\$$` : `\\n${lines}\\n\\$$`));
}

// ---------------------------------------------------------------- report

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (x, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : 'n/a');

function table(rows) {
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => String(r[c]).length)));
  return rows
    .map((r, i) => {
      const line = r.map((cell, c) => (c === 0 ? String(cell).padEnd(widths[c]) : String(cell).padStart(widths[c]))).join('  ');
      return i === 0 ? `${line}\n${widths.map((w) => '-'.repeat(w)).join('  ')}` : line;
    })
    .join('\n');
}

async function main() {
  console.log(`Shared PTY bench — ${os.cpus().length} CPU ${os.cpus()[0]?.model ?? ''}, node ${process.version}, ${hasTmux ? tmux('-V').trim() : 'no tmux'}`);
  if (hasTmux) tmuxStart();
  if (!ONLY || ONLY === 'throughput') await throughputPart();
  if (hasTmux && (!ONLY || ONLY === 'load')) await loadPart();
  if (hasTmux && (!ONLY || ONLY === 'interactive')) await interactivePart();
  if (!ONLY || ONLY === 'memory') await memoryPart();
  if (!ONLY || ONLY === 'remote') await remotePart();
  if (hasTmux && (!ONLY || ONLY === 'memory')) await memoryServePart();
  if (hasTmux && (!ONLY || ONLY === 'scale')) await scalePart();
  console.log(`\nbench took ${fmt((Date.now() - started) / 1000)} s`);
}

async function throughputPart() {
  const { file, bytes, ptyBytes } = makeData();
  const mb = bytes / (1024 * 1024);
  console.log(`(a) throughput: cat of ${fmt(mb)} MB of base64 text at 80x24, median of ${REPS} runs`);

  const raw = [];
  const alone = [];
  const subscribed = [];
  const tm = [];
  const tmAttached = [];
  for (let i = 0; i < REPS; i++) {
    checkDeadline('throughput');
    raw.push(await throughputRaw(file));
    alone.push(await throughputShared(file, false));
    subscribed.push(await throughputShared(file, true));
    if (hasTmux) {
      tm.push(await throughputTmux(file, i, false));
      tmAttached.push(await throughputTmux(file, i, true));
    }
  }
  const med = (runs, k) => median(runs.map((r) => r[k]));
  const rawMs = med(raw, 'ms');
  const tmuxMs = hasTmux ? med(tm, 'ms') : NaN;
  const tmuxAttMs = hasTmux ? med(tmAttached, 'ms') : NaN;
  const aloneRead = med(alone, 'rawMs');
  const aloneParsed = med(alone, 'parsedMs');
  const subDelivered = med(subscribed, 'subscriberMs');
  const subParsed = med(subscribed, 'parsedMs');
  const mbs = (ms) => mb / (ms / 1000);
  const perMb = (runs, k) => fmt(med(runs, k) / mb);
  const row = (name, ms, ref, cpu) => [name, fmt(ms, 0), fmt(mbs(ms)), fmt(ref / ms, 2) + 'x', fmt(rawMs / ms, 2) + 'x', cpu];
  const ttable = [
    ['path', 'time ms', 'MB/s', 'vs tmux alike', 'vs raw node-pty', 'CPU ms/MB'],
    row('raw node-pty (read only)', rawMs, tmuxMs, perMb(raw, 'cpuMs')),
    ['no client:', '', '', '', '', ''],
    row('  Shared PTY: output read', aloneRead, tmuxMs, ''),
    row('  Shared PTY: screen parsed', aloneParsed, tmuxMs, perMb(alone, 'cpuMs')),
    row('  tmux pane (parsed)', tmuxMs, tmuxMs, hasTmux ? perMb(tm, 'cpuMs') : ''),
    ['one client following the output:', '', '', '', '', ''],
    row('  Shared PTY: socket subscriber got all', subDelivered, tmuxAttMs, ''),
    row('  Shared PTY: screen parsed', subParsed, tmuxAttMs, perMb(subscribed, 'cpuMs')),
    row('  tmux pane, client attached', tmuxAttMs, tmuxAttMs, hasTmux ? perMb(tmAttached, 'cpuMs') : ''),
  ];
  console.log(table(ttable));
  const runs = (xs, k) => xs.map((r) => fmt(r[k], 0)).join(' ');
  console.log(`  with the subscriber, Shared PTY's output read (ms): ${runs(subscribed, 'rawMs')} (the socket traffic slows the PTY's reads too, on 2 cores)`);
  console.log(
    `  each run (ms): raw ${runs(raw, 'ms')} | output read ${runs(alone, 'rawMs')} | subscriber ${runs(subscribed, 'subscriberMs')} | tmux ${runs(tm, 'ms')} | tmux attached ${runs(tmAttached, 'ms')}; load average ${os
      .loadavg()
      .map((x) => x.toFixed(1))
      .join(' ')}`,
  );
  console.log(
    `  CPU ms/MB: the process doing the work (Shared PTY: the host, all threads; tmux: the server); Shared PTY's main thread ${perMb(alone, 'mainMs')} alone, ${perMb(subscribed, 'mainMs')} with the subscriber, whose own process used ${perMb(subscribed, 'subscriberCpuMs')}; the tmux client ${hasTmux ? perMb(tmAttached, 'clientCpuMs') : 'n/a'}`,
  );
  const lost = [...alone, ...subscribed].filter((s) => s.bytes !== ptyBytes);
  if (lost.length) console.log(`  ! Shared PTY read ${lost.map((s) => s.bytes).join(', ')} bytes of ${ptyBytes}`);
  const rawLost = raw.filter((r) => r.bytes !== ptyBytes);
  if (rawLost.length)
    console.log(
      `  note: plain node-pty lost the last ${rawLost.map((r) => ptyBytes - r.bytes).join(', ')} bytes (libuv ends the stream at POLLHUP; Shared PTY drains them)`,
    );
  const subLoss = subscribed.filter((s) => s.dropped > 0 || s.subscriberBytes !== s.bytes);
  if (subLoss.length) console.log(`  note: the socket subscriber fell behind the 1 MiB ring: ${subLoss.map((s) => `${s.dropped} B dropped`).join(', ')}`);
  const verdict = (x) => `${x >= 1.3 ? 'MET' : 'NOT MET'} (${fmt(x, 2)}x)`;
  console.log(
    `  target (issue 12's aim, an engine run through tsx with in-process listeners; issue 25's figure is (e), a host as users start it): output throughput >= 1.3x tmux: no client ${verdict(tmuxMs / aloneRead)}; one client ${verdict(tmuxAttMs / subDelivered)}`,
  );
  console.log(
    `  the screen (pty/read) is up to date ${fmt(tmuxMs / aloneParsed, 2)}x tmux's speed (the parser keeps pace: the PTY waits when it falls ~10 ms behind, ~2 ms while a client reads the screen)`,
  );
}

/** Echo, pipelined requests, flow-controlled throughput against tmux control mode (bench/interactive.mjs). */
async function interactivePart() {
  checkDeadline('echo and pipelining');
  console.log('');
  console.log(await runInteractive({ reps: REPS, tmp, mb: MB, log: () => checkDeadline('the next interactive round') }));
}

/** (d) and (e): the screen under load, with the host started as a user starts it (bench/screen-under-load.mjs). */
async function loadPart() {
  checkDeadline('the screen under load');
  console.log('');
  console.log(await screenUnderLoad({ dir: tmp, reps: REPS, mb: MB, floodMs: FLOOD_MS, log: () => checkDeadline('the next load round') }));
}

/** (i): memory per session with 10,000 coloured rows and the oldest 100 rows, as users run it (bench/memory-serve.mjs). */
async function memoryServePart() {
  checkDeadline('memory as users run it');
  console.log('');
  console.log(
    await memoryServe({ dir: tmp, reps: REPS, sessions: SESSIONS, lines: 10_000, idleMs: IDLE_MS, log: () => checkDeadline('the next memory round') }),
  );
}

/** (h): 100 flooding sessions and 256 idle ones against tmux (bench/scale.mjs). */
async function scalePart() {
  checkDeadline('scale');
  console.log('');
  console.log(
    await scale({
      dir: tmp,
      reps: REPS,
      sessions: Number(process.env.BENCH_SESSIONS_FLOOD ?? 100),
      floodMs: Number(process.env.BENCH_SCALE_FLOOD_MS ?? 5000),
      log: () => checkDeadline('the next scale round'),
    }),
  );
}

/** (g) Echo and a screen read through ssh, against `ssh -t tmux` (bench/remote.mjs). */
async function remotePart() {
  checkDeadline('the remote part');
  console.log('');
  console.log(await runRemote({ reps: REPS, reads: 3, tmp, log: () => checkDeadline('the next remote round') }));
}

async function memoryPart() {
  checkDeadline('memory');
  console.log(
    `\n(b) memory: ${SESSIONS} bash sessions each printed ${LINES} coloured rows (10000 rows of scrollback kept), after a warm-up (one session printed 200000 rows and closed); then ${SESSIONS} more`,
  );
  const mem = await memoryShared();
  const t = hasTmux ? await memoryTmux() : undefined;
  const kb = (x) => x / 1024;
  const avg = (k) => kb(mem.mid[k] - mem.before[k]) / SESSIONS;
  const slope = (k) => kb(mem.after[k] - mem.mid[k]) / SESSIONS;
  const tAvg = t ? (t.midKb - t.beforeKb) / SESSIONS : NaN;
  const tSlope = t ? (t.afterKb - t.midKb) / SESSIONS : NaN;
  console.log(
    table([
      ['per session, KB', `first ${SESSIONS} (average)`, `${SESSIONS} -> ${2 * SESSIONS} (marginal)`, 'marginal vs tmux'],
      ['Shared PTY host RSS', fmt(avg('rss'), 0), fmt(slope('rss'), 0), fmt(slope('rss') / tSlope, 2) + 'x'],
      ['  JS heap in use (after GC)', fmt(avg('heap'), 0), fmt(slope('heap'), 0), ''],
      ['  external (ArrayBuffers: xterm cells, ring)', fmt(avg('ext'), 0), fmt(slope('ext'), 0), ''],
      [
        '  heap + external (what the session holds)',
        fmt(avg('heap') + avg('ext'), 0),
        fmt(slope('heap') + slope('ext'), 0),
        fmt((slope('heap') + slope('ext')) / tSlope, 2) + 'x',
      ],
      ['tmux server RSS', fmt(tAvg, 0), fmt(tSlope, 0), '1.00x'],
    ]),
  );
  console.log(
    `  retained rows per session: Shared PTY ${[...new Set(mem.retainedRows)].join('/')}, tmux history ${t ? [...new Set(t.history)].join('/') : 'n/a'} (+24 screen rows)`,
  );
  console.log(
    `  host RSS with no session: Shared PTY ${fmt(kb(mem.before.rss) / 1024, 1)} MB (node + tsx, after warm-up), tmux server ${t ? fmt(t.beforeKb / 1024, 1) : 'n/a'} MB`,
  );
  console.log('  RSS deltas of a V8 process move with heap growth and page reuse (+-500 KB a session between runs); heap + external is the stable measure');
  const held = slope('heap') + slope('ext');
  console.log(
    `  target: Shared PTY <= tmux per session: marginal RSS ${slope('rss') <= tSlope ? 'MET' : 'NOT MET'}, heap + external ${held <= tSlope ? 'MET' : 'NOT MET'}, first-${SESSIONS} average RSS ${avg('rss') <= tAvg ? 'MET' : 'NOT MET'}`,
  );
}

function cleanup() {
  tmuxStop();
  for (const pid of children) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
  fs.rmSync(tmp, { recursive: true, force: true });
}

process.on('SIGINT', () => {
  cleanup();
  process.exit(130);
});
try {
  await main();
  cleanup();
} catch (e) {
  cleanup();
  console.error(`bench failed: ${e?.stack ?? e}`);
  process.exit(1);
}
