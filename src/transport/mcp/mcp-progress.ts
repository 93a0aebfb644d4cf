import type { IDisposable } from '../../core/base/lifecycle';

/** How often a long tool call reports progress (docs/guarantees.md#events-instead-of-polling: at least every 5 s). */
export const enum ProgressTuning {
  /**
   * Well inside the promised 5 s, so a timer that fires late on a busy host (or a notification
   * that waits behind a large answer) still keeps the promise; a notification is ~150 bytes.
   */
  IntervalMs = 3000,
}

/** What a tool handler gets from the SDK that matters here (the request part of its ServerContext). */
export interface ProgressContext {
  mcpReq: {
    _meta?: { progressToken?: string | number };
    notify(notification: { method: 'notifications/progress'; params: { progressToken: string | number; progress: number; message?: string } }): Promise<void>;
  };
}

/**
 * For a tool call that gave a `progressToken`: sends `notifications/progress` every few seconds
 * until the returned handle is disposed, so a client that resets its timeout on progress never
 * hits it during a long `send`, `wait_for` or `wait_event`. Nothing for a call without a token.
 */
export function reportProgress(ctx: ProgressContext): IDisposable {
  const token = ctx.mcpReq._meta?.progressToken;
  if (token === undefined) return { dispose() {} };
  const started = Date.now();
  const timer = setInterval(() => {
    const seconds = Math.round((Date.now() - started) / 1000);
    // progress must grow with every notification: the seconds waited do.
    ctx.mcpReq
      .notify({ method: 'notifications/progress', params: { progressToken: token, progress: seconds, message: `still working (${seconds} s)` } })
      .catch(() => {}); // the client went away: the call's own answer fails the same way
  }, ProgressTuning.IntervalMs);
  return { dispose: () => clearInterval(timer) };
}
