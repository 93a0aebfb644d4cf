import { libcFunction } from './libc';

/**
 * tcgetattr(3) for Node, which has none, through the koffi FFI (a Node-API module shipped prebuilt
 * for each platform, so it loads in Node and in the editor's Electron alike). Read on a PTY's
 * master side, Linux answers with the slave's termios (the kernel's tty_mode_ioctl reads the
 * linked tty), so the host learns the program's echo and canonical flags synchronously, at the
 * moment it writes, with no process to spawn. Measured on this project's 2-core Linux VMs: about
 * 5 µs a call, and 15 ms to load koffi once (on first use, never at start-up).
 */

/** Offset and size of `c_lflag` in Linux's `struct termios` (asm-generic/termbits.h: four tcflag_t before it). */
const LINUX_LFLAG_OFFSET = 12;
/** sizeof(struct termios) is 60 on Linux (glibc and musl); room to spare for a libc that pads it. */
const TERMIOS_BUFFER_BYTES = 128;

type TcGetAttr = (fd: number, termios: Buffer) => number;

/** The bound function; null once loading failed (not Linux, no prebuilt koffi): callers fall back. */
let bound: TcGetAttr | null | undefined;
const scratch = Buffer.alloc(TERMIOS_BUFFER_BYTES);
/** `c_lflag` in the machine's own byte order, as the kernel wrote it. */
const lflag = new Uint32Array(scratch.buffer, scratch.byteOffset + LINUX_LFLAG_OFFSET, 1);
/** `c_iflag` (the first field) and `c_cc` (after the four flags and `c_line`), likewise. */
const iflag = new Uint32Array(scratch.buffer, scratch.byteOffset, 1);
const LINUX_CC_OFFSET = 17;
const LINUX_NCCS = 32;

function bind(): TcGetAttr | null {
  // No koffi for this platform: the caller reads the mode with stty instead.
  if (bound !== undefined) return bound;
  bound = libcFunction((libc) => {
    const fn = libc.func('int tcgetattr(int fd, _Out_ uint8_t *termios)');
    return (fd: number, termios: Buffer) => fn(fd, termios) as number;
  });
  return bound;
}

/** True when the local flags can be read synchronously here (loads koffi the first time). */
export function canReadLocalFlags(): boolean {
  return bind() !== null;
}

/**
 * The `c_lflag` word of the terminal behind `fd` (on a PTY master: the slave's), or null when it
 * cannot be read (no binding, the descriptor closed).
 */
export function localFlagsOf(fd: number): number | null {
  return readInto(fd) ? lflag[0] : null;
}

/** The input flags and control characters (`c_iflag`, `c_cc`) of the terminal behind `fd`, or null as localFlagsOf. */
export function inputSettingsOf(fd: number): { iflag: number; cc: Uint8Array } | null {
  if (!readInto(fd)) return null;
  return { iflag: iflag[0], cc: Uint8Array.from(scratch.subarray(LINUX_CC_OFFSET, LINUX_CC_OFFSET + LINUX_NCCS)) };
}

/** Reads the termios of the terminal behind `fd` into `scratch`; false when it cannot. */
function readInto(fd: number): boolean {
  const tcgetattr = bind();
  return tcgetattr !== null && tcgetattr(fd, scratch) === 0;
}
