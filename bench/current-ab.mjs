// Screen-current throughput of two or more builds and tmux, alternating round by round in one run:
// the way a change to the output path is measured old against new (bench/README.md). Each round
// `cat`s the same file in a new session of each build's `shared-pty serve` (started as users start
// it, once) and in a new tmux window, timed from the keypress until the screen shows the file's last line, as (e) in
// screen-under-load.mjs; the host's CPU (all threads, its main thread, the mirror thread) and the
// tmux server's come from /proc. The order of the builds flips every round.
//
//   node bench/current-ab.mjs old=/tmp/old/bin/shared-pty.js new=bin/shared-pty.js
//
// Knobs: BENCH_REPS (4), BENCH_MB (31), BENCH_KINDS (plain; also coloured, cursor-heavy),
// BENCH_TMUX (1; 0 leaves tmux out), BENCH_HOST_ARGS (node flags for the hosts, e.g. profiles),
// BENCH_FRESH (1: a host started for each round, as a cold host; else one host per build, a new
// session each round, as tmux keeps one server and opens a window each round).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { makeFiles, persistentHost, tmuxServer } from './screen-under-load.mjs';

const MARK = 'END-OF-FLOOD';
const REPS = Number(process.env.BENCH_REPS ?? 4);
const MB = Number(process.env.BENCH_MB ?? 31);
const KINDS = (process.env.BENCH_KINDS ?? 'plain').split(',');
const WITH_TMUX = process.env.BENCH_TMUX !== '0';
/** A host started for each round (a cold host) instead of one host per build for every round. */
const FRESH = process.env.BENCH_FRESH === '1';
/** /proc counts CPU time in clock ticks of 10 ms (USER_HZ 100). */
const TICK_MS = 10;

const now = () => Number(process.hrtime.bigint()) / 1e6;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const median = (a) => {
  const s = [...a].sort((x, y) => x - y);
  return s.length === 0 ? NaN : s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const f = (n, d = 1) => (Number.isFinite(n) ? n.toFixed(d) : 'n/a');
const load = () => fs.readFileSync('/proc/loadavg', 'utf8').split(' ')[0];

/** CPU ms of each thread of `pid`, by thread id, with each thread's name. */
function threadCpu(pid) {
  const out = {};
  for (const t of fs.readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/task/${t}/stat`, 'utf8');
      const f2 = stat.slice(stat.lastIndexOf(') ') + 2).split(' ');
      const name = fs.readFileSync(`/proc/${pid}/task/${t}/comm`, 'utf8').trim();
      out[t] = { ms: (Number(f2[11]) + Number(f2[12])) * TICK_MS, name };
    } catch {
      // the thread ended meanwhile
    }
  }
  return out;
}

function cpuDelta(pid, before, after) {
  let total = 0;
  let mirror = 0;
  for (const [t, v] of Object.entries(after)) {
    const d = v.ms - (before[t]?.ms ?? 0);
    total += d;
    // Node names its worker threads after nothing; the mirror is the busiest thread besides the main one.
    if (t !== String(pid)) mirror = Math.max(mirror, d);
  }
  const main = (after[String(pid)]?.ms ?? 0) - (before[String(pid)]?.ms ?? 0);
  return { total, main, mirror };
}

/** One round: a new session in `host` (or, with BENCH_FRESH, in a host started for it). */
async function currentShared(env, build, file) {
  const fresh = FRESH ? await persistentHost(env, build.cli) : undefined;
  const host = fresh ?? (build.host ??= await persistentHost(env, build.cli));
  const { id } = await host.control.call('session/create', { command: 'sh', args: ['-c', `stty -echo; read _; exec cat '${file}'`], cols: 80, rows: 24 });
  try {
    await sleep(300);
    const c0 = threadCpu(host.pid);
    const t0 = now();
    await host.control.call('pty/write', { session: id, action: { key: 'Enter' } });
    const r = await host.control.call('pty/wait', { session: id, match: MARK, timeout: 120000 });
    const ms = now() - t0;
    const cpu = cpuDelta(host.pid, c0, threadCpu(host.pid));
    if (r.reason !== 'matched') throw new Error(`the screen never showed the end (${r.reason})`);
    return { ms, ...cpu };
  } finally {
    await host.control.call('pty/kill', { session: id }).catch(() => {});
    await fresh?.stop();
  }
}

let window = 0;
async function currentTmux(t, file) {
  const ch = `ab${window++}`;
  const c0 = threadCpu(t.pid);
  const t0 = now();
  t.run('new-window', '-d', '-t', 'load', '-n', ch, `cat '${file}'; tmux -S '${t.sock}' wait-for -S ${ch}; sleep 3600`);
  await t.runAsync('wait-for', ch);
  while (!(await t.runAsync('capture-pane', '-p', '-t', `load:${ch}`)).includes(MARK)) await sleep(5);
  const ms = now() - t0;
  const cpu = cpuDelta(t.pid, c0, threadCpu(t.pid));
  t.run('kill-window', '-t', `load:${ch}`);
  return { ms, total: cpu.total, main: cpu.total, mirror: 0 };
}

const builds = process.argv.slice(2).map((a) => {
  const i = a.indexOf('=');
  if (i < 0) throw new Error(`usage: node bench/current-ab.mjs name=path/to/bin/shared-pty.js …`);
  return { name: a.slice(0, i), cli: path.resolve(a.slice(i + 1)) };
});
if (builds.length === 0) throw new Error('usage: node bench/current-ab.mjs name=path/to/bin/shared-pty.js …');

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spt-ab-'));
const sockDir = fs.mkdtempSync(path.join(dir, 'spt-'));
fs.chmodSync(sockDir, 0o700);
const env = { ...process.env, SHARED_PTY_DIR: sockDir };
const files = makeFiles(dir, MB);
const t = WITH_TMUX ? tmuxServer(dir) : undefined;
t?.start();
const names = [...builds.map((b) => b.name), ...(t ? ['tmux'] : [])];
try {
  for (const kind of KINDS) {
    const file = files[kind];
    if (!file) throw new Error(`no output kind ${kind}`);
    const mbs = fs.statSync(file).size / 1e6;
    const res = Object.fromEntries(names.map((n) => [n, []]));
    for (let r = 0; r < REPS; r++) {
      for (const n of r % 2 ? [...names].reverse() : names) {
        const l = load();
        const b = builds.find((x) => x.name === n);
        const x = b ? await currentShared(env, b, file) : await currentTmux(t, file);
        res[n].push(x);
        process.stderr.write(
          `${kind} round ${r + 1} ${n}: ${f(x.ms, 0)} ms ${f(mbs / (x.ms / 1000))} MB/s, CPU ${f(x.total / mbs)} ms/MB (main ${f(x.main / mbs)}, mirror ${f(x.mirror / mbs)}), load ${l}\n`,
        );
      }
    }
    console.log(`${kind}, ${f(mbs)} MB, ${REPS} rounds alternating; medians`);
    for (const n of names) {
      const a = res[n];
      const ms = median(a.map((x) => x.ms));
      console.log(
        `  ${n.padEnd(8)} ${f(ms, 0).padStart(6)} ms ${f(mbs / (ms / 1000)).padStart(5)} MB/s  CPU/MB ${f(median(a.map((x) => x.total / mbs)))} (main ${f(median(a.map((x) => x.main / mbs)))}, mirror ${f(median(a.map((x) => x.mirror / mbs)))})  runs ${a.map((x) => f(x.ms, 0)).join(' ')}`,
      );
    }
  }
} finally {
  for (const b of builds) await b.host?.stop();
  t?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
}
