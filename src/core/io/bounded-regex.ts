import * as vm from 'node:vm';
import { invalidParams } from '../base/errors';
import { regexBudgetSpent, type RegexBudget } from './regex-budget';

/**
 * How long one test of a client's regex may run. A pattern that backtracks catastrophically
 * (`^(a+)+$` on a line of forty a's and a b) would otherwise hold the host's one thread for
 * minutes; a real pattern on a screen or a megabyte of output takes well under a millisecond.
 */
export const REGEX_BUDGET_MS = 250;

/** Less regex time than this left in a caller's budget: the test is refused rather than started (V8's watchdog counts whole ms). */
const MIN_TEST_MS = 1;

// One context for every test: the patterns and the texts go in as globals, the script stays compiled.
const context = vm.createContext({ patterns: [] as RegExp[], texts: [] as string[] });
/** The index of the first pattern that matches one of the texts, or -1. */
const script = new vm.Script('(() => { for (let i = 0; i < patterns.length; i++) for (const t of texts) if (patterns[i].test(t)) return i; return -1; })()');

/** A test stopped by the per-test cap (not by the caller's budget). */
export class RegexTimeoutError extends Error {
  constructor(readonly ms: number) {
    super(`regex test stopped after ${ms} ms`);
    this.name = 'RegexTimeoutError';
  }
}

/**
 * The index of the first of `patterns` that matches one of `texts` (-1: none), run in at most
 * `capMs` and at most what is left of each of `budgets` (the caller's connection and token, see
 * regex-budget.ts), which are charged the time it took. V8's watchdog interrupts a pattern that
 * backtracks: past the cap it throws RegexTimeoutError, past a budget the budget's -32000
 * (`limit: "regexTime"`), so the host goes on serving either way.
 */
export function boundedFirstMatch(
  patterns: readonly RegExp[],
  texts: readonly string[],
  budgets: readonly RegexBudget[] = [],
  capMs = REGEX_BUDGET_MS,
): number {
  if (patterns.length === 0 || texts.length === 0) return -1;
  context.patterns = patterns;
  context.texts = texts;
  try {
    // A test the machine starved (the process ran for less than half the allowance before the
    // watchdog fired, with other processes on the CPUs) is run once more: a simple pattern is
    // never called too costly for a busy machine's sake. A costly one burns CPU all along.
    for (let attempt = 1; ; attempt++) {
      const { allowance, tightest } = allowanceOf(budgets, capMs);
      if (tightest && allowance < MIN_TEST_MS) throw regexBudgetSpent(tightest, MIN_TEST_MS);
      const cpu = process.cpuUsage();
      const started = performance.now();
      let charged: number | undefined;
      try {
        return runTest(allowance);
      } catch (e) {
        if ((e as { code?: string }).code !== 'ERR_SCRIPT_EXECUTION_TIMEOUT') throw e;
        const used = process.cpuUsage(cpu);
        const usedMs = (used.user + used.system) / 1000;
        if (attempt === 1 && usedMs < allowance / 2) {
          // Charged the CPU it got, not the time the machine kept it waiting: the budgets keep
          // room for the run again (else a costly pattern would read as the caller's time spent).
          charged = usedMs;
          continue;
        }
        if (tightest) throw regexBudgetSpent(tightest, MIN_TEST_MS);
        throw new RegexTimeoutError(capMs);
      } finally {
        const took = performance.now() - started;
        for (const b of budgets) b.charge(Math.min(took, charged ?? took));
      }
    }
  } finally {
    context.patterns = [];
    context.texts = [];
  }
}

/** The time a test may take: the cap, or less if a budget has less left (that budget is the tightest). */
function allowanceOf(budgets: readonly RegexBudget[], capMs: number): { allowance: number; tightest: RegexBudget | undefined } {
  let allowance = capMs;
  let tightest: RegexBudget | undefined;
  for (const b of budgets) {
    const left = b.available();
    if (left < allowance) {
      allowance = left;
      tightest = b;
    }
  }
  return { allowance, tightest };
}

/** One run of the script in at most `allowance` ms. */
function runTest(allowance: number): number {
  return script.runInContext(context, { timeout: Math.max(MIN_TEST_MS, Math.floor(allowance)) }) as number;
}

/**
 * `pattern.test(text)`, within REGEX_BUDGET_MS and the caller's `budgets`: a pattern over the cap
 * is -32602 saying the regex is too costly; a caller whose regex time is spent gets -32000.
 */
export function boundedRegexTest(pattern: RegExp, text: string, budgets: readonly RegexBudget[] = []): boolean {
  try {
    return boundedFirstMatch([pattern], [text], budgets) === 0;
  } catch (e) {
    if (e instanceof RegexTimeoutError) {
      throw invalidParams(`regex too costly: matching it took more than ${REGEX_BUDGET_MS} ms (catastrophic backtracking?); simplify it`, {
        regex: pattern.source,
      });
    }
    throw e;
  }
}
