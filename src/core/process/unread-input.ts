import * as fs from 'node:fs';
import { bytesToRead } from './unread-output';

/** Opened only to ask, never to become anyone's controlling terminal, never to wait. */
const ASK_ONLY = fs.constants.O_RDONLY | fs.constants.O_NOCTTY | fs.constants.O_NONBLOCK;

/**
 * How many bytes typed into the terminal at `ttyPath` (a PTY's slave, `/dev/pts/N`) wait for its
 * program to read them: FIONREAD on the slave side, opened for the question and closed at once
 * (the master side answers with the program's unread output instead). In non-canonical mode every
 * byte typed counts; in canonical mode a line not yet ended by Enter does not. Null when it cannot
 * be told (no binding, a terminal held exclusively, gone).
 */
export function unreadInputOf(ttyPath: string | undefined): number | null {
  if (ttyPath === undefined) return null;
  let fd: number;
  try {
    fd = fs.openSync(ttyPath, ASK_ONLY);
  } catch {
    return null;
  }
  try {
    return bytesToRead(fd);
  } finally {
    fs.closeSync(fd);
  }
}
