// A disposable tracker for tests (lifecycle.ts's IDisposableTracker): it remembers where each
// disposable was created until it is disposed, so a test can fail on a leak and say where it was made.
import { after, afterEach, beforeEach } from 'node:test';
import { setDisposableTracker, type IDisposable, type IDisposableTracker } from '../../src/core/base/lifecycle';

/** Records every disposable created while installed, with its creation stack, until it is disposed. */
export class LeakTracker implements IDisposableTracker {
  private readonly _live = new Map<IDisposable, string>();
  private _previous: IDisposableTracker | null = null;

  trackDisposable(d: IDisposable): void {
    this._live.set(d, new Error('created').stack ?? '(no stack)');
  }

  markAsDisposed(d: IDisposable): void {
    this._live.delete(d);
  }

  /** Starts tracking (process-wide) what is created from now on. */
  install(): this {
    this._previous = setDisposableTracker(this);
    return this;
  }

  /** Stops tracking; what was recorded stays readable. */
  uninstall(): void {
    setDisposableTracker(this._previous);
  }

  /** How many disposables were created and not disposed. */
  get leakCount(): number {
    return this._live.size;
  }

  /** One paragraph per leaked disposable: its kind and the stack that created it. */
  report(): string {
    return [...this._live].map(([d, stack]) => `${d.constructor?.name ?? 'Object'} ${stack.split('\n').slice(2, 9).join('\n')}`).join('\n\n');
  }

  /** Throws, with every creation stack, if anything tracked is still undisposed. */
  assertNoLeaks(): void {
    if (this._live.size > 0) throw new Error(`${this._live.size} disposable(s) leaked:\n${this.report()}`);
  }
}

/**
 * Tracks every disposable each test of the file creates and fails the test when one is left
 * undisposed (VS Code's `ensureNoDisposablesAreLeakedInTestSuite`). `settle` runs before the check,
 * for what ends asynchronously (a socket's close event).
 */
export function ensureNoDisposablesAreLeakedInTestSuite(settle?: (tracker: LeakTracker) => Promise<void>): void {
  let tracker: LeakTracker;
  beforeEach(() => {
    tracker = new LeakTracker().install();
  });
  afterEach(async () => {
    try {
      await settle?.(tracker);
      tracker.assertNoLeaks();
    } finally {
      tracker.uninstall();
    }
  });
}

/**
 * The same guard for a suite that shares a host or sessions between its tests (made in `before` or
 * one test, closed in `after`): it tracks from the moment it is called (call it at the file's top
 * level, so the shared host is tracked too) and checks once, in an `after` hook. Hooks run in the
 * order they are registered, so call it below the `after` that closes the shared host: the check
 * then runs once everything the suite made should be gone. `settle` as above.
 */
export function ensureNoDisposablesAreLeakedBySuite(settle?: (tracker: LeakTracker) => Promise<void>): void {
  const tracker = new LeakTracker().install();
  after(async () => {
    try {
      await settle?.(tracker);
      tracker.assertNoLeaks();
    } finally {
      tracker.uninstall();
    }
  });
}
