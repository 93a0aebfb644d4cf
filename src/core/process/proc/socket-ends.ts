import * as fs from 'node:fs';
import { RememberedAnswers } from './remembered';

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
 * What the process at the other end of a Unix socket has open (the terminal, another terminal's
 * master), per socket and question. Finding that process is a walk of every process's fds (a few
 * ms here, more on a desktop with hundreds of processes), so the answer is remembered (remembered.ts).
 */
const terminalServers = new RememberedAnswers();

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

/**
 * Whether the process at the other end of Unix socket `peer` passes `test` (`what` names the test
 * and the terminal it asks about, for the remembered answer).
 */
export function processAtOtherEnd(peer: number, what: string, test: (pid: number) => boolean): boolean {
  return terminalServers.answer(`${what}:${peer}`, () => {
    const holder = processHoldingSocket(peer);
    return holder !== null && test(holder);
  });
}
