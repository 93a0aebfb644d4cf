import { Disposable, Emitter, toDisposable, type IDisposable } from '../base/lifecycle';
import type { ScreenSize, ScreenSnapshot } from './screen';
import type { QueryArgs, QueryName, QueryResult } from './mirror-queries';
import type { ReportedColors } from './query-answers';
import { MirrorThread, type BatchPace, type MirrorEndpoint } from './mirror-thread';
import { SealedPages, type ScrollbackPage } from './scrollback-page';
import type { ProgramSignal, ToMirrorThread } from './mirror-protocol';
import { OutputQueue } from './output-queue';
import { ErrorCode, RpcError } from '../base/errors';

/** How much output may wait for the parser, and how the parser's speed is estimated. */
const enum Backlog {
  /**
   * A screen read waits for the backlog to be parsed: keep it to what the parser clears in this
   * long. 40 ms made a read during `yes` wait 40 ms at p99 where tmux, which parses as it reads,
   * answered in 15; with the thread's short slices (mirror-worker.ts) 10 ms still keeps it fed.
   */
  TargetMs = 10,
  /** Bounds of the backlog: enough to keep the parser busy between two PTY reads… */
  MinBytes = 32 * 1024,
  /** …and never more than a read could wait for at the fastest parse seen (TargetMs at 100 MB/s). */
  MaxBytes = 1024 * 1024,
  /** Parse speed assumed before one is measured (bytes per ms: `yes`-like output, the slowest kind). */
  InitialRate = 4 * 1024,
  /** Most bytes in one message to the thread. */
  MaxMessageBytes = 256 * 1024,
  /** Output queued for the thread is sent at once when this much has gathered (the batch timer sends less). */
  FlushBytes = 128 * 1024,
  /**
   * While someone reads the screen, the backlog is kept to this much parsing instead: each read
   * waits for it, and tmux, which parses as it reads, answers a read during `yes` within a few ms.
   * The program then runs slower while it is read, as under tmux ("reads less when busy").
   */
  ReadingTargetMs = 2,
  /** …and at least this much may wait then (about two PTY reads, so the parser is not starved). */
  ReadingMinBytes = 8 * 1024,
  /** A read keeps the backlog short for this long: a client reading back to back, or polling, keeps it short throughout. */
  ReadingHoldMs = 1000,
  /**
   * The floors above (MinBytes, ReadingMinBytes) are bytes, right for text; output that costs much
   * per byte (a clear of a large screen in a loop, as `watch -n0` does: 15 bytes redraw 12,000
   * cells) is kept to this much parsing at most instead: 32 KiB of it took seconds.
   */
  FloorMs = 20,
  ReadingFloorMs = 5,
}

/** What the program signalled in a stretch of output (MirrorProxy.onSignalled). */
export interface MirrorSignals {
  /** Bells (a run of them once) and each new window title, in output order. */
  signals: readonly ProgramSignal[];
  /** The signals came in output before this fence (MirrorProxy.fence); undefined: after every fence passed so far. */
  fence: number | undefined;
}

/**
 * What the session still holds of its output: a copy of the bytes from cursor `from` up to the
 * newest output handed over. A mirror rebuilds its screen from it when the thread restarts.
 */
export type ReplaySource = () => { from: number; bytes: Buffer };

/**
 * Queued output up to this size that holds no escape sequence and no bell is a trickle (the echo
 * of keys, a word printed): it may wait for a pause before it goes to the thread (MirrorThread). Anything else may be a
 * query the program waits to have answered, a bell or a title, and goes at the prompt pace.
 */
const TRICKLE_BYTES = 1024;
const ESC = 0x1b;
const BEL = 0x07;

/** Weight of a new parse-speed sample in the running estimate. */
const RATE_SMOOTHING = 0.25;

/**
 * A session's screen, parsed in the mirror thread. Output is handed over as it is read, in
 * batches (MirrorThread.markDirty); reads are asynchronous and see exactly the output that came
 * before them.
 *
 * A read waits for the parser to work through what was handed over before it, so the backlog is
 * kept to what the parser clears in `Backlog.TargetMs` (`backlogLimit`; the session pauses its PTY
 * above it, as a slow terminal makes a program wait). The limit follows the measured parse speed,
 * which differs 20-fold between kinds of output (`yes` against base64 text) and falls when
 * several sessions share the thread, so every session's reads stay prompt under any flood.
 */
export class MirrorProxy extends Disposable implements MirrorEndpoint {
  private readonly _id: number;
  private _size: ScreenSize;
  private readonly _queued = new OutputQueue();
  /**
   * Everything queued is a trickle (the echo of keys): it waits for its batch even when a "parsed"
   * notice comes meanwhile, or each notice would send the next key's echo at once and keys typed
   * back to back would wake both threads once per round trip instead of once per batch.
   */
  private _queuedTrickle = true;
  /** Cursor at the end of the newest output handed over (queued or sent). */
  private _written: number;
  /** Cursor up to which the thread has parsed. */
  private _parsed: number;
  private _waiters: Array<{ cursor: number; resolve: () => void }> = [];
  /** Parse speed, bytes per ms of the time output waited in the thread (measured there; see `backlogLimit`). */
  private _rate: number = Backlog.InitialRate;
  /** Output cursors of the fences posted (fence), oldest first, until the thread tells their signals. */
  private readonly _fences: number[] = [];
  /** Cursor at the end of the replay after a thread restart, until it is parsed (0: none). */
  private _replayEnd = 0;
  /** When a client last read the screen (performance.now(); see `backlogLimit`). */
  private _readAt = -Infinity;

  private readonly _onParsed = this._register(new Emitter<void>());
  /** The screen look on its way, and how much output had been handed over when it was asked (watchScreen). */
  private _watching: { written: number; screen: Promise<ScreenSnapshot> } | undefined;
  /** More output has been parsed into the screen. */
  readonly onParsed = this._onParsed.event;
  private readonly _onSignals = this._register(new Emitter<MirrorSignals>());
  /**
   * The program rang the bell (once per batch of parsed output, however many BELs it held) or set
   * a new window title; `fence`: in output before that fence (see `fence`), else after every
   * fence passed so far.
   */
  readonly onSignalled = this._onSignals.event;
  private readonly _onAnswer = this._register(new Emitter<string>());
  /** The terminal's answers to the program's queries, in the order it asked them. */
  readonly onAnswer = this._onAnswer.event;
  /** The colours views reported, kept to tell a mirror rebuilt after a thread restart. */
  private _colors: ReportedColors = {};
  /**
   * The sealed scrollback rows the thread told with its last scrollback page, and the moment they
   * describe: the output cursor and `_shape`. Dropped on new output, so it never keeps rows the
   * thread has let go of.
   */
  private _sealed: { pages: SealedPages; cursor: number; shape: number } | undefined;
  /** Counts what changes the retained rows other than output: resizes, rebuilds after a thread restart. */
  private _shape = 0;
  /** The output cursor of the thread's latest answer: it had parsed that far (its "parsed" notice may come just after). */
  private _answeredAt = 0;
  /** Callers following `onParsed` as output comes (a `pty/wait` for a pattern): no trickle batch while any does. */
  private _prompt = 0;

  constructor(
    cols: number,
    rows: number,
    private readonly _scrollbackLines: number,
    private readonly _replay?: ReplaySource,
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

  /** Cursor at the end of the output handed over (queued or sent). */
  get handedOver(): number {
    return this._written;
  }

  /** Cursor up to which the thread has parsed, as far as its notices and answers tell. */
  get parsedCursor(): number {
    return this._parsed;
  }

  /** Bytes handed over and not parsed yet (flow control watches this). */
  get pendingBytes(): number {
    return this._written - this._parsed;
  }

  /**
   * Most bytes that may wait for the parser before the session pauses its PTY: less while a
   * client reads the screen (Backlog.ReadingTargetMs), since every read waits for them.
   */
  get backlogLimit(): number {
    const rate = this._rate;
    if (performance.now() - this._readAt < Backlog.ReadingHoldMs) {
      const floor = Math.min(Backlog.ReadingMinBytes, rate * Backlog.ReadingFloorMs);
      return Math.min(Backlog.MaxBytes, Math.max(floor, rate * Backlog.ReadingTargetMs));
    }
    const floor = Math.min(Backlog.MinBytes, rate * Backlog.FloorMs);
    return Math.min(Backlog.MaxBytes, Math.max(floor, rate * Backlog.TargetMs));
  }

  /** True while the backlog is kept short because a client read the screen lately. */
  get reading(): boolean {
    return performance.now() - this._readAt < Backlog.ReadingHoldMs;
  }

  /**
   * Hands over output that ends at byte cursor `cursor`. The chunk's memory moves to the mirror
   * thread when it is sent: the caller must not keep it (Session's onOutput listeners use it only
   * while the event fires).
   */
  write(data: Buffer, cursor: number): void {
    if (this.isDisposed || data.length === 0) return;
    this._queued.push(data);
    this._written = cursor;
    this._sealed = undefined;
    if (this._queued.bytes >= Backlog.FlushBytes) return this.flush();
    const pace = this._pace(data);
    if (pace !== 'trickle') this._queuedTrickle = false;
    this._thread.markDirty(this, pace);
  }

  /**
   * Ties something to the end of the output handed over so far (a command mark the session found
   * as it read the output): that output goes to the thread now, and the bells and titles in it are
   * told with this fence (`onSignalled`) before any that come after it.
   */
  fence(): void {
    if (this.isDisposed) return;
    this._fences.push(this._written);
    if (this._queued.bytes > 0) this.flush(true);
    else this._thread.post({ t: 'fence', id: this._id });
  }

  /**
   * Has output go to the thread at the prompt pace, never in a trickle batch, until the handle is
   * disposed: for a caller that looks at the screen on `onParsed` (a wait for a pattern).
   */
  keepPrompt(): IDisposable {
    this._prompt++;
    return toDisposable(() => this._prompt--);
  }

  private _pace(data: Buffer): BatchPace {
    // While the thread has half the bound still to parse, this output can wait to join more.
    if (this._threadBacklog() >= this.backlogLimit / 2) return 'relaxed';
    if (this._prompt > 0 || this._queued.bytes > TRICKLE_BYTES || data.includes(ESC) || data.includes(BEL)) return 'prompt';
    return 'trickle';
  }

  /** Bytes the thread has and has not parsed yet (as far as its notices tell). */
  private _threadBacklog(): number {
    return this._written - this._queued.bytes - this._parsed;
  }

  /** Resolves once everything handed over so far has been parsed. */
  whenParsed(): Promise<void> {
    this.flush();
    if (this._parsed >= this._written || this.isDisposed) return Promise.resolve();
    const cursor = this._written;
    return new Promise((resolve) => this._waiters.push({ cursor, resolve }));
  }

  resize(cols: number, rows: number): void {
    this._size = { cols, rows };
    this._reshaped();
    if (this.isDisposed) return;
    this.flush();
    this._thread.post({ t: 'resize', id: this._id, cols, rows });
  }

  /** The colours a view reported (its answers to colour queries): later colour queries get them. */
  setColors(colors: ReportedColors): void {
    this._colors = { ...this._colors, ...colors };
    if (this.isDisposed) return;
    this.flush();
    this._thread.post({ t: 'colors', id: this._id, colors });
  }

  /**
   * A read of the screen as of now, and the output cursor it reflects exactly. A client waits for
   * it, so for a while the backlog is kept short (`backlogLimit`) and the next read waits little.
   */
  queryAt<K extends QueryName>(op: K, ...args: QueryArgs<K>): Promise<{ value: QueryResult<K>; cursor: number }> {
    this._readAt = performance.now();
    return this._request(op, args);
  }

  async query<K extends QueryName>(op: K, ...args: QueryArgs<K>): Promise<QueryResult<K>> {
    return (await this.queryAt(op, ...args)).value;
  }

  screen(): Promise<ScreenSnapshot> {
    return this.query('screen');
  }

  /**
   * A page of the retained rows (pty/scrollback). A page of sealed scrollback rows is answered
   * here, with no trip to the mirror thread, while the screen is exactly as it was when the thread
   * last told its sealed rows: no output since (so everything received is parsed) and no resize or
   * rebuild. Otherwise the thread answers, and tells its sealed rows again when it is caught up.
   */
  async scrollbackPage(offset: number, lines: number): Promise<ScrollbackPage> {
    if (this.isDisposed) throw closed();
    const known = this._sealed;
    if (known && known.cursor === this._written && known.shape === this._shape) {
      const page = known.pages.page(offset, lines);
      if (page) return page;
    }
    // While output waits for the parser more is likely coming: the sealed rows would be stale at
    // once, and telling them costs ~0.3 us a block (4,000 blocks with a million rows of scrollback).
    const wanted = Math.max(this._parsed, this._answeredAt) >= this._written;
    const shape = this._shape;
    const { value, cursor } = await this.queryAt('scrollbackPage', offset, lines, wanted);
    const { sealed, ...page } = value;
    if (sealed && cursor === this._written && shape === this._shape && !this.isDisposed) {
      this._sealed = { pages: new SealedPages(sealed), cursor, shape };
    }
    return page;
  }

  /**
   * The screen for a look that no client waits on (pty/wait's checks, the input watch): exact
   * like any read, but it leaves the backlog bound as it is, so a program watched during a flood
   * runs at full speed.
   */
  watchScreen(): Promise<ScreenSnapshot> {
    // Looks asked for while one is on its way, with no output handed over since, share its answer:
    // it shows all of that output. Thousands of waits on one session looked one by one, each a
    // round trip to the thread, and held the host's thread for a second at each batch of output.
    const shared = this._watching;
    if (shared && shared.written === this._written) return shared.screen;
    const screen = this._request('screen', []).then((r) => r.value);
    const entry = { written: this._written, screen };
    this._watching = entry;
    const done = () => {
      if (this._watching === entry) this._watching = undefined;
    };
    screen.then(done, done);
    return screen;
  }

  /** `query` for a look that no client waits on (see `watchScreen`). */
  async watch<K extends QueryName>(op: K, ...args: QueryArgs<K>): Promise<QueryResult<K>> {
    return (await this._request(op, args)).value;
  }

  private async _request<K extends QueryName>(op: K, args: QueryArgs<K>): Promise<{ value: QueryResult<K>; cursor: number }> {
    if (this.isDisposed) throw closed();
    this.flush();
    const r = await this._thread.request({ t: 'query', id: this._id, op, args });
    // The answer reflects exactly the output up to its cursor: that much is parsed, whether or
    // not the slice's notice has come yet (a paused PTY is read again sooner).
    this.onParsedUpTo(r.cursor);
    this._answeredAt = r.cursor;
    return { value: r.value as QueryResult<K>, cursor: r.cursor };
  }

  // MirrorEndpoint -------------------------------------------------------------------------

  /** Sends the queued output now; `fence`: with a fence at its end (see `fence`). */
  flush(fence = false): void {
    if (this._queued.bytes === 0 || this.isDisposed) return;
    let cursor = this._written - this._queued.bytes;
    const chunks = this._queued.take();
    this._queuedTrickle = true;
    for (let i = 0; i < chunks.length;) {
      const batch: Uint8Array[] = [];
      const transfer: ArrayBuffer[] = [];
      let size = 0;
      while (i < chunks.length && (batch.length === 0 || size + chunks[i].length <= Backlog.MaxMessageBytes)) {
        // Small reads in a row (keys' echoes) come staged as one; every chunk moves as it is (OutputQueue).
        const chunk = chunks[i++];
        batch.push(chunk);
        transfer.push(chunk.buffer as ArrayBuffer);
        size += chunk.length;
      }
      cursor += size;
      const message: Extract<ToMirrorThread, { t: 'write' }> = { t: 'write', id: this._id, chunks: batch, cursor };
      // The fence is at the end of what is queued: on the last message.
      if (fence && i >= chunks.length) message.fence = true;
      this._thread.post(message, transfer);
    }
  }

  onParsedUpTo(cursor: number, rate?: number): void {
    if (rate !== undefined && rate > 0) this._rate += (rate - this._rate) * RATE_SMOOTHING;
    if (cursor <= this._parsed) return;
    this._parsed = cursor;
    // The thread is running low: what is queued goes now rather than at the relaxed batch's end
    // (a trickle keeps waiting for its pause: nothing waits on it but a read, which sends it first).
    if (this._queued.bytes > 0 && !this._queuedTrickle && this._threadBacklog() < this.backlogLimit / 2) this.flush();
    this._releaseWaiters();
    this._onParsed.fire();
  }

  onSignals(signals: readonly ProgramSignal[], fence?: number): void {
    if (fence !== undefined) while (this._fences.length > 0 && this._fences[0] <= fence) this._fences.shift();
    if (!this.isDisposed) this._onSignals.fire({ signals, fence });
  }

  /**
   * The oldest fence whose signals the thread has not told yet (Infinity: none). What waits at it
   * waits for them, however far the parsed cursor got: a notice of the parse can come first.
   */
  get pendingFence(): number {
    return this._fences.length > 0 ? this._fences[0] : Infinity;
  }

  onAnswers(data: string): void {
    if (!this.isDisposed) this._onAnswer.fire(data);
  }

  /**
   * The thread restarted: the screen is rebuilt from the output the session still holds (its
   * ring), replayed at the current size; output before that is gone, and so is what it drew. The
   * parsed cursor starts again where the replay starts, so reads wait for the replay as for any
   * output, and the program is paused while the replay is parsed, as during a flood.
   */
  reopen(): void {
    if (this.isDisposed) return;
    this._reshaped();
    this._queued.clear();
    // The new thread knows no fence: nothing waits for one (the replay's signals are not told).
    this._fences.length = 0;
    this._queuedTrickle = true;
    // The thread died before the last replay was parsed: that output may be what kills it, so
    // this time the screen starts blank rather than crash the thread again and again.
    const poisoned = this._parsed < this._replayEnd;
    const kept = poisoned ? undefined : this._replay?.();
    // Only a replay that ends exactly at the newest output handed over keeps the cursors in step.
    const replay = kept && kept.bytes.length > 0 && kept.from + kept.bytes.length === this._written ? kept : undefined;
    this._replayEnd = replay ? this._written : 0;
    this._parsed = replay ? replay.from : this._written;
    this._open(this._parsed);
    if (replay) {
      this._queued.push(replay.bytes);
      this.flush();
    }
    this._releaseWaiters();
    // No replay: everything handed over counts as parsed now, and what waited on it goes on.
    if (!replay) this._onParsed.fire();
  }

  /** The retained rows change without output: what was told of the sealed rows no longer holds. */
  private _reshaped(): void {
    this._shape++;
    this._sealed = undefined;
  }

  /** Output that will never be parsed here (we are gone) stops counting. */
  private _forgetPending(): void {
    this._parsed = this._written;
  }

  /** Opens the mirror in the thread at output cursor `from`; bells and titles of output before `_written` (a replay) were already told. */
  private _open(from = this._written): void {
    const { cols, rows } = this._size;
    this._thread.post({ t: 'open', id: this._id, cols, rows, scrollback: this._scrollbackLines, cursor: from, quietUntil: this._written });
    if (Object.keys(this._colors).length > 0) this._thread.post({ t: 'colors', id: this._id, colors: this._colors });
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
    this._forgetPending();
    this._sealed = undefined;
    this._thread.unregister(this._id);
    this._releaseWaiters();
  }
}

/**
 * A read of a session whose screen is gone (killed, or its host ending) while a call waited: said
 * as an ended session is, not as an internal error.
 */
function closed(): RpcError {
  return new RpcError(ErrorCode.SessionExited, 'The session has closed: it was killed, or its host is ending');
}
