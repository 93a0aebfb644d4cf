import * as vm from 'node:vm';
import { invalidParams } from '../base/errors';

/**
 * How long one test of a client's regex may run. A pattern that backtracks catastrophically
 * (`^(a+)+$` on a line of forty a's and a b) would otherwise hold the host's one thread for
 * minutes; a real pattern on a screen or a megabyte of output takes well under a millisecond.
 */
export const REGEX_BUDGET_MS = 250;

// One context for every test: the pattern and the text go in as globals, the script stays compiled.
const context = vm.createContext({ pattern: /(?:)/, text: '' });
const script = new vm.Script('pattern.test(text)');

/**
 * `pattern.test(text)`, stopped after REGEX_BUDGET_MS: V8's watchdog interrupts the backtracking,
 * and the caller gets -32602 saying the regex is too costly, while the host goes on serving.
 */
export function boundedRegexTest(pattern: RegExp, text: string): boolean {
  context.pattern = pattern;
  context.text = text;
  try {
    return script.runInContext(context, { timeout: REGEX_BUDGET_MS }) === true;
  } catch (e) {
    if ((e as { code?: string }).code === 'ERR_SCRIPT_EXECUTION_TIMEOUT') {
      throw invalidParams(`regex too costly: matching it took more than ${REGEX_BUDGET_MS} ms (catastrophic backtracking?); simplify it`, { regex: pattern.source });
    }
    throw e;
  } finally {
    context.text = '';
  }
}
