// An Emitter's subscriptions (src/core/base/lifecycle.ts): each ends alone, whatever else listens;
// a fire reaches those listening as it began. Many waits ending at once (an outside audit's 10,000
// `pty/wait`s on ten connections that closed) each filtered the listener lists anew, and froze
// the host for seconds: a subscription now leaves in constant time, which these behaviours pin.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Emitter } from '../../../../src/core/base/lifecycle';
import { ensureNoDisposablesAreLeakedInTestSuite } from '../../../helpers/leak-tracker';

// Every test leaves nothing undisposed (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedInTestSuite();

test('one listener subscribed twice: ending one subscription leaves the other', () => {
  const emitter = new Emitter<number>();
  try {
    const got: number[] = [];
    const listener = (n: number) => got.push(n);
    const first = emitter.event(listener);
    emitter.event(listener);
    emitter.fire(1);
    first.dispose();
    emitter.fire(2);
    assert.deepEqual(got, [1, 1, 2]);
    assert.equal(emitter.hasListeners(), true);
  } finally {
    emitter.dispose();
  }
});

test('a fire reaches those listening as it began: one ended meanwhile still hears it, one added meanwhile hears the next', () => {
  const emitter = new Emitter<string>();
  try {
    const got: string[] = [];
    let late: { dispose(): void } | undefined;
    const second = { dispose: () => undefined } as { dispose(): void };
    emitter.event((e) => {
      got.push(`a:${e}`);
      second.dispose();
      late ??= emitter.event((x) => got.push(`late:${x}`));
    });
    const b = emitter.event((e) => got.push(`b:${e}`));
    second.dispose = () => b.dispose();
    emitter.fire('1');
    emitter.fire('2');
    assert.deepEqual(got, ['a:1', 'b:1', 'a:2', 'late:2']);
  } finally {
    emitter.dispose();
  }
});

test('10,000 subscriptions end in any order; each is heard until it ends, and none after', () => {
  const emitter = new Emitter<void>();
  try {
    const heard = new Array<number>(10_000).fill(0);
    const subscriptions = heard.map((_, i) => emitter.event(() => heard[i]++));
    emitter.fire();
    // Every other one ends, from the last down; then the rest, from the first up.
    for (let i = subscriptions.length - 1; i >= 0; i -= 2) subscriptions[i].dispose();
    emitter.fire();
    assert.deepEqual([heard[0], heard[1], heard[9998], heard[9999]], [2, 1, 2, 1]);
    for (const s of subscriptions) s.dispose();
    emitter.fire();
    assert.equal(emitter.hasListeners(), false);
    assert.equal(
      heard.reduce((a, b) => a + b, 0),
      15_000,
    );
  } finally {
    emitter.dispose();
  }
});
