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
  let allowance = capMs;
  let tightest: RegexBudget | undefined;
  for (const b of budgets) {
    const left = b.available();
    if (left < allowance) {
      allowance = left;
      tightest = b;
    }
  }
  if (tightest && allowance < MIN_TEST_MS) throw regexBudgetSpent(tightest, MIN_TEST_MS);
  context.patterns = patterns;
  context.texts = texts;
  const started = performance.now();
  try {
    return script.runInContext(context, { timeout: Math.max(MIN_TEST_MS, Math.floor(allowance)) }) as number;
  } catch (e) {
    if ((e as { code?: string }).code === 'ERR_SCRIPT_EXECUTION_TIMEOUT') {
      if (tightest) throw regexBudgetSpent(tightest, MIN_TEST_MS);
      throw new RegexTimeoutError(capMs);
    }
    throw e;
  } finally {
    const took = performance.now() - started;
    for (const b of budgets) b.charge(took);
    context.patterns = [];
    context.texts = [];
  }
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
