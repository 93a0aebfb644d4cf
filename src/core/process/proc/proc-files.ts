import * as fs from 'node:fs';

/* Reading /proc's small files, which vanish with their process at any moment. */

/**
 * Scratch buffer for the small /proc files we read on every poll (stat lines are ~300 bytes, syscall
 * lines ~150). open+read+close into one reused buffer costs half of `readFileSync`, which also fstat()s
 * and allocates — it matters because the foreground-group scan reads every process's stat.
 */
const SMALL_FILE_BUFFER = Buffer.alloc(4096);

/** Reads a small /proc file as latin1 text; throws like fs does (ENOENT, ESRCH, EACCES…). */
export function readSmallFile(path: string): string {
  const fd = fs.openSync(path, 'r');
  try {
    const length = fs.readSync(fd, SMALL_FILE_BUFFER, 0, SMALL_FILE_BUFFER.length, 0);
    // A full buffer might mean a truncated file: read it whole instead (never expected for stat/syscall).
    if (length === SMALL_FILE_BUFFER.length) return fs.readFileSync(path, 'latin1');
    return SMALL_FILE_BUFFER.toString('latin1', 0, length);
  } finally {
    fs.closeSync(fd);
  }
}

/** The `code` of a Node system error (ENOENT, ESRCH, EPERM…), if it has one. */
export function errorCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string' ? error.code : undefined;
}

/** ENOENT/ESRCH mean the process or task exited between listing and reading. */
export function isVanished(error: unknown): boolean {
  const code = errorCode(error);
  return code === 'ENOENT' || code === 'ESRCH';
}

/** A pid that names one process (never 0, -1 or a fraction: they mean groups or everyone to kill()). */
export function isValidPid(pid: number): boolean {
  return Number.isInteger(pid) && pid > 0;
}
