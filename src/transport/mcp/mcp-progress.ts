import type { IDisposable } from '../../core/base/lifecycle';

/** How often a long tool call reports progress (docs/guarantees.md#events-instead-of-polling: at least every 5 s). */
export const enum ProgressTuning {
  /**
   * Well inside the promised 5 s, so a timer that fires late on a busy host (or a notification
   * that waits behind a large answer) still keeps the promise; a notification is ~150 bytes.
   */
  IntervalMs = 3000,
}

/** What a tool handler gets from the SDK that matters here (its RequestHandlerExtra). */
export interface ProgressExtra {
  _meta?: { progressToken?: string | number };
  sendNotification(notification: { method: 'notifications/progress'; params: { progressToken: string | number; progress: number; message?: string } }): Promise<void>;
}

/**
 * For a tool call that gave a `progressToken`: sends `notifications/progress` every few seconds
 * until the returned handle is disposed, so a client that resets its timeout on progress never
 * hits it during a long `send`, `wait_for` or `wait_event`. Nothing for a call without a token.
 */
export function reportProgress(extra: ProgressExtra): IDisposable {
  const token = extra._meta?.progressToken;
  if (token === undefined) return { dispose() {} };
  const started = Date.now();
  const timer = setInterval(() => {
    const seconds = Math.round((Date.now() - started) / 1000);
    // progress must grow with every notification: the seconds waited do.
    extra
      .sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: seconds, message: `still working (${seconds} s)` } })
      .catch(() => {}); // the client went away: the call's own answer fails the same way
  }, ProgressTuning.IntervalMs);
  return { dispose: () => clearInterval(timer) };
}
