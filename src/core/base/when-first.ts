import { DisposableStore, disposableTimeout, toDisposable, type Event } from './lifecycle';

/** How `whenFirst` ended: the event came (with its value), the time ran out, or the signal aborted. */
export type First<T> = { kind: 'event'; value: T } | { kind: 'timeout' } | { kind: 'abort' };

/** Longest delay a Node timer keeps (2^31-1 ms, about 24.8 days): a longer one would fire at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Waits for the first of: `event` firing, `timeoutMs` passing, `signal` aborting (the caller
 * went away; at once when it already has). Whichever comes first, the listener, the timer and
 * the abort listener are all removed before the promise settles, so a wait leaves nothing behind.
 */
export function whenFirst<T>(event: Event<T>, timeoutMs: number, signal?: AbortSignal): Promise<First<T>> {
  if (signal?.aborted) return Promise.resolve({ kind: 'abort' });
  return new Promise((resolve) => {
    const store = new DisposableStore();
    const settle = (outcome: First<T>) => {
      if (store.isDisposed) return;
      store.dispose();
      resolve(outcome);
    };
    store.add(event((value) => settle({ kind: 'event', value })));
    store.add(disposableTimeout(() => settle({ kind: 'timeout' }), Math.min(Math.max(0, timeoutMs), MAX_TIMER_MS)));
    if (signal) {
      const onAbort = () => settle({ kind: 'abort' });
      signal.addEventListener('abort', onAbort, { once: true });
      store.add(toDisposable(() => signal.removeEventListener('abort', onAbort)));
    }
  });
}

/** An event that fires whenever any of `events` does (one subscription to each, released together). */
export function anyEvent<T>(...events: Array<Event<T>>): Event<T> {
  return (listener) => {
    const store = new DisposableStore();
    for (const e of events) store.add(e(listener));
    return store;
  };
}

/** `event` with each value turned into `map(value)`. */
export function mapEvent<T, U>(event: Event<T>, map: (value: T) => U): Event<U> {
  return (listener) => event((value) => listener(map(value)));
}

/** `call`'s outcome, or `late()` thrown when it has none within `ms`; the timer is cleared either way. */
export async function within<T>(call: Promise<T>, ms: number, late: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(late()), ms);
  });
  try {
    return await Promise.race([call, expired]);
  } finally {
    clearTimeout(timer);
  }
}
