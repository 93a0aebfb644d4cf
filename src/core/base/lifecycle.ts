import { onUnexpectedError } from './unexpected-error';

/** A resource that must be released exactly once. */
export interface IDisposable {
  dispose(): void;
}

/** Wraps a callback as a disposable that runs it at most once. */
export function toDisposable(fn: () => void): IDisposable {
  let done = false;
  return {
    dispose() {
      if (!done) {
        done = true;
        fn();
      }
    },
  };
}

/** Base class that owns child disposables and releases them with itself. */
export abstract class Disposable implements IDisposable {
  private readonly _children = new Set<IDisposable>();
  private _disposed = false;

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
    for (const d of this._children) d.dispose();
    this._children.clear();
  }
}

/** Holds one replaceable disposable (a timer, an attached client): setting a new value disposes the old. */
export class MutableDisposable<T extends IDisposable> implements IDisposable {
  private _value: T | undefined;
  get value(): T | undefined {
    return this._value;
  }
  set value(v: T | undefined) {
    if (this._value === v) return;
    this._value?.dispose();
    this._value = v;
  }
  clear(): void {
    this.value = undefined;
  }
  dispose(): void {
    this.clear();
  }
}

/** A subscription function: call it with a listener, dispose the result to stop listening. */
export type Event<T> = (listener: (e: T) => void) => IDisposable;

/**
 * Fires events to listeners. A throwing listener does not stop the others, nor the code that
 * fired (a PTY read, a timer): its error goes to `onUnexpectedError`, which logs it.
 */
export class Emitter<T> implements IDisposable {
  private _listeners: Array<(e: T) => void> = [];

  readonly event: Event<T> = (listener) => {
    this._listeners.push(listener);
    return toDisposable(() => {
      this._listeners = this._listeners.filter((l) => l !== listener);
    });
  };

  fire(e: T): void {
    for (const l of this._listeners.slice()) {
      try {
        l(e);
      } catch (err) {
        onUnexpectedError(err);
      }
    }
  }

  dispose(): void {
    this._listeners = [];
  }
}
