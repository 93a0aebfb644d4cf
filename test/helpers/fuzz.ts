// How the property-based fuzzers run (fast-check). In `npm test` every property runs a few cases
// from a seed scripts/test.mjs draws afresh for each run and prints (so every run tries new cases,
// and a failure can be replayed); `npm run fuzz` sets FUZZ_RUNS (cases per property) and a fresh
// FUZZ_SEED it prints. FUZZ_SEED (and FUZZ_PATH, from a failure's report) replay a failure:
// FUZZ_SEED=123 FUZZ_PATH="4:1" npm run fuzz -- <file>, or FUZZ_SEED=123 node scripts/test.mjs <file>.
import { randomInt } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import fc from 'fast-check';

/** Cases per property asked for by `npm run fuzz` (0: the short runs of `npm test`). */
export const FUZZ_RUNS = Math.max(0, Math.floor(Number(process.env.FUZZ_RUNS ?? 0)) || 0);
/** The seed every property of this process uses: FUZZ_SEED, or a fresh one (a file run on its own). */
export const FUZZ_SEED = process.env.FUZZ_SEED !== undefined && process.env.FUZZ_SEED !== '' ? Number(process.env.FUZZ_SEED) : randomInt(2 ** 31);
const FUZZ_PATH = process.env.FUZZ_PATH || undefined;

/** The bound on one case when the property names none. */
const DEFAULT_CASE_MS = 30_000;

/** True in a long run (`npm run fuzz`). */
export const LONG_FUZZ = FUZZ_RUNS > 0;

/**
 * fast-check's parameters for a property that runs `short` cases in `npm test`: the seed, the
 * count (FUZZ_RUNS in a long run), and a bound on each case, so a hang fails the property.
 */
export function fuzzParams<T>(short: number, caseTimeoutMs = DEFAULT_CASE_MS): fc.Parameters<T> {
  return {
    seed: FUZZ_SEED,
    path: FUZZ_PATH,
    numRuns: LONG_FUZZ ? Math.max(short, FUZZ_RUNS) : short,
    timeout: caseTimeoutMs,
    // A network case takes milliseconds to seconds: shrink, but not for ever.
    interruptAfterTimeLimit: LONG_FUZZ ? undefined : 60_000,
    markInterruptAsFailure: false,
    endOnFailure: false,
  };
}

/** Runs an async property with fuzzParams; the failure report names the seed and path to replay. */
export async function fuzz<Ts extends [unknown, ...unknown[]]>(
  arbs: { [K in keyof Ts]: fc.Arbitrary<Ts[K]> },
  run: (...args: Ts) => Promise<void>,
  short: number,
  caseTimeoutMs?: number,
): Promise<void> {
  // A case over its time is failed, not stopped: it runs on. It is waited for (a while) before the
  // property answers, so it cannot act on a shared host under the next test's cases.
  const running = new Set<Promise<void>>();
  const tracked = (...args: Ts) => {
    const p = run(...args);
    running.add(p);
    void p.then(
      () => running.delete(p),
      () => running.delete(p),
    );
    return p;
  };
  const prop = fc.asyncProperty(...(arbs as unknown as [fc.Arbitrary<Ts[0]>]), tracked as unknown as (a: Ts[0]) => Promise<void>);
  const details = await fc.check(prop, fuzzParams(short, caseTimeoutMs));
  if (running.size > 0) await Promise.race([Promise.allSettled([...running]), sleep(caseTimeoutMs ?? DEFAULT_CASE_MS, undefined, { ref: false })]);
  if (details.failed) throw new Error(report(details));
}

/** What a failed property says: the case, the seed and path to replay it, and what went wrong. */
function report<T>(details: fc.RunDetails<T>): string {
  const why = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
  return [
    `Property failed after ${details.numRuns} case(s), shrunk ${details.numShrinks} time(s)`,
    `Replay: FUZZ_SEED=${details.seed} FUZZ_PATH="${details.counterexamplePath}"`,
    `Case: ${fc.stringify(details.counterexample).slice(0, 2000)}`,
    `Failure: ${why}`,
  ].join('\n');
}

/** The same for a synchronous property (pure functions: key names). */
export function fuzzSync<Ts extends [unknown, ...unknown[]]>(arbs: { [K in keyof Ts]: fc.Arbitrary<Ts[K]> }, run: (...args: Ts) => void, short: number): void {
  const prop = fc.property(...(arbs as unknown as [fc.Arbitrary<Ts[0]>]), run as unknown as (a: Ts[0]) => void);
  const details = fc.check(prop, fuzzParams(short));
  if (details.failed) throw new Error(report(details));
}
