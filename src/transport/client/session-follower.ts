import type { IDisposable } from '../../core/base/lifecycle';
import { paramsOf } from '../../core/methods/notifications';
import type { Notification, RpcClient } from './rpc-client';

/** How a followed session ended, as its `pty/exit` notification said. */
export interface FollowedExit {
  exitCode: number | undefined;
  /** The signal's name, when a signal ended it. */
  signal: string | undefined;
}

/** What a follower does with what it receives: draw it, end on exit. */
export interface FollowerHandlers {
  /**
   * A picture of the session, drawn before any output: from `pty/snapshot` at the start, and
   * again after a gap (a resync), when it begins with `RESYNC_RESET` so the old screen goes.
   */
  snapshot(data: string): void;
  /**
   * Raw output, in order, from the point the picture shows. Return a promise when the output is
   * processed later (written to a slow terminal): it is acknowledged to the host once it resolves,
   * so the program waits for this view rather than this view losing output.
   */
  output(data: string): void | Promise<void>;
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
 * Written before a resync's picture: CAN ends any escape sequence the gap cut in half, RIS resets
 * the terminal (modes, colours, the alternate screen), so the picture lands on a clean terminal.
 */
export const RESYNC_RESET = '\x18\x1bc';

/** When the follower acknowledges output; each says why. */
export const enum AckTuning {
  /**
   * Acknowledge once this much has been processed: a quarter of the host's default window (256
   * KiB), so during a flood the program rarely waits on us, with one ack per 64 KiB rather than per notification.
   */
  EveryBytes = 64 * 1024,
  /** Or this long after output was processed when less came (an echo, a prompt), so small output never adds up to a full window. */
  IdleMs = 50,
}

/** Scrollback rows a resync brings back when the follower was not started with a picture. */
const RESYNC_SCROLLBACK_ROWS = 1000;

/**
 * Follows one session for one of the human's views (the editor terminal, `shared-pty attach`):
 * `pty/snapshot`, then a flow-controlled `pty/subscribe` from exactly its cursor (nothing missed,
 * nothing twice), then each `pty/output` and the final `pty/exit` of that session to the handlers,
 * acknowledging (`pty/ack`) what the handlers have processed. If output is lost all the same (the
 * host demoted a view that stopped acknowledging), the follower never shows bytes after the gap:
 * it resubscribes with `snapshot: true` and draws the fresh picture first.
 *
 * The subscription says the client is the user (`client: { origin: 'user' }`), so its writes on
 * the same connection are attributed to the human. The connection is the caller's: it may be
 * shared by several followers, so the follower never closes it.
 */
export class SessionFollower implements IDisposable {
  private readonly _listener: IDisposable;
  private _disposed = false;
  /** The cursor the view has been given output up to; undefined while a subscribe is on its way. */
  private _position: number | undefined;
  /** Notifications that came while a subscribe was on its way (its answer may follow them in one read). */
  private _held: Notification[] = [];
  private _scrollback = RESYNC_SCROLLBACK_ROWS;
  private _processed = 0;
  private _acked = 0;
  private _ackTimer: NodeJS.Timeout | undefined;
  /** A resync's new subscription says `pty/exit` again: the handlers hear it once. */
  private _exited = false;

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
    if (options.snapshotScrollback !== undefined) this._scrollback = options.snapshotScrollback;
    const since = options.snapshotScrollback === undefined ? 0 : await this._snapshot(options.snapshotScrollback, options.onSnapshotError);
    if (this._disposed) return;
    const r = await this._client.call('pty/subscribe', { session: this.sessionId, since, flow: true, client: { origin: 'user' } });
    this._resume(r.cursor);
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

  /** After a gap: a fresh picture from the host, and output from exactly its cursor. */
  private async _resync(): Promise<void> {
    this._position = undefined;
    this._held = [];
    let r: { cursor: number; snapshot?: string };
    try {
      r = await this._client.call('pty/subscribe', {
        session: this.sessionId,
        snapshot: true,
        scrollback: this._scrollback,
        flow: true,
        client: { origin: 'user' },
      });
    } catch {
      return; // the connection closed or the session went: its close or exit says so
    }
    if (this._disposed) return;
    this._handlers.snapshot(RESYNC_RESET + (r.snapshot ?? ''));
    this._resume(r.cursor);
  }

  /** The subscription answered: output from `cursor` on is the view's, including what came meanwhile. */
  private _resume(cursor: number): void {
    this._position = cursor;
    this._processed = this._acked = cursor;
    for (const n of this._held.splice(0)) {
      this._onNotification(n);
      if (this._position === undefined) return; // a gap again: resyncing
    }
  }

  private _onNotification(n: Notification): void {
    if (this._disposed) return;
    const output = paramsOf(n, 'pty/output');
    if (output?.session === this.sessionId) {
      if (this._position === undefined) return void this._held.push(n);
      const cursor = output.cursor;
      // What an earlier subscription sent before the host replaced it: already drawn, or in the picture.
      if (cursor <= this._position) return;
      if (output.dropped) return void this._resync();
      this._position = cursor;
      const done = this._handlers.output(output.data);
      if (done)
        done.then(
          () => this._didProcess(cursor),
          () => undefined,
        );
      else this._didProcess(cursor);
      return;
    }
    const exit = paramsOf(n, 'pty/exit');
    if (exit?.session === this.sessionId) {
      if (this._position === undefined) return void this._held.push(n);
      if (this._exited) return;
      this._exited = true;
      this._ack();
      this._handlers.exit({ exitCode: exit.exitCode, signal: exit.signal ?? undefined });
    }
  }

  /** The view has processed output up to `cursor`: acknowledge in batches (see AckTuning). */
  private _didProcess(cursor: number): void {
    if (this._disposed || cursor <= this._processed) return;
    this._processed = cursor;
    if (this._processed - this._acked >= AckTuning.EveryBytes) this._ack();
    else this._ackTimer ??= setTimeout(() => this._ack(), AckTuning.IdleMs);
  }

  private _ack(): void {
    clearTimeout(this._ackTimer);
    this._ackTimer = undefined;
    if (this._disposed || this._client.closed || this._processed <= this._acked) return;
    this._acked = this._processed;
    this._client.call('pty/ack', { session: this.sessionId, cursor: this._acked }).catch(() => undefined);
  }

  /** Stops following: no more handler calls, and the host stops the subscription (the connection stays open). */
  dispose(): void {
    if (this._disposed) return;
    this._disposed = true;
    clearTimeout(this._ackTimer);
    this._listener.dispose();
    if (!this._client.closed) this._client.call('pty/unsubscribe', { session: this.sessionId }).catch(() => undefined);
  }
}
