import * as os from 'node:os';
import { errorCode, isValidPid, readSmallFile } from './proc-files';
import { foregroundProcessGroup } from './stat';

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
    // No such group yet: a program just started has not made its session yet (node-pty's child
    // between fork and setsid). The program itself is there: it gets the signal.
    try {
      process.kill(shellPid, signal);
    } catch (again) {
      if (errorCode(again) !== 'ESRCH') throw again;
    }
  }
  return { pgid };
}

/**
 * Whether the process ignores `signal` (set to SIG_IGN: the `SigIgn` mask of /proc/<pid>/status),
 * so sending it changes nothing: an interactive bash ignores SIGTERM. False when unknown.
 */
export function ignoresSignal(pid: number, signal: NodeJS.Signals): boolean {
  const n = os.constants.signals[signal];
  if (!isValidPid(pid) || !n) return false;
  try {
    const mask = /^SigIgn:\s*([0-9a-f]+)$/m.exec(readSmallFile(`/proc/${pid}/status`))?.[1];
    return mask !== undefined && ((BigInt(`0x${mask}`) >> BigInt(n - 1)) & 1n) === 1n;
  } catch {
    return false; // gone, or not Linux: the caller waits as for any program
  }
}
