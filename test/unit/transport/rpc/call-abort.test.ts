// A call's abort, made on first use (src/transport/rpc/call-abort.ts): a call that looks at its
// signal only after it was aborted still sees it aborted, and one that looked first hears the abort.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CallAbort } from '../../../../src/transport/rpc/call-abort';
import { ensureNoDisposablesAreLeakedInTestSuite } from '../../../helpers/leak-tracker';

ensureNoDisposablesAreLeakedInTestSuite();

test('a signal first looked at after the abort is aborted already', () => {
  const call = new CallAbort();
  call.abort();
  assert.equal(call.signal.aborted, true);
});

test('a signal looked at before the abort hears it, once', () => {
  const call = new CallAbort();
  const signal = call.signal;
  let heard = 0;
  signal.addEventListener('abort', () => heard++);
  assert.equal(signal.aborted, false);
  call.abort();
  call.abort();
  assert.equal(signal.aborted, true);
  assert.equal(heard, 1);
  assert.equal(call.signal, signal, 'one signal per call');
});
