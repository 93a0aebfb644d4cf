import type { IPty } from 'node-pty';
import { ptyReadStream } from '../../base/internals/node-pty';
import { terminalOf } from '../../process/proc-state';
import { masterFdOf } from '../input/pty-input';
import { readPending } from './exit-drain';

/**
 * Closes the PTY master after the SIGHUP, so the kernel hangs the terminal up: a program asleep
 * reading it wakes (EIO) and acts on the signal. The signal alone is not enough: a SIGHUP that
 * reaches bash while it starts, before readline has put in its own handler, only sets bash's
 * flag, which bash looks at again when readline returns, and readline then waits for a key for
 * ever (docs/architecture.md, "Ending a session"). What the program wrote before is read first
 * (into `data`). `hungUp` is called just before the master closes; nothing is done (and false
 * returned) when the master cannot be closed yet or here.
 */
export function hangUp(pty: IPty, data: (chunk: Buffer) => void, hungUp: () => void): boolean {
  const socket = ptyReadStream(pty);
  const fd = masterFdOf(pty);
  if (!socket || fd === undefined) return false;
  // On Linux, node-pty's child holds every signal until it has made the terminal its own (forkpty);
  // a hang-up before that fails it (exit 1), while the SIGHUP it holds ends it once it lets them in.
  if (process.platform === 'linux' && terminalOf(pty.pid) === null) return false;
  // What the stream holds (it may be paused), then what the kernel holds: the program's last output.
  // read() hands what it returns to the 'data' listeners, as reading on would have.
  while (socket.readableLength > 0) if (socket.read() === null) break;
  readPending(fd, data);
  hungUp();
  socket.destroy();
  return true;
}
