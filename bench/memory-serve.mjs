// (i) Memory per session with 10,000 coloured rows, as users run it (issue #25): a host started
// with `shared-pty serve` (bin/, nothing tuned) and a private tmux server, alternating. Each prints
// the same rows in BENCH_SESSIONS bash sessions (panes) after a warm-up; the figure is the server's
// RSS growth per session from SESSIONS to 2 x SESSIONS sessions (the marginal cost, free of
// one-time costs), Shared PTY / tmux, target <= 1.0. BENCH_HOST_ARGS passes node flags to the host
// (e.g. `--heap-prof --heap-prof-dir=/tmp/prof`: the profile is written when the host ends).
// (c) Idle CPU, in the last round: each server's CPU time (all threads, from /proc) over `idleMs`
// with those sessions at their prompt, from IDLE_SETTLE_MS after their last output.
// Run alone: `npm run build && node bench/memory-serve.mjs` (BENCH_REPS, BENCH_SESSIONS, BENCH_LINES, BENCH_IDLE_MS).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { rpc, serve } from './serve-client.mjs';
import { TmuxServer } from './scale.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
/** After a batch has printed, this long for the servers' memory to settle before RSS is read. */
const SETTLE_MS = 1500;
/** Rows the warm-up session prints (loads the parser, warms the JIT, grows V8's young space once). */
const WARM_ROWS = 200_000;
const BASH = { command: 'bash', args: ['--norc', '--noprofile', '-i'], env: { PS1: '$ ', HISTFILE: '/dev/null', LANG: 'C.UTF-8' } };
const TMUX_BASH = "env 'PS1=$ ' HISTFILE=/dev/null bash --norc --noprofile -i";

/** A shell command printing `n` coloured rows, `#i i` (the same as bench/run.mjs's). */
const colouredLines = (n) => `awk 'BEGIN{for(i=1;i<=${n};i++) printf "\\033[3%dm#%d\\033[0m %d\\n", i%8, i, i}'`;

/**
 * Quiet before idle CPU is read. After a burst V8 finishes its own work on its helper threads
 * (concurrent sweeping; the memory reducer's collections some seconds after the last full one):
 * per thread, a host's last ticks fell 5-10 s after the last output (bench/README.md, "idle CPU").
 */
const IDLE_SETTLE_MS = 20_000;

/** CPU ms of a process (all its threads) and of its main thread alone, from /proc (10 ms ticks). */
function cpuOf(pid) {
  const ticks = (file) => {
    const stat = fs.readFileSync(file, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(f[11]) + Number(f[12]); // utime, stime
  };
  return { allMs: ticks(`/proc/${pid}/stat`) * 10, mainMs: ticks(`/proc/${pid}/task/${pid}/stat`) * 10 }; // USER_HZ is 100 on Linux
}

/** A server's CPU over `idleMs` of quiet, after IDLE_SETTLE_MS of quiet. */
async function idleCpu(pid, idleMs) {
  await sleep(IDLE_SETTLE_MS);
  const c0 = cpuOf(pid);
  const t0 = performance.now();
  await sleep(idleMs);
  const c = cpuOf(pid);
  return { allMs: c.allMs - c0.allMs, mainMs: c.mainMs - c0.mainMs, wallMs: performance.now() - t0 };
}

function rssKb(pid) {
  const m = fs.readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmRSS:\s+(\d+) kB/);
  return m ? Number(m[1]) : NaN;
}

async function until(what, ms, fn) {
  for (const end = Date.now() + ms; ;) {
    if (await fn()) return;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(30);
  }
}

async function sharedRun(dir, sessions, lines, idleMs) {
  const host = await serve({ ...process.env, SHARED_PTY_DIR: dir }, 'cat');
  const control = await rpc(path.join(path.dirname(host.socket), 'control.sock'));
  const screen = async (id) => (await control.call('pty/read', { session: id })).screen.replace(/\n+$/, '');
  const printed = (id, n) => until(`session ${id} to print ${n} rows`, 120_000, async () => new RegExp(`\\n#${n} ${n}\\n\\$$`).test(await screen(id)));
  const batch = async (n, rows) => {
    const ids = [];
    for (let i = 0; i < n; i++) ids.push((await control.call('session/create', { ...BASH, cols: 80, rows: 24 })).id);
    await Promise.all(ids.map((id) => until('a prompt', 30_000, async () => /\$$/.test(await screen(id)))));
    await Promise.all(ids.map((id) => control.call('pty/write', { session: id, action: [{ text: colouredLines(rows) }, { key: 'Enter' }] })));
    await Promise.all(ids.map((id) => printed(id, rows)));
    return ids;
  };
  try {
    const warm = await batch(1, WARM_ROWS);
    await control.call('pty/kill', { session: warm[0] });
    await sleep(SETTLE_MS);
    await batch(sessions, lines);
    await sleep(SETTLE_MS);
    const mid = rssKb(host.pid);
    const ids = await batch(sessions, lines);
    await sleep(SETTLE_MS);
    const after = rssKb(host.pid);
    // The oldest 100 retained rows of one session, read back to back on one connection.
    const reader = await rpc(path.join(path.dirname(host.socket), 'control.sock'));
    const total = (await reader.call('pty/scrollback', { session: ids[0], offset: 0, lines: 1 })).totalLines;
    const oldest = await timeReads(() => reader.call('pty/scrollback', { session: ids[0], offset: total - OLDEST_ROWS, lines: OLDEST_ROWS }));
    const first = (await reader.call('pty/scrollback', { session: ids[0], offset: total - OLDEST_ROWS, lines: OLDEST_ROWS })).firstLine;
    if (first !== 1) throw new Error(`the oldest page starts at line ${first}, not 1`);
    reader.close();
    const idle = idleMs ? await idleCpu(host.pid, idleMs) : undefined;
    return { mid, after, oldest, first, idle };
  } finally {
    control.close();
    await host.stop();
  }
}

/** Rows read from the oldest end of the scrollback, and how many reads are timed. */
const OLDEST_ROWS = 100;
const OLDEST_READS = 50;

/** Median ms of `OLDEST_READS` calls of `read`, one after another. */
async function timeReads(read) {
  const ms = [];
  for (let i = 0; i < OLDEST_READS; i++) {
    const t = performance.now();
    await read();
    ms.push(performance.now() - t);
  }
  return ms.sort((a, b) => a - b)[Math.floor(ms.length / 2)];
}

async function tmuxRun(dir, sessions, lines, idleMs) {
  const t = new TmuxServer(dir);
  let made = 0;
  const batch = async (n, rows) => {
    const names = [];
    for (let i = 0; i < n; i++) {
      const name = `m${made++}`;
      t.run('new-session', '-d', '-s', name, '-x', '80', '-y', '24', TMUX_BASH);
      names.push(name);
    }
    const cap = (name) => t.run('capture-pane', '-p', '-t', name).replace(/\n+$/, '');
    await Promise.all(names.map((name) => until('a prompt', 30_000, () => /\$$/.test(cap(name)))));
    for (const name of names) t.run('send-keys', '-t', name, colouredLines(rows), 'Enter');
    await Promise.all(names.map((name) => until(`pane ${name} to print`, 120_000, () => new RegExp(`\\n#${rows} ${rows}\\n\\$$`).test(cap(name)))));
    return names;
  };
  try {
    t.start();
    const warm = await batch(1, WARM_ROWS);
    t.run('kill-session', '-t', warm[0]);
    await sleep(SETTLE_MS);
    await batch(sessions, lines);
    await sleep(SETTLE_MS);
    const mid = rssKb(t.pid);
    const names = await batch(sessions, lines);
    await sleep(SETTLE_MS);
    const after = rssKb(t.pid);
    // The same rows through a control client (one connection, one request at a time, like the host's).
    const history = Number(t.run('display', '-p', '-t', names[0], '#{history_size}').trim());
    const c = await t.control(names[0]);
    const oldest = await timeReads(() => c.ask(`capture-pane -p -t ${names[0]} -S -${history} -E -${history - OLDEST_ROWS + 1}`));
    c.close();
    const idle = idleMs ? await idleCpu(t.pid, idleMs) : undefined;
    return { mid, after, oldest, first: history, idle };
  } finally {
    t.stop();
  }
}

/** (i): alternating runs; the marginal RSS per session of each and the ratio. */
export async function memoryServe({ dir, reps = 3, sessions = 10, lines = 10_000, idleMs = 5000, log = () => {} }) {
  const shared = [];
  const tmux = [];
  for (let i = 0; i < reps; i++) {
    log(`memory round ${i + 1}/${reps}`);
    const idle = i === reps - 1 ? idleMs : 0;
    shared.push(await sharedRun(dir, sessions, lines, idle));
    tmux.push(await tmuxRun(dir, sessions, lines, idle));
  }
  const per = (r) => (r.after - r.mid) / sessions;
  const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const s = med(shared.map(per));
  const t = med(tmux.map(per));
  const ratio = s / t;
  const os_ = med(shared.map((r) => r.oldest));
  const ot = med(tmux.map((r) => r.oldest));
  return [
    `(i) memory per session with ${lines} coloured rows, servers as users start them (shared-pty serve; tmux), alternating, median of ${reps}: RSS growth from ${sessions} to ${2 * sessions} sessions`,
    `  Shared PTY ${s.toFixed(0)} KiB, tmux ${t.toFixed(0)} KiB: ${ratio.toFixed(2)}x, target <= 1.0x: ${ratio <= 1 ? 'MET' : 'NOT MET'}`,
    `  oldest ${OLDEST_ROWS} scrollback rows of a session, median of ${OLDEST_READS} reads on one connection (pty/scrollback; tmux -C capture-pane -S -E): Shared PTY ${os_.toFixed(2)} ms, tmux ${ot.toFixed(2)} ms: ${(os_ / ot).toFixed(2)}x, target <= 1.0x: ${os_ <= ot ? 'MET' : 'NOT MET'}`,
    `  each run, oldest rows ms: Shared PTY ${shared.map((r) => r.oldest.toFixed(2)).join(' ')} | tmux ${tmux.map((r) => r.oldest.toFixed(2)).join(' ')}`,
    `  each run, KiB per session: Shared PTY ${shared
      .map(per)
      .map((x) => x.toFixed(0))
      .join(' ')} | tmux ${tmux
      .map(per)
      .map((x) => x.toFixed(0))
      .join(' ')}; load average ${os
      .loadavg()
      .map((x) => x.toFixed(1))
      .join(' ')}`,
    ...idleLines(shared.at(-1).idle, tmux.at(-1).idle, sessions),
  ].join('\n');
}

/** (c) from the last round: CPU % of a CPU and the target (under 1 %, all threads). */
function idleLines(s, t, sessions) {
  if (!s || !t) return [];
  const pct = (ms, wall) => ((ms / wall) * 100).toFixed(3);
  return [
    '',
    `(c) idle CPU: ${sessions * 2} sessions at their prompt for ${(s.wallMs / 1000).toFixed(0)} s, from ${IDLE_SETTLE_MS / 1000} s after their last output, servers as users start them (last round above)`,
    `  Shared PTY host: ${s.allMs} ms all threads (${pct(s.allMs, s.wallMs)} %), ${s.mainMs} ms main thread; tmux server: ${t.allMs} ms (${pct(t.allMs, t.wallMs)} %) (/proc, 10 ms ticks)`,
    `  target: ~0 (under 1% of a CPU, all threads): ${s.allMs < s.wallMs / 100 ? 'MET' : 'NOT MET'}`,
  ];
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spt-mem-'));
  fs.chmodSync(dir, 0o700);
  try {
    console.log(
      await memoryServe({
        dir,
        reps: Number(process.env.BENCH_REPS ?? 3),
        sessions: Number(process.env.BENCH_SESSIONS ?? 10),
        lines: Number(process.env.BENCH_LINES ?? 10_000),
        idleMs: Number(process.env.BENCH_IDLE_MS ?? 5000),
        log: (m) => process.stderr.write(`[bench] ${m}\n`),
      }),
    );
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
