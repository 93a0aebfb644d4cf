import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { makeFolders } from '../core/base/private-files';

/** The runtime directory (docs/hosts.md#runtime-directory): $SHARED_PTY_DIR, else $XDG_RUNTIME_DIR/shared-pty, else <tmp>/shared-pty-<uid>. */
export function runtimeDirPath(env: NodeJS.ProcessEnv = process.env): string {
  if (env.SHARED_PTY_DIR) return path.resolve(env.SHARED_PTY_DIR);
  if (env.XDG_RUNTIME_DIR) return path.join(env.XDG_RUNTIME_DIR, 'shared-pty');
  return path.join(os.tmpdir(), `shared-pty-${process.getuid?.() ?? 'user'}`);
}

/** A runtime directory we must not use, with a message that says why and what to do. */
export class UnsafeRuntimeDirError extends Error {
  readonly code = 'UNSAFE_RUNTIME_DIR';
}

/** The runtime directory cannot be written (a full or read-only disk, no right to): what the user can do. */
export class RuntimeDirWriteError extends Error {
  readonly code = 'RUNTIME_DIR_NOT_WRITABLE';
}

/** Why a file system error stops us, and what to do about it. */
const WRITE_HINTS: Record<string, string> = {
  ENOSPC: 'the disk is full; free some space or set SHARED_PTY_DIR to a directory on another disk',
  EDQUOT: 'your disk quota is used up; free some space or set SHARED_PTY_DIR to a directory on another disk',
  EROFS: 'the disk is read-only; set SHARED_PTY_DIR to a writable directory',
  EACCES: 'you may not write there; set SHARED_PTY_DIR to a directory of your own',
  EPERM: 'you may not write there; set SHARED_PTY_DIR to a directory of your own',
  ENOTDIR: 'a file stands where a directory should be; set SHARED_PTY_DIR to a directory of your own',
};

/** Making the directory also fails where a file stands, or where a parent makes no directories. */
const MKDIR_HINTS: Record<string, string> = {
  ...WRITE_HINTS,
  EEXIST: WRITE_HINTS.ENOTDIR,
  ENOENT: 'no directory can be made there (a file system such as /proc); set SHARED_PTY_DIR to a directory of your own',
};

/**
 * The error for a write into the runtime directory that failed: a RuntimeDirWriteError with one
 * clear line when the cause is one a user can fix, else the error itself.
 */
export function runtimeDirWriteError(dir: string, e: unknown, hints = WRITE_HINTS): Error {
  const code = (e as NodeJS.ErrnoException).code;
  const hint = code ? hints[code] : undefined;
  if (!hint) return e as Error;
  return new RuntimeDirWriteError(`Cannot write in the runtime directory ${dir} (${code}): ${hint}`);
}

/**
 * Creates the runtime directory with mode 0700, or checks an existing one the way tmux does:
 * it must be a real directory, ours, and open to nobody else (sockets and tokens live there).
 * An unsafe one is refused, never repaired: changing the mode of a directory others can use
 * would not undo what they may have put there.
 */
export function ensureRuntimeDir(dir = runtimeDirPath()): string {
  try {
    makeFolders(dir, 0o700);
  } catch (e) {
    throw runtimeDirWriteError(dir, e, MKDIR_HINTS);
  }
  checkRuntimeDir(dir, 'write');
  return dir;
}

/**
 * Who uses a directory: a reader (a client finding hosts) needs it to be writable by nobody else
 * (a record planted there could point it at someone else's socket); a writer (a host) needs it to
 * be open to nobody else at all, mode 0700, as it keeps tokens and sockets there.
 */
export type DirUse = 'read' | 'write';

/**
 * What is wrong with `dir` for `use`, as a phrase that follows its path ("is owned by uid 1001,
 * not by you (uid 0)"), with what to do; undefined when it is fit. Throws lstat's error (ENOENT
 * when it is gone).
 */
export function dirProblem(dir: string, use: DirUse): string | undefined {
  const st = fs.lstatSync(dir);
  // A link could be turned to another user's directory at any time: refused, not followed.
  if (st.isSymbolicLink()) return 'is a symbolic link; refusing to follow it (set SHARED_PTY_DIR to the real directory)';
  if (!st.isDirectory()) return 'is not a directory';
  const uid = process.getuid?.();
  if (uid !== undefined && st.uid !== uid) return `is owned by uid ${st.uid}, not by you (uid ${uid}); refusing to use it`;
  const mode = (st.mode & 0o777).toString(8);
  // Anyone who can write here could replace our sockets and records (docs/hosts.md#runtime-directory, as tmux checks).
  if ((st.mode & 0o022) !== 0) return `is writable by group or others (mode ${mode}); run: chmod 700 ${dir}`;
  if (use === 'write' && (st.mode & 0o077) !== 0)
    return `is open to group or others (mode ${mode}); a host writes only in a directory of mode 700: run chmod 700 ${dir}`;
  return undefined;
}

/** Throws UnsafeRuntimeDirError unless `dir` is a directory owned by us and fit for `use` (see DirUse). */
export function checkRuntimeDir(dir: string, use: DirUse = 'read'): void {
  const problem = dirProblem(dir, use);
  if (problem) throw new UnsafeRuntimeDirError(`Runtime directory ${dir} ${problem}`);
}
