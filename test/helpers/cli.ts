// Helpers for tests that drive the built `shared-pty` command as child processes: one-shot runs
// with a bounded time, a `serve` host in the foreground found through discovery, and tmux.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { readLiveRecords, type HostRecord } from '../../src/host/discovery';
import { CLI, pidAlive, REPO_ROOT, sleep } from './protocol';

/** What one CLI run produced. */
export interface CliResult {
  /** Exit status, or null when it was killed by a signal. */
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Every process this module started, so a test file's `after()` can stop leftovers by pid. */
export const startedPids = new Set<number>();

/** A running CLI process and the promise of its result. */
export interface CliRun {
  child: ChildProcess;
  pid: number;
  result: Promise<CliResult>;
}

/**
 * Ends a running `events --json` as Ctrl+C does and returns what it printed, one object a line;
 * it must end with 0 and say nothing on stderr about it.
 */
export async function interruptedEvents(run: CliRun): Promise<Array<Record<string, any>>> {
  process.kill(run.pid, 'SIGINT');
  const r = await run.result;
  if (r.code !== 0) throw new Error(`events ended with ${r.code}: ${r.stderr}`);
  return r.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, any>);
}

/** Starts `node bin/shared-pty.js <args>`; it is killed (by pid) if it outlives `timeoutMs`. */
export function startCli(args: string[], env: NodeJS.ProcessEnv, timeoutMs = 30_000): CliRun {
  const child = spawn(process.execPath, [CLI, ...args], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const pid = child.pid!;
  startedPids.add(pid);
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const result = new Promise<CliResult>((resolve, reject) => {
    const timer = setTimeout(() => {
      killPid(pid, 'SIGKILL');
      reject(new Error(`shared-pty ${args.join(' ')} did not finish within ${timeoutMs} ms; stdout: ${stdout}; stderr: ${stderr}`));
    }, timeoutMs);
    child.once('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    // 'close' (not 'exit'): the pipes are drained, so stdout and stderr are complete.
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      startedPids.delete(pid);
      resolve({ code, signal, stdout, stderr });
    });
  });
  return { child, pid, result };
}

/** Runs `node bin/shared-pty.js <args>` to completion (bounded). */
export function runCli(args: string[], env: NodeJS.ProcessEnv, timeoutMs = 30_000): Promise<CliResult> {
  return startCli(args, env, timeoutMs).result;
}

/**
 * Runs each command line to completion, a few at a time; the results in the order given. Twenty at
 * once on a loaded 2-core machine share the CPU so thinly that one can outlive runCli's bound,
 * though each needs a fraction of a second: a few at a time take the same CPU and end in turn.
 */
export async function runEach(cases: string[][], env: NodeJS.ProcessEnv, atOnce = 4): Promise<CliResult[]> {
  const results: CliResult[] = new Array(cases.length);
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < cases.length) {
      const i = next++;
      results[i] = await runCli(cases[i], env);
    }
  };
  await Promise.all(Array.from({ length: Math.min(atOnce, cases.length) }, lane));
  return results;
}

/** Sends `signal` to a pid; a process that is already gone is fine. */
export function killPid(pid: number, signal: NodeJS.Signals = 'SIGTERM'): void {
  try {
    process.kill(pid, signal);
  } catch {
    // already gone
  }
}

/** Stops a process by pid: SIGTERM, then SIGKILL when it is still there after `graceMs`. */
export async function stopPid(pid: number, graceMs = 3000): Promise<void> {
  if (!pidAlive(pid)) return;
  killPid(pid, 'SIGTERM');
  const end = Date.now() + graceMs;
  while (pidAlive(pid) && !isZombie(pid) && Date.now() < end) await sleep(25);
  if (pidAlive(pid) && !isZombie(pid)) killPid(pid, 'SIGKILL');
}

/** True when the process has exited and waits to be reaped (it counts as gone). */
export function isZombie(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z';
  } catch {
    return false;
  }
}

/** A `shared-pty serve` host running in the foreground as a child process. */
export interface ServeHost {
  child: ChildProcess;
  pid: number;
  /** Its discovery record as first seen (with one session). */
  record: HostRecord;
  /** Everything it printed. */
  output(): string;
  exited: Promise<number | string>;
  /** Stops it by pid and waits for it to exit. */
  stop(): Promise<void>;
}

/**
 * Starts `node bin/shared-pty.js serve <args>` with `env` (which names the runtime directory in
 * SHARED_PTY_DIR) and waits until its discovery record lists a session.
 */
export async function startServeHost(args: string[], env: NodeJS.ProcessEnv, timeoutMs = 20_000, extraPipes = 0): Promise<ServeHost> {
  const dir = env.SHARED_PTY_DIR;
  if (!dir) throw new Error('startServeHost needs SHARED_PTY_DIR in env');
  // `extraPipes`: descriptors 3, 4, … open in the host, as a program that starts one may leave them.
  const stdio: ('ignore' | 'pipe')[] = ['ignore', 'pipe', 'pipe', ...Array<'pipe'>(extraPipes).fill('pipe')];
  const child = spawn(process.execPath, [CLI, 'serve', ...args], { cwd: REPO_ROOT, env, stdio });
  const pid = child.pid!;
  startedPids.add(pid);
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (out += d));
  let done = false;
  const exited = new Promise<number | string>((resolve) => {
    child.once('exit', (code, signal) => {
      done = true;
      startedPids.delete(pid);
      resolve(code ?? signal ?? 'unknown');
    });
  });
  const host: Omit<ServeHost, 'record'> = {
    child,
    pid,
    output: () => out,
    exited,
    async stop() {
      if (done) return;
      killPid(pid, 'SIGTERM');
      const t = setTimeout(() => killPid(pid, 'SIGKILL'), 5000);
      await exited;
      clearTimeout(t);
    },
  };
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (done) throw new Error(`serve exited before it was ready: ${out}`);
    const record = readLiveRecords(dir).find((r) => r.pid === pid && r.sessions.length > 0);
    if (record) return { ...host, record };
    if (Date.now() > deadline) {
      await host.stop();
      throw new Error(`serve did not publish a session within ${timeoutMs} ms: ${out}`);
    }
    await sleep(50);
  }
}

/** How a private tmux server is set up. */
export interface TmuxOptions {
  /** Rows of history each pane keeps (tmux's default 2000). */
  historyLimit?: number;
  /** The environment of the server and its panes (default: this process's, without TMUX*). */
  env?: NodeJS.ProcessEnv;
  /** More lines of configuration. */
  conf?: string[];
}

/** Messages of a tmux client that met a server starting or ending: worth one more try. */
const TMUX_TRANSIENT = /server exited unexpectedly|no server running|error connecting|lost server/;

/**
 * A private tmux server (its own socket, no user config, no status line), for driving interactive
 * commands and as the oracle of screen reads. It stays up when its last session ends
 * (`exit-empty off`), and a command that meets the server starting or ending is tried again: the
 * oracle must not fail a test by itself ("server exited unexpectedly").
 */
export class Tmux {
  readonly socket: string;
  private readonly _conf: string;
  private readonly _env: NodeJS.ProcessEnv;
  private _serverPid: number | null = null;

  constructor(dir: string, options: TmuxOptions = {}) {
    this.socket = path.join(dir, 'tmux.sock');
    this._conf = path.join(dir, 'tmux.conf');
    const lines = ['set -g status off', `set -g history-limit ${options.historyLimit ?? 2000}`, 'set -s exit-empty off', ...(options.conf ?? [])];
    fs.writeFileSync(this._conf, lines.join('\n') + '\n');
    this._env = options.env ?? Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('TMUX')));
  }

  /** Runs one tmux command against this server (UTF-8); throws on failure. */
  run(...args: string[]): string {
    for (let attempt = 1; ; attempt++) {
      const r = spawnSync('tmux', ['-u', '-S', this.socket, '-f', this._conf, ...args], { encoding: 'utf8', timeout: 10_000, env: this._env });
      if (r.status === 0) return r.stdout;
      if (attempt >= 3 || !TMUX_TRANSIENT.test(r.stderr ?? '')) throw new Error(`tmux ${args.join(' ')} failed (${r.status ?? r.signal}): ${r.stderr}`);
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 100 * attempt);
    }
  }

  /** Starts a detached session running `command` (through /bin/sh) in a cols x rows pane. */
  newSession(name: string, cols: number, rows: number, command: string, options: { cwd?: string } = {}): void {
    this.run('new-session', '-d', '-s', name, ...(options.cwd ? ['-c', options.cwd] : []), '-x', String(cols), '-y', String(rows), command);
    this._serverPid ??= this.serverPid();
  }

  /** The pane's visible text. */
  capture(target: string): string {
    return this.run('capture-pane', '-p', '-t', target);
  }

  /** The pid of the process the pane runs. */
  panePid(target: string): number {
    return Number(this.run('display-message', '-p', '-t', target, '#{pane_pid}').trim());
  }

  /** The tmux server's pid, or null when none runs. */
  serverPid(): number | null {
    const r = spawnSync('tmux', ['-S', this.socket, 'display-message', '-p', '#{pid}'], { encoding: 'utf8', timeout: 10_000 });
    return r.status === 0 ? Number(r.stdout.trim()) : null;
  }

  /** Ends the tmux server (and every pane's processes); by its pid if kill-server cannot reach it. */
  killServer(): void {
    spawnSync('tmux', ['-S', this.socket, 'kill-server'], { encoding: 'utf8', timeout: 10_000 });
    if (this._serverPid && pidAlive(this._serverPid)) {
      try {
        process.kill(this._serverPid, 'SIGKILL');
      } catch {
        // gone meanwhile
      }
    }
  }
}

/** True when `tmux` can be run here. */
export function haveTmux(): boolean {
  return spawnSync('tmux', ['-V'], { encoding: 'utf8' }).status === 0;
}
