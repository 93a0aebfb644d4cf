import { Disposable, disposableTimeout, Emitter, MutableDisposable } from '../base/lifecycle';
import type { ScreenSize, ScreenSnapshot } from './screen';
import type { QueryArgs, QueryName, QueryResult } from './mirror-queries';
import { MirrorThread, type MirrorEndpoint } from './mirror-thread';

/** When output is handed to the mirror thread. */
const enum HandOff {
  /** A burst: at least this much output within one window… */
  BurstBytes = 64 * 1024,
  BurstWindowMs = 10,
  /** …is held until the output pauses this long (or someone reads the screen). */
  QuietMs = 20,
  /** Most bytes in one message to the thread. */
  MaxMessageBytes = 256 * 1024,
}

/**
 * A session's screen, parsed in the mirror thread. Output is handed over as it is read and never
 * waits; reads are asynchronous and see exactly the output that came before them.
 *
 * During a burst of output (a `cat`, a build log) the bytes are held here, unparsed, until the
 * burst ends, the session's flow control limit is reached, or someone reads the screen: parsing
 * while the PTY floods takes a CPU from the program and the PTY reads (measured on 2 cores: a
 * concurrent parser halves the read rate; holding, the program runs at raw node-pty's speed and
 * the screen is up to date as soon after as before).
 */
export class MirrorProxy extends Disposable implements MirrorEndpoint {
  private readonly _id: number;
  private _size: ScreenSize;
  private _queued: Buffer[] = [];
  private _queuedBytes = 0;
  /** Cursor at the end of the newest output handed over (queued or sent). */
  private _written: number;
  /** Cursor up to which the thread has parsed. */
  private _parsed: number;
  private _waiters: Array<{ cursor: number; resolve: () => void }> = [];
  private _windowStart = 0;
  private _windowBytes = 0;
  private _lastWriteAt = 0;
  /** Looks again once a held burst pauses (see `_holding`). */
  private readonly _quietTimer = this._register(new MutableDisposable());
  private _burst = false;

  private readonly _onParsed = this._register(new Emitter<void>());
  /** More output has been parsed into the screen. */
  readonly onParsed = this._onParsed.event;
  private readonly _onBell = this._register(new Emitter<void>());
  /** The program rang the bell (once per batch of parsed output, however many BELs it held). */
  readonly onBell = this._onBell.event;
  private readonly _onTitle = this._register(new Emitter<string>());
  /** The program set a new window title. */
  readonly onTitle = this._onTitle.event;

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

  /**
   * Hands over output that ends at byte cursor `cursor`. The chunk's memory moves to the mirror
   * thread when it is sent: the caller must not keep it (Session's onOutput listeners use it only
   * while the event fires).
   */
  write(data: Buffer, cursor: number): void {
    if (this.isDisposed || data.length === 0) return;
    this._queued.push(data);
    this._queuedBytes += data.length;
    const now = performance.now();
    this._lastWriteAt = now;
    if (now - this._windowStart > HandOff.BurstWindowMs) {
      this._windowStart = now;
      this._windowBytes = 0;
    }
    this._windowBytes += data.length;
    this._thread.pendingBytes += cursor - this._written;
    this._written = cursor;
    this._thread.markDirty(this);
  }

  /** Resolves once everything handed over so far has been parsed. */
  whenParsed(): Promise<void> {
    this.flush(true);
    if (this._parsed >= this._written || this.isDisposed) return Promise.resolve();
    const cursor = this._written;
    return new Promise((resolve) => this._waiters.push({ cursor, resolve }));
  }

  resize(cols: number, rows: number): void {
    this._size = { cols, rows };
    if (this.isDisposed) return;
    this.flush(true);
    this._thread.post({ t: 'resize', id: this._id, cols, rows });
  }

  /** A read of the screen as of now, and the output cursor it reflects exactly. */
  async queryAt<K extends QueryName>(op: K, ...args: QueryArgs<K>): Promise<{ value: QueryResult<K>; cursor: number }> {
    if (this.isDisposed) throw new Error('The session has closed');
    this.flush(true);
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

  /** Sends the queued output, unless a burst is on and nobody needs the screen (`force`). */
  flush(force = false): void {
    if (this._queuedBytes === 0 || this.isDisposed) return;
    if (!force && this._holding()) return;
    this._quietTimer.clear();
    const chunks = this._queued;
    this._queued = [];
    let cursor = this._written - this._queuedBytes;
    this._queuedBytes = 0;
    for (let i = 0; i < chunks.length; ) {
      const batch: Uint8Array[] = [];
      const transfer: ArrayBuffer[] = [];
      let size = 0;
      for (; i < chunks.length && (batch.length === 0 || size + chunks[i].length <= HandOff.MaxMessageBytes); i++) {
        const chunk = movable(chunks[i]);
        batch.push(chunk);
        transfer.push(chunk.buffer as ArrayBuffer);
        size += chunk.length;
      }
      cursor += size;
      this._thread.post({ t: 'write', id: this._id, chunks: batch, cursor }, transfer);
    }
  }

  /** True while a burst goes on: its output waits (a timer looks again once it pauses). */
  private _holding(): boolean {
    if (this._windowBytes >= HandOff.BurstBytes) this._burst = true;
    if (!this._burst) return false;
    if (performance.now() - this._lastWriteAt >= HandOff.QuietMs) {
      this._burst = false;
      return false;
    }
    if (!this._quietTimer.value) {
      this._quietTimer.value = disposableTimeout(() => {
        this._quietTimer.clear();
        this.flush();
      }, HandOff.QuietMs);
    }
    return true;
  }

  onParsedUpTo(cursor: number): void {
    if (cursor <= this._parsed) return;
    this._thread.pendingBytes -= cursor - this._parsed;
    this._parsed = cursor;
    this._releaseWaiters();
    this._onParsed.fire();
  }

  onSignals(bell: boolean, title: string | undefined): void {
    if (this.isDisposed) return;
    if (bell) this._onBell.fire();
    if (title !== undefined) this._onTitle.fire(title);
  }

  reopen(): void {
    if (this.isDisposed) return;
    this._queued = [];
    this._queuedBytes = 0;
    this._forgetPending();
    this._open();
    this._releaseWaiters();
  }

  /** Output that will never be parsed here (the thread restarted, or we are gone) stops counting. */
  private _forgetPending(): void {
    this._thread.pendingBytes -= this._written - this._parsed;
    this._parsed = this._written;
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
    this.flush(true);
    super.dispose();
    this._forgetPending();
    this._thread.unregister(this._id);
    this._releaseWaiters();
  }
}

/**
 * The chunk itself when it owns its whole ArrayBuffer (node-pty's reads do), so it moves to the
 * thread without a copy; else a copy that does. Copying a burst into fresh buffers cost 5.5 ms
 * per MB here, most of it page faults (~14 us each on these VMs), as much as reading it.
 */
function movable(chunk: Buffer): Uint8Array {
  if (chunk.byteOffset === 0 && chunk.buffer.byteLength === chunk.length && !(chunk.buffer instanceof SharedArrayBuffer)) {
    return new Uint8Array(chunk.buffer, 0, chunk.length);
  }
  const copy = new Uint8Array(chunk.length);
  copy.set(chunk);
  return copy;
}
