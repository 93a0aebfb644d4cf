import { isValidPid, readSmallFile } from './proc-files';

/* /proc/<pid>/stat: a process's state, group and terminal. */

/** The /proc/<pid>/stat fields we use (see proc(5)). */
export interface StatFields {
  /** One-letter state: R running, S sleeping, D disk sleep, T stopped, t tracing stop, Z zombie, X dead… */
  readonly state: string;
  readonly pgrp: number;
  /** Session id: the pid of the session's leader (a shell node-pty started leads its own). */
  readonly session: number;
  /** Controlling terminal's device number, kernel `new_encode_dev` encoding; 0 when there is none. */
  readonly ttyNr: number;
  /** Foreground process group of the controlling terminal; -1 when there is none. */
  readonly tpgid: number;
}

// Field positions counted in the part *after* "(comm) " (field 3 of proc(5), `state`, is index 0 here).
// comm is cut out by the last ')' because it may itself contain spaces and parentheses.
const STAT_STATE = 0;
const STAT_PGRP = 2;
const STAT_SESSION = 3;
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
  const session = Number(fields[STAT_SESSION]);
  const ttyNr = Number(fields[STAT_TTY_NR]);
  const tpgid = Number(fields[STAT_TPGID]);
  if (state.length === 0 || !Number.isInteger(pgrp) || !Number.isInteger(session) || !Number.isInteger(ttyNr) || !Number.isInteger(tpgid)) {
    return null;
  }
  return { state, pgrp, session, ttyNr, tpgid };
}

/** Reads and parses a stat file; null when the process is gone or the file unreadable. */
export function readStat(path: string): StatFields | null {
  try {
    return parseStat(readSmallFile(path));
  } catch {
    return null;
  }
}

/**
 * The foreground process group of the terminal controlled by the session whose leader is `shellPid`
 * (node-pty makes the spawned program a session leader with the pty as its controlling terminal): the
 * `tpgid` field of /proc/<shellPid>/stat. Null when unreadable (not Linux, process gone) or not positive.
 */
export function foregroundProcessGroup(shellPid: number): number | null {
  if (!isValidPid(shellPid)) return null;
  const stat = readStat(`/proc/${shellPid}/stat`);
  // Until the program has made its own session (node-pty's child between fork and setsid), the
  // terminal it names is the host's: its foreground group is not the session's to signal.
  if (stat === null || stat.tpgid <= 0 || stat.session !== shellPid) return null;
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

/** States of a task that is dead or dying: it neither runs nor waits, so it does not count either way. */
export function isDead(state: string): boolean {
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
