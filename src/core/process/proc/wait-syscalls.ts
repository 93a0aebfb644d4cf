import { isVanished, readSmallFile } from './proc-files';

/* Which system calls mean "waiting for input", per architecture, and what a task's syscall file says. */

/** How a blocking syscall names the fds it waits on. */
export type WaitKind = 'read' | 'select' | 'poll' | 'epoll';

/**
 * x86_64 syscall numbers (arch/x86/entry/syscalls/syscall_64.tbl) of the calls a program waits for
 * terminal input in. bash's readline and python's REPL wait in pselect6, cat and less in read, libuv
 * (Node) in epoll_wait/epoll_pwait.
 */
const X86_64_INPUT_WAIT_SYSCALLS: ReadonlyMap<number, WaitKind> = new Map<number, WaitKind>([
  [0, 'read'], // read(fd, buf, count)
  [7, 'poll'], // poll(fds, nfds, timeout)
  [23, 'select'], // select(nfds, readfds, writefds, exceptfds, timeout)
  [232, 'epoll'], // epoll_wait(epfd, events, maxevents, timeout)
  [270, 'select'], // pselect6(nfds, readfds, writefds, exceptfds, timeout, sigmask)
  [271, 'poll'], // ppoll(fds, nfds, timeout, sigmask, sigsetsize)
  [281, 'epoll'], // epoll_pwait(epfd, events, maxevents, timeout, sigmask, sigsetsize)
  [441, 'epoll'], // epoll_pwait2(epfd, events, maxevents, timeout, sigmask, sigsetsize)
]);

/**
 * arm64 (asm-generic/unistd.h) numbers for the same calls; arm64 has no plain select/poll/epoll_wait,
 * glibc maps those onto pselect6/ppoll/epoll_pwait. Argument layouts are the same as on x86_64.
 */
const ARM64_INPUT_WAIT_SYSCALLS: ReadonlyMap<number, WaitKind> = new Map<number, WaitKind>([
  [22, 'epoll'], // epoll_pwait
  [63, 'read'], // read
  [72, 'select'], // pselect6
  [73, 'poll'], // ppoll
  [441, 'epoll'], // epoll_pwait2
]);

/**
 * The table for the architecture we run on; null where we have none (readiness is then 'unknown').
 * Node runs natively, so its arch is the kernel's. (A 32-bit compat task on a 64-bit kernel shows its
 * compat numbers in /proc/<pid>/syscall; that rare case is not decoded and may read as 'busy'.)
 */
export function inputWaitSyscalls(): ReadonlyMap<number, WaitKind> | null {
  if (process.arch === 'x64') return X86_64_INPUT_WAIT_SYSCALLS;
  if (process.arch === 'arm64') return ARM64_INPUT_WAIT_SYSCALLS;
  return null;
}

/**
 * The calls a task waits in for a signal and nothing else (pause, sigsuspend, sigtimedwait):
 * `screen`'s client waits so while its server reads the terminal. x86_64 pause 34, rt_sigtimedwait
 * 128, rt_sigsuspend 130; arm64 (no pause: glibc uses sigsuspend) rt_sigtimedwait 137,
 * rt_sigsuspend 133. Empty where there is no table.
 */
export function signalWaitSyscalls(): ReadonlySet<number> {
  if (process.arch === 'x64') return X86_64_SIGNAL_WAITS;
  if (process.arch === 'arm64') return ARM64_SIGNAL_WAITS;
  return NO_SYSCALLS;
}
const X86_64_SIGNAL_WAITS: ReadonlySet<number> = new Set([34, 128, 130]);
const ARM64_SIGNAL_WAITS: ReadonlySet<number> = new Set([133, 137]);
const NO_SYSCALLS: ReadonlySet<number> = new Set();

/** What /proc/<pid>/task/<tid>/syscall says about a task. */
export type SyscallState =
  | { readonly kind: 'running' } // the file says "running": the task is on a CPU or runnable
  | { readonly kind: 'no_syscall' } // "-1 sp pc": blocked, but not inside a system call (e.g. a page fault)
  | { readonly kind: 'syscall'; readonly nr: number; readonly args: readonly bigint[] }
  | { readonly kind: 'gone' } // the task exited while we looked
  | { readonly kind: 'denied' }; // not readable (ptrace access mode check, e.g. Yama), or not decodable

export function readSyscall(pid: number, tid: number): SyscallState {
  let text: string;
  try {
    text = readSmallFile(`/proc/${pid}/task/${tid}/syscall`).trim();
  } catch (error) {
    return isVanished(error) ? { kind: 'gone' } : { kind: 'denied' };
  }
  if (text === 'running') return { kind: 'running' };
  const words = text.split(' ');
  const nr = Number(words[0]);
  if (!Number.isInteger(nr)) return { kind: 'denied' };
  if (nr < 0) return { kind: 'no_syscall' };
  // "nr arg1 … arg6 sp pc", arguments in hex ("0x…"); BigInt because addresses may exceed 2^53.
  try {
    return { kind: 'syscall', nr, args: words.slice(1, 7).map((word) => BigInt(word)) };
  } catch {
    return { kind: 'denied' };
  }
}
