import { Terminal, type IBuffer, type IMarker } from '@xterm/headless';
import { Disposable, Emitter, toDisposable } from './lifecycle';
import { ScrollbackStore } from './scrollback-store';

/** Tuning of the headless mirror. Each number is a trade-off measured on real sessions. */
const enum MirrorTuning {
  /** Rows the xterm buffer itself keeps above the screen; older rows move to the compact store. */
  XtermScrollback = 256,
  /** Rows moved to the compact store at a time; half the xterm scrollback so no row is trimmed unread. */
  HarvestBatch = 128,
}

/** Default rows of scrollback retained per session (CONTRACT §6: 10000). */
export const DEFAULT_SCROLLBACK_LINES = 10000;

export interface CursorPos {
  /** 1-based row on the screen. */
  row: number;
  /** 1-based column. */
  col: number;
}

export interface ScreenSize {
  cols: number;
  rows: number;
}

/** A snapshot of the visible screen. */
export interface ScreenSnapshot {
  /** Every screen row, trailing spaces removed. */
  rows: string[];
  cursor: CursorPos;
  size: ScreenSize;
  /** True when a full-screen program (vim, less) is on the alternate screen. */
  alternate: boolean;
}

/**
 * The headless terminal that mirrors one session's screen, plus the compact store of old rows.
 *
 * Rows are numbered absolutely over the session's life: row numbers only grow, so a send can
 * remember "the output starts at row N" and still find it after thousands of rows scrolled by.
 */
export class Mirror extends Disposable {
  private readonly _term: Terminal;
  private readonly _store: ScrollbackStore;
  /** First xterm buffer row not yet moved into the store (normal buffer). */
  private _boundary: IMarker | undefined;
  private _pendingBytes = 0;
  private readonly _parsedWaiters: Array<() => void> = [];

  private readonly _onParsed = this._register(new Emitter<void>());
  /** Fires after a chunk of output has been parsed into the screen. */
  readonly onParsed = this._onParsed.event;

  constructor(
    cols: number,
    rows: number,
    private readonly _scrollbackLines = DEFAULT_SCROLLBACK_LINES,
  ) {
    super();
    // allowProposedApi: @xterm/headless 6 refuses buffer reads without it.
    this._term = new Terminal({ cols, rows, scrollback: MirrorTuning.XtermScrollback, allowProposedApi: true });
    this._register(toDisposable(() => this._term.dispose()));
    this._store = new ScrollbackStore(_scrollbackLines);
    this._resetBoundary();
    this._register(this._term.onScroll(() => this._maybeHarvest(MirrorTuning.HarvestBatch)));
  }

  get size(): ScreenSize {
    return { cols: this._term.cols, rows: this._term.rows };
  }

  /** Bytes handed to the parser and not yet parsed (flow control watches this). */
  get pendingBytes(): number {
    return this._pendingBytes;
  }

  /** Queues output for parsing; the PTY read path never waits for the parser. */
  write(data: Uint8Array): void {
    if (this.isDisposed) return;
    this._pendingBytes += data.length;
    this._term.write(data, () => {
      this._pendingBytes -= data.length;
      this._onParsed.fire();
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
    if (!this._boundary || this._boundary.isDisposed) this._resetBoundary();
  }

  /** The visible screen now (call whenParsed() first for an up-to-date view). */
  screen(): ScreenSnapshot {
    const buf = this._term.buffer.active;
    const rows: string[] = [];
    for (let y = 0; y < this._term.rows; y++) rows.push(lineText(buf, buf.baseY + y));
    return {
      rows,
      cursor: { row: buf.cursorY + 1, col: buf.cursorX + 1 },
      size: this.size,
      alternate: buf.type === 'alternate',
    };
  }

  /**
   * Absolute number of the first retained row; the retained rows are the scrollback followed by
   * the screen rows down to the lower of the cursor row and the last non-empty row (CONTRACT §8).
   */
  get firstRetainedRow(): number {
    return Math.max(this._store.firstAbsolute, this._screenTopAbsolute() - this._scrollbackLines);
  }

  /** Absolute number of the row the cursor is on. */
  get cursorRow(): number {
    const buf = this._term.buffer.active;
    return this._screenTopAbsolute() + buf.cursorY;
  }

  /** Absolute number just past the last retained row. */
  get endRow(): number {
    const buf = this._term.buffer.active;
    let last = buf.cursorY;
    for (let y = this._term.rows - 1; y > last; y--) {
      if (lineText(buf, buf.baseY + y) !== '') {
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
    const normal = this._term.buffer.normal;
    const boundary = this._boundaryLine();
    const screenTop = this._screenTopAbsolute();
    const active = this._term.buffer.active;
    for (let r = start; r < end; r++) {
      if (r < storeEnd) out.push(this._store.get(r - this._store.firstAbsolute));
      else if (r < screenTop) out.push(lineText(normal, boundary + (r - storeEnd)));
      else out.push(lineText(active, active.baseY + (r - screenTop)));
    }
    return out;
  }

  /** Absolute row number of the top screen row. */
  private _screenTopAbsolute(): number {
    const normal = this._term.buffer.normal;
    return this._store.firstAbsolute + this._store.length + (normal.baseY - this._boundaryLine());
  }

  private _boundaryLine(): number {
    const b = this._boundary;
    return b && !b.isDisposed && b.line >= 0 ? b.line : 0;
  }

  /** Moves scrolled-off rows into the compact store once at least `min` of them wait. */
  private _maybeHarvest(min: number): void {
    if (this._term.buffer.active.type !== 'normal') return; // the normal buffer does not scroll meanwhile
    if (!this._boundary || this._boundary.isDisposed) {
      this._resetBoundary();
      return;
    }
    const buf = this._term.buffer.normal;
    const from = this._boundary.line;
    const to = buf.baseY;
    if (to - from < min) return;
    for (let i = from; i < to; i++) this._store.push(lineText(buf, i));
    this._placeBoundary(to);
  }

  /** Points the boundary marker at xterm buffer row `line` (normal buffer must be active). */
  private _placeBoundary(line: number): void {
    const buf = this._term.buffer.normal;
    const marker = this._term.registerMarker(line - (buf.baseY + buf.cursorY));
    const old = this._boundary;
    this._boundary = marker;
    old?.dispose();
    if (marker) {
      // A marker only dies before we move it when the program cleared the scrollback (ED 3, RIS):
      // honour that in the compact store too, as a terminal would.
      marker.onDispose(() => {
        if (this._boundary === marker) {
          this._boundary = undefined;
          this._store.clear();
        }
      });
    }
  }

  private _resetBoundary(): void {
    if (this._term.buffer.active.type !== 'normal') return;
    this._placeBoundary(0);
  }

  private _releaseWaiters(): void {
    for (const w of this._parsedWaiters.splice(0)) w();
  }

  override dispose(): void {
    super.dispose();
    this._releaseWaiters();
  }
}

/** One row as text, trailing spaces removed (spaces a program wrote count too, as in tmux's capture-pane). */
function lineText(buf: IBuffer, y: number): string {
  const text = buf.getLine(y)?.translateToString(true) ?? '';
  return text.charCodeAt(text.length - 1) === 0x20 ? text.replace(/ +$/, '') : text;
}
