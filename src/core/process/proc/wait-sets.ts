import * as fs from 'node:fs';
import { JobSockets, processAtOtherEnd, socketInode } from './socket-ends';
import { unixPeerOf } from './unix-peer';
import type { WaitKind } from './wait-syscalls';

/* Whether a blocked read, select, poll or epoll wait includes the session's terminal, and what else it waits on: read from the task's fds and memory. */

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
/** Device number of /dev/ptmx (major 5, minor 2): an open one is the master side of another terminal. */
const DEV_PTMX_RDEV = (5 << 8) | 2;
/** The process's tables of internet sockets (its network namespace's), where a socket's inode is listed. */
const INTERNET_SOCKET_TABLES = ['tcp', 'tcp6', 'udp', 'udp6'];
/** Column of the inode in those tables (after sl, local and remote address, st, queues, timer, retransmits, uid, timeout). */
const SOCKET_TABLE_INODE_COLUMN = 9;

/**
 * True when `fd` of the task is the session's terminal: the pty slave itself (rdev equals the session's
 * tty_nr) or /dev/tty — less opens /dev/tty, and the open file keeps /dev/tty's own device number (5,0)
 * while reading from the opener's controlling terminal, which for a process in this session's
 * foreground group is this terminal.
 */
function isTerminalFd(pid: number, tid: number, fd: number, ttyNr: number): boolean {
  const rdev = deviceOf(pid, tid, fd);
  return rdev === ttyNr || rdev === DEV_TTY_RDEV;
}

/** The device number of `fd` of the task when it is a character device, else null. */
function deviceOf(pid: number, tid: number, fd: number): number | null {
  if (!Number.isInteger(fd) || fd < 0) return null;
  try {
    // stat follows the /proc magic link to the open file without opening it again.
    const st = fs.statSync(`/proc/${pid}/task/${tid}/fd/${fd}`);
    return st.isCharacterDevice() ? st.rdev : null;
  } catch {
    return null;
  }
}

/** True when any of the task's open fds is the session's terminal. */
function hasTerminalOpen(pid: number, tid: number, ttyNr: number): boolean {
  return someFd(pid, tid, (fd) => isTerminalFd(pid, tid, fd, ttyNr));
}

/** True when any of the process's open fds is the session's terminal or the master of a terminal (its own programs'). */
function hasTerminalOrMasterOpen(pid: number, ttyNr: number): boolean {
  return someFd(pid, pid, (fd) => {
    const rdev = deviceOf(pid, pid, fd);
    return rdev === ttyNr || rdev === DEV_TTY_RDEV || rdev === DEV_PTMX_RDEV;
  });
}

/** True when `test` holds for one of the task's open fds. */
function someFd(pid: number, tid: number, test: (fd: number) => boolean): boolean {
  let names: string[];
  try {
    names = fs.readdirSync(`/proc/${pid}/task/${tid}/fd`);
  } catch {
    return false;
  }
  return names.some((name) => test(Number(name)));
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
 * The fds a select/pselect6 wait waits on for input. The kernel copies the fd_sets in at entry and
 * writes results back only on return, so while the task sleeps its memory still holds the set it
 * waits on. A null read set means it waits for no input at all (e.g. python's old select()-based
 * sleep). Null when the memory cannot be read.
 */
function selectInputFds(pid: number, args: readonly bigint[]): number[] | null {
  const nfds = Number(args[0] ?? 0n);
  const readfds = args[1] ?? 0n;
  if (readfds === 0n || nfds <= 0) return [];
  if (nfds > MAX_SELECT_NFDS) return null;
  // fd_set is an array of longs, bit (fd % 64) of long (fd / 64); on little-endian that is simply bit
  // (fd % 8) of byte (fd / 8).
  const bits = readMemory(pid, readfds, Math.ceil(nfds / 8));
  if (bits === null) return null;
  const fds: number[] = [];
  for (let fd = 0; fd < nfds; fd++) if (((bits[fd >> 3] ?? 0) & (1 << (fd & 7))) !== 0) fds.push(fd);
  return fds;
}

/** The fds a poll/ppoll wait waits on with a "readable" event (same memory argument as select); null when unreadable. */
function pollInputFds(pid: number, args: readonly bigint[]): number[] | null {
  const fdsAddress = args[0] ?? 0n;
  const nfds = Number(args[1] ?? 0n);
  if (fdsAddress === 0n || nfds <= 0) return [];
  if (nfds > MAX_POLL_FDS) return null;
  const entries = readMemory(pid, fdsAddress, nfds * POLLFD_SIZE);
  if (entries === null) return null;
  const fds: number[] = [];
  for (let i = 0; i < nfds; i++) {
    const fd = entries.readInt32LE(i * POLLFD_SIZE);
    const events = entries.readInt16LE(i * POLLFD_SIZE + POLLFD_EVENTS_OFFSET);
    if (fd >= 0 && (events & POLL_INPUT_EVENTS) !== 0) fds.push(fd);
  }
  return fds;
}

/**
 * The fds an epoll wait's interest list watches for input: /proc/<pid>/fdinfo/<epfd> lists it, one
 * "tfd: <fd> events: <hex mask> …" line per watched fd (tfd is the fd number at registration time).
 * Null when fdinfo is unreadable.
 */
function epollInputFds(pid: number, tid: number, args: readonly bigint[]): number[] | null {
  const epfd = Number(args[0] ?? -1n);
  let info: string;
  try {
    info = fs.readFileSync(`/proc/${pid}/task/${tid}/fdinfo/${epfd}`, 'latin1');
  } catch {
    return null;
  }
  const fds: number[] = [];
  for (const match of info.matchAll(/^tfd:\s*(\d+)\s+events:\s*([0-9a-fA-F]+)/gm)) {
    const events = Number.parseInt(match[2] ?? '0', 16);
    if ((events & EPOLL_INPUT_EVENTS) !== 0) fds.push(Number(match[1]));
  }
  return fds;
}

/** The fds a blocked read, select, poll or epoll wait waits on for input; null when its set cannot be read. */
function inputFdsOf(kind: WaitKind, pid: number, tid: number, args: readonly bigint[]): number[] | null {
  switch (kind) {
    case 'read':
      return [Number(args[0] ?? -1n)];
    case 'select':
      return selectInputFds(pid, args);
    case 'poll':
      return pollInputFds(pid, args);
    case 'epoll':
      return epollInputFds(pid, tid, args);
  }
}

/**
 * Where the relay's wait on a Unix socket is: `sameWait`, in the very wait that reads the terminal
 * (a program that selects on both, as vim with its X connection or emacs with D-Bus); else in a
 * thread of its own beside a read of the terminal (Go's docker CLI).
 */
type UnixRelayCheck = { ttyNr: number; sameWait: boolean };

/**
 * True when `fd` of the task brings input from a program this terminal's /proc cannot show: the
 * master side of another terminal (sudo with use_pty, `script`: the program runs there), an
 * internet socket (ssh, mosh, telnet: the program runs on another machine), or a Unix socket whose
 * other end no process of the job holds: beside the terminal in another thread (`docker exec`'s
 * daemon: the program runs under it), or in the same wait when the process at the other end has
 * this terminal open too, or runs programs in terminals of its own (holds a terminal's master:
 * dtach's server, to which its client passes what is typed). A pipe is not
 * counted, nor a Unix socket whose other end is the job's own (an event loop's socket pair for
 * waking itself), nor, in the same wait, one to a server that has neither: vim's X connection,
 * emacs's D-Bus, where the program itself is what waits for input.
 */
function isRelaySource(pid: number, tid: number, fd: number, job: JobSockets, unix: UnixRelayCheck): boolean {
  let st: fs.Stats;
  try {
    st = fs.statSync(`/proc/${pid}/task/${tid}/fd/${fd}`);
  } catch {
    return false;
  }
  if (st.isCharacterDevice()) return st.rdev === DEV_PTMX_RDEV;
  if (!st.isSocket()) return false;
  if (isInternetSocket(pid, st.ino)) return true;
  const peer = peerOutOfJob(st.ino, job);
  return peer !== null && (!unix.sameWait || serverRunsTerminals(peer, unix.ttyNr));
}

/** The other end of Unix socket `ino` when no process of the job holds it, else null. */
function peerOutOfJob(ino: number, job: JobSockets): number | null {
  const peer = unixPeerOf(ino);
  return peer !== null && !job.holds(peer) ? peer : null;
}

/** Whether the process at the other end `peer` has the terminal open (remembered per connection: socket-ends.ts). */
function serverHasTerminal(peer: number, ttyNr: number): boolean {
  return processAtOtherEnd(peer, `terminal ${ttyNr}`, (holder) => hasTerminalOpen(holder, holder, ttyNr));
}

/** Whether the process at the other end `peer` has the terminal or a terminal's master open (remembered likewise). */
function serverRunsTerminals(peer: number, ttyNr: number): boolean {
  return processAtOtherEnd(peer, `terminals ${ttyNr}`, (holder) => hasTerminalOrMasterOpen(holder, ttyNr));
}

/** Whether the socket with inode `ino` is one of the process's TCP or UDP sockets (IPv4 or IPv6). */
function isInternetSocket(pid: number, ino: number): boolean {
  const inode = String(ino);
  for (const table of INTERNET_SOCKET_TABLES) {
    let text: string;
    try {
      text = fs.readFileSync(`/proc/${pid}/net/${table}`, 'latin1');
    } catch {
      continue; // no IPv6, or the process is gone
    }
    for (const line of text.split('\n')) if (line.trim().split(/\s+/)[SOCKET_TABLE_INODE_COLUMN] === inode) return true;
  }
  return false;
}

/** Most fds of one wait looked at for a connection out of sight (`waitsOnRemote`): a server's set can hold thousands. */
const MAX_REMOTE_FDS = 16;

/**
 * Whether the wait of task `tid` (its system call `kind` with `args`), which is not for the
 * terminal, is for input from a program out of sight (isRelaySource) among its first fds: a
 * thread of a relay that waits for its connection while another thread reads the terminal.
 */
export function waitsOnRemote(kind: WaitKind, pid: number, tid: number, args: readonly bigint[], ttyNr: number, job: JobSockets): boolean {
  const fds = inputFdsOf(kind, pid, tid, args);
  const unix = { ttyNr, sameWait: false };
  return fds !== null && fds.slice(0, MAX_REMOTE_FDS).some((fd) => isRelaySource(pid, tid, fd, job, unix));
}

/**
 * Whether the wait of task `tid`, which is not for the terminal, is on a Unix socket whose other
 * end, out of the job, is held by a process that has the terminal open: the job handed the
 * terminal to a server that reads and writes it (a tmux client's: its server has the terminal's
 * fd, and the client waits on the server alone).
 */
export function waitsOnTerminalServer(kind: WaitKind, pid: number, tid: number, args: readonly bigint[], ttyNr: number, job: JobSockets): boolean {
  const fds = inputFdsOf(kind, pid, tid, args);
  if (fds === null) return false;
  return fds.slice(0, MAX_REMOTE_FDS).some((fd) => {
    const ino = socketInode(pid, tid, fd);
    const peer = ino === null ? null : peerOutOfJob(ino, job);
    return peer !== null && serverHasTerminal(peer, ttyNr);
  });
}

/**
 * How a task's wait concerns the session's terminal: `other`, it does not wait for the terminal's
 * input; `terminal`, it does; `relay`, it does and also for input from a program out of this
 * terminal's sight (isRelaySource): then it waiting says nothing about that program being ready.
 * A set that cannot be read is approximated by "has the terminal open on some fd".
 */
export type TerminalWait = 'other' | 'terminal' | 'relay';

/** How the wait of task `tid` (its system call `kind` with `args`) concerns the terminal `ttyNr` (see TerminalWait). */
export function terminalWaitOf(kind: WaitKind, pid: number, tid: number, args: readonly bigint[], ttyNr: number, job: JobSockets): TerminalWait {
  const fds = inputFdsOf(kind, pid, tid, args);
  if (fds === null) return hasTerminalOpen(pid, tid, ttyNr) ? 'terminal' : 'other';
  if (!fds.some((fd) => isTerminalFd(pid, tid, fd, ttyNr))) return 'other';
  const unix = { ttyNr, sameWait: true };
  return kind !== 'read' && fds.some((fd) => isRelaySource(pid, tid, fd, job, unix)) ? 'relay' : 'terminal';
}
