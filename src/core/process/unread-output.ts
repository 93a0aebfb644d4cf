import { libcFunction } from './libc';

/**
 * How many bytes of a program's output wait in the kernel for the host to read them: the
 * FIONREAD ioctl on the PTY's master side, through the koffi FFI (as tcgetattr.ts). A program
 * whose output is still queued has printed since the host last read: it is not waiting quietly
 * for input, so the input watch need not scan /proc for it yet (docs/architecture.md, "Input
 * waits"). Measured on this project's loaded 2-core VM: ~10 µs a call, against 1–3 ms for the
 * /proc scan it spares.
 */

/** FIONREAD (= TIOCINQ) in asm-generic/ioctls.h, which x86_64 and arm64 Linux both use. */
const FIONREAD = 0x541b;

type Ioctl = (fd: number, request: number, count: Int32Array) => number;

/** The bound function; null once loading failed (not Linux, no prebuilt koffi): callers probe as before. */
let bound: Ioctl | null | undefined;
const count = new Int32Array(1);

function bind(): Ioctl | null {
  // No koffi for this platform: the caller cannot tell, and probes.
  // ioctl is variadic; declared with its one pointer argument it is called without koffi's
  // per-call variadic type parsing (the Linux x86_64 and arm64 ABIs pass it the same way).
  if (bound !== undefined) return bound;
  bound = libcFunction((libc) => {
    const fn = libc.func('ioctl', 'int', ['int', 'unsigned long', 'int32_t *']);
    return (fd: number, request: number, out: Int32Array) => fn(fd, request, out) as number;
  });
  return bound;
}

/**
 * Bytes the program behind PTY master `fd` has written that the host has not read yet, or null
 * when that cannot be known (no binding, the descriptor closed).
 */
export function unreadOutputOf(fd: number | undefined): number | null {
  if (fd === undefined) return null;
  return bytesToRead(fd);
}

/** FIONREAD on `fd`: the bytes a read of it would get now, or null when that cannot be known. */
export function bytesToRead(fd: number): number | null {
  const ioctl = bind();
  if (!ioctl) return null;
  if (ioctl(fd, FIONREAD, count) !== 0) return null;
  return count[0];
}
