import * as fs from 'node:fs';
import * as path from 'node:path';
import type { SessionInfo } from '../core/methods/types';
import { writeFileAtomically } from '../core/base/private-files';
import { checkRuntimeDir, runtimeDirPath } from './runtime-dir';

export type HostKind = 'daemon' | 'serve';

/** One host's discovery record, `<runtime>/<hostId>.json` (docs/hosts.md#runtime-directory). */
export interface HostRecord {
  hostId: string;
  pid: number;
  kind: HostKind;
  version: string;
  startedAt: string;
  control: string;
  http: { url: string; token: string } | null;
  sessions: SessionInfo[];
  /** Where the host's sessions start by default (used to pick a host for a workspace). */
  workspace?: string | null;
  /**
   * The script the host runs (per-user hosts). When it is gone (an update removed the old
   * extension), the host takes no new sessions and exits when its last one ends.
   */
  entry?: string;
}

/**
 * Writes a record atomically with mode 0600: into a new file under a random temporary name, then
 * renamed (see writeFileAtomically), so a link planted at a name we would use is never written
 * through. The caller has checked the directory is its own (RuntimeDirGuard).
 */
export function writeRecord(dir: string, record: HostRecord): void {
  writeFileAtomically(path.join(dir, `${record.hostId}.json`), JSON.stringify(record, null, 2) + '\n');
}

export function removeRecord(dir: string, hostId: string): void {
  fs.rmSync(path.join(dir, `${hostId}.json`), { force: true });
}

/** True when a process with this pid exists (it may belong to another user) and has not exited. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
  return !isZombie(pid);
}

/** An exited process its parent has not reaped yet (Linux; elsewhere never): it is gone for us. */
function isZombie(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.charAt(stat.lastIndexOf(')') + 2) === 'Z';
  } catch {
    return false;
  }
}

/**
 * The host whose workspace holds `folder`, the innermost when workspaces nest (a project opened
 * inside another's folder gets its own sessions); undefined when none does.
 */
export function hostOfFolder(hosts: readonly HostRecord[], folder: string): HostRecord | undefined {
  let best: HostRecord | undefined;
  for (const h of hosts) {
    if (!h.workspace || !isInside(folder, h.workspace)) continue;
    if (!best || h.workspace.length > best.workspace!.length) best = h;
  }
  return best;
}

/** Whether `child` is `parent` or below it (by path, as given). */
function isInside(child: string, parent: string): boolean {
  const rel = path.relative(parent, child);
  return rel === '' || (!rel.startsWith('..' + path.sep) && rel !== '..' && !path.isAbsolute(rel));
}

/** Removes a gone host's record and its socket folder (its hostId names nothing outside the folder). */
export function forgetHost(dir: string, rec: HostRecord): void {
  removeRecord(dir, rec.hostId);
  if (/^[a-z0-9]+$/.test(rec.hostId)) fs.rmSync(path.join(dir, rec.hostId), { recursive: true, force: true });
}

/** How long a host whose connection closed by itself may take to be seen gone (its exit is under way). */
const EXIT_SEEN_WITHIN_MS = 1000;

/**
 * Whether the host is gone, for a client whose connection to it just closed: a host killed with
 * SIGKILL closes its sockets a moment before its process is seen ended, so this waits a little.
 */
export async function hostEnded(pid: number): Promise<boolean> {
  for (const end = Date.now() + EXIT_SEEN_WITHIN_MS; ;) {
    if (!isAlive(pid)) return true;
    if (Date.now() >= end) return false;
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * Every live host's record. Records whose pid is dead are removed, with their socket folder,
 * so a crashed host leaves nothing behind for long.
 */
export function readLiveRecords(dir = runtimeDirPath()): HostRecord[] {
  if (!fs.existsSync(dir)) return [];
  // A record in a folder others can write could point us at their socket: refuse, as hosts do.
  checkRuntimeDir(dir);
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return [];
  }
  const out: HostRecord[] = [];
  for (const name of names) {
    if (!name.endsWith('.json')) continue;
    const file = path.join(dir, name);
    let rec: HostRecord;
    try {
      rec = JSON.parse(fs.readFileSync(file, 'utf8')) as HostRecord;
    } catch {
      continue; // being written, or not ours
    }
    if (typeof rec?.pid !== 'number' || typeof rec.hostId !== 'string') continue;
    if (!isAlive(rec.pid)) {
      forgetHost(dir, rec);
      continue;
    }
    out.push(rec);
  }
  // Oldest first, ties by id: every reader picks the same host.
  return out.sort((a, b) => a.startedAt.localeCompare(b.startedAt) || a.hostId.localeCompare(b.hostId));
}
