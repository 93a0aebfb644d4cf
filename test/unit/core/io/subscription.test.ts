// An output subscription (src/core/io/subscription.ts) under back-pressure: while its client is
// congested it waits for the client to drain, then sends on; the wait is released once the drain
// came, not merely forgotten. A real session (`cat`, which echoes what it is sent) in a real host.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { toDisposable, type IDisposable } from '../../../../src/core/base/lifecycle';
import { OutputSubscription, type NotificationSink } from '../../../../src/core/io/subscription';
import { startHost, TEST_WRITER, until } from '../../../helpers/host';
import { ensureNoDisposablesAreLeakedInTestSuite } from '../../../helpers/leak-tracker';

/** A client that is congested until `drain()`: it keeps what it is sent and who waits for it. */
class SlowSink implements NotificationSink {
  text = '';
  congestedNow = true;
  private readonly _waiting = new Set<() => void>();
  notify(method: string, params: Record<string, unknown>): void {
    if (method === 'pty/output') this.text += String(params.data);
  }
  congested(): boolean {
    return this.congestedNow;
  }
  whenDrained(fn: () => void): IDisposable {
    this._waiting.add(fn);
    return toDisposable(() => this._waiting.delete(fn));
  }
  get waiters(): number {
    return this._waiting.size;
  }
  /** The client took what was sent: it is no longer congested, and whoever waited is told, once. */
  drain(): void {
    this.congestedNow = false;
    const waiting = [...this._waiting];
    this._waiting.clear();
    for (const fn of waiting) fn();
  }
}

// Every test leaves nothing undisposed (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedInTestSuite();

test('a subscription whose client was congested sends on after the drain, and holds no drain wait after', { timeout: 30_000 }, async () => {
  const h = await startHost();
  try {
    const cat = await h.host.createSession({ command: 'cat', args: [] });
    const sink = new SlowSink();
    const sub = new OutputSubscription(cat, sink, { since: 0 });
    sub.start();
    cat.write('drained-1\r', TEST_WRITER);
    await until(() => sink.waiters === 1, 10_000, 'the subscription to wait for its client to drain');
    assert.equal(sink.text, '', 'nothing is sent to a congested client');
    sink.drain();
    await until(() => sink.text.includes('drained-1'), 10_000, 'the output once the client drained');
    sub.dispose();
  } finally {
    await h.close();
  }
});
