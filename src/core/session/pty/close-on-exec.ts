import type { IPty } from 'node-pty';
import type * as Koffi from 'koffi';
import { libcFunction } from '../../process/libc';
import { masterFdOf } from '../pty-input';

/** fcntl(2) commands and the descriptor flag (asm-generic/fcntl.h; the same on every Linux architecture). */
const F_GETFD = 1;
const F_SETFD = 2;
const FD_CLOEXEC = 1;

type Fcntl = (fd: number, cmd: number, arg: number) => number;
let bound: Fcntl | null | undefined;

function fcntl(): Fcntl | null {
  if (bound !== undefined) return bound;
  bound = libcFunction((libc: Koffi.LibraryHandle) => {
    const fn = libc.func('int fcntl(int fd, int cmd, ...)');
    return (fd: number, cmd: number, arg: number) => fn(fd, cmd, 'int', arg) as number;
  });
  return bound;
}

/**
 * Marks a PTY's master close-on-exec. node-pty (1.1) opens it on Linux with forkpty(3), which
 * does not, so every program started after it (the next sessions' programs, any command the host
 * runs) inherited every earlier session's master: a program could read and write another session
 * past the host, and ending a session by closing its master (hang-up.ts) did nothing while a copy
 * lived elsewhere, so a program asleep reading that terminal ran on until the kill's SIGKILL
 * (docs/architecture.md, "Ending a session"). Returns whether the flag is set (false where it
 * cannot be: no fcntl through koffi; other systems' node-pty spawns with close-on-exec already).
 */
export function closeMasterOnExec(pty: IPty): boolean {
  const fd = masterFdOf(pty);
  const call = process.platform === 'linux' && fd !== undefined ? fcntl() : null;
  if (call === null || fd === undefined) return false;
  const flags = call(fd, F_GETFD, 0);
  return flags >= 0 && call(fd, F_SETFD, flags | FD_CLOEXEC) === 0;
}
