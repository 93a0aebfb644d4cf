// A Shared PTY host for the bench, started exactly as a user starts one: the built CLI
// (`node bin/shared-pty.js serve …`) in the environment of the user's shell, without any
// GLIBC_TUNABLES of the bench's own. The host tunes its malloc by itself (src/cli/tuned-host.ts);
// everything is measured from outside it: its socket, its record and /proc.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';

const CLI = path.join(path.dirname(path.dirname(new URL(import.meta.url).pathname)), 'bin', 'shared-pty.js');
/** How long a host gets to publish its record; node start-up plus the re-exec. */
const START_TIMEOUT_MS = 20_000;
/** USER_HZ: the unit of /proc/<pid>/stat times on Linux. */
const TICKS_PER_S = 100;

/** The bench's environment as a user's shell would give it: nothing of ours, no tunables. */
function userEnv(dir) {
  const env = { ...process.env, SHARED_PTY_DIR: dir };
  delete env.GLIBC_TUNABLES;
  for (const k of Object.keys(env)) if (k.startsWith('SHARED_PTY_') && k !== 'SHARED_PTY_DIR') delete env[k];
  return env;
}

/**
 * Starts `shared-pty serve --cmd <cmd>` (80x24, no HTTP) in a private runtime directory and waits
 * for its record. Returns the process started, the host's pid (the tuned re-exec, when there is
 * one), the session's socket address, whether the host runs with huge-page malloc, and stop().
 */
export async function startCliHost(cmd, onPid) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spt-bench-host-'));
  fs.chmodSync(dir, 0o700);
  const proc = spawn(process.execPath, [CLI, 'serve', '--cmd', cmd, '--cols', '80', '--rows', '24', '--no-http', '--quiet'], {
    env: userEnv(dir),
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  onPid(proc.pid);
  const exited = new Promise((resolve) => proc.once('exit', resolve));
  const end = Date.now() + START_TIMEOUT_MS;
  let record;
  while (!record) {
    if (Date.now() > end || proc.exitCode !== null) throw new Error('shared-pty serve did not start');
    await new Promise((r) => setTimeout(r, 50));
    const file = fs.readdirSync(dir).find((f) => f.endsWith('.json'));
    if (file) record = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8'));
    if (record && !record.sessions?.length) record = undefined;
  }
  const environ = fs.readFileSync(`/proc/${record.pid}/environ`, 'utf8').split('\0');
  return {
    pid: proc.pid,
    hostPid: record.pid,
    address: record.sessions[0].address,
    tuned: environ.some((kv) => kv.startsWith('SHARED_PTY_USER_GLIBC_TUNABLES=')),
    async stop() {
      proc.kill('SIGTERM');
      await exited;
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** CPU time (ms) of a process, all threads, or of one thread with `tid`, from /proc. */
export function procCpuMs(pid, tid) {
  const stat = fs.readFileSync(tid ? `/proc/${pid}/task/${tid}/stat` : `/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(f[11]) + Number(f[12])) * 1000) / TICKS_PER_S;
}

/** A JSON-RPC client on a session socket that only makes requests (notifications are ignored). */
export function rpc(address) {
  return new Promise((resolve, reject) => {
    const sock = net.connect(address.replace(/^unix:/, ''));
    const pending = new Map();
    let next = 1;
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
        if (msg.error) p.reject(new Error(`${msg.error.code}: ${msg.error.message}`));
        else p.resolve(msg.result);
      }
    });
    sock.on('error', reject);
    sock.on('connect', () =>
      resolve({
        call: (method, params = {}) =>
          new Promise((res, rej) => {
            const id = next++;
            pending.set(id, { resolve: res, reject: rej });
            sock.write(JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n');
          }),
        close: () => sock.destroy(),
      }),
    );
  });
}
