import type { IDisposable } from '../core/base/lifecycle';
import type { Notification, RpcClient } from './rpc-client';

/** How a followed session ended, as its `pty/exit` notification said. */
export interface FollowedExit {
  exitCode: number | undefined;
  /** The signal's name, when a signal ended it. */
  signal: string | undefined;
}

/** What a follower does with what it receives: draw it, end on exit. */
export interface FollowerHandlers {
  /** The session's picture from `pty/snapshot`, drawn before any output. */
  snapshot(data: string): void;
  /** Raw output, in order, from the point the picture shows. */
  output(data: string): void;
  /** The program ended and all of its output has been delivered. */
  exit(exit: FollowedExit): void;
}

/** Where a follower starts. */
export interface FollowOptions {
  /** Draw the current picture first, with this many scrollback rows; without it, follow from the first retained byte. */
  snapshotScrollback?: number;
  /**
   * A host that cannot give a snapshot (an older one): called with the error, and the output is
   * replayed from the first retained byte instead. Without it the error is thrown.
   */
  onSnapshotError?: (e: Error) => void;
}

/**
 * Follows one session for one of the human's views (the editor terminal, `shared-pty attach`):
 * `pty/snapshot`, then `pty/subscribe` from exactly its cursor (nothing missed, nothing twice),
 * then each `pty/output` and the final `pty/exit` of that session to the handlers. The
 * subscription says the client is the user (`client: { origin: 'user' }`), so its writes on
 * the same connection are attributed to the human. The connection is the caller's: it may be
 * shared by several followers, so the follower never closes it.
 */
export class SessionFollower implements IDisposable {
  private readonly _listener: IDisposable;
  private _disposed = false;

  constructor(
    private readonly _client: RpcClient,
    readonly sessionId: string,
    private readonly _handlers: FollowerHandlers,
  ) {
    // Listening before subscribing: the replay follows the subscribe answer at once.
    this._listener = _client.onNotification((n) => this._onNotification(n));
  }

  /** Draws the picture (if asked) and subscribes; rejects when the session cannot be followed. */
  async start(options: FollowOptions = {}): Promise<void> {
    const since = options.snapshotScrollback === undefined ? 0 : await this._snapshot(options.snapshotScrollback, options.onSnapshotError);
    if (this._disposed) return;
    await this._client.call('pty/subscribe', { session: this.sessionId, since, client: { origin: 'user' } });
  }

  private async _snapshot(scrollback: number, onError: ((e: Error) => void) | undefined): Promise<number> {
    try {
      const snap = await this._client.call('pty/snapshot', { session: this.sessionId, scrollback });
      if (!this._disposed) this._handlers.snapshot(snap.data);
      return snap.cursor;
    } catch (e) {
      if (!onError) throw e;
      onError(e as Error);
      return 0;
    }
  }

  private _onNotification(n: Notification): void {
    if (this._disposed || n.params.session !== this.sessionId) return;
    if (n.method === 'pty/output') {
      if (typeof n.params.data === 'string') this._handlers.output(n.params.data);
    } else if (n.method === 'pty/exit') {
      const exitCode = typeof n.params.exitCode === 'number' ? n.params.exitCode : undefined;
      const signal = typeof n.params.signal === 'string' && n.params.signal ? n.params.signal : undefined;
      this._handlers.exit({ exitCode, signal });
    }
  }

  /** Stops following: no more handler calls, and the host stops the subscription (the connection stays open). */
  dispose(): void {
    if (this._disposed) return;
    this._disposed = true;
    this._listener.dispose();
    if (!this._client.closed) this._client.call('pty/unsubscribe', { session: this.sessionId }).catch(() => undefined);
  }
}
