import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';

const { O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW } = fs.constants;

/**
 * Flags that make a new file and nothing else: the call fails (EEXIST, ELOOP) when anything is at
 * the path already, a symbolic link planted there by someone else included, which is never followed.
 */
export const NEW_FILE_FLAGS = O_WRONLY | O_CREAT | O_EXCL | (O_NOFOLLOW ?? 0);

/** Mode of every file the host writes: the user's own (tokens, output, sockets' neighbours). */
export const PRIVATE_FILE_MODE = 0o600;

/** Opens a new file of mode 0600 for writing (see NEW_FILE_FLAGS); returns its descriptor. */
export function openNewFile(file: string): number {
  return fs.openSync(file, NEW_FILE_FLAGS, PRIVATE_FILE_MODE);
}

/**
 * A temporary name beside `file` that nobody can guess (so nobody can plant anything there first):
 * `<file>.<16 random hex digits>.tmp`.
 */
export function temporaryName(file: string): string {
  return `${file}.${crypto.randomBytes(8).toString('hex')}.tmp`;
}

/**
 * Writes `data` as `file`, atomically: into a new file (mode 0600) under a random temporary name
 * beside it, made with NEW_FILE_FLAGS, then renamed over `file`. A reader sees the old content or
 * the new, never half; a symbolic link at either name is replaced or refused, never written through.
 */
export function writeFileAtomically(file: string, data: string | Uint8Array): void {
  const tmp = temporaryName(file);
  let fd: number | undefined;
  try {
    fd = openNewFile(tmp);
    fs.writeFileSync(fd, data);
    fs.closeSync(fd);
    fd = undefined;
    fs.renameSync(tmp, file);
  } catch (e) {
    if (fd !== undefined) fs.closeSync(fd);
    fs.rmSync(tmp, { force: true }); // a full disk must not be left fuller by a half-written file
    throw e;
  }
}

/**
 * `mkdir -p` with `mode` for each folder it makes; an existing folder is fine. Not Node's
 * `recursive: true`, which loops forever where mkdir answers ENOENT under a parent that exists
 * (in /proc and /sys): here that ENOENT is the answer.
 */
export function makeFolders(dir: string, mode: number): void {
  const folder = path.resolve(dir);
  try {
    fs.mkdirSync(folder, { mode });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EEXIST' && isFolder(folder)) return;
    const parent = path.dirname(folder);
    if (code !== 'ENOENT' || parent === folder || fs.existsSync(parent)) throw e;
    makeFolders(parent, mode);
    makeFolders(folder, mode);
  }
}

function isFolder(p: string): boolean {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}
