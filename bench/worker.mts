// One measurement in its own process (run by bench/run.mjs under `node --import tsx`), so each
// starts from a clean heap and the host's RSS is its own. Talks to the parent over IPC.
//
//   raw    <file>  node-pty alone runs `cat <file>`; reports when the last byte was read
//   shared <file>  a Shared PTY host runs `cat <file>` in a session; reports when the last raw
//                  byte was read and when the mirror had parsed everything; the parent is a
//                  socket subscriber and times the notifications itself
//   memory <n> <lines>  n bash sessions each run `seq 1 <lines>`; reports RSS/heap before and
//                  after (idle CPU is measured on `shared-pty serve`: bench/memory-serve.mjs)
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

async function shared(file: string): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spt-bench-'));
  fs.chmodSync(dir, 0o700);
  const host = await Host.start({ kind: 'serve', runtimeDir: dir });
  // One untimed round first, as (e) has and as a user's host has run programs before: the timed
  // round measures the engine, not V8 compiling it (a cold engine took ~1.3x as long here).
  {
    const w: Session = await host.createSession({ command: 'cat', args: [file], cols: 80, rows: 24 });
    await w.exited;
    await w.mirror.whenParsed();
    host.registry.remove(w.id);
  }
  // The program waits for a key so the subscriber is in place before the first byte.
  const session: Session = await host.createSession({ command: 'sh', args: ['-c', `stty -echo; read _; exec cat '${file}'`], cols: 80, rows: 24 });
  let lastRaw = 0;
  let lastParsed = 0;
  let bytes = 0;
  session.onOutput((c) => {
    bytes += c.data.length;
    lastRaw = now();
  });
  session.mirror.onParsed(() => {
    if (session.mirror.pendingBytes === 0) lastParsed = now();
  });
  send({ address: host.describe(session).address });
  await next(); // the parent subscribed
  await sleep(100); // sh reached its read
  const startCursor = session.cursor;
  bytes = 0;
  const c0 = process.cpuUsage();
  const m0 = mainThreadCpuMs();
  const t0 = now();
  session.write('\r', BENCH);
  await session.exited;
  await session.mirror.whenParsed();
  const c = process.cpuUsage(c0);
  const mainMs = mainThreadCpuMs() - m0;
  lastParsed = Math.max(lastParsed, lastRaw);
  const rows = (await session.mirror.screen()).rows.filter((r) => r !== '').length;
  send({ t0, tRaw: lastRaw, tParsed: lastParsed, bytes, endCursor: session.cursor, startCursor, screenRows: rows, cpuMs: (c.user + c.system) / 1000, mainMs });
  await next(); // the parent has its subscriber numbers
  await host.close();
  fs.rmSync(dir, { recursive: true, force: true });
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

/** A shell command printing `n` coloured rows, `#i i` (the issue measured coloured scrollback); same in run.mjs. */
const colouredLines = (n: number) => `awk 'BEGIN{for(i=1;i<=${n};i++) printf "\\033[3%dm#%d\\033[0m %d\\n", i%8, i, i}'`;

async function memory(n: number, lines: number): Promise<void> {
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
    for (const s of added) s.write(`${colouredLines(lines)}\r`, BENCH);
    await Promise.all(added.map((s) => prompt(s, new RegExp(`\\n#${lines} ${lines}\\n\\$$`))));
    sessions.push(...added);
    await sleep(300);
  };
  const before = await snap();
  await batch();
  const mid = await snap();
  // n more: the slope from n to 2n sessions is the cost of one more session, free of one-time costs.
  await batch();
  const after = await snap();
  const totals = await Promise.all(
    sessions.map(async (s) => {
      const e = await s.mirror.query('extent');
      return e.endRow - e.firstRetainedRow;
    }),
  );
  send({ before, mid, after, n, retainedRows: totals });
  await host.close();
  fs.rmSync(dir, { recursive: true, force: true });
}

const [mode, ...args] = process.argv.slice(2);
try {
  if (mode === 'raw') await raw(args[0]);
  else if (mode === 'shared') await shared(args[0]);
  else if (mode === 'memory') await memory(Number(args[0]), Number(args[1]));
  else throw new Error(`unknown mode ${mode}`);
  process.disconnect?.();
  setTimeout(() => process.exit(0), 50).unref();
} catch (e) {
  send({ error: String((e as Error)?.stack ?? e) });
  process.exit(1);
}
