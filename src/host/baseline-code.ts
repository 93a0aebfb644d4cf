import { setV8FlagFromNowOn } from './v8-flags';

/**
 * From now on, every function V8 compiles for the first time gets baseline machine code at once
 * (Sparkplug) instead of running in the interpreter until it has been called often enough. Called
 * by the commands that run a host (`serve`, `daemon`) once the host is serving: what it compiles
 * after that is the code of the calls clients make, which a client meets cold the first time it
 * makes each (the first reads of a new kind take about a quarter less; bench/README.md, issue 25:
 * "a read's first calls"). Not before: the host's own start-up would take ~40 ms longer, for
 * code that runs once. Costs ~5 MB of code per host, nothing per session.
 */
export function compileBaselineCodeFromNowOn(): void {
  setV8FlagFromNowOn('--always-sparkplug');
}
