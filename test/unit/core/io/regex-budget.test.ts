// Regex time as a token bucket (docs/protocol.md "Limits"): a client spends it, regains it at a
// fixed rate, and once it is spent a test is refused at once: the limit error (answered -32000, `reason: "limit_reached"`) with `limit: "regexTime"`.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { RegexBudget, regexBudgetSpent } from '../../../../src/core/io/regex-budget';
import { boundedFirstMatch, boundedRegexTest, RegexTimeoutError } from '../../../../src/core/io/bounded-regex';
import { RpcError } from '../../../../src/core/base/errors';
import { ensureNoDisposablesAreLeakedInTestSuite } from '../../../helpers/leak-tracker';

// Every disposable a test makes is disposed by its end (docs/testing.md).
ensureNoDisposablesAreLeakedInTestSuite();

describe('RegexBudget', () => {
  test('spends, refills at its rate, and never holds more than its capacity', () => {
    let now = 0;
    const b = new RegexBudget(1000, 100, () => now);
    b.charge(900);
    assert.equal(b.available(), 100);
    now += 2000;
    assert.equal(b.available(), 300);
    now += 60_000;
    assert.equal(b.available(), 1000);
    b.charge(5000);
    assert.equal(b.available(), 0);
    assert.equal(b.secondsUntil(100), 1);
  });

  test('a refusal never says to try again in about 0 s (a test cut short by its cap may leave time it could not use)', () => {
    const b = new RegexBudget(1000, 100, () => 0);
    b.charge(995);
    assert.match(regexBudgetSpent(b, 1).message, /try again in about 1 s/);
  });

  test('a spent budget refuses the next test before it runs', () => {
    const now = 0;
    const b = new RegexBudget(1000, 100, () => now);
    b.charge(1000);
    assert.throws(
      () => boundedRegexTest(/a/, 'a', [b]),
      (e: unknown) => e instanceof RpcError && e.code === -32005 && (e.data as { limit: string }).limit === 'regexTime',
    );
  });

  test('a test that backtracks is stopped at the cap, and the time is charged', () => {
    const b = new RegexBudget(1000, 100, () => 0); // a clock that stands still: nothing refills
    assert.throws(() => boundedFirstMatch([/^(a+)+$/], ['a'.repeat(40) + 'b'], [], 20), RegexTimeoutError);
    assert.throws(() => boundedFirstMatch([/^(a+)+$/], ['a'.repeat(40) + 'b'], [b], 20), RegexTimeoutError);
    assert.ok(b.available() < b.capacityMs, 'charged');
    assert.equal(boundedFirstMatch([/x/, /b$/], ['ab', 'c']), 1);
  });
});
