// (h) Scale, against tmux in the same run (issue #25): a host started as a user starts it
// (`shared-pty serve` from bin/) and a private tmux server, alternating.
// - 100 sessions flooding (`yes`) at once while a bystander asks about its own session in a loop:
//   Shared PTY `pty/status` on the bystander's socket; tmux `display-message -p` about the
//   bystander's pane through a control-mode client (one persistent connection each, one request at
//   a time). Figures: the bystander's p99, and the server's RSS growth per flooding session.
// - 256 idle sessions (`cat`): the server's RSS growth per session, Shared PTY's 256 sessions
//   against tmux's 256 panes.
// Ratios are Shared PTY / tmux: lower is better, at most 1.0 is the target.
// Run alone: `npm run build && node bench/scale.mjs` (BENCH_REPS, BENCH_SESSIONS_FLOOD, BENCH_SCALE_FLOOD_MS).
import { spawn, execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { rpc, serve } from './serve-client.mjs';

const now = () => Number(process.hrtime.bigint()) / 1e6;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
/** The host's session limit (src/core/base/limits.ts): the serve session and 255 more. */
const IDLE_SESSIONS = 256;
/** After opening sessions, this long for shells to start and memory to settle before RSS is read. */
const SETTLE_MS = 2000;
/** How often RSS is sampled during a flood (its peak is reported). */
const RSS_SAMPLE_MS = 100;

/** Resident memory of a process in KiB (Linux). */
function rssKb(pid) {
  const m = fs.readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmRSS:\s+(\d+) kB/);
  return m ? Number(m[1]) : NaN;
}

function pct(sorted, p) {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] : NaN;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (x, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : 'n/a');
const verdict = (ratio) => (ratio <= 1 ? 'MET' : 'NOT MET');

/** Times `ask()` back to back for `ms`; samples `pid`'s RSS meanwhile. */
async function probe(ask, ms, pid) {
  const lat = [];
  let peakKb = rssKb(pid);
  const sampler = setInterval(() => (peakKb = Math.max(peakKb, rssKb(pid))), RSS_SAMPLE_MS);
  try {
    for (const end = now() + ms; now() < end;) {
      const t = now();
      await ask();
      lat.push(now() - t);
    }
  } finally {
    clearInterval(sampler);
  }
  lat.sort((a, b) => a - b);
  return { n: lat.length, p50: pct(lat, 50), p99: pct(lat, 99), peakKb };
}

// ---------------------------------------------------------------- tmux

/** A private tmux server (its own socket and config) and what the scale figures ask of it. */
export class TmuxServer {
  constructor(dir) {
    this.sock = path.join(dir, 'scale-tmux.sock');
    this.conf = path.join(dir, 'scale-tmux.conf');
    fs.writeFileSync(this.conf, 'set -g status off\nset -g history-limit 10000\nset -g default-size 80x24\nset -sg escape-time 0\n');
    this.env = Object.fromEntries(Object.entries({ ...process.env, LANG: 'C.UTF-8' }).filter(([k]) => !k.startsWith('TMUX')));
    this.children = new Set();
  }

  run(...args) {
    return execFileSync('tmux', ['-u', '-S', this.sock, '-f', this.conf, ...args], { env: this.env, encoding: 'utf8' });
  }

  /** A server with one session `by` whose pane runs `cat` (the bystander). */
  start() {
    this.run('new-session', '-d', '-s', 'by', '-x', '80', '-y', '24', 'cat');
    this.pid = Number(this.run('display', '-p', '-t', 'by', '#{pid}').trim());
  }

  /** `n` windows in session `name`, each running `command` (created in batches: one tmux call each). */
  open(name, n, command) {
    this.run('new-session', '-d', '-s', name, '-x', '80', '-y', '24', command);
    for (let i = 1; i < n; i += 32) {
      const batch = [];
      for (let j = i; j < Math.min(n, i + 32); j++) batch.push(...(batch.length ? [';'] : []), 'new-window', '-d', '-t', name, command);
      this.run(...batch);
    }
  }

  /** A control-mode client attached to `session`; `ask(cmd)` sends one command and waits for its %end. */
  async control(session = 'by') {
    const child = spawn('tmux', ['-u', '-S', this.sock, '-f', this.conf, '-C', 'attach', '-t', session], { env: this.env, stdio: ['pipe', 'pipe', 'ignore'] });
    this.children.add(child.pid);
    let partial = '';
    // Each command's reply ends with %end (or %error), in order; the attach itself gets the first.
    const replies = [];
    const attached = new Promise((r) => replies.push(r));
    child.stdout.setEncoding('latin1').on('data', (chunk) => {
      const lines = (partial + chunk).split('\n');
      partial = lines.pop();
      for (const line of lines) if (/^%(end|error) /.test(line)) replies.shift()?.();
    });
    const ask = (cmd) =>
      new Promise((resolve) => {
        replies.push(resolve);
        child.stdin.write(cmd + '\n');
      });
    await attached;
    await ask('refresh-client -C 80x24');
    return {
      ask,
      close: () => {
        child.stdin.end();
        this.children.delete(child.pid);
        try {
          process.kill(child.pid, 'SIGKILL');
        } catch {
          // gone
        }
      },
    };
  }

  stop() {
    try {
      this.run('kill-server');
    } catch {
      // gone
    }
    for (const pid of [this.pid, ...this.children]) {
      try {
        if (pid) process.kill(pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
  }
}

// ---------------------------------------------------------------- the two figures, each side

const FLOODER = ['sh', '-c', 'read _; exec yes'];

async function floodShared(dir, sessions, floodMs) {
  const host = await serve({ ...process.env, SHARED_PTY_DIR: dir }, 'cat');
  const control = await rpc(path.join(path.dirname(host.socket), 'control.sock'));
  const bystander = await rpc(host.socket);
  try {
    const ids = [];
    for (let i = 0; i < sessions; i++) ids.push((await control.call('session/create', { command: FLOODER[0], args: FLOODER.slice(1), cols: 80, rows: 24 })).id);
    await sleep(SETTLE_MS);
    const openKb = rssKb(host.pid);
    await Promise.all(ids.map((session) => control.call('pty/write', { session, action: { text: '\n' } })));
    const r = await probe(() => bystander.call('pty/status'), floodMs, host.pid);
    await Promise.all(ids.map((session) => control.call('pty/kill', { session })));
    return { ...r, openKb };
  } finally {
    control.close();
    bystander.close();
    await host.stop();
  }
}

async function floodTmux(dir, sessions, floodMs) {
  const t = new TmuxServer(dir);
  try {
    t.start();
    t.open('fl', sessions, FLOODER.map((w) => (w.includes(' ') ? `'${w}'` : w)).join(' '));
    await sleep(SETTLE_MS);
    const openKb = rssKb(t.pid);
    const c = await t.control();
    const go = [];
    for (let i = 0; i < sessions; i++) go.push(...(go.length ? [';'] : []), 'send-keys', '-t', `fl:${i}`, 'Enter');
    t.run(...go);
    const r = await probe(() => c.ask("display-message -p -t by '#{pane_dead} #{pane_pid}'"), floodMs, t.pid);
    c.close();
    return { ...r, openKb };
  } finally {
    t.stop();
  }
}

/** RSS growth per session from 1 session to `IDLE_SESSIONS`, all running `cat`. */
async function idleShared(dir) {
  const host = await serve({ ...process.env, SHARED_PTY_DIR: dir }, 'cat');
  const control = await rpc(path.join(path.dirname(host.socket), 'control.sock'));
  try {
    await sleep(SETTLE_MS);
    const oneKb = rssKb(host.pid);
    for (let i = 1; i < IDLE_SESSIONS; i++) await control.call('session/create', { command: 'cat', cols: 80, rows: 24 });
    await sleep(SETTLE_MS);
    return { oneKb, allKb: rssKb(host.pid) };
  } finally {
    control.close();
    await host.stop();
  }
}

async function idleTmux(dir) {
  const t = new TmuxServer(dir);
  try {
    t.start();
    await sleep(SETTLE_MS);
    const oneKb = rssKb(t.pid);
    t.open('idle', IDLE_SESSIONS - 1, 'cat');
    await sleep(SETTLE_MS);
    return { oneKb, allKb: rssKb(t.pid) };
  } finally {
    t.stop();
  }
}

// ---------------------------------------------------------------- report

/** (h): both scale figures, Shared PTY and tmux alternating `reps` times; a report in words and a table. */
export async function scale({ dir, reps = 3, sessions = 100, floodMs = 5000, log = () => {} }) {
  const fs_ = { shared: [], tmux: [] };
  const idle = { shared: [], tmux: [] };
  for (let i = 0; i < reps; i++) {
    log(`scale round ${i + 1}/${reps}: ${sessions} flooding`);
    fs_.shared.push(await floodShared(dir, sessions, floodMs));
    fs_.tmux.push(await floodTmux(dir, sessions, floodMs));
    log(`scale round ${i + 1}/${reps}: ${IDLE_SESSIONS} idle`);
    idle.shared.push(await idleShared(dir));
    idle.tmux.push(await idleTmux(dir));
  }
  const m = (runs, f) => median(runs.map(f));
  const p99 = { s: m(fs_.shared, (r) => r.p99), t: m(fs_.tmux, (r) => r.p99) };
  const grow = { s: m(fs_.shared, (r) => (r.peakKb - r.openKb) / sessions), t: m(fs_.tmux, (r) => (r.peakKb - r.openKb) / sessions) };
  const peak = { s: m(fs_.shared, (r) => r.peakKb / 1024), t: m(fs_.tmux, (r) => r.peakKb / 1024) };
  const per = { s: m(idle.shared, (r) => (r.allKb - r.oneKb) / (IDLE_SESSIONS - 1)), t: m(idle.tmux, (r) => (r.allKb - r.oneKb) / (IDLE_SESSIONS - 1)) };
  const row = (name, s, t, d) => [name, fmt(s, d), fmt(t, d), `${fmt(s / t, 2)}x`, verdict(s / t)];
  const rows = [
    ['figure', 'Shared PTY', 'tmux', 'ratio', 'target <= 1.0x'],
    row(`${sessions} flooding: bystander p99, ms`, p99.s, p99.t, 2),
    row(`${sessions} flooding: RSS growth per session, KiB`, grow.s, grow.t, 0),
    row(`${IDLE_SESSIONS} idle: RSS per session, KiB`, per.s, per.t, 0),
  ];
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => String(r[c]).length)));
  const lines = rows.map((r, i) => {
    const line = r.map((cell, c) => (c === 0 ? String(cell).padEnd(widths[c]) : String(cell).padStart(widths[c]))).join('  ');
    return i === 0 ? `${line}\n${widths.map((w) => '-'.repeat(w)).join('  ')}` : line;
  });
  const each = (runs, f) =>
    runs
      .map(f)
      .map((x) => fmt(x, 1))
      .join(' ');
  return [
    `(h) scale: ${sessions} sessions running \`yes\` at once for ${fmt(floodMs / 1000, 0)} s, a bystander asking about its own session back to back (Shared PTY: pty/status on its socket; tmux: display-message -p through a control client); ${IDLE_SESSIONS} idle sessions running cat. Servers as users start them, alternating, median of ${reps}`,
    ...lines,
    `  bystander calls answered (median): Shared PTY ${m(fs_.shared, (r) => r.n)}, tmux ${m(fs_.tmux, (r) => r.n)}; p50 ms ${fmt(
      m(fs_.shared, (r) => r.p50),
      2,
    )} / ${fmt(
      m(fs_.tmux, (r) => r.p50),
      2,
    )}`,
    `  server RSS at the flood's peak, MiB: Shared PTY ${fmt(peak.s)} (node itself included), tmux ${fmt(peak.t)}; each run's p99 ms: ${each(fs_.shared, (r) => r.p99)} | ${each(fs_.tmux, (r) => r.p99)}`,
    `  ${IDLE_SESSIONS} idle, server RSS with 1 and ${IDLE_SESSIONS} sessions, MiB: Shared PTY ${fmt(m(idle.shared, (r) => r.oneKb) / 1024)} -> ${fmt(m(idle.shared, (r) => r.allKb) / 1024)}, tmux ${fmt(m(idle.tmux, (r) => r.oneKb) / 1024)} -> ${fmt(m(idle.tmux, (r) => r.allKb) / 1024)}; load average ${os
      .loadavg()
      .map((x) => x.toFixed(1))
      .join(' ')}`,
  ].join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spt-scale-'));
  fs.chmodSync(dir, 0o700);
  try {
    console.log(
      await scale({
        dir,
        reps: Number(process.env.BENCH_REPS ?? 3),
        sessions: Number(process.env.BENCH_SESSIONS_FLOOD ?? 100),
        floodMs: Number(process.env.BENCH_SCALE_FLOOD_MS ?? 5000),
        log: (m) => process.stderr.write(`[bench] ${m}\n`),
      }),
    );
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
