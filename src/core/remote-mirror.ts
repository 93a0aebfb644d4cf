import { Disposable, Emitter } from './lifecycle';
import type { ScreenSize, ScreenSnapshot } from './screen';
import type { QueryArgs, QueryName, QueryResult } from './mirror-queries';
import { MirrorThread, type MirrorEndpoint } from './mirror-thread';

/**
 * A session's screen, parsed in the mirror thread. Output is handed over as it is read and never
 * waits; reads are asynchronous and see exactly the output that came before them.
 */
export class RemoteMirror extends Disposable implements MirrorEndpoint {
  private readonly _id: number;
  private _size: ScreenSize;
  private _queued: Buffer[] = [];
  private _queuedBytes = 0;
  /** Cursor at the end of the newest output handed over (queued or sent). */
  private _written: number;
  /** Cursor up to which the thread has parsed. */
  private _parsed: number;
  private _waiters: Array<{ cursor: number; resolve: () => void }> = [];

  private readonly _onParsed = this._register(new Emitter<void>());
  /** More output has been parsed into the screen. */
  readonly onParsed = this._onParsed.event;

  constructor(
    cols: number,
    rows: number,
    private readonly _scrollbackLines: number,
    startCursor = 0,
    private readonly _thread = MirrorThread.shared(),
  ) {
    super();
    this._size = { cols, rows };
    this._written = this._parsed = startCursor;
    this._id = _thread.register(this);
    this._open();
  }

  get size(): ScreenSize {
    return { ...this._size };
  }

  /** Bytes handed over and not parsed yet (flow control watches this). */
  get pendingBytes(): number {
    return this._written - this._parsed;
  }

  /** The same over every mirror of the process (flow control bounds the total too). */
  get pendingBytesAllSessions(): number {
    return this._thread.pendingBytes;
  }

  /** Hands over output that ends at byte cursor `cursor`; sent at the end of this turn. */
  write(data: Buffer, cursor: number): void {
    if (this.isDisposed || data.length === 0) return;
    this._queued.push(data);
    this._queuedBytes += data.length;
    this._thread.pendingBytes += cursor - this._written;
    this._written = cursor;
    this._thread.markDirty(this);
  }

  /** Resolves once everything handed over so far has been parsed. */
  whenParsed(): Promise<void> {
    if (this._parsed >= this._written || this.isDisposed) return Promise.resolve();
    const cursor = this._written;
    return new Promise((resolve) => this._waiters.push({ cursor, resolve }));
  }

  resize(cols: number, rows: number): void {
    this._size = { cols, rows };
    if (this.isDisposed) return;
    this.flush();
    this._thread.post({ t: 'resize', id: this._id, cols, rows });
  }

  /** A read of the screen as of now, and the output cursor it reflects exactly. */
  async queryAt<K extends QueryName>(op: K, ...args: QueryArgs<K>): Promise<{ value: QueryResult<K>; cursor: number }> {
    if (this.isDisposed) throw new Error('The session has closed');
    this.flush();
    const r = await this._thread.request({ t: 'query', id: this._id, op, args });
    return { value: r.value as QueryResult<K>, cursor: r.cursor };
  }

  async query<K extends QueryName>(op: K, ...args: QueryArgs<K>): Promise<QueryResult<K>> {
    return (await this.queryAt(op, ...args)).value;
  }

  screen(): Promise<ScreenSnapshot> {
    return this.query('screen');
  }

  // MirrorEndpoint -------------------------------------------------------------------------

  flush(): void {
    if (this._queuedBytes === 0 || this.isDisposed) return;
    // One fresh buffer, transferred: node-pty's chunks may share a pool and stay with the ring.
    const data = new Uint8Array(this._queuedBytes);
    let at = 0;
    for (const chunk of this._queued) {
      data.set(chunk, at);
      at += chunk.length;
    }
    this._queued = [];
    this._queuedBytes = 0;
    this._thread.post({ t: 'write', id: this._id, data, cursor: this._written }, [data.buffer]);
  }

  onParsedUpTo(cursor: number): void {
    if (cursor <= this._parsed) return;
    this._thread.pendingBytes -= cursor - this._parsed;
    this._parsed = cursor;
    this._releaseWaiters();
    this._onParsed.fire();
  }

  reopen(): void {
    if (this.isDisposed) return;
    this._queued = [];
    this._queuedBytes = 0;
    this._thread.pendingBytes -= this._written - this._parsed;
    this._parsed = this._written;
    this._open();
    this._releaseWaiters();
  }

  private _open(): void {
    const { cols, rows } = this._size;
    this._thread.post({ t: 'open', id: this._id, cols, rows, scrollback: this._scrollbackLines, cursor: this._written });
  }

  private _releaseWaiters(): void {
    if (this._waiters.length === 0) return;
    const still: typeof this._waiters = [];
    for (const w of this._waiters) {
      if (w.cursor <= this._parsed || this.isDisposed) w.resolve();
      else still.push(w);
    }
    this._waiters = still;
  }

  override dispose(): void {
    if (this.isDisposed) return;
    this.flush();
    super.dispose();
    this._thread.pendingBytes -= this._written - this._parsed;
    this._parsed = this._written;
    this._thread.unregister(this._id);
    this._releaseWaiters();
  }
}
