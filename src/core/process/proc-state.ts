/**
 * Linux /proc inspection of a PTY session's foreground job.
 *
 * `pty/send` must return when the program is ready for input again
 * (docs/guarantees.md#send-readiness): every process of the terminal's foreground process group
 * is asleep and one of them waits for terminal input — a `read` of the tty, or a `select`/`poll`/`epoll`
 * family wait that includes it.
 * This module answers that question from /proc/<pid>/stat, /proc/<pid>/task/<tid>/syscall,
 * /proc/<pid>/task/<tid>/fd and (to see which fds a select/poll waits on) /proc/<pid>/mem and
 * /proc/<pid>/task/<tid>/fdinfo.
 *
 * Everything is synchronous and one-shot: there are no polling loops here — the caller polls only while a
 * send or wait is active. Processes exit while we scan, so every read tolerates a vanished process and
 * nothing throws for one; a state that cannot be determined is reported as 'unknown' / null.
 */
import * as fs from 'node:fs';

/** The readiness of a session's foreground job, as seen from /proc. */
export type Readiness = 'waiting_for_input' | 'busy' | 'unknown';

// ---------------------------------------------------------------------------------------------------------
// /proc/<pid>/stat

/** The /proc/<pid>/stat fields we use (see proc(5)). */
interface StatFields {
  /** One-letter state: R running, S sleeping, D disk sleep, T stopped, t tracing stop, Z zombie, X dead… */
  readonly state: string;
  readonly pgrp: number;
  /** Controlling terminal's device number, kernel `new_encode_dev` encoding; 0 when there is none. */
  readonly ttyNr: number;
  /** Foreground process group of the controlling terminal; -1 when there is none. */
  readonly tpgid: number;
}

// Field positions counted in the part *after* "(comm) " (field 3 of proc(5), `state`, is index 0 here).
// comm is cut out by the last ')' because it may itself contain spaces and parentheses.
const STAT_STATE = 0;
const STAT_PGRP = 2;
const STAT_TTY_NR = 4;
const STAT_TPGID = 5;

/** Parses the content of a stat file; null when it is malformed. */
function parseStat(text: string): StatFields | null {
  const close = text.lastIndexOf(')');
  if (close < 0) return null;
  const fields = text.slice(close + 2).split(' ');
  if (fields.length <= STAT_TPGID) return null;
  const state = fields[STAT_STATE] ?? '';
  const pgrp = Number(fields[STAT_PGRP]);
  const ttyNr = Number(fields[STAT_TTY_NR]);
  const tpgid = Number(fields[STAT_TPGID]);
  if (state.length === 0 || !Number.isInteger(pgrp) || !Number.isInteger(ttyNr) || !Number.isInteger(tpgid)) {
    return null;
  }
  return { state, pgrp, ttyNr, tpgid };
}

/**
 * Scratch buffer for the small /proc files we read on every poll (stat lines are ~300 bytes, syscall
 * lines ~150). open+read+close into one reused buffer costs half of `readFileSync`, which also fstat()s
 * and allocates — it matters because the foreground-group scan reads every process's stat.
 */
const SMALL_FILE_BUFFER = Buffer.alloc(4096);

/** Reads a small /proc file as latin1 text; throws like fs does (ENOENT, ESRCH, EACCES…). */
function readSmallFile(path: string): string {
  const fd = fs.openSync(path, 'r');
  try {
    const length = fs.readSync(fd, SMALL_FILE_BUFFER, 0, SMALL_FILE_BUFFER.length, 0);
    // A full buffer might mean a truncated file: read it whole instead (never expected for stat/syscall).
    if (length === SMALL_FILE_BUFFER.length) return fs.readFileSync(path, 'latin1');
    return SMALL_FILE_BUFFER.toString('latin1', 0, length);
  } finally {
    fs.closeSync(fd);
  }
}

/** Reads and parses a stat file; null when the process is gone or the file unreadable. */
function readStat(path: string): StatFields | null {
  try {
    return parseStat(readSmallFile(path));
  } catch {
    return null;
  }
}

function isValidPid(pid: number): boolean {
  return Number.isInteger(pid) && pid > 0;
}

/**
 * The foreground process group of the terminal controlled by the session whose leader is `shellPid`
 * (node-pty makes the spawned program a session leader with the pty as its controlling terminal): the
 * `tpgid` field of /proc/<shellPid>/stat. Null when unreadable (not Linux, process gone) or not positive.
 */
export function foregroundProcessGroup(shellPid: number): number | null {
  if (!isValidPid(shellPid)) return null;
  const stat = readStat(`/proc/${shellPid}/stat`);
  if (stat === null || stat.tpgid <= 0) return null;
  return stat.tpgid;
}

/**
 * The device number of `shellPid`'s controlling terminal (`tty_nr` of /proc/<pid>/stat), or null when it
 * has none or cannot be read. The kernel's encoding (`new_encode_dev`) equals glibc's `makedev` — hence
 * Node's `fs.Stats.rdev` — for every device the kernel can name (major < 2^12, minor < 2^20), so the value
 * compares directly with `fs.statSync(...).rdev`.
 */
export function terminalOf(shellPid: number): number | null {
  if (!isValidPid(shellPid)) return null;
  const stat = readStat(`/proc/${shellPid}/stat`);
  if (stat === null || stat.ttyNr <= 0) return null;
  return stat.ttyNr;
}

// ---------------------------------------------------------------------------------------------------------
// Blocking syscalls that mean "waiting for input"

/** How a blocking syscall names the fds it waits on. */
type WaitKind = 'read' | 'select' | 'poll' | 'epoll';

/**
 * x86_64 syscall numbers (arch/x86/entry/syscalls/syscall_64.tbl) of the calls a program waits for
 * terminal input in. bash's readline and python's REPL wait in pselect6, cat and less in read, libuv
 * (Node) in epoll_wait/epoll_pwait.
 */
const X86_64_INPUT_WAIT_SYSCALLS: ReadonlyMap<number, WaitKind> = new Map<number, WaitKind>([
  [0, 'read'], // read(fd, buf, count)
  [7, 'poll'], // poll(fds, nfds, timeout)
  [23, 'select'], // select(nfds, readfds, writefds, exceptfds, timeout)
  [232, 'epoll'], // epoll_wait(epfd, events, maxevents, timeout)
  [270, 'select'], // pselect6(nfds, readfds, writefds, exceptfds, timeout, sigmask)
  [271, 'poll'], // ppoll(fds, nfds, timeout, sigmask, sigsetsize)
  [281, 'epoll'], // epoll_pwait(epfd, events, maxevents, timeout, sigmask, sigsetsize)
  [441, 'epoll'], // epoll_pwait2(epfd, events, maxevents, timeout, sigmask, sigsetsize)
]);

/**
 * arm64 (asm-generic/unistd.h) numbers for the same calls; arm64 has no plain select/poll/epoll_wait,
 * glibc maps those onto pselect6/ppoll/epoll_pwait. Argument layouts are the same as on x86_64.
 */
const ARM64_INPUT_WAIT_SYSCALLS: ReadonlyMap<number, WaitKind> = new Map<number, WaitKind>([
  [22, 'epoll'], // epoll_pwait
  [63, 'read'], // read
  [72, 'select'], // pselect6
  [73, 'poll'], // ppoll
  [441, 'epoll'], // epoll_pwait2
]);

/**
 * The table for the architecture we run on; null where we have none (readiness is then 'unknown').
 * Node runs natively, so its arch is the kernel's. (A 32-bit compat task on a 64-bit kernel shows its
 * compat numbers in /proc/<pid>/syscall; that rare case is not decoded and may read as 'busy'.)
 */
function inputWaitSyscalls(): ReadonlyMap<number, WaitKind> | null {
  if (process.arch === 'x64') return X86_64_INPUT_WAIT_SYSCALLS;
  if (process.arch === 'arm64') return ARM64_INPUT_WAIT_SYSCALLS;
  return null;
}

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

// ---------------------------------------------------------------------------------------------------------
// /proc/<pid>/task/<tid>/syscall

/** What /proc/<pid>/task/<tid>/syscall says about a task. */
type SyscallState =
  | { readonly kind: 'running' } // the file says "running": the task is on a CPU or runnable
  | { readonly kind: 'no_syscall' } // "-1 sp pc": blocked, but not inside a system call (e.g. a page fault)
  | { readonly kind: 'syscall'; readonly nr: number; readonly args: readonly bigint[] }
  | { readonly kind: 'gone' } // the task exited while we looked
  | { readonly kind: 'denied' }; // not readable (ptrace access mode check, e.g. Yama), or not decodable

function errorCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string'
    ? error.code
    : undefined;
}

/** ENOENT/ESRCH mean the process or task exited between listing and reading. */
function isVanished(error: unknown): boolean {
  const code = errorCode(error);
  return code === 'ENOENT' || code === 'ESRCH';
}

function readSyscall(pid: number, tid: number): SyscallState {
  let text: string;
  try {
    text = readSmallFile(`/proc/${pid}/task/${tid}/syscall`).trim();
  } catch (error) {
    return isVanished(error) ? { kind: 'gone' } : { kind: 'denied' };
  }
  if (text === 'running') return { kind: 'running' };
  const words = text.split(' ');
  const nr = Number(words[0]);
  if (!Number.isInteger(nr)) return { kind: 'denied' };
  if (nr < 0) return { kind: 'no_syscall' };
  // "nr arg1 … arg6 sp pc", arguments in hex ("0x…"); BigInt because addresses may exceed 2^53.
  try {
    return { kind: 'syscall', nr, args: words.slice(1, 7).map((word) => BigInt(word)) };
  } catch {
    return { kind: 'denied' };
  }
}

// ---------------------------------------------------------------------------------------------------------
// Is a given fd the session's terminal?

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

function waitIncludesTerminal(kind: WaitKind, pid: number, tid: number, args: readonly bigint[], ttyNr: number): boolean {
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

// ---------------------------------------------------------------------------------------------------------
// Foreground group scan

/** States of a task that is dead or dying: it neither runs nor waits, so it does not count either way. */
function isDead(state: string): boolean {
  return state === 'Z' || state === 'X' || state === 'x';
}

/**
 * True when the session's shell has ended (gone from /proc, or a zombie not yet reaped): it reports
 * nothing more. False where /proc cannot tell (not Linux).
 */
export function shellHasEnded(shellPid: number): boolean {
  if (process.platform !== 'linux' || !isValidPid(shellPid)) return false;
  const stat = readStat(`/proc/${shellPid}/stat`);
  return stat === null || isDead(stat.state);
}

/**
 * Pids of the processes whose process group is `pgid`, by one pass over /proc/<n>/stat (numeric entries
 * only — /proc lists thread-group leaders, i.e. processes). Null when /proc cannot be listed.
 */
function processesInGroup(pgid: number): number[] | null {
  let names: string[];
  try {
    names = fs.readdirSync('/proc');
  } catch {
    return null;
  }
  const members: number[] = [];
  for (const name of names) {
    const first = name.charCodeAt(0);
    if (first < 0x30 || first > 0x39) continue; // not a pid: "self", "sys", "meminfo", …
    const stat = readStat(`/proc/${name}/stat`);
    if (stat !== null && stat.pgrp === pgid) members.push(Number(name));
  }
  return members;
}

/** Verdict for one task (thread) of a foreground process. */
type TaskVerdict = 'waiting' | 'asleep' | 'busy' | 'dead' | 'denied';

function taskVerdict(
  pid: number,
  tid: number,
  ttyNr: number,
  table: ReadonlyMap<number, WaitKind>,
): TaskVerdict {
  const stat = readStat(`/proc/${pid}/task/${tid}/stat`);
  // A task that vanished mid-scan means the job is changing state: report busy so the caller looks again.
  if (stat === null) return 'busy';
  if (isDead(stat.state)) return 'dead';
  // R/D are doing work; T/t are stopped (job control will hand the terminal back to the shell shortly).
  if (stat.state !== 'S') return 'busy';
  const sys = readSyscall(pid, tid);
  switch (sys.kind) {
    case 'running':
    case 'gone':
      return 'busy';
    case 'denied':
      return 'denied';
    case 'no_syscall':
      return 'asleep';
    case 'syscall': {
      const kind = table.get(sys.nr);
      return kind !== undefined && waitIncludesTerminal(kind, pid, tid, sys.args, ttyNr) ? 'waiting' : 'asleep';
    }
  }
}

/**
 * What /proc says about the session's foreground job: `readinessOf`'s three answers, plus
 * 'asleep_hidden' — no task is busy and none seen waits for the terminal, but some sleeping task hides
 * its system call (a setuid program such as sudo or passwd: its /proc/<pid>/syscall is root's). Such a
 * job may be reading the terminal; only the terminal's mode can tell more (see input-wait.ts).
 */
export type ForegroundState = Readiness | 'asleep_hidden';

/**
 * Is the session's foreground job ready for input?
 *
 * 'waiting_for_input' — every live task (thread) of every process in the terminal's foreground process
 * group is asleep (state S) and at least one task is blocked in a read of the terminal, or in a
 * select/pselect6/poll/ppoll/epoll wait whose set includes the terminal for input. Threads are checked,
 * not just the main one, because e.g. Go reads stdin on a worker thread.
 * 'busy' — some task runs (R), is in uninterruptible sleep (D), is stopped (T/t), vanished during the
 * scan, or all sleep but none waits for the terminal (e.g. `sleep 3` in nanosleep, `cat` on a pipe).
 * 'unknown' — not Linux or an architecture without a syscall table, the shell is gone, or a sleeping
 * task's /proc/<pid>/syscall is unreadable (ptrace access checks: Yama, other users, hidepid).
 *
 * Cost: one pass over /proc/<n>/stat, then a few small /proc reads per foreground task. Never throws.
 */
export function readinessOf(shellPid: number): Readiness {
  const state = foregroundStateOf(shellPid);
  return state === 'asleep_hidden' ? 'unknown' : state;
}

/** `readinessOf`, telling apart a job that sleeps behind an unreadable syscall file ('asleep_hidden'). */
export function foregroundStateOf(shellPid: number): ForegroundState {
  if (process.platform !== 'linux') return 'unknown';
  const table = inputWaitSyscalls();
  if (table === null) return 'unknown';
  try {
    const ttyNr = terminalOf(shellPid);
    const pgid = foregroundProcessGroup(shellPid);
    if (ttyNr === null || pgid === null) return 'unknown';
    const members = processesInGroup(pgid);
    if (members === null) return 'unknown';
    let waiting = false;
    let denied = false;
    for (const pid of members) {
      let tids: string[];
      try {
        tids = fs.readdirSync(`/proc/${pid}/task`);
      } catch {
        return 'busy'; // exited since the scan: the job is changing state
      }
      for (const tid of tids) {
        const verdict = taskVerdict(pid, Number(tid), ttyNr, table);
        if (verdict === 'busy') return 'busy'; // a busy task decides regardless of unreadable ones
        if (verdict === 'waiting') waiting = true;
        if (verdict === 'denied') denied = true;
      }
    }
    // A hidden task may be the one that reads (sudo): what the others do cannot decide it.
    if (denied) return 'asleep_hidden';
    // No live member (the job just ended, the shell has not taken the terminal back yet) or nobody waits
    // on the terminal: not ready.
    return waiting ? 'waiting_for_input' : 'busy';
  } catch {
    return 'unknown';
  }
}

// ---------------------------------------------------------------------------------------------------------
// Signals

/**
 * Sends `signal` to the terminal's foreground process group with a real kill(-pgid, signal), so it works
 * even when the terminal would not turn the intr character into SIGINT (`stty -isig`, raw-mode programs).
 * When the foreground group is unknown (not Linux, stat unreadable) it falls back to the shell's own
 * group — node-pty makes the shell a session and group leader, so that group is `shellPid`.
 * A group that vanished before the kill (ESRCH) is not an error; other kill errors (EPERM) are thrown, as
 * is an invalid `shellPid` (never signal group 1 or use -1, which would mean "every process").
 * Returns the group that was signalled.
 */
export function signalForegroundGroup(shellPid: number, signal: NodeJS.Signals): { pgid: number } {
  if (!isValidPid(shellPid) || shellPid <= 1) throw new RangeError(`invalid shell pid ${shellPid}`);
  const foreground = foregroundProcessGroup(shellPid);
  const pgid = foreground !== null && foreground > 1 ? foreground : shellPid;
  try {
    process.kill(-pgid, signal);
  } catch (error) {
    if (errorCode(error) !== 'ESRCH') throw error;
  }
  return { pgid };
}
