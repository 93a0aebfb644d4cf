import * as fs from 'node:fs';

/* The other ends of Unix sockets, as the job's processes and the terminal's other holders have them (wait-sets.ts decides what makes a relay). */

/**
 * The sockets the processes of a foreground job hold, read once per look and only when asked (a
 * Unix socket in a wait): where the other end of a Unix socket is decides whether it is a relay.
 */
export class JobSockets {
  private _held: Set<number> | undefined;

  constructor(private readonly _members: readonly number[]) {}

  /** True when one of the job's processes has socket `ino` open. */
  holds(ino: number): boolean {
    this._held ??= socketsOf(this._members);
    return this._held.has(ino);
  }
}

/** Most fds of one process looked at for its sockets (a server can hold thousands). */
const MAX_SOCKET_FDS = 1024;

function socketsOf(pids: readonly number[]): Set<number> {
  const held = new Set<number>();
  for (const pid of pids) for (const ino of socketInodesOf(pid, MAX_SOCKET_FDS)) held.add(ino);
  return held;
}

/** The inodes of the sockets process `pid` has open among its first `max` fds; none when it is gone or another user's. */
function socketInodesOf(pid: number | string, max = Infinity): number[] {
  let names: string[];
  try {
    names = fs.readdirSync(`/proc/${pid}/fd`);
  } catch {
    return [];
  }
  const inodes: number[] = [];
  for (const name of names.length > max ? names.slice(0, max) : names) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/${pid}/fd/${name}`));
      if (m) inodes.push(Number(m[1]));
    } catch {
      // closed since the listing
    }
  }
  return inodes;
}

/**
 * Whether the other end of a Unix socket is held by a process that has the terminal open, per
 * socket and terminal. Finding that process is a walk of every process's fds (a few ms here, more
 * on a desktop with hundreds of processes), so it is remembered: a "yes" while the connection
 * lasts (re-checked after a minute), a "no" for a time that doubles at each check from 1 s to a
 * minute (a tmux client connects before its server is handed the terminal; psql waits on its
 * server for as long as a query runs).
 */
const terminalServers = new Map<string, { holds: boolean; at: number; forMs: number }>();
const FIRST_NO_MS = 1000;
const LONGEST_MS = 60_000;
const MAX_REMEMBERED = 256;

/** The inode of the task's fd `fd` when it is a socket, else null. */
export function socketInode(pid: number, tid: number, fd: number): number | null {
  try {
    const st = fs.statSync(`/proc/${pid}/task/${tid}/fd/${fd}`);
    return st.isSocket() ? st.ino : null;
  } catch {
    return null;
  }
}

/** A process that has socket `ino` open, found among every process this user may look into; null if none. */
function processHoldingSocket(ino: number): number | null {
  let pids: string[];
  try {
    pids = fs.readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return null;
  }
  const pid = pids.find((p) => socketInodesOf(p).includes(ino));
  return pid === undefined ? null : Number(pid);
}

/** Whether the process at the other end of Unix socket `peer` has terminal `ttyNr` open (`hasTerminal` looks at one process). */
export function holdsTerminalAtOtherEnd(peer: number, ttyNr: number, hasTerminal: (pid: number) => boolean): boolean {
  const key = `${peer}:${ttyNr}`;
  const now = Date.now();
  const known = terminalServers.get(key);
  if (known && now - known.at < known.forMs) return known.holds;
  const holder = processHoldingSocket(peer);
  const holds = holder !== null && hasTerminal(holder);
  const forMs = holds ? LONGEST_MS : Math.min(LONGEST_MS, known && !known.holds ? known.forMs * 2 : FIRST_NO_MS);
  if (terminalServers.size >= MAX_REMEMBERED) terminalServers.clear();
  terminalServers.set(key, { holds, at: now, forMs });
  return holds;
}
