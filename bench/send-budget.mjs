// The 30 MB `send` of issue #22 item 3: an agent runs `seq 1 4000000` (about 30 MB of output) through
// the MCP `send` tool with `maxChars`, in a bash with shell integration, and waits for the answer.
// Timed from the call to the answer, over the official MCP SDK client on the host's `/mcp`, with a
// host started as a user starts it (`shared-pty serve`); the host's CPU time during the call (all
// its threads, from /proc) is printed too: on a shared machine it varies far less than the wall time. Several builds can be compared by passing
// their CLIs: each round runs every build once, in turn, so a busy shared machine weighs on all alike.
//
//   node bench/send-budget.mjs [cli.js …]     (default: this checkout's bin/shared-pty.js)
//   BENCH_REPS (4), BENCH_SEQ (4000000)
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const REPS = Number(process.env.BENCH_REPS ?? 4);
const SEQ = Number(process.env.BENCH_SEQ ?? 4000000);
const clis = process.argv.slice(2).length ? process.argv.slice(2) : [path.join(root, 'bin', 'shared-pty.js')];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** CPU time (user + system, all threads) of process `pid` so far, in ms (Linux). */
function cpuMs(pid) {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime, stime in ticks of 1/100 s
}

/** `shared-pty serve` of `cli` in a fresh runtime folder; resolves with its MCP URL, token and stop(). */
async function serve(cli) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spt-bench-'));
  fs.chmodSync(dir, 0o700);
  const child = spawn(process.execPath, [cli, 'serve', '--cols', '80', '--rows', '24', '--cmd', 'cat'], {
    cwd: root,
    env: { ...process.env, SHARED_PTY_DIR: dir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (d) => (out += d));
  child.stderr.setEncoding('utf8').on('data', (d) => (out += d));
  const exited = new Promise((r) => child.once('exit', r));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      process.kill(child.pid, 'SIGTERM');
      await exited;
    }
    fs.rmSync(dir, { recursive: true, force: true });
  };
  for (const deadline = Date.now() + 15000; ; await sleep(20)) {
    const m = out.match(/http: (\S+) \(token in (\S+)\)/);
    if (m) return { url: m[1], token: JSON.parse(fs.readFileSync(m[2], 'utf8')).http.token, pid: child.pid, stop };
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`shared-pty serve did not start: ${out}`);
    }
  }
}

/** One timed send of the whole sequence; returns ms and what the answer said about the output. */
async function once(cli) {
  const host = await serve(cli);
  const agent = new Client({ name: 'send-budget-bench', version: '0.0.0' });
  try {
    await agent.connect(new StreamableHTTPClientTransport(new URL(`${host.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${host.token}` } } }));
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'spt-bench-home-'));
    fs.writeFileSync(path.join(home, '.bashrc'), "PS1='$ '\nHISTFILE=/dev/null\n");
    const opened = (await agent.callTool({ name: 'open_session', arguments: { command: 'bash', cwd: home, env: { HOME: home } } })).structuredContent;
    await agent.callTool({ name: 'send', arguments: { session: opened.id, text: 'true', timeout: 20000 } });
    const cpu = cpuMs(host.pid);
    const t = performance.now();
    // The SDK gives up on a request after 60 s by default: a loaded machine may need longer.
    const long = { timeout: 600000 };
    const r = (
      await agent.callTool({ name: 'send', arguments: { session: opened.id, text: `seq 1 ${SEQ}`, maxChars: 2000, timeout: 300000 } }, undefined, long)
    ).structuredContent;
    const ms = performance.now() - t;
    const hostCpu = cpuMs(host.pid) - cpu;
    fs.rmSync(home, { recursive: true, force: true });
    return { ms, hostCpu, waitedMs: r.waitedMs, waitReason: r.waitReason, totalChars: r.totalChars, first: r.output.split('\n')[0] };
  } finally {
    await agent.close().catch(() => {});
    await host.stop();
  }
}

const times = clis.map(() => []);
const cpus = clis.map(() => []);
for (let rep = 0; rep < REPS; rep++) {
  for (const [i, cli] of clis.entries()) {
    const r = await once(cli);
    times[i].push(r.ms);
    cpus[i].push(r.hostCpu);
    console.log(
      `round ${rep + 1} ${cli}: ${r.ms.toFixed(0)} ms, host CPU ${r.hostCpu.toFixed(0)} ms (waitedMs ${r.waitedMs}, ${r.waitReason}, totalChars ${r.totalChars}, first line "${r.first}")`,
    );
  }
}
const median = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
console.log('\n| build | wall ms, each run | median | host CPU ms, each run | median |\n|---|---|---|---|---|');
for (const [i, cli] of clis.entries()) {
  const row = (a) => `${a.map((t) => t.toFixed(0)).join(', ')} | ${median(a).toFixed(0)}`;
  console.log(`| ${cli} | ${row(times[i])} | ${row(cpus[i])} |`);
}
