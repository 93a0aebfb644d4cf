import type { IPty } from 'node-pty';
import { markCloseOnExec } from '../../process/close-on-exec';
import { masterFdOf } from '../input/pty-input';

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
  return fd !== undefined && markCloseOnExec(fd);
}
