// What the bench parts share: a Shared PTY host started as a user starts it (`shared-pty serve`
// from bin/, nothing added to the environment but the folder its sockets go to), and a minimal
// JSON-RPC 2.0 client for its Unix sockets.
import { spawn } from 'node:child_process';
import * as net from 'node:net';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
/** The CLI the hosts run: this tree's, or another build's (`BENCH_CLI`, e.g. an old build in a copy of the tree, to compare). */
const cli = () => process.env.BENCH_CLI || path.join(root, 'bin', 'shared-pty.js');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * `shared-pty serve --no-http --cols 80 --rows 24 --cmd <command> -- <args>` with `env`; resolves
 * with its session's socket path, its pid and a stop() that ends it by pid. `cliPath`: another
 * build's bin/shared-pty.js (bench/current-ab.mjs), else `BENCH_CLI` or this tree's.
 */
export async function serve(env, command, args = [], cliPath = cli()) {
  // BENCH_HOST_ARGS: node flags for the host, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` (profiles).
  const nodeArgs = (process.env.BENCH_HOST_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(
    process.execPath,
    [...nodeArgs, cliPath, 'serve', '--no-http', '--cols', '80', '--rows', '24', '--cmd', command, ...(args.length ? ['--', ...args] : [])],
    {
      cwd: root,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (d) => (out += d));
  child.stderr.setEncoding('utf8').on('data', (d) => (out += d));
  const exited = new Promise((r) => child.once('exit', r));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    process.kill(child.pid, 'SIGTERM');
    const t = setTimeout(() => child.exitCode === null && process.kill(child.pid, 'SIGKILL'), 3000);
    await exited;
    clearTimeout(t);
  };
  for (const deadline = Date.now() + 15000; ;) {
    const m = out.match(/ at unix:(\S+\.sock)/);
    if (m) return { socket: m[1], pid: child.pid, stop };
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`shared-pty serve did not start: ${out}`);
    }
    await sleep(20);
  }
}

/**
 * A JSON-RPC 2.0 client on a Unix socket (one line a message). `call` sends a request and resolves
 * with its result; `request` sends one without waiting (its answer is dropped); every other message
 * (notifications) goes to `onMessage`. Lines are found scanning each received piece once, so a flood
 * of output notifications costs no rescans.
 */
export function rpc(socketPath) {
  return new Promise((resolve, reject) => {
    const sock = net.connect(socketPath);
    let pending = []; // the start of a line not ended yet, in pieces
    let nextId = 1;
    const waiting = new Map();
    const conn = {
      onMessage: undefined,
      request(method, params = {}) {
        const id = nextId++;
        sock.write(JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n');
        return id;
      },
      call(method, params = {}) {
        const id = conn.request(method, params);
        return new Promise((res, rej) => waiting.set(id, { res, rej }));
      },
      close: () => sock.destroy(),
    };
    sock.on('data', (chunk) => {
      let from = 0;
      for (let nl = chunk.indexOf(10); nl >= 0; nl = chunk.indexOf(10, from)) {
        pending.push(chunk.subarray(from, nl));
        const line = pending.length === 1 ? pending[0] : Buffer.concat(pending);
        pending = [];
        from = nl + 1;
        const msg = JSON.parse(line.toString('utf8'));
        const w = msg.id !== undefined ? waiting.get(msg.id) : undefined;
        if (w) {
          waiting.delete(msg.id);
          if (msg.error) w.rej(new Error(`${msg.error.code} ${msg.error.message}`));
          else w.res(msg.result);
        } else conn.onMessage?.(msg);
      }
      if (from < chunk.length) pending.push(chunk.subarray(from));
    });
    sock.once('error', reject);
    sock.once('connect', () => resolve(conn));
  });
}
