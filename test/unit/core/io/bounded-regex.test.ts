// A client's regex is tested under a time cap (src/core/io/bounded-regex.ts): a pattern that
// backtracks is stopped, but a simple one must not be called too costly because the machine was
// busy and the host got no CPU while the watchdog's clock ran (seen in a full test run: `wait
// --regex '^wait-2\d$'` refused as too costly).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { boundedFirstMatch, RegexTimeoutError } from '../../../../src/core/io/bounded-regex';
import { RegexBudget } from '../../../../src/core/io/regex-budget';
import { ensureNoDisposablesAreLeakedInTestSuite } from '../../../helpers/leak-tracker';

// Nothing here makes disposables; the guard checks it stays so (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedInTestSuite();

/** Sleeps `ms` without using the CPU, as a process the scheduler starves does. */
function sleepWithoutCpu(ms: number): void {
  const cell = new Int32Array(new SharedArrayBuffer(4));
  const end = performance.now() + ms;
  while (performance.now() < end) Atomics.wait(cell, 0, 0, 5);
}

test('a test starved of CPU past the cap is run again, and a simple pattern matches', () => {
  let calls = 0;
  // Stands for a pattern whose first test the machine starves (the watchdog fires with the host
  // having used almost no CPU); its second test is as quick as a real one.
  const starvedOnce = {
    test: () => {
      if (++calls === 1) sleepWithoutCpu(400);
      return true;
    },
  } as unknown as RegExp;
  assert.equal(boundedFirstMatch([starvedOnce], ['text'], [], 100), 0);
  assert.equal(calls, 2);
});

test('a test that burns CPU past the cap is still stopped as too costly', () => {
  let calls = 0;
  const burns = {
    test: () => {
      calls++;
      for (;;);
    },
  } as unknown as RegExp;
  assert.throws(() => boundedFirstMatch([burns], ['text'], [], 100), RegexTimeoutError);
  // Once, or twice if this process itself was starved meanwhile: never more.
  assert.ok(calls >= 1 && calls <= 2, `${calls} tests`);
  // A real catastrophic pattern too.
  assert.throws(() => boundedFirstMatch([/^(a+)+$/], ['a'.repeat(40) + 'b'], [], 100), RegexTimeoutError);
});

test("a starved run is charged the CPU it got, not the wait: a costly pattern's retry is still too costly, not the caller's time spent", () => {
  let calls = 0;
  // The first test is starved past the cap (as on a busy machine); the second burns CPU, as a
  // pattern that backtracks does.
  const starvedThenBurns = {
    test: () => {
      if (++calls === 1) sleepWithoutCpu(300);
      else for (;;);
      return true;
    },
  } as unknown as RegExp;
  const budget = new RegexBudget(150, 0);
  assert.throws(() => boundedFirstMatch([starvedThenBurns], ['text'], [budget], 100), RegexTimeoutError);
  assert.equal(calls, 2);
  // The starved wait (~300 ms) was not charged; the burning run (~100 ms) was.
  assert.ok(budget.available() > 20, `left ${budget.available()} of 150 ms`);
});
