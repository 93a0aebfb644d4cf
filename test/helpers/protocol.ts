// Helpers for protocol tests that play a third-party client: a raw newline-delimited JSON line
// client (no use of our own RpcClient), a built CLI, and `shared-pty serve` as a child process.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { Inbox } from './inbox';

/** The repository root (where package.json and bin/ live). */
export const REPO_ROOT = path.resolve(__dirname, '..', '..');
/** The built CLI entry, as users run it. */
export const CLI = path.join(REPO_ROOT, 'bin', 'shared-pty.js');

/** How an agent's client starts `shared-pty mcp` over stdio (the SDKs' StdioClientTransport options), with `env`. */
export function mcpStdio(env: NodeJS.ProcessEnv): { command: string; args: string[]; env: Record<string, string>; cwd: string; stderr: 'pipe' } {
  return { command: process.execPath, args: [CLI, 'mcp'], env: env as Record<string, string>, cwd: REPO_ROOT, stderr: 'pipe' };
}

/** Bounds on how long the helpers wait; generous, because the test machine is noisy. */
export const enum HelperTimeouts {
  Build = 120_000,
  Listen = 20_000,
  Response = 15_000,
  Exit = 15_000,
}

/** Builds dist/cli.js (esbuild; seconds) so the CLI under test matches the sources. */
export function buildCli(): void {
  // scripts/test.mjs builds once before any suite runs: a rebuild here would rewrite dist/ under
  // the feet of suites running beside this one (an editor test once copied a half-written cli.js).
  if (process.env.SHARED_PTY_TEST_BUILT === '1' && fs.existsSync(path.join(REPO_ROOT, 'dist', 'cli.js'))) return;
  const r = spawnSync('npm', ['run', 'build', '--silent'], { cwd: REPO_ROOT, encoding: 'utf8', timeout: HelperTimeouts.Build });
  if (r.status !== 0) throw new Error(`npm run build failed (${r.status ?? r.signal}): ${r.stderr || r.stdout}`);
  if (!fs.existsSync(path.join(REPO_ROOT, 'dist', 'cli.js'))) throw new Error('npm run build did not produce dist/cli.js');
}

/** A JSON message as it came off the wire. */
export type Msg = Record<string, any>;

/** Where to connect: a Unix socket path, or a TCP port on 127.0.0.1. */
export type Target = { path: string } | { port: number; host?: string };

/**
 * A deliberately naive JSON-RPC line client, as someone else would write it for socket-pty:
 * it writes raw lines and matches responses by id; notifications and id-less answers queue up.
 */
export class LineClient {
  private _buffered = '';
  private readonly _inbox = new Inbox<Msg>();
  private _nextId = 1;
  /** Every message received, in order (for diagnostics). */
  readonly received: Msg[] = this._inbox.received;
  /** Resolves when the server closes the connection (or it errors). */
  readonly closed: Promise<void>;
  private _isClosed = false;

  private constructor(private readonly _socket: net.Socket) {
    _socket.setEncoding('utf8');
    _socket.on('data', (chunk: string) => this._onData(chunk));
    this.closed = new Promise((resolve) => {
      const done = () => {
        this._isClosed = true;
        this._inbox.close();
        resolve();
      };
      _socket.once('close', done);
      _socket.once('error', done);
    });
  }

  static connect(target: Target, timeoutMs: number = HelperTimeouts.Response): Promise<LineClient> {
    return new Promise((resolve, reject) => {
      const socket = 'path' in target ? net.connect(target.path) : net.connect(target.port, target.host ?? '127.0.0.1');
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new Error('connect timed out'));
      }, timeoutMs);
      socket.once('connect', () => {
        clearTimeout(timer);
        socket.removeAllListeners('error');
        resolve(new LineClient(socket));
      });
      socket.once('error', (e) => {
        clearTimeout(timer);
        reject(e);
      });
    });
  }

  get isClosed(): boolean {
    return this._isClosed;
  }

  /** Writes raw text as is (the caller adds the newline, or splits a line on purpose). */
  raw(text: string): void {
    this._socket.write(text);
  }

  /** Sends one JSON value as a line. */
  sendJson(value: unknown): void {
    this._socket.write(JSON.stringify(value) + '\n');
  }

  /** Sends a request and resolves with the whole response message carrying the same id. */
  call(method: string, params?: unknown, id: string | number = this._nextId++, timeoutMs: number = HelperTimeouts.Response): Promise<Msg> {
    const req: Msg = { jsonrpc: '2.0', method, id };
    if (params !== undefined) req.params = params;
    const answer = this.next((m) => m.id === id && ('result' in m || 'error' in m), timeoutMs, `response to ${method} (id ${JSON.stringify(id)})`);
    this.sendJson(req);
    return answer;
  }

  /** Sends a request and returns its `result`; fails the test on an error response. */
  async result(method: string, params?: unknown, timeoutMs?: number): Promise<Msg> {
    const res = await this.call(method, params, undefined, timeoutMs);
    if (res.error) throw new Error(`${method} failed: ${JSON.stringify(res.error)}`);
    return res.result;
  }

  /** The next received message that satisfies `pred` (queued ones first); rejects after `timeoutMs`. */
  next(pred: (m: Msg) => boolean, timeoutMs: number = HelperTimeouts.Response, what = 'message'): Promise<Msg> {
    return this._inbox.next(pred, timeoutMs, what);
  }

  /** Notifications received and not yet taken, optionally of one method (removes them from the queue). */
  takeNotifications(method?: string): Msg[] {
    return this._inbox.take((m) => m.id === undefined && typeof m.method === 'string' && (method === undefined || m.method === method));
  }

  close(): void {
    this._socket.destroy();
  }

  private _onData(chunk: string): void {
    this._buffered += chunk;
    for (;;) {
      const nl = this._buffered.indexOf('\n');
      if (nl < 0) break;
      const line = this._buffered.slice(0, nl);
      this._buffered = this._buffered.slice(nl + 1);
      if (line.trim() === '') continue;
      this._inbox.push(JSON.parse(line) as Msg); // a server line that is not JSON fails the test loudly
    }
  }
}

/** A `shared-pty serve` child process. */
export interface ServeProcess {
  child: ChildProcess;
  pid: number;
  /** Everything it printed so far. */
  output(): string;
  /** Resolves with the exit code (or signal name) when it exits. */
  exited: Promise<number | string>;
  /** Stops it by pid (SIGTERM, then SIGKILL after a grace) unless it already exited. */
  stop(): Promise<void>;
}

/** Starts `node bin/shared-pty.js serve <args>` and waits until `target` accepts connections. */
export async function startServe(args: string[], env: NodeJS.ProcessEnv, target: Target): Promise<ServeProcess> {
  const child = spawn(process.execPath, [CLI, 'serve', ...args], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  let exitedFlag = false;
  const exited = new Promise<number | string>((resolve) => {
    child.once('exit', (code, signal) => {
      exitedFlag = true;
      resolve(code ?? signal ?? 'unknown');
    });
  });
  const proc: ServeProcess = {
    child,
    pid: child.pid!,
    output: () => out,
    exited,
    async stop() {
      if (exitedFlag) return;
      try {
        process.kill(child.pid!, 'SIGTERM');
      } catch {
        return;
      }
      const t = setTimeout(() => {
        try {
          process.kill(child.pid!, 'SIGKILL');
        } catch {
          // gone
        }
      }, 3000);
      await exited;
      clearTimeout(t);
    },
  };
  const deadline = Date.now() + HelperTimeouts.Listen;
  for (;;) {
    if (exitedFlag) throw new Error(`serve exited before listening: ${out}`);
    try {
      const c = await LineClient.connect(target, 2000);
      c.close();
      return proc;
    } catch {
      if (Date.now() > deadline) {
        await proc.stop();
        throw new Error(`serve did not listen within ${HelperTimeouts.Listen} ms: ${out}`);
      }
      await sleep(50);
    }
  }
}

/**
 * A TCP port on 127.0.0.1 that was free when asked: another process may bind it before the server
 * a test starts does. Start servers with startServeOnFreePort, which makes sure the port is theirs.
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

/** Ports startServeOnFreePort tries before it gives up (each one taken by someone else in between). */
const PORT_TRIES = 5;

/**
 * `shared-pty serve` on a free TCP port (`args` puts the port where it goes). freePort() only knows
 * the port was free when it asked: if another process binds it first, serve fails to listen, or the
 * test would reach that other process; then another port is tried, and the port is known to be the
 * serve's own when this returns (its listening socket is one of the serve process's descriptors).
 */
export async function startServeOnFreePort(args: (port: number) => string[], env: NodeJS.ProcessEnv): Promise<{ serve: ServeProcess; port: number }> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    let serve: ServeProcess | undefined;
    try {
      serve = await startServe(args(port), env, { port, host: '127.0.0.1' });
      if (listensOn(serve.pid, port)) return { serve, port };
      throw new Error(`port ${port} (EADDRINUSE) is another process's`);
    } catch (e) {
      await serve?.stop();
      if (attempt >= PORT_TRIES || !/EADDRINUSE/.test((e as Error).message)) throw e;
    }
  }
}

/** Whether process `pid` holds the socket listening on TCP `port` (from /proc/net/tcp{,6} and /proc/<pid>/fd). */
function listensOn(pid: number, port: number): boolean {
  const hexPort = `:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  const inodes = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    if (!fs.existsSync(table)) continue;
    for (const line of fs.readFileSync(table, 'utf8').split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f[1]?.endsWith(hexPort) && f[3] === '0A') inodes.add(f[9]);
    }
  }
  const fdDir = `/proc/${pid}/fd`;
  return fs.readdirSync(fdDir).some((fd) => {
    try {
      return inodes.has(/^socket:\[(\d+)\]$/.exec(fs.readlinkSync(path.join(fdDir, fd)))?.[1] ?? '');
    } catch {
      return false; // closed meanwhile
    }
  });
}

/**
 * Open connections to a host's Unix socket (`unix:/path`), from /proc/net/unix: a server's accepted
 * sockets carry its path, in state 03 (connected). A test waits for one more to know that a client
 * it started (a CLI `wait`, say) has reached the host, instead of sleeping and hoping it has.
 */
export function connectionsTo(address: string): number {
  const socketPath = address.replace(/^unix:/, '');
  return fs
    .readFileSync('/proc/net/unix', 'utf8')
    .split('\n')
    .filter((l) => l.endsWith(` ${socketPath}`) && l.trim().split(/\s+/)[5] === '03').length;
}

/**
 * `connectionsTo` once it has stopped changing (the same count 50 ms apart): a client that has just
 * exited may still count until the host has closed its side.
 */
export async function settledConnectionsTo(address: string): Promise<number> {
  let last = connectionsTo(address);
  for (let i = 0; i < 100; i++) {
    await sleep(50);
    const now = connectionsTo(address);
    if (now === last) return now;
    last = now;
  }
  return last;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** True while a process with this pid exists (the product's own check). */
export { isAlive as pidAlive } from '../../src/host/discovery';

/** Direct children of a process (Linux /proc), with their command names. */
export function childrenOf(pid: number): Array<{ pid: number; comm: string }> {
  let text = '';
  try {
    text = fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8');
  } catch {
    return [];
  }
  return text
    .trim()
    .split(/\s+/)
    .filter(Boolean)
    .map((p) => {
      let comm = '';
      try {
        comm = fs.readFileSync(`/proc/${p}/comm`, 'utf8').trim();
      } catch {
        // exited meanwhile
      }
      return { pid: Number(p), comm };
    });
}

/** The parent pid of a process (Linux /proc), or null when it is gone. */
export function parentOf(pid: number): number | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return null;
  }
}

/** Environment for a child running plain bash with a predictable prompt. */
export function bashEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, LANG: 'C.UTF-8', PS1: '$ ', HISTFILE: '/dev/null', ...extra };
  delete env.LC_ALL;
  delete env.LC_CTYPE;
  delete env.PROMPT_COMMAND;
  delete env.BASH_ENV;
  delete env.ENV;
  return env;
}
