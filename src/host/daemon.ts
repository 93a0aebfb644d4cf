import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { readLiveRecords, type HostRecord } from './discovery';
import { ensureRuntimeDir } from './runtime-dir';

/** How long to wait for a freshly started per-user host to write its record. */
const DAEMON_START_TIMEOUT_MS = 10000;

/** The per-user host (kind "daemon") if one runs. */
export function findDaemon(dir?: string): HostRecord | undefined {
  return readLiveRecords(dir).find((r) => r.kind === 'daemon');
}

export interface EnsureDaemonOptions {
  /** The CLI bundle to run (`dist/cli.js`). */
  cliPath: string;
  /** The Node runtime to use: the editor passes its own (process.execPath with ELECTRON_RUN_AS_NODE). */
  execPath?: string;
  env?: NodeJS.ProcessEnv;
  runtimeDir?: string;
  /** Extra `daemon` flags (HTTP port, origins, scrollback). */
  args?: string[];
}

/**
 * Returns the per-user host, starting it detached (like a tmux server) when none runs, so
 * sessions outlive the editor window or the MCP client that asked for them.
 */
export async function ensureDaemon(opts: EnsureDaemonOptions): Promise<HostRecord> {
  const dir = ensureRuntimeDir(opts.runtimeDir);
  const existing = findDaemon(dir);
  if (existing) return existing;
  const env = { ...process.env, ...opts.env, ELECTRON_RUN_AS_NODE: '1', SHARED_PTY_DIR: dir };
  // What the detached host says (a crash, a node-pty that will not load) lands in daemon.log (0600,
  // one run's worth): there is no terminal to see it otherwise. Nothing secret is ever written there.
  const log = fs.openSync(path.join(dir, DAEMON_LOG), 'w', 0o600);
  let child;
  try {
    child = spawn(opts.execPath ?? process.execPath, [opts.cliPath, 'daemon', ...(opts.args ?? [])], {
      detached: true,
      stdio: ['ignore', log, log],
      env,
      cwd: path.dirname(opts.cliPath),
    });
  } finally {
    fs.closeSync(log);
  }
  child.unref();
  let exited: string | undefined;
  child.once('exit', (code, signal) => (exited = `exited with ${signal ?? code}`));
  const end = Date.now() + DAEMON_START_TIMEOUT_MS;
  while (Date.now() < end) {
    await new Promise((r) => setTimeout(r, 50));
    // Two clients may start daemons at once: the oldest record wins, the other exits by itself.
    const rec = findDaemon(dir);
    if (rec) return rec;
    if (exited) break;
  }
  throw new Error(`The Shared PTY host ${exited ?? `did not start within ${DAEMON_START_TIMEOUT_MS / 1000} s`}: ${tailOf(path.join(dir, DAEMON_LOG))}`);
}

/** The per-user host's log, in the runtime directory. */
export const DAEMON_LOG = 'daemon.log';

/** The last line of a log, for an error message. */
function tailOf(file: string): string {
  try {
    const lines = fs.readFileSync(file, 'utf8').trim().split('\n');
    return lines[lines.length - 1] || '(no output; see ' + file + ')';
  } catch {
    return '(no log)';
  }
}
