// What the bench parts share: a Shared PTY host started as a user starts it (`shared-pty serve`
// from bin/, nothing added to the environment but the folder its sockets go to), and a minimal
// JSON-RPC 2.0 client for its Unix sockets.
import { spawn } from 'node:child_process';
import * as net from 'node:net';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const CLI = path.join(root, 'bin', 'shared-pty.js');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * `shared-pty serve --no-http --cols 80 --rows 24 --cmd <command> -- <args>` with `env`; resolves
 * with its session's socket path, its pid and a stop() that ends it by pid.
 */
export async function serve(env, command, args = []) {
  const child = spawn(process.execPath, [CLI, 'serve', '--no-http', '--cols', '80', '--rows', '24', '--cmd', command, ...(args.length ? ['--', ...args] : [])], {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
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
  for (const deadline = Date.now() + 15000; ; ) {
    const m = out.match(/ at unix:(\S+\.sock)/);
    if (m) return { socket: m[1], pid: child.pid, stop };
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`shared-pty serve did not start: ${out}`);
    }
    await sleep(20);
  }
}

/** A JSON-RPC 2.0 client on a Unix socket (one line a message); notifications are ignored. */
export function rpc(socketPath) {
  return new Promise((resolve, reject) => {
    const sock = net.connect(socketPath);
    const pending = new Map();
    let nextId = 1;
    let buf = '';
    sock.setEncoding('utf8');
    sock.on('data', (d) => {
      buf += d;
      for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
        const msg = JSON.parse(buf.slice(0, nl));
        buf = buf.slice(nl + 1);
        const p = pending.get(msg.id);
        if (!p) continue;
        pending.delete(msg.id);
        if (msg.error) p.reject(new Error(`${msg.error.code} ${msg.error.message}`));
        else p.resolve(msg.result);
      }
    });
    sock.on('error', reject);
    sock.on('connect', () =>
      resolve({
        call(method, params = {}) {
          const id = nextId++;
          sock.write(JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n');
          return new Promise((res, rej) => pending.set(id, { resolve: res, reject: rej }));
        },
        close: () => sock.destroy(),
      }),
    );
  });
}
