import { spawn } from 'node:child_process';
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
  const child = spawn(opts.execPath ?? process.execPath, [opts.cliPath, 'daemon', ...(opts.args ?? [])], {
    detached: true,
    stdio: 'ignore',
    env,
    cwd: path.dirname(opts.cliPath),
  });
  child.unref();
  const end = Date.now() + DAEMON_START_TIMEOUT_MS;
  while (Date.now() < end) {
    await new Promise((r) => setTimeout(r, 50));
    // Two clients may start daemons at once: the oldest record wins, the other exits by itself.
    const rec = findDaemon(dir);
    if (rec) return rec;
  }
  throw new Error(`The Shared PTY host did not start within ${DAEMON_START_TIMEOUT_MS / 1000} s`);
}
