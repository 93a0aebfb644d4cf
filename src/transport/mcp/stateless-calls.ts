/**
 * The `/mcp` requests served with no session, in flight, by their caller and JSON-RPC id: such a
 * client's `notifications/cancelled` comes in a POST of its own, which names the request it
 * cancels (docs/protocol.md#6-mcp). The call is then stopped and answered with nothing, as the
 * specification asks of a cancelled request.
 */
export class StatelessCalls {
  private readonly _byOwner = new WeakMap<object, Map<string, () => void>>();

  /** Keeps `stop` for `owner`'s request `id` until the returned function is called (its answer went). */
  add(owner: object, id: unknown, stop: () => void): () => void {
    let calls = this._byOwner.get(owner);
    if (!calls) this._byOwner.set(owner, (calls = new Map()));
    const key = JSON.stringify(id); // 1 and "1" are two ids
    calls.set(key, stop);
    return () => {
      if (calls.get(key) === stop) calls.delete(key);
    };
  }

  /** Stops `owner`'s request `id`, if one is in flight; another credential's is never reached. */
  cancel(owner: object, id: unknown): boolean {
    const key = JSON.stringify(id);
    const stop = this._byOwner.get(owner)?.get(key);
    if (!stop) return false;
    this._byOwner.get(owner)!.delete(key);
    stop();
    return true;
  }
}
