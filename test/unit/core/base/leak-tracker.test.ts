// The leak tracker itself: it sees a disposable that is never disposed, and forgets one that is.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Disposable, disposableTimeout, Emitter, MutableDisposable, toDisposable } from '../../../../src/core/base/lifecycle';
import { LeakTracker } from '../../../helpers/leak-tracker';

class Owner extends Disposable {
  readonly child = this._register(new MutableDisposable());
  private readonly _onX = this._register(new Emitter<void>());
  readonly onX = this._onX.event;
}

test('a deliberate leak is reported with the stack that created it', () => {
  const tracker = new LeakTracker().install();
  try {
    const leaked = new Owner();
    leaked.child.value = toDisposable(() => {});
    // The owner, its holder, its emitter and the holder's value: none was disposed.
    assert.equal(tracker.leakCount, 4);
    assert.throws(
      () => tracker.assertNoLeaks(),
      (e: Error) => /4 disposable\(s\) leaked/.test(e.message) && /leak-tracker\.test\.ts/.test(e.message),
    );
    leaked.dispose();
    assert.equal(tracker.leakCount, 0, 'disposing the owner releases everything it holds');
  } finally {
    tracker.uninstall();
  }
});

test('nothing is reported when owners dispose what they hold; an emitter ends its subscriptions; a fired timer holds nothing', async () => {
  const tracker = new LeakTracker().install();
  try {
    const owner = new Owner();
    owner.onX(() => {}); // a subscription nobody keeps: it ends with the emitter
    owner.child.value = disposableTimeout(() => {}, 60_000);
    owner.child.value = toDisposable(() => {}); // replacing disposes the timer
    await new Promise<void>((resolve) => disposableTimeout(resolve, 1));
    owner.dispose();
    owner.onX(() => {}); // listening to a disposed emitter holds nothing
  } finally {
    tracker.uninstall();
  }
  tracker.assertNoLeaks();
});

test('with no tracker installed nothing is recorded', () => {
  const tracker = new LeakTracker();
  new Owner();
  assert.equal(tracker.leakCount, 0);
});
