// Many sessions flooding at once (issue #14 item 3): a host started as a user starts it
// (`shared-pty serve` from the built bin), 100 more sessions opened over its control socket, each
// running `yes` at once, while a bystander asks its own session for `pty/status` in a loop. Reports
// the bystander's latency (idle and during the flood) and the host's RSS before, during and after.
// Run alone: `npm run build && node bench/many-sessions.mjs` (BENCH_SESSIONS, BENCH_FLOOD_MS).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { rpc, serve } from './serve-client.mjs';

const now = () => Number(process.hrtime.bigint()) / 1e6;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** The process's resident memory in MiB (Linux). */
function rssMiB(pid) {
  const m = fs.readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmRSS:\s+(\d+) kB/);
  return m ? Math.round(Number(m[1]) / 1024) : NaN;
}

/** `pty/status` on the bystander's socket, one after another, for `ms`: the latencies in ms. */
async function statusLoop(client, ms) {
  const lat = [];
  for (const end = now() + ms; now() < end;) {
    const t = now();
    await client.call('pty/status');
    lat.push(now() - t);
  }
  return lat;
}

function pct(sorted, p) {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] : NaN;
}

function summary(lat) {
  const s = [...lat].sort((a, b) => a - b);
  return { n: s.length, p50: pct(s, 50).toFixed(2), p99: pct(s, 99).toFixed(2), max: s.at(-1).toFixed(1) };
}

export async function manySessions({ dir, sessions = 100, floodMs = 5000, log = () => {} }) {
  const env = { ...process.env, SHARED_PTY_DIR: dir };
  const host = await serve(env, 'cat');
  const control = await rpc(path.join(path.dirname(host.socket), 'control.sock'));
  const bystander = await rpc(host.socket);
  const rss = { start: rssMiB(host.pid) };
  try {
    log(`opening ${sessions} sessions`);
    // Each waits for one line, then floods: they all start at once when told.
    const ids = [];
    for (let i = 0; i < sessions; i++) {
      const info = await control.call('session/create', { command: 'sh', args: ['-c', 'read _; exec yes'], cols: 80, rows: 24 });
      ids.push(info.id);
    }
    await sleep(500);
    rss.opened = rssMiB(host.pid);
    const idle = summary(await statusLoop(bystander, 1000));
    log(`flooding for ${floodMs} ms`);
    await Promise.all(ids.map((session) => control.call('pty/write', { session, action: { text: '\n' } })));
    const flood = summary(await statusLoop(bystander, floodMs));
    rss.flood = rssMiB(host.pid);
    log('ending the sessions');
    await Promise.all(ids.map((session) => control.call('pty/kill', { session })));
    await sleep(2000);
    rss.after = rssMiB(host.pid);
    return [
      `${sessions} sessions running \`yes\` at once on one host (\`shared-pty serve\`); a bystander's pty/status on its own session socket:`,
      '',
      '| when | calls | p50 ms | p99 ms | max ms |',
      '|---|---|---|---|---|',
      `| ${sessions} sessions idle | ${idle.n} | ${idle.p50} | ${idle.p99} | ${idle.max} |`,
      `| ${sessions} sessions flooding (${floodMs} ms) | ${flood.n} | ${flood.p50} | ${flood.p99} | ${flood.max} |`,
      '',
      `Host RSS: ${rss.start} MiB at start, ${rss.opened} MiB with ${sessions} sessions open, ${rss.flood} MiB at the end of the flood, ${rss.after} MiB 2 s after they ended.`,
    ].join('\n');
  } finally {
    control.close();
    bystander.close();
    await host.stop();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spt-many-'));
  fs.chmodSync(dir, 0o700);
  try {
    console.log(
      await manySessions({
        dir,
        sessions: Number(process.env.BENCH_SESSIONS ?? 100),
        floodMs: Number(process.env.BENCH_FLOOD_MS ?? 5000),
        log: (m) => process.stderr.write(`[bench] ${m}\n`),
      }),
    );
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
