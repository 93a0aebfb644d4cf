import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { makeFolders } from '../../base/private-files';

/**
 * Where recordings go when the caller names no file: `$XDG_DATA_HOME/shared-pty/recordings`, else
 * `~/.local/share/shared-pty/recordings` (0700). Not the session's cwd: a recording holds all
 * that was shown and typed, and must not land in a repository and be committed by accident.
 */
export function defaultRecordingDir(env: NodeJS.ProcessEnv = process.env): string {
  const data = env.XDG_DATA_HOME && path.isAbsolute(env.XDG_DATA_HOME) ? env.XDG_DATA_HOME : path.join(os.homedir(), '.local', 'share');
  return path.join(data, 'shared-pty', 'recordings');
}

/** Recordings a default name tries before giving up (two in the same second get `-2`, `-3`…). */
const MAX_NAME_TRIES = 100;

/**
 * The default file for a new recording of the session named `name`: `<name>-<UTC time>.cast` in
 * the default folder (created 0700), the first such name that does not exist yet.
 */
export function defaultRecordingPath(name: string, now = new Date(), env: NodeJS.ProcessEnv = process.env): string {
  const dir = defaultRecordingDir(env);
  try {
    makeFolders(dir, 0o700);
  } catch (e) {
    // Something in the way (a file, a link to nothing, another user's folder): said as what it is.
    refuseUnsafeFolder(dir);
    throw new Error(`${dir} cannot be made (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`, { cause: e });
  }
  refuseUnsafeFolder(dir);
  const stamp = now
    .toISOString()
    .replace(/\.\d+Z$/, 'Z')
    .replace(/[-:]/g, '');
  const base = `${name.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 60) || 'session'}-${stamp}`;
  for (let i = 1; i <= MAX_NAME_TRIES; i++) {
    const file = path.join(dir, `${base}${i === 1 ? '' : `-${i}`}.cast`);
    if (!fs.existsSync(file)) return file;
  }
  throw new Error(`no free recording name in ${dir}`);
}

/**
 * The recordings folder must be this user's and writable by nobody else, and so must every folder
 * above it be (this user's or root's; writable by others only with the sticky bit, as /tmp, where
 * nobody may move what is not theirs), as ssh holds `~/.ssh` to: else another user (with
 * `XDG_DATA_HOME` in a shared place) could have made one of them first and move, replace or plant
 * the files a recording makes. A link on the way is fine when this user or root made it; the
 * folders it leads to are held to the same.
 */
function refuseUnsafeFolder(dir: string): void {
  const uid = process.getuid?.();
  if (uid === undefined) return;
  const why = unsafeLink(dir, uid) ?? unsafeFolders(dir, uid);
  if (why) throw new Error(`${why}: make it yours alone (chmod 700) or remove it`);
}

/** A link on the way to `dir` (as named) that another user made; or something there that is no folder. */
function unsafeLink(dir: string, uid: number): string | undefined {
  for (const at of selfAndAncestors(path.resolve(dir))) {
    let st: fs.Stats;
    try {
      st = fs.lstatSync(at);
    } catch {
      continue; // not there yet (makeFolders makes it)
    }
    if (st.isSymbolicLink() && st.uid !== uid && st.uid !== 0) return `${at} is a link another user made`;
    if (!st.isSymbolicLink() && !st.isDirectory()) return `${at} is not a folder`;
  }
  return undefined;
}

/** The first folder, on the way to `dir` as its links lead, that another user could change. */
function unsafeFolders(dir: string, uid: number): string | undefined {
  let real: string;
  try {
    real = fs.realpathSync(dir);
  } catch {
    return `${dir} is not a folder (a link to nothing)`;
  }
  for (const at of selfAndAncestors(real)) {
    const st = fs.statSync(at);
    const own = at === real;
    if (st.uid !== uid && (own || st.uid !== 0)) return `${at} is another user's folder`;
    const othersWrite = (st.mode & 0o022) !== 0 && (own || (st.mode & 0o1000) === 0);
    if (othersWrite) return `${at} is writable by others (mode ${(st.mode & 0o7777).toString(8)})`;
  }
  return undefined;
}

/** `p` and each folder above it, up to the root, `p` first. */
function selfAndAncestors(p: string): string[] {
  const out = [p];
  for (let up = path.dirname(p); up !== out[out.length - 1]; up = path.dirname(up)) out.push(up);
  return out;
}
