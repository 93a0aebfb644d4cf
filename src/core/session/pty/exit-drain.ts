import * as fs from 'node:fs';
import type { IPty } from 'node-pty';
import { ptyMasterFd, ptyReadStream } from '../../base/internals/node-pty';
import { SessionTuning } from '../session-types';

/**
 * The two node-pty workarounds that keep a program's last output (docs/architecture.md, "Ending a
 * session"). They take over node-pty's read stream and read its master descriptor
 * (base/internals/node-pty.ts).
 */

/** What the drains need of the session. */
export interface DrainTarget {
  /** The session is disposed or hung up: the descriptor is closed, and its number may already be another file's. */
  over(): boolean;
  /** When output last arrived (ms since epoch). */
  lastOutputAt(): number;
  /** The program is gone: whatever holds the PTY, what the kernel still has must be read now. */
  startDrain(): void;
  /** Output read from the master, as node-pty would have delivered it. */
  data(chunk: Buffer): void;
}

/** Reads what the kernel holds for the PTY master, without waiting (it is non-blocking), into `data`. */
export function readPending(fd: number, data: (chunk: Buffer) => void): void {
  const buf = Buffer.allocUnsafe(64 * 1024);
  for (let total = 0; total < SessionTuning.EofDrainMaxBytes;) {
    let n: number;
    try {
      n = fs.readSync(fd, buf, 0, buf.length, null);
    } catch {
      break; // EIO: nothing left; EAGAIN: nothing now
    }
    if (n <= 0) break;
    total += n;
    data(Buffer.from(buf.subarray(0, n))); // a copy: the ring, subscribers and the parser keep it
  }
}

/**
 * node-pty reports the exit before the last output is read and, 200 ms later, destroys its
 * read stream, losing whatever the kernel still holds (kilobytes, when the stream was paused).
 * We take over that destroy: resume reading, and destroy only after the output has gone quiet.
 */
export function guardExitDrain(pty: IPty, target: DrainTarget): void {
  const socket = ptyReadStream(pty);
  if (!socket) return;
  const realDestroy = socket.destroy.bind(socket);
  let drainStarted = false;
  socket.destroy = ((err?: Error) => {
    // After a hang-up (kill) there is nothing left to drain: the master is closed at once.
    if (target.over() || drainStarted) return realDestroy(err);
    drainStarted = true;
    target.startDrain();
    socket.resume();
    const started = Date.now();
    const check = () => {
      const quiet = Date.now() - target.lastOutputAt() >= SessionTuning.ExitDrainQuietMs;
      if (socket.destroyed) return;
      if (quiet || Date.now() - started >= SessionTuning.ExitDrainMaxMs) realDestroy(err);
      else setTimeout(check, SessionTuning.ExitDrainQuietMs / 2);
    };
    setTimeout(check, SessionTuning.ExitDrainQuietMs);
    return socket;
  }) as typeof socket.destroy;
}

/**
 * When the program exits, the PTY master reports POLLHUP, and libuv, seeing it after a short read
 * (a PTY read never fills libuv's buffer), ends the stream at once although the kernel still holds
 * output: measured on Linux, 2-14 KB of the last output of `cat` of a large file, lost in about
 * half of the runs. At that 'end' the descriptor is still open, so read what is left
 * synchronously (non-blocking; EIO once the kernel's buffer is empty) before it is closed.
 */
export function guardEofDrain(pty: IPty, target: DrainTarget): void {
  const socket = ptyReadStream(pty);
  const fd = ptyMasterFd(pty);
  if (!socket || fd === undefined) return;
  socket.prependListener('end', () => {
    // Hung up: the descriptor is closed, and its number may already be another file's.
    if (target.over()) return;
    readPending(fd, (chunk) => target.data(chunk));
  });
}
