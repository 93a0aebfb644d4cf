import type * as tty from 'node:tty';
import type { IPty } from 'node-pty';

/*
 * What node-pty (1.1) keeps private and the session needs (docs/architecture.md, "Ending a
 * session"; pty-input.ts): each read returns undefined when the shape is not the expected one, and
 * the caller then takes the public path. test/unit/core/base/internals/node-pty.test.ts fails when a
 * new node-pty changes it.
 */

/** The private fields read here. */
interface PtyInternals {
  _socket?: tty.ReadStream;
  _fd?: number;
  _writeStream?: { _writeQueue?: unknown[] };
  ptsName?: string;
  destroy?: () => void;
}

const internals = (pty: IPty): PtyInternals => pty as unknown as PtyInternals;

/** The stream node-pty reads the PTY master through (`_socket`): its pause, end and destroy. */
export function ptyReadStream(pty: IPty): tty.ReadStream | undefined {
  const socket = internals(pty)._socket;
  return socket && typeof socket.destroy === 'function' && typeof socket.prependListener === 'function' ? socket : undefined;
}

/** The PTY's master descriptor (`_fd`); undefined where node-pty keeps none (Windows). */
export function ptyMasterFd(pty: IPty): number | undefined {
  const fd = internals(pty)._fd;
  return typeof fd === 'number' ? fd : undefined;
}

/** node-pty's queue of writes handed to the libuv thread pool (`_writeStream._writeQueue`), the live array. */
export function ptyWriteQueue(pty: IPty): unknown[] | undefined {
  const queue = internals(pty)._writeStream?._writeQueue;
  return Array.isArray(queue) ? queue : undefined;
}

/** The PTY's slave device (`ptsName`, `/dev/pts/N`). */
export function ptySlaveName(pty: IPty): string | undefined {
  return internals(pty).ptsName || undefined;
}

/** node-pty's own teardown (`destroy`: closes the master and its streams), where it has one. */
export function destroyPty(pty: IPty): void {
  internals(pty).destroy?.();
}

/** Hears the raw bytes a PTY spawned with `encoding: null` delivers (Buffers, though node-pty's types say strings). */
export function onRawData(pty: IPty, listener: (data: Buffer) => void): void {
  pty.onData((d) => listener(d as unknown as Buffer));
}
