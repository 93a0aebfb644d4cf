// One measurement in its own process (run by bench/run.mjs under `node --import tsx`), so each
// starts from a clean heap and the host's RSS is its own. Talks to the parent over IPC.
//
//   raw    <file>  node-pty alone runs `cat <file>`; reports when the last byte was read
//   memory <n> <lines>  n bash sessions each run `seq 1 <lines>`; reports RSS/heap before and
//                  after, then the host's CPU time over an idle window
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createRequire } from 'node:module';
import { Host } from '../src/host/host';
import type { Session } from '../src/core/session/session';
import { MirrorThread } from '../src/core/mirror/mirror-thread';

const require = createRequire(import.meta.url);
const now = () => Number(process.hrtime.bigint()) / 1e6; // ms, CLOCK_MONOTONIC: comparable across processes
const send = (msg: unknown) => process.send!(msg);
/** The bench types into its sessions in-process, as a script would (Session.write names its source). */
const BENCH = { origin: 'script', transport: 'control' } as const;
const next = () => new Promise<any>((resolve) => process.once('message', resolve));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Quiet time before the idle CPU is measured (see memory()). */
const IDLE_SETTLE_MS = 10_000;

const BASH = { command: 'bash', args: ['--norc', '--noprofile', '-i'], env: { PS1: '$ ', HISTFILE: '/dev/null', LANG: 'C.UTF-8' } };

async function raw(file: string): Promise<void> {
  const pty = require('node-pty');
  const c0 = process.cpuUsage();
  const t0 = now();
  const p = pty.spawn('cat', [file], { name: 'xterm-256color', cols: 80, rows: 24, cwd: os.tmpdir(), env: process.env, encoding: null });
  let bytes = 0;
  let last = t0;
  p.onData((d: Buffer) => {
    bytes += d.length;
    last = now();
  });
  await new Promise<void>((resolve) => p.onExit(() => resolve()));
  // node-pty reports the exit before the last reads; wait for quiet.
  while (now() - last < 200) await sleep(50);
  const c = process.cpuUsage(c0);
  send({ t0, tLast: last, bytes, cpuMs: (c.user + c.system) / 1000 });
}

/** CPU time of the main (JavaScript) thread alone, from /proc (Linux); NaN elsewhere. */
function mainThreadCpuMs(): number {
  try {
    const stat = fs.readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(f[11]) + Number(f[12])) * 1000) / 100; // USER_HZ is 100 on Linux
  } catch {
    return NaN;
  }
}

function gc(): void {
  const g = (globalThis as { gc?: () => void }).gc;
  if (g) for (let i = 0; i < 3; i++) g();
}

async function warmUp(host: Host, prompt: (s: Session, re: RegExp) => Promise<void>): Promise<void> {
  const warm = await host.createSession({ ...BASH, cols: 80, rows: 24 });
  await prompt(warm, /\$$/);
  warm.write('seq 1 200000\r', BENCH);
  await prompt(warm, /\n200000\n\$$/);
  host.registry.remove(warm.id);
}

async function memory(n: number, lines: number, idleMs: number): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spt-bench-'));
  fs.chmodSync(dir, 0o700);
  const host = await Host.start({ kind: 'serve', runtimeDir: dir });
  const prompt = async (s: Session, re: RegExp) => {
    const end = Date.now() + 30000;
    for (;;) {
      const screen = (await s.mirror.screen()).rows.join('\n').replace(/\n+$/, '');
      if (re.test(screen)) return;
      if (Date.now() > end) throw new Error(`timed out; screen:\n${screen}`);
      await sleep(20);
    }
  };
  // Warm-up, in its own function so that all of it is garbage afterwards: one session prints
  // 200000 rows, which loads node-pty and xterm, warms the JIT and grows V8's young generation
  // (process-wide, once, ~16-30 MB) so that none of that is charged to the measured sessions.
  await warmUp(host, prompt);
  await sleep(300);
  gc();
  // The screens live in the mirror thread: its heap counts with the main thread's.
  const snap = async () => {
    gc();
    const w = await MirrorThread.shared().stats();
    const mu = process.memoryUsage();
    return { rss: mu.rss, heap: mu.heapUsed + w.heapUsed, ext: mu.external + w.external }; // external includes the ArrayBuffers
  };
  const sessions: Session[] = [];
  const batch = async () => {
    const added: Session[] = [];
    for (let i = 0; i < n; i++) added.push(await host.createSession({ ...BASH, cols: 80, rows: 24 }));
    await Promise.all(added.map((s) => prompt(s, /\$$/)));
    for (const s of added) s.write(`seq 1 ${lines}\r`, BENCH);
    await Promise.all(added.map((s) => prompt(s, new RegExp(`\\n${lines}\\n\\$$`))));
    sessions.push(...added);
    await sleep(300);
  };
  const before = await snap();
  await batch();
  const mid = await snap();
  // Idle: n sessions sit at their prompt; the host should do nothing at all. First V8 finishes
  // its work after the burst: concurrent sweeping, and the memory reducer, which shrinks each
  // isolate's heap (the main thread's and the mirror thread's) with GCs some seconds later.
  await sleep(IDLE_SETTLE_MS);
  const c0 = process.cpuUsage();
  const m0 = mainThreadCpuMs();
  const w0 = now();
  await sleep(idleMs);
  const c = process.cpuUsage(c0);
  const mainMs = mainThreadCpuMs() - m0;
  const wall = now() - w0;
  // n more: the slope from n to 2n sessions is the cost of one more session, free of one-time costs.
  await batch();
  const after = await snap();
  const totals = await Promise.all(sessions.map(async (s) => { const e = await s.mirror.query('extent'); return e.endRow - e.firstRetainedRow; }));
  send({ before, mid, after, n, retainedRows: totals, idle: { userMs: c.user / 1000, systemMs: c.system / 1000, mainMs, wallMs: wall } });
  await host.close();
  fs.rmSync(dir, { recursive: true, force: true });
}

const [mode, ...args] = process.argv.slice(2);
try {
  if (mode === 'raw') await raw(args[0]);
  else if (mode === 'memory') await memory(Number(args[0]), Number(args[1]), Number(args[2]));
  else throw new Error(`unknown mode ${mode}`);
  process.disconnect?.();
  setTimeout(() => process.exit(0), 50).unref();
} catch (e) {
  send({ error: String((e as Error)?.stack ?? e) });
  process.exit(1);
}
