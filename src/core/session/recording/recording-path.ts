import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { makeFolders } from '../../base/private-files';
import { unsafePath, unsafePathAdvice } from '../../base/safe-path';

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

/** The recordings folder, and the folders above it, safe from other users (safe-path.ts); else an error naming why. */
function refuseUnsafeFolder(dir: string): void {
  const unsafe = unsafePath(dir, 'folder');
  if (unsafe) throw new Error(`${unsafe.text} (${unsafePathAdvice(unsafe)})`);
}
