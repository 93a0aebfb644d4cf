import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/** The runtime directory (CONTRACT §2): $SHARED_PTY_DIR, else $XDG_RUNTIME_DIR/shared-pty, else <tmp>/shared-pty-<uid>. */
export function runtimeDirPath(env: NodeJS.ProcessEnv = process.env): string {
  if (env.SHARED_PTY_DIR) return path.resolve(env.SHARED_PTY_DIR);
  if (env.XDG_RUNTIME_DIR) return path.join(env.XDG_RUNTIME_DIR, 'shared-pty');
  return path.join(os.tmpdir(), `shared-pty-${process.getuid?.() ?? 'user'}`);
}

/** A runtime directory we must not use, with a message that says why and what to do. */
export class UnsafeRuntimeDirError extends Error {
  readonly code = 'UNSAFE_RUNTIME_DIR';
}

/**
 * Creates the runtime directory with mode 0700, or checks an existing one the way tmux does:
 * it must be a real directory, ours, and not writable by group or others (sockets live there).
 */
export function ensureRuntimeDir(dir = runtimeDirPath()): string {
  try {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  }
  checkRuntimeDir(dir);
  return dir;
}

/** Throws UnsafeRuntimeDirError unless `dir` is a directory owned by us that only we can write. */
export function checkRuntimeDir(dir: string): void {
  const st = fs.lstatSync(dir);
  if (!st.isDirectory()) throw new UnsafeRuntimeDirError(`Runtime directory ${dir} is not a directory`);
  const uid = process.getuid?.();
  if (uid !== undefined && st.uid !== uid) {
    throw new UnsafeRuntimeDirError(`Runtime directory ${dir} is owned by uid ${st.uid}, not by you (uid ${uid}); refusing to use it`);
  }
  // Anyone who can write here could replace our sockets and records (CONTRACT §2, as tmux checks).
  if ((st.mode & 0o022) !== 0) {
    throw new UnsafeRuntimeDirError(
      `Runtime directory ${dir} is writable by group or others (mode ${(st.mode & 0o777).toString(8)}); run: chmod 700 ${dir}`,
    );
  }
}
