import { spawnSync } from 'node:child_process';
import * as os from 'node:os';

/**
 * pty-session-mcp's `uid`/`gid` (docs/protocol.md#rest): the user a session's program runs as when
 * the host runs as root. node-pty's own uid/gid would keep root's supplementary groups (it calls
 * setgid and setuid, never setgroups), so the program is started through util-linux's `setpriv`,
 * which sets the groups too: that user's, or none for a uid no account has.
 */
export interface RunAs {
  uid: number;
  /** Undefined: that user's own group (its account's), else the group of the same number. */
  gid?: number;
}

/** The program that switches: util-linux's, on every Linux that has a shell. */
export const SWITCHER = 'setpriv';

/**
 * Whom the program runs as, from what the caller asked: only a host running as root switches (as
 * pty-session-mcp does; any other host runs it as itself), and root asking for root is no switch.
 */
export function runAsOf(uid: number | undefined, gid: number | undefined, hostUid = process.getuid?.()): RunAs | undefined {
  if (hostUid !== 0 || (uid === undefined && gid === undefined)) return undefined;
  // A user without a group is in its own, as `sudo -u` puts it: never in root's by default.
  const target = { uid: uid ?? 0, gid: gid ?? (uid === undefined ? 0 : undefined) };
  // Root in its own group (named, or by default) is the host itself: started as the host starts any program.
  return target.uid === 0 && (target.gid ?? 0) === 0 ? undefined : target;
}

/** The account of a uid (`getent passwd`, so directory users count too); undefined when none has it. */
function accountOf(uid: number): { name: string; gid: number; home: string } | undefined {
  const r = spawnSync('getent', ['passwd', String(uid)], { encoding: 'utf8', timeout: 5000 });
  const fields = r.status === 0 ? r.stdout.split('\n')[0].split(':') : [];
  return fields.length >= 7 ? { name: fields[0], gid: Number(fields[3]), home: fields[5] } : undefined;
}

/**
 * The command line that starts `command args` as `runAs`, and the variables that name that user
 * (HOME, USER, LOGNAME, as a login sets them; under the caller's own `env`, over the host's).
 */
export function runAsLaunch(runAs: RunAs, command: string, args: readonly string[]): { command: string; args: string[]; names: Record<string, string> } {
  const account = accountOf(runAs.uid);
  const groups = account ? '--init-groups' : '--clear-groups';
  const gid = runAs.gid ?? account?.gid ?? runAs.uid;
  // A uid no account has: no home of its own (the host's is not its to write), its number as its name.
  const names = account
    ? { HOME: account.home, USER: account.name, LOGNAME: account.name }
    : { HOME: '/', USER: String(runAs.uid), LOGNAME: String(runAs.uid) };
  return { command: SWITCHER, args: [`--reuid=${runAs.uid}`, `--regid=${gid}`, groups, '--', command, ...args], names };
}

/**
 * The variables that name root to a program a root host starts as itself (pty-session-mcp's: a
 * container's root daemon often has no `USER` at all): `USER` and `LOGNAME` root's name, as `sudo`
 * sets them, and `HOME` root's home when the host has none (a `HOME` the host was given is kept).
 * Under the caller's own `env`, over the host's; undefined for any other host.
 */
export function rootNames(hostUid = process.getuid?.(), hostEnv: NodeJS.ProcessEnv = process.env): Record<string, string> | undefined {
  if (hostUid !== 0) return undefined;
  let me: { username: string; homedir: string } | undefined;
  try {
    me = os.userInfo(); // throws when no account has the uid
  } catch {
    me = undefined;
  }
  const name = me?.username || 'root';
  return { ...(hostEnv.HOME ? {} : { HOME: me?.homedir || '/root' }), USER: name, LOGNAME: name };
}
