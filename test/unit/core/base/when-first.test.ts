// whenFirst (src/core/base/when-first.ts): the first of an event, a timeout or an abort wins, and
// whichever wins, nothing is left listening: no emitter listener, no abort listener, no timer (the
// leak tracker sees every subscription and timer made).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { Emitter } from '../../../../src/core/base/lifecycle';
import { anyEvent, mapEvent, whenFirst } from '../../../../src/core/base/when-first';
import { ensureNoDisposablesAreLeakedInTestSuite } from '../../../helpers/leak-tracker';

ensureNoDisposablesAreLeakedInTestSuite();

/** A timeout no test run reaches: the wait must end some other way. */
const NEVER_MS = 10 * 60 * 1000;

/** Asserts nothing listens to `emitter` or to `signal` any more. */
function nothingListens(emitter: { hasListeners(): boolean }, signal: AbortSignal): void {
  assert.equal(emitter.hasListeners(), false, 'the event listener is removed');
  assert.equal(getEventListeners(signal, 'abort').length, 0, 'the abort listener is removed');
}

test('the event first: its value; the timer and both listeners are gone', async () => {
  const emitter = new Emitter<string>();
  const abort = new AbortController();
  const waiting = whenFirst(emitter.event, NEVER_MS, abort.signal);
  assert.equal(emitter.hasListeners(), true);
  assert.equal(getEventListeners(abort.signal, 'abort').length, 1);
  emitter.fire('a');
  emitter.fire('b');
  assert.deepEqual(await waiting, { kind: 'event', value: 'a' });
  nothingListens(emitter, abort.signal);
  emitter.dispose();
});

test('the timeout first: timeout; the listeners are gone', async () => {
  const emitter = new Emitter<string>();
  const abort = new AbortController();
  assert.deepEqual(await whenFirst(emitter.event, 0, abort.signal), { kind: 'timeout' });
  nothingListens(emitter, abort.signal);
  emitter.dispose();
});

test('the abort first: abort; the timer and the listeners are gone', async () => {
  const emitter = new Emitter<string>();
  const abort = new AbortController();
  const waiting = whenFirst(emitter.event, NEVER_MS, abort.signal);
  abort.abort();
  assert.deepEqual(await waiting, { kind: 'abort' });
  nothingListens(emitter, abort.signal);
  emitter.dispose();
});

test('a signal already aborted: abort at once, nothing subscribed', async () => {
  const emitter = new Emitter<string>();
  const abort = new AbortController();
  abort.abort();
  assert.deepEqual(await whenFirst(emitter.event, NEVER_MS, abort.signal), { kind: 'abort' });
  nothingListens(emitter, abort.signal);
  emitter.dispose();
});

test('without a signal, and with a timeout past what a Node timer holds (it must not fire at once)', async () => {
  const emitter = new Emitter<number>();
  const waiting = whenFirst(emitter.event, 2 ** 40);
  // A timer over 2^31-1 ms would be cut to 1 ms, and timers of equal delay fire in the order they
  // were set: it would fire before this one.
  await new Promise((r) => setTimeout(r, 1));
  emitter.fire(7);
  assert.deepEqual(await waiting, { kind: 'event', value: 7 });
  assert.equal(emitter.hasListeners(), false);
  emitter.dispose();
});

test('anyEvent and mapEvent: the first of several events wins; every one is let go', async () => {
  const output = new Emitter<string>();
  const exit = new Emitter<number>();
  const abort = new AbortController();
  const waiting = whenFirst(
    anyEvent<string>(
      output.event,
      mapEvent(exit.event, (code) => `exit ${code}`),
    ),
    NEVER_MS,
    abort.signal,
  );
  exit.fire(3);
  output.fire('late');
  assert.deepEqual(await waiting, { kind: 'event', value: 'exit 3' });
  nothingListens(output, abort.signal);
  assert.equal(exit.hasListeners(), false);
  output.dispose();
  exit.dispose();
});
