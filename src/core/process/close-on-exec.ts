import * as fs from 'node:fs';
import type * as Koffi from 'koffi';
import { libcFunction } from './libc';

/* Descriptors a program started by the host must not get: fcntl(2)'s FD_CLOEXEC, through koffi. */

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

/** Marks `fd` close-on-exec; false where it cannot be (not Linux, no koffi, not open). */
export function markCloseOnExec(fd: number): boolean {
  const call = process.platform === 'linux' ? fcntl() : null;
  if (call === null) return false;
  const flags = call(fd, F_GETFD, 0);
  return flags >= 0 && ((flags & FD_CLOEXEC) !== 0 || call(fd, F_SETFD, flags | FD_CLOEXEC) === 0);
}

/**
 * Marks close-on-exec every descriptor above stderr that this process was started with: what the
 * program that started the host left open (an editor's pipes, a shell's descriptors) would
 * otherwise reach every session's program and every command the host runs, and keep those pipes
 * open for as long as they live. Node opens its own close-on-exec already. Returns how many were
 * marked (0 where nothing can be: not Linux, no koffi).
 */
export function markInheritedCloseOnExec(): number {
  if (process.platform !== 'linux') return 0;
  let names: string[];
  try {
    names = fs.readdirSync('/proc/self/fd');
  } catch {
    return 0;
  }
  let marked = 0;
  for (const name of names) {
    const fd = Number(name);
    // The listing's own descriptor is closed by now: fcntl answers EBADF and nothing is marked.
    if (fd > 2 && markCloseOnExec(fd)) marked++;
  }
  return marked;
}
