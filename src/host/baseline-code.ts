import * as v8 from 'node:v8';

/**
 * From now on, every function V8 compiles for the first time gets baseline machine code at once
 * (Sparkplug) instead of running in the interpreter until it has been called often enough. Called
 * by the commands that run a host (`serve`, `daemon`) once the host is serving: what it compiles
 * after that is the code of the calls clients make, which a client meets cold the first time it
 * makes each (the first reads of a new kind take about a quarter less; bench/README.md, issue 25:
 * "a read's first calls"). Not before: the host's own start-up would take ~40 ms longer, for
 * code that runs once. Costs ~5 MB of code per host, nothing per session.
 *
 * V8's flags are the process's, and a worker thread's start sets them back (young-generation.ts),
 * so the flag is set again once each worker runs.
 */
export function compileBaselineCodeFromNowOn(): void {
  const baseline = () => v8.setFlagsFromString('--always-sparkplug');
  baseline();
  process.on('worker', (worker) => worker.once('online', baseline));
}
