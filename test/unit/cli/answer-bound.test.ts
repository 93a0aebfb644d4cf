// docs/cli.md#errors: a call is said stalled only past its own wait and 15 s more. An agent's write
// that does not wait for the outcome still waits for the person (their answer to an approval
// question, their pause in typing): `shared-pty mcp` cut such a send_keys off as "stalled" at 15 s
// while the host still waited for the person (found by an outside audit).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ownWaitMs } from '../../../src/cli/answer-bound';
import { DEFAULT_APPROVAL_WAIT_MS, DEFAULT_ARBITRATION_WAIT_MS, DEFAULT_SEND_TIMEOUT_MS } from '../../../src/core/base/param-limits';
import { ensureNoDisposablesAreLeakedInTestSuite } from '../../helpers/leak-tracker';

ensureNoDisposablesAreLeakedInTestSuite();

test("a write's own wait covers the person's answer and their pause, with or without a timeout", () => {
  for (const method of ['pty/write', 'pty/appInput']) {
    assert.ok(ownWaitMs(method, {}) >= DEFAULT_APPROVAL_WAIT_MS, `${method}: the approval question's wait`);
    assert.ok(ownWaitMs(method, {}) >= DEFAULT_ARBITRATION_WAIT_MS, `${method}: the pause's wait`);
    assert.ok(ownWaitMs(method, { timeout: 2000 }) >= DEFAULT_APPROVAL_WAIT_MS, `${method} with a short timeout: the question still waits its own`);
    assert.equal(ownWaitMs(method, { timeout: 100_000 }), 100_000, `${method}: a longer pause it was given`);
  }
  // One that waits for the outcome keeps to its timeout, as a send does (the person's wait is inside it).
  assert.equal(ownWaitMs('pty/write', { wait: true }), DEFAULT_SEND_TIMEOUT_MS);
  assert.equal(ownWaitMs('pty/write', { wait: true, timeout: 5000 }), 5000);
  assert.equal(ownWaitMs('pty/send', {}), DEFAULT_SEND_TIMEOUT_MS);
  assert.equal(ownWaitMs('pty/read', {}), 0, 'a read answers at once');
});
