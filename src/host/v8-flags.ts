import * as v8 from 'node:v8';

/**
 * Sets a V8 flag for the host's process from now on. V8's flags are the process's, but a worker
 * thread's start sets them back (measured: with the flag set before the mirror thread started,
 * the main thread's new space grew as before), so the flag is set again once each worker runs.
 */
export function setV8FlagFromNowOn(flag: string): void {
  const set = () => v8.setFlagsFromString(flag);
  set();
  process.on('worker', (worker) => worker.once('online', set));
}
