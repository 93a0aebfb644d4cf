/**
 * Whether whoever reads this process's stdout has gone (`shared-pty events | head -2` once head has
 * its lines). Writing more then fails with EPIPE, which Node reports as an error event: unheard,
 * that is a stack trace. Heard here once for every command: a command that prints once carries on
 * (its exit status still says how it went), one that prints until stopped ends (`whenStdoutCloses`).
 */
let closed = false;
const waiters = new Set<() => void>();

/** Listens for stdout's reader going away; the first call only counts. */
export function watchStdout(): void {
  if (process.stdout.listeners('error').includes(onError)) return;
  process.stdout.on('error', onError);
}

/** Any write error (EPIPE, or EIO from a terminal that hung up) ends the output the same way: nothing more reaches the reader. */
function onError(): void {
  if (closed) return;
  closed = true;
  for (const w of waiters) w();
  waiters.clear();
}

/** Resolves once stdout's reader has gone (at once if it already has). */
export function whenStdoutCloses(): Promise<void> {
  watchStdout();
  if (closed) return Promise.resolve();
  return new Promise((resolve) => waiters.add(resolve));
}

/** Whether stdout's reader has gone. */
export function stdoutClosed(): boolean {
  return closed;
}
