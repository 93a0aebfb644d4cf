import { spawn } from 'node:child_process';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { VERSION } from '../version';
import { forgetHost, isAlive, readLiveRecords, type HostRecord } from './discovery';
import { ensureRuntimeDir } from './runtime-dir';
import { openNewFile } from '../core/base/private-files';

/** How long to wait for a freshly started per-user host to write its record. */
const DAEMON_START_TIMEOUT_MS = 10000;

/**
 * A per-user host that new sessions may open in: of this build's version, its files still there.
 * Another one (left by an extension update) keeps the sessions it has and exits when they end.
 */
export function isCurrentDaemon(r: HostRecord): boolean {
  return r.kind === 'daemon' && r.version === VERSION && (!r.entry || fs.existsSync(r.entry));
}

/** The per-user host of this version (kind "daemon") if one runs. */
export function findDaemon(dir?: string): HostRecord | undefined {
  return readLiveRecords(dir).find(isCurrentDaemon);
}

/** Per-user hosts of another version, or whose files an update removed (see isCurrentDaemon). */
export function findOutdatedDaemons(dir?: string): HostRecord[] {
  return readLiveRecords(dir).filter((r) => r.kind === 'daemon' && !isCurrentDaemon(r));
}

/** Outdated hosts this process has told the user about (once each). */
const toldOutdated = new Set<string>();

/** The one line that says where the user's sessions now live, for an outdated host with sessions. */
function outdatedNotice(old: HostRecord, current: HostRecord): string {
  const n = old.sessions.length;
  const why = old.version === VERSION ? `of version ${old.version} whose files were removed` : `of version ${old.version}`;
  return (
    `Shared PTY: the host ${old.hostId} ${why} keeps your ${n} running session${n === 1 ? '' : 's'}; ` +
    `new sessions open in host ${current.hostId} (version ${current.version}), and the old host exits when its last session ends`
  );
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
  /**
   * Told once per process when a per-user host of another version (an update) still holds
   * sessions: they stay there, new ones open in a host of this version.
   */
  onOutdatedHost?: (message: string) => void;
}

/**
 * Returns the per-user host, starting it detached (like a tmux server) when none runs, so
 * sessions outlive the editor window or the MCP client that asked for them.
 */
export async function ensureDaemon(opts: EnsureDaemonOptions): Promise<HostRecord> {
  const dir = ensureRuntimeDir(opts.runtimeDir);
  const current = (await answeringDaemon(dir)) ?? (await startDaemon(dir, opts));
  for (const old of findOutdatedDaemons(dir)) {
    if (old.sessions.length === 0 || toldOutdated.has(old.hostId)) continue;
    toldOutdated.add(old.hostId);
    opts.onOutdatedHost?.(outdatedNotice(old, current));
  }
  return current;
}

/** How long a per-user host may take to accept a connection before it is taken as busy, not gone. */
const PROBE_TIMEOUT_MS = 2000;

/**
 * The per-user host of this version, if one runs and listens. A record whose pid lives on in
 * another process (the host was killed, the pid reused) has a control socket nobody listens on:
 * that host is forgotten, record, folder and lock, and a new one can start.
 */
async function answeringDaemon(dir: string): Promise<HostRecord | undefined> {
  for (let found = findDaemon(dir); found; found = findDaemon(dir)) {
    if (!(await nobodyListens(found.control))) return found;
    forgetHost(dir, found);
    if (readLockPid(daemonLockFile(dir)) === found.pid) fs.rmSync(daemonLockFile(dir), { force: true });
  }
  return undefined;
}

/**
 * How long a missing control socket is given to come back: a running host puts back its files as
 * soon as they go (a tmp cleaner's `rm`), so one still missing after this has nobody behind it.
 */
const MISSING_SOCKET_GRACE_MS = 1000;

/**
 * True when the socket is there and refuses the connection (ECONNREFUSED: no process listens on
 * it, which a running host always does), or is missing and stays missing: a record whose pid went
 * to another process after its host's folder was cleaned away (an outside audit: every `open`
 * failed on it). False when it answers, is busy, or comes back.
 */
function nobodyListens(control: string): Promise<boolean> {
  if (!control.startsWith('unix:')) return Promise.resolve(false);
  const socketPath = control.slice('unix:'.length);
  return new Promise((resolve) => {
    const socket = net.createConnection(socketPath);
    const done = (refused: boolean | Promise<boolean>) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(refused);
    };
    const timer = setTimeout(() => done(false), PROBE_TIMEOUT_MS);
    socket.once('connect', () => done(false));
    socket.once('error', (e: NodeJS.ErrnoException) => done(e.code === 'ENOENT' ? staysMissing(socketPath) : e.code === 'ECONNREFUSED'));
  });
}

/** Whether `file` is still missing MISSING_SOCKET_GRACE_MS from now. */
function staysMissing(file: string): Promise<boolean> {
  return new Promise((resolve) => setTimeout(() => resolve(!fs.existsSync(file)), MISSING_SOCKET_GRACE_MS));
}

/** Starts the per-user host of this version, detached, and waits for its record. */
async function startDaemon(dir: string, opts: EnsureDaemonOptions): Promise<HostRecord> {
  // What the detached host says (a crash, a node-pty that will not load) lands in daemon.log (0600,
  // one run's worth): there is no terminal to see it otherwise. Nothing secret is ever written there.
  // It starts in a log of its own, which the host makes daemon.log once it has won the lock
  // (`adoptStartLog`): two started at the same moment do not replace each other's log.
  const startLog = `daemon.${crypto.randomBytes(6).toString('hex')}.log`;
  const env = { ...process.env, ...opts.env, ELECTRON_RUN_AS_NODE: '1', SHARED_PTY_DIR: dir, [START_LOG_ENV]: startLog };
  const log = openNewFile(path.join(dir, startLog)); // a new file: a link planted at its name is not followed
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
  // Exit status 0 before a record: our host found, or lost the lock to, one started at the same
  // moment (another window, `shared-pty open`); that one's record is what we wait for.
  child.once('exit', (code, signal) => (exited = code === 0 ? undefined : `exited with ${signal ?? code}`));
  const end = Date.now() + DAEMON_START_TIMEOUT_MS;
  while (Date.now() < end) {
    await new Promise((r) => setTimeout(r, 50));
    // Two clients may start daemons at once: the oldest record wins, the other exits by itself.
    const rec = findDaemon(dir);
    if (rec) return rec;
    if (exited) break;
  }
  // A host that failed before it took the lock left its start log: it becomes daemon.log, as one that failed after.
  adoptStartLog(dir, startLog);
  throw new Error(`The Shared PTY host ${exited ?? `did not start within ${DAEMON_START_TIMEOUT_MS / 1000} s`}: ${tailOf(path.join(dir, DAEMON_LOG))}`);
}

/** Names the start log of a detached host (a file in its runtime directory) for the host. */
const START_LOG_ENV = 'SHARED_PTY_START_LOG';
const START_LOG_NAME = /^daemon\.[0-9a-f]{12}\.log$/;

/**
 * The start log this process was given (`daemon` started detached), taken out of the environment
 * so no session's program inherits the name; undefined when none was.
 */
export function takeStartLog(): string | undefined {
  const name = process.env[START_LOG_ENV];
  delete process.env[START_LOG_ENV];
  return name !== undefined && START_LOG_NAME.test(name) ? name : undefined;
}

/** The host that runs makes its start log daemon.log (replacing the last run's). */
export function adoptStartLog(dir: string, name: string | undefined): void {
  if (name === undefined) return;
  try {
    fs.renameSync(path.join(dir, name), path.join(dir, DAEMON_LOG));
  } catch {
    // Gone already (a starter adopted it): nothing to do.
  }
}

/** A host that leaves at once (another one runs) removes its start log. */
export function discardStartLog(dir: string, name: string | undefined): void {
  if (name !== undefined) fs.rmSync(path.join(dir, name), { force: true });
}

/** The per-user host's log, in the runtime directory. */
export const DAEMON_LOG = 'daemon.log';

/** The last line of a log, for an error message. */
function tailOf(file: string): string {
  try {
    // Never through a link planted in its place (docs/hosts.md#files-written-safely).
    const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
    let text: string;
    try {
      text = fs.readFileSync(fd, 'utf8');
    } finally {
      fs.closeSync(fd);
    }
    const lines = text.trim().split('\n');
    return lines[lines.length - 1] || '(no output; see ' + file + ')';
  } catch {
    return '(no log)';
  }
}

/**
 * One per-user host per version: the first to create `daemon-<version>.pid` (exclusively) runs,
 * a second one started at the same moment finds it and leaves. A lock whose process is gone (a
 * host killed with SIGKILL) is taken over. Returns the release, or undefined when another host holds it.
 */
export function claimDaemonLock(dir: string): (() => void) | undefined {
  const file = daemonLockFile(dir);
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openNewFile(file); // exclusive: the first one wins, and a planted link is not followed
      try {
        fs.writeSync(fd, String(process.pid));
      } finally {
        fs.closeSync(fd);
      }
      return () => {
        if (readLockPid(file) === process.pid) fs.rmSync(file, { force: true });
      };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    const holder = readLockPid(file);
    const outdated = (pid: number) => readLiveRecords(dir).some((r) => r.pid === pid && r.kind === 'daemon' && !isCurrentDaemon(r));
    if (holder !== undefined && holder !== process.pid && isAlive(holder) && !outdated(holder)) return undefined;
    // Left by a host that died or whose files are gone (or half-written this very moment: the next attempt reads it again).
    if (holder !== undefined) fs.rmSync(file, { force: true });
  }
  return undefined;
}

/** The lock of this version's per-user host (see claimDaemonLock). */
function daemonLockFile(dir: string): string {
  return path.join(dir, `daemon-${VERSION.replace(/[^\w.-]/g, '_')}.pid`);
}

function readLockPid(file: string): number | undefined {
  try {
    const pid = Number(fs.readFileSync(file, 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}
