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
 * The parts live in `proc/`: reading its files (`proc-files.ts`), `stat` (`stat.ts`), the system calls
 * that wait for input on each architecture (`wait-syscalls.ts`), what a select/poll/epoll wait includes
 * (`wait-sets.ts`), and signalling the foreground group (`signal.ts`); this file scans the group.
 *
 * Everything is synchronous and one-shot: there are no polling loops here — the caller polls only while a
 * send or wait is active. Processes exit while we scan, so every read tolerates a vanished process and
 * nothing throws for one; a state that cannot be determined is reported as 'unknown' / null.
 */
import * as fs from 'node:fs';
import { readStat, isDead } from './proc/stat';
import { isValidPid } from './proc/proc-files';
import { inputWaitSyscalls, readSyscall, signalWaitSyscalls, type WaitKind } from './proc/wait-syscalls';
import { JobSockets } from './proc/socket-ends';
import { terminalHeldOutsideSession } from './proc/terminal-holders';
import { terminalWaitOf, waitsOnRemote, waitsOnTerminalServer } from './proc/wait-sets';

export { foregroundProcessGroup, shellHasEnded, terminalOf } from './proc/stat';
export { ignoresSignal, signalForegroundGroup } from './proc/signal';

/** The readiness of a session's foreground job, as seen from /proc. */
export type Readiness = 'waiting_for_input' | 'busy' | 'unknown';

// ---------------------------------------------------------------------------------------------------------
// Foreground group scan

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

/**
 * For a task asleep in a wait for input that is not the terminal's, or for a signal alone, made
 * only when needed: `connection`, whether it waits on a connection out of sight (asked when
 * another task reads the terminal); `server`, whether it waits on a server that has the terminal
 * (asked when none does): for a wait on signals, whether a process of another session has it.
 */
interface RemoteChecks {
  connection(): boolean;
  server(): boolean;
}

/** Verdict for one task (thread) of a foreground process. */
type TaskVerdict = 'waiting' | 'relaying' | 'asleep' | 'busy' | 'dead' | 'denied';

/** What a scan knows of the terminal: its device number, and whether another session's process has it open (asked lazily). */
interface TerminalFacts {
  readonly ttyNr: number;
  heldElsewhere(): boolean;
}

/** `remote`: gets, for a task asleep in a wait for input that is not the terminal's, its checks (RemoteChecks). */
function taskVerdict(
  pid: number,
  tid: number,
  terminal: TerminalFacts,
  table: ReadonlyMap<number, WaitKind>,
  job: JobSockets,
  remote: RemoteChecks[],
): TaskVerdict {
  const { ttyNr } = terminal;
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
      if (kind === undefined) {
        // A client that waits for signals while a server elsewhere has the terminal (screen's).
        if (signalWaitSyscalls().has(sys.nr)) remote.push({ connection: () => false, server: terminal.heldElsewhere });
        return 'asleep';
      }
      const wait = terminalWaitOf(kind, pid, tid, sys.args, ttyNr, job);
      if (wait === 'other')
        remote.push({
          connection: () => waitsOnRemote(kind, pid, tid, sys.args, ttyNr, job),
          server: () => waitsOnTerminalServer(kind, pid, tid, sys.args, ttyNr, job),
        });
      return wait === 'terminal' ? 'waiting' : wait === 'relay' ? 'relaying' : 'asleep';
    }
  }
}

/**
 * What /proc says about the session's foreground job: `readinessOf`'s three answers, plus
 * 'asleep_hidden' — no task is busy and none seen waits for the terminal, but some sleeping task hides
 * its system call (a setuid program such as sudo or passwd: its /proc/<pid>/syscall is root's). Such a
 * job may be reading the terminal; only the terminal's mode can tell more (see input-wait.ts).
 * 'relaying' — no task is busy, and one waits for the terminal and, in the same wait or in another
 * task of the job, for input from a program out of sight (ssh's connection, the other terminal of
 * sudo or `script`, the connection a thread of `kubectl exec` waits on, a Unix socket to a daemon
 * as `docker exec`'s); or none waits for the terminal but one waits on a server that has it (tmux's
 * client) or for signals while another session's process has it (screen's): it passes on what is typed,
 * and whether the program behind it is ready cannot be seen (docs/guarantees.md#send-readiness).
 */
export type ForegroundState = Readiness | 'asleep_hidden' | 'relaying';

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
 * task's /proc/<pid>/syscall is unreadable (ptrace access checks: Yama, other users, hidepid), or the job
 * relays the terminal to a program out of sight (ssh, sudo's own terminal: see ForegroundState).
 *
 * Cost: one pass over /proc/<n>/stat, then a few small /proc reads per foreground task. Never throws.
 */
export function readinessOf(shellPid: number): Readiness {
  const state = foregroundStateOf(shellPid);
  return state === 'asleep_hidden' || state === 'relaying' ? 'unknown' : state;
}

/**
 * The members of a foreground group as scanned last, for a caller that asks a key at a time (the
 * scan of every process's stat is most of a look's 1–3 ms). A member gone since makes the look
 * `busy`; a member added since is not looked at, so a look through it is for a caller to whom a
 * wait of any one member's is enough (docs/protocol.md#agent-guards: a key the program reads).
 */
export class GroupMembers {
  private _pgid = -1;
  private _at = Number.NEGATIVE_INFINITY;
  private _members: number[] | null = null;

  constructor(private readonly _reuseMs: number) {}

  readonly of = (pgid: number): number[] | null => {
    const now = performance.now();
    if (pgid !== this._pgid || now - this._at > this._reuseMs) {
      this._members = processesInGroup(pgid);
      this._pgid = pgid;
      this._at = now;
    }
    return this._members;
  };
}

/** `readinessOf`, telling apart a job that sleeps behind an unreadable syscall file ('asleep_hidden') and one that relays ('relaying'). */
export function foregroundStateOf(shellPid: number, membersOf: (pgid: number) => number[] | null = processesInGroup): ForegroundState {
  if (process.platform !== 'linux') return 'unknown';
  const table = inputWaitSyscalls();
  if (table === null) return 'unknown';
  try {
    // The shell's stat, read once: its terminal, the terminal's foreground group and its session
    // (as terminalOf and foregroundProcessGroup read them).
    const shell = isValidPid(shellPid) ? readStat(`/proc/${shellPid}/stat`) : null;
    if (shell === null || shell.ttyNr <= 0 || shell.tpgid <= 0) return 'unknown';
    const { ttyNr, tpgid: pgid, session } = shell;
    const members = membersOf(pgid);
    if (members === null) return 'unknown';
    const terminal: TerminalFacts = { ttyNr, heldElsewhere: () => terminalHeldOutsideSession(ttyNr, session) };
    let waiting = false;
    let relaying = false;
    let denied = false;
    const remote: RemoteChecks[] = [];
    const job = new JobSockets(members);
    for (const pid of members) {
      let tids: string[];
      try {
        tids = fs.readdirSync(`/proc/${pid}/task`);
      } catch {
        return 'busy'; // exited since the scan: the job is changing state
      }
      for (const tid of tids) {
        const verdict = taskVerdict(pid, Number(tid), terminal, table, job, remote);
        if (verdict === 'busy') return 'busy'; // a busy task decides regardless of unreadable ones
        if (verdict === 'waiting') waiting = true;
        if (verdict === 'relaying') relaying = true;
        if (verdict === 'denied') denied = true;
      }
    }
    // A hidden task may be the one that reads (sudo): what the others do cannot decide it.
    if (denied) return 'asleep_hidden';
    // Waiting to pass on what is typed: whether the program behind it is ready is out of sight.
    if (relaying) return 'relaying';
    // The same when one task reads the terminal and another waits for the connection (a Go
    // program's reads of the terminal and its network poller are threads of their own).
    if (waiting && remote.some((check) => check.connection())) return 'relaying';
    // No task reads the terminal, but one waits on a server that has it (a tmux client), or for
    // signals while a process of another session has it (a screen client): that server reads what
    // is typed for programs this terminal cannot see.
    if (!waiting && remote.some((check) => check.server())) return 'relaying';
    // No live member (the job just ended, the shell has not taken the terminal back yet) or nobody waits
    // on the terminal: not ready.
    return waiting ? 'waiting_for_input' : 'busy';
  } catch {
    return 'unknown';
  }
}
