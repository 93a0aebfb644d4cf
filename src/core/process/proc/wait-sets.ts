import * as fs from 'node:fs';
import type { WaitKind } from './wait-syscalls';

/* Whether a blocked read, select, poll or epoll wait includes the session's terminal: read from the task's fds and memory. */

/** poll(2) event bits that mean "readable" (the others — POLLOUT etc. — are not input waits). */
const POLLIN = 0x1;
const POLLPRI = 0x2;
const POLLRDNORM = 0x40;
const POLL_INPUT_EVENTS = POLLIN | POLLPRI | POLLRDNORM;
/** epoll event bits that mean "readable" (EPOLLIN, EPOLLPRI, EPOLLRDNORM share poll's values). */
const EPOLL_INPUT_EVENTS = POLL_INPUT_EVENTS;
/** sizeof(struct pollfd): int fd; short events; short revents. */
const POLLFD_SIZE = 8;
/** Offset of `events` in struct pollfd. */
const POLLFD_EVENTS_OFFSET = 4;
/** Upper bounds on what we read from another process's memory; beyond them we fall back to the approximation. */
const MAX_POLL_FDS = 4096;
const MAX_SELECT_NFDS = 65536;

/** Device number of /dev/tty (major 5, minor 0): opening it yields the opener's controlling terminal. */
const DEV_TTY_RDEV = (5 << 8) | 0;

/**
 * True when `fd` of the task is the session's terminal: the pty slave itself (rdev equals the session's
 * tty_nr) or /dev/tty — less opens /dev/tty, and the open file keeps /dev/tty's own device number (5,0)
 * while reading from the opener's controlling terminal, which for a process in this session's
 * foreground group is this terminal.
 */
function isTerminalFd(pid: number, tid: number, fd: number, ttyNr: number): boolean {
  if (!Number.isInteger(fd) || fd < 0) return false;
  try {
    // stat follows the /proc magic link to the open file without opening it again.
    const st = fs.statSync(`/proc/${pid}/task/${tid}/fd/${fd}`);
    return st.isCharacterDevice() && (st.rdev === ttyNr || st.rdev === DEV_TTY_RDEV);
  } catch {
    return false;
  }
}

/** True when any of the task's open fds is the session's terminal. */
function hasTerminalOpen(pid: number, tid: number, ttyNr: number): boolean {
  let names: string[];
  try {
    names = fs.readdirSync(`/proc/${pid}/task/${tid}/fd`);
  } catch {
    return false;
  }
  return names.some((name) => isTerminalFd(pid, tid, Number(name), ttyNr));
}

/** Reads `length` bytes at `address` of the task's memory; null when not permitted or unmapped. */
function readMemory(pid: number, address: bigint, length: number): Buffer | null {
  let fd: number | undefined;
  try {
    fd = fs.openSync(`/proc/${pid}/mem`, 'r');
    const buffer = Buffer.alloc(length);
    const read = fs.readSync(fd, buffer, 0, length, address);
    return read === length ? buffer : null;
  } catch {
    return null;
  } finally {
    if (fd !== undefined) {
      try {
        fs.closeSync(fd);
      } catch {
        // nothing to do: the fd was ours and is released either way
      }
    }
  }
}

/**
 * Does a select/pselect6 wait include the terminal in its read set? The kernel copies the fd_sets in at
 * entry and writes results back only on return, so while the task sleeps its memory still holds the set
 * it waits on. A null read set means it waits for no input at all (e.g. python's old select()-based
 * sleep). If the memory cannot be read we approximate by "has the terminal open on some fd".
 */
function selectIncludesTerminal(pid: number, tid: number, args: readonly bigint[], ttyNr: number): boolean {
  const nfds = Number(args[0] ?? 0n);
  const readfds = args[1] ?? 0n;
  if (readfds === 0n || nfds <= 0) return false;
  if (nfds > MAX_SELECT_NFDS) return hasTerminalOpen(pid, tid, ttyNr);
  // fd_set is an array of longs, bit (fd % 64) of long (fd / 64); on little-endian that is simply bit
  // (fd % 8) of byte (fd / 8).
  const bits = readMemory(pid, readfds, Math.ceil(nfds / 8));
  if (bits === null) return hasTerminalOpen(pid, tid, ttyNr);
  for (let fd = 0; fd < nfds; fd++) {
    if (((bits[fd >> 3] ?? 0) & (1 << (fd & 7))) !== 0 && isTerminalFd(pid, tid, fd, ttyNr)) return true;
  }
  return false;
}

/** Does a poll/ppoll wait include the terminal with a "readable" event? (Same memory argument as select.) */
function pollIncludesTerminal(pid: number, tid: number, args: readonly bigint[], ttyNr: number): boolean {
  const fdsAddress = args[0] ?? 0n;
  const nfds = Number(args[1] ?? 0n);
  if (fdsAddress === 0n || nfds <= 0) return false;
  if (nfds > MAX_POLL_FDS) return hasTerminalOpen(pid, tid, ttyNr);
  const entries = readMemory(pid, fdsAddress, nfds * POLLFD_SIZE);
  if (entries === null) return hasTerminalOpen(pid, tid, ttyNr);
  for (let i = 0; i < nfds; i++) {
    const fd = entries.readInt32LE(i * POLLFD_SIZE);
    const events = entries.readInt16LE(i * POLLFD_SIZE + POLLFD_EVENTS_OFFSET);
    if (fd >= 0 && (events & POLL_INPUT_EVENTS) !== 0 && isTerminalFd(pid, tid, fd, ttyNr)) return true;
  }
  return false;
}

/**
 * Does an epoll wait's interest list include the terminal for input? /proc/<pid>/fdinfo/<epfd> lists it,
 * one "tfd: <fd> events: <hex mask> …" line per watched fd (tfd is the fd number at registration time).
 * If fdinfo is unreadable we approximate by "has the terminal open on some fd".
 */
function epollIncludesTerminal(pid: number, tid: number, args: readonly bigint[], ttyNr: number): boolean {
  const epfd = Number(args[0] ?? -1n);
  let info: string;
  try {
    info = fs.readFileSync(`/proc/${pid}/task/${tid}/fdinfo/${epfd}`, 'latin1');
  } catch {
    return hasTerminalOpen(pid, tid, ttyNr);
  }
  for (const match of info.matchAll(/^tfd:\s*(\d+)\s+events:\s*([0-9a-fA-F]+)/gm)) {
    const fd = Number(match[1]);
    const events = Number.parseInt(match[2] ?? '0', 16);
    if ((events & EPOLL_INPUT_EVENTS) !== 0 && isTerminalFd(pid, tid, fd, ttyNr)) return true;
  }
  return false;
}

export function waitIncludesTerminal(kind: WaitKind, pid: number, tid: number, args: readonly bigint[], ttyNr: number): boolean {
  switch (kind) {
    case 'read':
      return isTerminalFd(pid, tid, Number(args[0] ?? -1n), ttyNr);
    case 'select':
      return selectIncludesTerminal(pid, tid, args, ttyNr);
    case 'poll':
      return pollIncludesTerminal(pid, tid, args, ttyNr);
    case 'epoll':
      return epollIncludesTerminal(pid, tid, args, ttyNr);
  }
}
