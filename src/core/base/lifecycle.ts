import { onUnexpectedError } from './unexpected-error';

/** A resource that must be released exactly once. */
export interface IDisposable {
  dispose(): void;
}

/**
 * Watches disposables being made and released, so a test can fail when one leaks (as VS Code's
 * `ensureNoDisposablesAreLeakedInTestSuite`; see test/helpers/leak-tracker.ts). Off by default:
 * then each creation and disposal costs one check of a module variable.
 */
export interface IDisposableTracker {
  /** `d` was just created. */
  trackDisposable(d: IDisposable): void;
  /** `d` was released (disposed, or, for a timer, fired: either way it holds nothing any more). */
  markAsDisposed(d: IDisposable): void;
}

let tracker: IDisposableTracker | null = null;

/** Installs `t` (null: none) as the process's disposable tracker; returns the previous one. */
export function setDisposableTracker(t: IDisposableTracker | null): IDisposableTracker | null {
  const previous = tracker;
  tracker = t;
  return previous;
}

/** Wraps a callback as a disposable that runs it at most once. */
export function toDisposable(fn: () => void): IDisposable {
  let done = false;
  const d: IDisposable = {
    dispose() {
      if (!done) {
        done = true;
        tracker?.markAsDisposed(d);
        fn();
      }
    },
  };
  tracker?.trackDisposable(d);
  return d;
}

/**
 * Runs `fn` once after `ms` unless disposed first: the timer to keep in a `MutableDisposable`.
 * Once it has fired it counts as disposed; `unref` lets the process end while it waits.
 */
export function disposableTimeout(fn: () => void, ms: number, options?: { unref?: boolean }): IDisposable {
  const timer = setTimeout(() => {
    handle.dispose();
    fn();
  }, ms);
  if (options?.unref) timer.unref?.();
  const handle = toDisposable(() => clearTimeout(timer));
  return handle;
}

/** Base class that owns child disposables and releases them with itself. */
export abstract class Disposable implements IDisposable {
  private readonly _children = new Set<IDisposable>();
  private _disposed = false;

  constructor() {
    tracker?.trackDisposable(this);
  }

  get isDisposed(): boolean {
    return this._disposed;
  }

  /** Ties `d` to this object's lifetime; disposes it at once if we are already gone. */
  protected _register<T extends IDisposable>(d: T): T {
    if (this._disposed) d.dispose();
    else this._children.add(d);
    return d;
  }

  dispose(): void {
    if (this._disposed) return;
    this._disposed = true;
    tracker?.markAsDisposed(this);
    for (const d of this._children) d.dispose();
    this._children.clear();
  }
}

/** A bag of disposables released together: what an owner holds for one of several things it tracks. */
export class DisposableStore extends Disposable {
  /** Adds `d` to the store (disposing it at once if the store is already disposed). */
  add<T extends IDisposable>(d: T): T {
    return this._register(d);
  }
}

/** Holds one replaceable disposable (a timer, an attached client): setting a new value disposes the old. */
export class MutableDisposable<T extends IDisposable> implements IDisposable {
  private _value: T | undefined;
  private _disposed = false;

  constructor() {
    tracker?.trackDisposable(this);
  }

  get value(): T | undefined {
    return this._value;
  }
  /** Replaces the value, disposing the old one; once the holder is disposed, a new value is disposed at once. */
  set value(v: T | undefined) {
    if (this._value === v) return;
    this._value?.dispose();
    if (this._disposed) {
      v?.dispose();
      this._value = undefined;
    } else {
      this._value = v;
    }
  }
  clear(): void {
    this.value = undefined;
  }
  dispose(): void {
    if (this._disposed) return;
    this.clear();
    this._disposed = true;
    tracker?.markAsDisposed(this);
  }
}

/** A disposable that holds nothing (not tracked: there is nothing to leak). */
const NONE: IDisposable = Object.freeze({ dispose() {} });

/** A subscription function: call it with a listener, dispose the result to stop listening. */
export type Event<T> = (listener: (e: T) => void) => IDisposable;

/**
 * Fires events to listeners. A throwing listener does not stop the others, nor the code that
 * fired (a PTY read, a timer): its error goes to `onUnexpectedError`, which logs it.
 * Disposing the emitter ends every subscription to it.
 *
 * Small when nobody listens: a session has ~15 emitters, most of them without listeners while it
 * is idle, and a host holds 256 sessions; the lists are made at the first subscription, and a
 * subscription is one object (bench/README.md, issue 25: memory per session).
 */
export class Emitter<T> implements IDisposable {
  /**
   * Subscriptions in the order they came; undefined until the first. A Set, so that one leaving
   * costs the same however many listen (10,000 waits ending at once each filtered the lists
   * anew: seconds of the host's thread, and hundreds of MB of garbage).
   */
  private _subscriptions: Set<Subscription<T>> | undefined;
  private _disposed = false;

  constructor() {
    tracker?.trackDisposable(this);
  }

  readonly event: Event<T> = (listener) => {
    // A disposed emitter fires no more: listening to it holds nothing (a client that already closed).
    if (this._disposed) return NONE;
    const subscription = new Subscription(this, listener);
    (this._subscriptions ??= new Set()).add(subscription);
    return subscription;
  };

  /** Whether anyone listens now (a wait that already ended has stopped listening). */
  hasListeners(): boolean {
    return this._subscriptions !== undefined && this._subscriptions.size > 0;
  }

  fire(e: T): void {
    const subscriptions = this._subscriptions;
    if (!subscriptions || subscriptions.size === 0) return;
    // Those listening as it fires, each called even if an earlier one ends it meanwhile; one that
    // starts listening meanwhile hears the next event.
    if (subscriptions.size === 1) return call(subscriptions.values().next().value!.listener, e);
    for (const s of Array.from(subscriptions)) call(s.listener, e);
  }

  /** `s` ended: its listener leaves (called by Subscription.dispose only). */
  _unsubscribe(s: Subscription<T>): void {
    this._subscriptions?.delete(s);
  }

  dispose(): void {
    if (this._disposed) return;
    this._disposed = true;
    const subscriptions = this._subscriptions;
    this._subscriptions = undefined;
    if (subscriptions) for (const s of subscriptions) s.dispose();
    tracker?.markAsDisposed(this);
  }
}

/** Calls a listener; what it throws goes to onUnexpectedError, not to the code that fired. */
function call<T>(listener: (e: T) => void, e: T): void {
  try {
    listener(e);
  } catch (err) {
    onUnexpectedError(err);
  }
}

/** One listener's subscription to an Emitter: disposing it (once) takes the listener off. */
class Subscription<T> implements IDisposable {
  private _done = false;

  constructor(
    private readonly _emitter: Emitter<T>,
    readonly listener: (e: T) => void,
  ) {
    tracker?.trackDisposable(this);
  }

  dispose(): void {
    if (this._done) return;
    this._done = true;
    tracker?.markAsDisposed(this);
    this._emitter._unsubscribe(this);
  }
}
