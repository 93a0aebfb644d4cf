import { Terminal, type IBufferNamespace } from '@xterm/headless';
import { SerializeAddon } from '@xterm/addon-serialize';
import { Disposable, toDisposable, type Event } from '../base/lifecycle';
import { rowText } from './row-text';
import { syncWriteOf } from '../base/internals/xterm';
import { ScrollbackStore, type SealedRows } from './scrollback-store';
import { Unicode11Addon } from '@xterm/addon-unicode11';
import { DEFAULT_SCROLLBACK_LINES, type ScreenSize, type ScreenSnapshot } from './screen';
import { SavedCursorAsScreenRow } from './saved-cursor';
import { EraseAboveAtLastColumn } from './erase-above';
import { QueryAnswers, type ReportedColors } from './query-answers';
import { boundaryOf, type Boundary } from './boundary';

/** Tuning of the headless mirror. Each number is a trade-off measured on real sessions. */
const enum MirrorTuning {
  /**
   * Rows the xterm buffer itself keeps above the screen; older rows move to the compact store.
   * An xterm row costs ~1.9 KB (cells) against ~10-90 bytes as text: 64 rather than 256 saves
   * 150-350 KB per session (bench/README.md). Only these rows re-wrap on a resize.
   */
  XtermScrollback = 64,
  /** Rows moved to the compact store at a time; half the xterm scrollback so no row is trimmed unread. */
  HarvestBatch = 32,
}

export type { CursorPos, ScreenSize, ScreenSnapshot } from './screen';

/**
 * The headless terminal that mirrors one session's screen, plus the compact store of old rows.
 *
 * Rows are numbered absolutely over the session's life: row numbers only grow, so a send can
 * remember "the output starts at row N" and still find it after thousands of rows scrolled by.
 */
export class Mirror extends Disposable {
  private readonly _term: Terminal;
  /** `_term.buffer`, fetched once: the getter checks an option through a proxy on every call. */
  private readonly _buffers: IBufferNamespace;
  private readonly _store: ScrollbackStore;
  /** First xterm buffer row not yet moved into the store (normal buffer). */
  private readonly _boundary: Boundary;
  private _pendingBytes = 0;
  /** Scroll events since the last look at how many rows wait to be harvested. */
  private _scrolledSinceCheck = 0;
  private readonly _parsedWaiters: Array<() => void> = [];
  private readonly _answers: QueryAnswers;
  /** xterm's synchronous parse, when this version has it (base/internals/xterm.ts). */
  private readonly _parseNow: ((data: Uint8Array) => void) | undefined;

  constructor(
    cols: number,
    rows: number,
    private readonly _scrollbackLines = DEFAULT_SCROLLBACK_LINES,
  ) {
    super();
    // allowProposedApi: @xterm/headless 6 refuses buffer reads without it.
    // logLevel off: a program's malformed sequences are its output, not the host's errors (xterm
    // would dump each one on the host's stderr, unbounded under hostile output).
    this._term = new Terminal({ cols, rows, scrollback: MirrorTuning.XtermScrollback, allowProposedApi: true, logLevel: 'off' });
    this._register(toDisposable(() => this._term.dispose()));
    this._buffers = this._term.buffer;
    // xterm's public write() parses in slices of up to 12 ms, each scheduled with a timer (at least
    // 1 ms, more on a loaded machine); the mirror thread schedules its own slices, shorter and without
    // a timer (mirror-worker.ts). xterm calls writeSync unreliable only with asynchronous parser
    // handlers, and the mirror registers none.
    this._parseNow = syncWriteOf(this._term);
    // Character widths as the user's terminal has them: VS Code's (Unicode 11 tables), tmux's and
    // glibc's all give emoji two cells; xterm's built-in Unicode 6 gives them one, which shifts
    // every later cell of the row and breaks line wrapping against what the shell expects.
    this._term.loadAddon(new Unicode11Addon());
    this._term.unicode.activeVersion = '11';
    this._answers = this._register(new QueryAnswers(this._term));
    this._store = new ScrollbackStore(_scrollbackLines);
    // Its row only leaves the buffer unmoved when the program cleared the scrollback (ED 3): so does the store.
    this._boundary = this._register(boundaryOf(this._term, () => this._store.clear()));
    this._resetBoundary();
    // Every row that scrolls into xterm's scrollback fires this; a flood of output scrolls hundreds
    // of thousands of rows, so the listener only counts, and looks at the buffer once per batch.
    this._register(
      this._term.onScroll(() => {
        if (++this._scrolledSinceCheck < MirrorTuning.HarvestBatch) return;
        this._scrolledSinceCheck = 0;
        this._maybeHarvest(MirrorTuning.HarvestBatch);
      }),
    );
    // ED 3 and RIS empty xterm's scrollback; the store must follow. The marker alone cannot tell:
    // it survives ED 3 when no row waits above the screen, and RIS does not dispose it at all.
    // Both handlers run before xterm's own (returning false passes the sequence on).
    this._register(
      this._term.parser.registerCsiHandler({ final: 'J' }, (params) => {
        if (params[0] === 3 && this._buffers.active.type === 'normal') this._dropScrollback(false);
        return false;
      }),
    );
    const savedCursor = this._register(new SavedCursorAsScreenRow(this._term));
    this._register(new EraseAboveAtLastColumn(this._term));
    this._register(
      this._term.parser.registerEscHandler({ final: 'c' }, () => {
        this._dropScrollback(true);
        savedCursor.forget();
        return false;
      }),
    );
  }

  /** The program rang the bell (xterm's parser saw a BEL outside an escape sequence). */
  get onBell(): Event<void> {
    return this._term.onBell;
  }

  /**
   * The terminal's answers to the program's queries (device attributes, cursor position, modes,
   * colours…), in the order the parser met them: the session writes them to the program.
   */
  get onAnswer(): Event<string> {
    return this._term.onData;
  }

  /** The colours a view reported: the answers to later colour queries (QueryAnswers). */
  setColors(colors: ReportedColors): void {
    this._answers.setColors(colors);
  }

  /** The program set the window title (OSC 0 or 2). */
  get onTitle(): Event<string> {
    return this._term.onTitleChange;
  }

  get size(): ScreenSize {
    return { cols: this._term.cols, rows: this._term.rows };
  }

  /** Bytes handed to the parser and not yet parsed (flow control watches this). */
  get pendingBytes(): number {
    return this._pendingBytes;
  }

  /**
   * True when write() parses at once (the output's effects are on the screen when it returns);
   * false when the engine parses on its own schedule and calls back.
   */
  get parsesNow(): boolean {
    return this._parseNow !== undefined;
  }

  /**
   * Parses output. With `parsesNow`, before returning; else it is queued, and `onParsed` runs
   * right after this chunk is parsed, before the next one: the screen is then exactly "everything
   * up to this chunk".
   */
  write(data: Uint8Array, onParsed?: () => void): void {
    if (this.isDisposed) return;
    if (this._parseNow) {
      this._parseNow(data);
      onParsed?.();
      return;
    }
    this._pendingBytes += data.length;
    this._term.write(data, () => {
      this._pendingBytes -= data.length;
      onParsed?.();
      if (this._pendingBytes === 0) this._releaseWaiters();
    });
  }

  /** Resolves once everything written so far has been parsed. */
  whenParsed(): Promise<void> {
    if (this._pendingBytes === 0 || this.isDisposed) return Promise.resolve();
    return new Promise((resolve) => this._parsedWaiters.push(resolve));
  }

  resize(cols: number, rows: number): void {
    // Move every scrolled-off row out first: reflow may trim xterm's short scrollback.
    this._maybeHarvest(1);
    this._term.resize(cols, rows);
    if (this._boundary.line === undefined) this._resetBoundary();
  }

  /**
   * Text that redraws this terminal in a fresh one of the same size: up to `scrollbackRows` rows of
   * scrollback (those already in the compact store as plain text), then the recent rows and the
   * screen with colours, modes, the alternate screen and the cursor. Unlike a replay of raw
   * output it is complete however much output went by, and holds no queries a terminal would answer.
   */
  serialize(scrollbackRows: number): string {
    const unharvested = Math.max(0, this._buffers.normal.baseY - this._boundaryLine());
    const fromXterm = Math.min(unharvested, scrollbackRows);
    const retainedInStore = Math.max(0, this._screenTopAbsolute() - unharvested - this.firstRetainedRow);
    const fromStore = Math.min(retainedInStore, this._store.length, scrollbackRows - fromXterm);
    let out = '';
    for (let i = this._store.length - fromStore; i < this._store.length; i++) out += this._store.get(i) + '\r\n';
    // Loaded only for the call: an idle session pays nothing for it.
    const serializer = new SerializeAddon();
    this._term.loadAddon(serializer);
    try {
      return out + serializer.serialize({ scrollback: fromXterm });
    } finally {
      serializer.dispose();
    }
  }

  /** The visible screen now (call whenParsed() first for an up-to-date view). */
  screen(): ScreenSnapshot {
    const buf = this._buffers.active;
    const rows: string[] = [];
    for (let y = 0; y < this._term.rows; y++) rows.push(rowText(buf, buf.baseY + y));
    return {
      rows,
      cursor: { row: buf.cursorY + 1, col: buf.cursorX + 1 },
      size: this.size,
      alternate: buf.type === 'alternate',
    };
  }

  /** The cursor's row left of the cursor (a prompt's question), and whether a full-screen program has the screen. */
  lineBeforeCursor(): { text: string; alternate: boolean } {
    const buf = this._buffers.active;
    const line = buf.getLine(buf.baseY + buf.cursorY);
    return { text: line ? line.translateToString(false, 0, buf.cursorX) : '', alternate: buf.type === 'alternate' };
  }

  /**
   * Absolute number of the first retained row; the retained rows are the scrollback followed by
   * the screen rows down to the lower of the cursor row and the last non-empty row (docs/guarantees.md#retained-buffer).
   */
  get firstRetainedRow(): number {
    return Math.max(this._store.firstAbsolute, this._screenTopAbsolute() - this._scrollbackLines);
  }

  /** The compact store's sealed rows, readable from another thread (scrollback-page.ts). */
  sealedRows(): SealedRows {
    return this._store.sealed();
  }

  /** Absolute number of the row the cursor is on. */
  get cursorRow(): number {
    const buf = this._buffers.active;
    return this._screenTopAbsolute() + buf.cursorY;
  }

  /** Absolute number just past the last retained row. */
  get endRow(): number {
    const buf = this._buffers.active;
    let last = buf.cursorY;
    for (let y = this._term.rows - 1; y > last; y--) {
      if (rowText(buf, buf.baseY + y) !== '') {
        last = y;
        break;
      }
    }
    return this._screenTopAbsolute() + last + 1;
  }

  /** Rows [from, to) in absolute numbering, clamped to what is retained. */
  rowsBetween(from: number, to: number): string[] {
    const out: string[] = [];
    const start = Math.max(from, this.firstRetainedRow);
    const end = Math.min(to, this.endRow);
    const storeEnd = this._store.firstAbsolute + this._store.length;
    const normal = this._buffers.normal;
    const boundary = this._boundaryLine();
    const screenTop = this._screenTopAbsolute();
    const active = this._buffers.active;
    for (let r = start; r < end; r++) {
      if (r < storeEnd) out.push(this._store.get(r - this._store.firstAbsolute));
      else if (r < screenTop) out.push(rowText(normal, boundary + (r - storeEnd)));
      else out.push(rowText(active, active.baseY + (r - screenTop)));
    }
    return out;
  }

  /** Absolute row number of the top screen row. */
  private _screenTopAbsolute(): number {
    const normal = this._buffers.normal;
    return this._store.firstAbsolute + this._store.length + (normal.baseY - this._boundaryLine());
  }

  private _boundaryLine(): number {
    return this._boundary.line ?? 0;
  }

  /** Moves scrolled-off rows into the compact store once at least `min` of them wait. */
  private _maybeHarvest(min: number): void {
    // This runs for every row that scrolls: the cheap test first.
    const from = this._boundary.line;
    if (from !== undefined && this._buffers.normal.baseY - from < min) return;
    if (this._buffers.active.type !== 'normal') return; // the normal buffer does not scroll meanwhile
    if (from === undefined) {
      this._resetBoundary();
      return;
    }
    const buf = this._buffers.normal;
    const to = buf.baseY;
    const cols = this._term.cols;
    for (let i = from; i < to; i++) this._store.pushRow(buf, i, cols);
    this._boundary.place(to);
  }

  /**
   * The program is about to clear the scrollback (ED 3) or reset the terminal (RIS, which also
   * wipes the screen): drop the store and count every vanishing row, so row numbers only grow.
   */
  private _dropScrollback(reset: boolean): void {
    const pending = Math.max(0, this._buffers.normal.baseY - this._boundaryLine());
    this._store.clear(pending + (reset ? this._term.rows : 0));
    // The reset replaces xterm's buffers; the old row would point into the discarded one.
    if (reset) this._boundary.clear();
  }

  private _resetBoundary(): void {
    if (this._buffers.active.type !== 'normal') return;
    this._boundary.place(0);
  }

  private _releaseWaiters(): void {
    for (const w of this._parsedWaiters.splice(0)) w();
  }

  override dispose(): void {
    super.dispose();
    this._releaseWaiters();
  }
}
