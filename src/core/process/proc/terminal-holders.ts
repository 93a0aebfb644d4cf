import * as fs from 'node:fs';
import { RememberedAnswers } from './remembered';
import { isDead, readStat } from './stat';

/*
 * Processes of another session that have the session's terminal open: the server of a detachable
 * program (GNU screen's) opens its client's terminal by name and reads and writes it there, while
 * the client, the terminal's foreground job, waits for signals alone.
 */

/** Most fds of one process looked at (a server can hold thousands; a terminal is among the first). */
const MAX_FDS = 256;
/** Terminals whose holder is remembered at most (one per session at a time, in practice). */
const MAX_HOLDERS = 256;

/** Finding such a process walks every process's fds, so the answer is kept (remembered.ts)… */
const holdersOutside = new RememberedAnswers();
/** …with the process found, looked at again on each ask: a "yes" must end with it (screen quits). */
const lastHolder = new Map<string, string>();

/** Whether a live process outside session `session` has terminal `ttyNr` open, among every process this user may look into. */
export function terminalHeldOutsideSession(ttyNr: number, session: number): boolean {
  const key = `${ttyNr}:${session}`;
  const holder = lastHolder.get(key);
  if (holder !== undefined) {
    if (holdsFromOutside(holder, ttyNr, session)) return true;
    lastHolder.delete(key);
    holdersOutside.forget(key);
  }
  return holdersOutside.answer(key, () => {
    let names: string[];
    try {
      names = fs.readdirSync('/proc');
    } catch {
      return false;
    }
    const found = names.find((name) => /^\d+$/.test(name) && holdsFromOutside(name, ttyNr, session));
    if (found === undefined) return false;
    if (lastHolder.size >= MAX_HOLDERS) lastHolder.clear();
    lastHolder.set(key, found);
    return true;
  });
}

/** Whether process `pid`, alive and outside session `session`, has terminal `ttyNr` open. */
function holdsFromOutside(pid: string, ttyNr: number, session: number): boolean {
  const stat = readStat(`/proc/${pid}/stat`);
  return stat !== null && stat.session !== session && !isDead(stat.state) && hasTerminalOpen(pid, ttyNr);
}

/** Whether process `pid` has terminal `ttyNr` (a device number) open among its first fds. */
function hasTerminalOpen(pid: string, ttyNr: number): boolean {
  let fds: string[];
  try {
    fds = fs.readdirSync(`/proc/${pid}/fd`);
  } catch {
    return false; // gone, or another user's
  }
  return fds.slice(0, MAX_FDS).some((fd) => {
    const link = `/proc/${pid}/fd/${fd}`;
    try {
      // The link's text first: only a device is worth a stat (most fds are files, pipes, sockets).
      if (!fs.readlinkSync(link).startsWith('/dev/')) return false;
      const st = fs.statSync(link);
      return st.isCharacterDevice() && st.rdev === ttyNr;
    } catch {
      return false; // closed since the listing
    }
  });
}
