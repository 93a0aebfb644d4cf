import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/server';

/**
 * The requests a transport has read and not yet answered. `shared-pty mcp` waits for them (a few
 * seconds at most) when its input ends, so a script that pipes its requests in and closes stdin
 * gets an answer to each. A request the client cancelled (`notifications/cancelled`) is owed
 * nothing: MCP's receiver does not answer it.
 */
export class AnswersOwed {
  private readonly _owed = new Map<string, number>();
  private _settled: (() => void) | undefined;

  /** `inner` with each request it reads counted, and each answer sent through it uncounted. */
  wrap(inner: Transport): Transport {
    const outer: Transport = {
      start: async () => {
        inner.onclose = () => outer.onclose?.();
        inner.onerror = (e) => outer.onerror?.(e);
        inner.onmessage = (message, extra) => {
          this._read(message);
          outer.onmessage?.(message, extra);
        };
        await inner.start();
      },
      send: async (message, options) => {
        // An answer that could not be written (the client's end is closed) is not owed any more either.
        try {
          await inner.send(message, options);
        } finally {
          this._sent(message);
        }
      },
      close: () => inner.close(),
    };
    return outer;
  }

  /** Resolves once every request read so far has its answer (at once when none is owed). */
  allAnswered(): Promise<void> {
    if (this._owed.size === 0) return Promise.resolve();
    return new Promise((resolve) => (this._settled = resolve));
  }

  private _read(message: JSONRPCMessage): void {
    const m = message as { id?: unknown; method?: unknown; params?: { requestId?: unknown } };
    if (typeof m.method !== 'string') return;
    if (m.id !== undefined) this._count(m.id, 1);
    else if (m.method === 'notifications/cancelled') this._count(m.params?.requestId, -1);
  }

  private _sent(message: JSONRPCMessage): void {
    const m = message as { id?: unknown; method?: unknown };
    if (m.method === undefined && m.id !== undefined) this._count(m.id, -1);
  }

  private _count(id: unknown, by: 1 | -1): void {
    if (typeof id !== 'string' && typeof id !== 'number') return;
    // 1 and "1" are different ids.
    const key = typeof id === 'number' ? `n${id}` : `s${id}`;
    const left = (this._owed.get(key) ?? 0) + by;
    if (left > 0) this._owed.set(key, left);
    else this._owed.delete(key);
    if (this._owed.size === 0 && this._settled) {
      const settled = this._settled;
      this._settled = undefined;
      settled();
    }
  }
}
