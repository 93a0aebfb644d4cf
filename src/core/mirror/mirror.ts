import { Terminal, type IBuffer, type IBufferNamespace } from '@xterm/headless';
import { Disposable, toDisposable, type Event } from '../base/lifecycle';
import { rowIsWrapped, rowText } from './row-text';
import { keepEmptyRowMaps, printStateOf, syncWriteOf, touchedRowsOf, type PrintState, type TouchedRows } from '../base/internals/xterm';
import { RowWatches } from './row-watches';
import { PlainRunFinder, type PlainRun } from './plain-run';
import { serializeTerminal } from './serialize';
import { ScrollbackStore, type SealedRows } from './scrollback-store';
import { Unicode11Addon } from '@xterm/addon-unicode11';
import { DEFAULT_SCROLLBACK_LINES, type ScreenSize, type ScreenSnapshot } from './screen';
import { SavedCursorAsScreenRow } from './saved-cursor';
import { EraseAboveAtLastColumn } from './erase-above';
import { AutowrapResumed } from './autowrap-resumed';
import { QueryAnswers, type ReportedColors } from './query-answers';
import { boundaryOf, type Boundary } from './boundary';
import { StringSequenceCap } from './string-sequence-cap';

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
  /**
   * Fewest rows of a run of plain lines that go to the store without xterm (plain-run.ts): below
   * this the checks and the extra parse call cost about what the rows would.
   */
  MinSkippedRows = 16,
}

/**
 * Times a run is looked at again after xterm printed its first lines: once to end the line the
 * last write cut, once to bring the cursor down to the bottom row.
 */
const MAX_RUN_RETRIES = 2;

/** Options of a Mirror. */
export interface MirrorOptions {
  /**
   * Lets the head of a long run of plain lines go to the scrollback without xterm (default on;
   * docs/architecture.md#plain-runs). Off only to check, in tests, that it changes nothing.
   */
  plainRuns?: boolean;
}

export type { CursorPos, ScreenSize, ScreenSnapshot } from './screen';

/**
 * Spaces the program wrote at the end of row `y` (rowText leaves them out): a line that wrapped
 * there goes on after them. Cells never written (a wide character that did not fit) are no spaces.
 */
function writtenSpacesAtEnd(buf: IBuffer, y: number): number {
  const line = buf.getLine(y);
  if (!line) return 0;
  let x = line.length - 1;
  while (x >= 0 && line.getCell(x)?.getChars() === '') x--;
  let n = 0;
  while (x >= 0 && line.getCell(x)?.getChars() === ' ') {
    n++;
    x--;
  }
  return n;
}

/** Text of one byte a character (a row of it takes a cell a character). */
const ASCII_ONLY = /^[\x20-\x7e]*$/;

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
  private readonly _savedCursor: SavedCursorAsScreenRow;
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
  /** What the plain-line fast path checks, when it is on and this xterm shows it (base/internals/xterm.ts). */
  private readonly _print: PrintState | undefined;
  private readonly _runs = new PlainRunFinder();
  /** Long OSC and DCS strings cut before xterm holds them (string-sequence-cap.ts). */
  private readonly _strings = new StringSequenceCap();
  private _plainRowsSkipped = 0;
  /** The sends under way: the topmost row the output changed since each began (row-watches.ts). */
  private readonly _rowWatches = new RowWatches();
  /** The rows xterm's parse touched, when this xterm shows them (base/internals/xterm.ts). */
  private readonly _touched: TouchedRows | undefined;
  /** In a watched parse begun on the alternate screen: false until the normal screen is back (its rows count from then). */
  private _rowsCountFromHere = true;
  /** Rows above this one were erased by the program (ED 3, RIS), not lost to the scrollback's bound. */
  private _erasedBelow = 0;

  constructor(
    cols: number,
    rows: number,
    private readonly _scrollbackLines = DEFAULT_SCROLLBACK_LINES,
    options: MirrorOptions = {},
  ) {
    super();
    // allowProposedApi: @xterm/headless 6 refuses buffer reads without it.
    // logLevel off: a program's malformed sequences are its output, not the host's errors (xterm
    // would dump each one on the host's stderr, unbounded under hostile output).
    this._term = new Terminal({ cols, rows, scrollback: MirrorTuning.XtermScrollback, allowProposedApi: true, logLevel: 'off' });
    this._register(toDisposable(() => this._term.dispose()));
    this._buffers = this._term.buffer;
    // A scroll then makes no garbage that outlives the thread's young collections (base/internals/xterm.ts).
    keepEmptyRowMaps(this._term);
    // xterm's public write() parses in slices of up to 12 ms, each scheduled with a timer (at least
    // 1 ms, more on a loaded machine); the mirror thread schedules its own slices, shorter and without
    // a timer (mirror-worker.ts). xterm calls writeSync unreliable only with asynchronous parser
    // handlers, and the mirror registers none.
    this._parseNow = syncWriteOf(this._term);
    this._print = options.plainRuns === false ? undefined : printStateOf(this._term);
    this._touched = touchedRowsOf(this._term);
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
        if (this._rowWatches.active) this._scrolledWatched();
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
    // What a scroll moved is not what the output changed: a send's rows start again after it.
    const touched = this._touched;
    if (touched) this._register(touched.afterScroll(() => this._rowWatches.active && touched.restart()));
    // Back from the alternate screen, xterm marks every row changed; only what follows the switch
    // is output, resuming at the normal screen's cursor (a send that closed vim answered the rows
    // the normal screen had before it).
    this._register(
      this._buffers.onBufferChange((buf) => {
        if (!this._rowWatches.active || buf.type !== 'normal') return;
        this._rowsCountFromHere = true;
        touched?.restart();
        this._rowWatches.touched(this._screenTopAbsolute() + buf.cursorY);
      }),
    );
    const savedCursor = (this._savedCursor = this._register(new SavedCursorAsScreenRow(this._term)));
    this._register(new EraseAboveAtLastColumn(this._term));
    this._register(new AutowrapResumed(this._term));
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

  /** Rows that went to the store without xterm (plain-run.ts): for tests and profiles. */
  get plainRowsSkipped(): number {
    return this._plainRowsSkipped;
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
  write(chunk: Uint8Array, onParsed?: () => void): void {
    if (this.isDisposed) return;
    const data = this._strings.filter(chunk);
    if (this._parseNow) {
      const parse = this._rowWatches.active ? this._parseWatched : this._parseNow;
      if (this._print) this._writeRuns(parse, data);
      else parse(data);
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

  /**
   * Starts following the rows the output changes from now on (a send's output: row-watches.ts);
   * returns the watch and the cursor's row.
   */
  watchRows(): { watch: number; row: number } {
    // On the alternate screen, output the send looks for resumes on the normal one, at its cursor.
    const row = this._buffers.active.type === 'normal' ? this.cursorRow : this._screenTopAbsolute() + this._buffers.normal.cursorY;
    return { watch: this._rowWatches.start(row), row };
  }

  /**
   * Ends a watch: the topmost row the output changed since it began (its start row at most), and
   * whether rows from there on were lost to the scrollback's bound rather than erased by the program.
   */
  endRowWatch(watch: number, startRow: number): { from: number; truncated: boolean } {
    // Where the cursor is now was reached too, whatever this xterm shows of its parses.
    const from = Math.min(startRow, this._rowWatches.end(watch) ?? startRow, this.cursorRow);
    return { from, truncated: this.firstRetainedRow > Math.max(from, this._erasedBelow) };
  }

  /**
   * Parses as `_parseNow` does, and tells the watches the topmost row it changed. On the alternate
   * screen a send's output is that screen (mirror-queries.ts), so its rows count only once the
   * normal screen is back: from its cursor, where its output resumes.
   */
  private readonly _parseWatched = (data: Uint8Array): void => {
    const wasNormal = this._buffers.active.type === 'normal';
    this._rowsCountFromHere = wasNormal;
    this._parseNow!(data);
    this._rowsCountFromHere = true;
    if (this._buffers.active.type !== 'normal') return;
    // The rows touched since the last scroll (_scrolledWatched) count from the screen's top now.
    // From the alternate screen, the rows count from the switch back (onBufferChange restarted them).
    if (this._touched) this._rowWatches.touched(this._screenTopAbsolute() + this._touched.top());
    if (!wasNormal || !this._touched) this._rowWatches.touched(this.cursorRow);
  };

  /**
   * The normal screen scrolled up a row in a watched parse: the rows touched before count from
   * the screen's top as it was, a row higher. (The range then starts again, once xterm has marked
   * the region it scrolled: the constructor's afterScroll.)
   */
  private _scrolledWatched(): void {
    // xterm also fires a scroll as it switches back to the normal screen, before the switch is told
    // (onBufferChange): nothing the output changed yet, and the rows marked are the switch's.
    if (!this._rowsCountFromHere) return;
    if (this._touched && this._buffers.active.type === 'normal') this._rowWatches.touched(this._screenTopAbsolute() - 1 + this._touched.top());
  }

  /** Resolves once everything written so far has been parsed. */
  whenParsed(): Promise<void> {
    if (this._pendingBytes === 0 || this.isDisposed) return Promise.resolve();
    return new Promise((resolve) => this._parsedWaiters.push(resolve));
  }

  /**
   * Resizes the screen as xterm, tmux and the user's own terminal do: the rows xterm holds re-wrap
   * to the new width, and a taller screen pulls rows back down from the scrollback; older rows,
   * in the store, keep their wrapping, as tmux keeps its history (docs/architecture.md#resize).
   */
  resize(cols: number, rows: number): void {
    // A view reports its size again and again: nothing changes, nothing moves.
    if (cols === this._term.cols && rows === this._term.rows) return;
    if (!this._giveBackToXterm()) {
      // The alternate screen is active and the boundary can only be placed on the normal one
      // (boundary.ts): xterm resizes alone, and the rows it pushes up go in the next batches.
      this._term.resize(cols, rows);
      if (this._boundary.line === undefined) this._resetBoundary();
      this._maybeHarvest(MirrorTuning.HarvestBatch);
      return;
    }
    // Every row xterm holds is now its alone, so whatever it re-wraps or pulls back onto the screen
    // is nowhere else (rows the store still held came back onto the screen and were shown twice).
    // Its buffer is made as long as those rows can grow into, so it trims none for the resize (a
    // trim of the boundary's row read as ED 3: the store emptied).
    const options = this._term.options;
    options.scrollback = Math.max(MirrorTuning.XtermScrollback, this._rowsAfterResize(cols));
    this._term.resize(cols, rows);
    // The rows above the screen go to the store, then xterm keeps its usual scrollback of them.
    this._harvestAll();
    options.scrollback = MirrorTuning.XtermScrollback;
  }

  /**
   * At most how many rows the rows xterm holds become at `cols` columns: narrower, a row re-wraps
   * into at most ceil(old cols / (new cols - 1)) rows (a wide character that does not fit a row's
   * last cell moves to the next one); wider, rows only join.
   */
  private _rowsAfterResize(cols: number): number {
    const old = this._term.cols;
    return this._buffers.normal.length * (cols < old ? Math.ceil(old / Math.max(1, cols - 1)) : 1);
  }

  /**
   * Takes the rows xterm still holds back from the store (its newest rows: they were moved from
   * these very rows, and nothing changes a row above the screen), so that xterm's scrollback is
   * unmoved again down from its first row. Rows the store already let go (a store shorter than
   * xterm's scrollback) leave xterm too. False when this boundary can only be placed on the normal
   * screen (boundary.ts) and the alternate one is active: nothing moved.
   */
  private _giveBackToXterm(): boolean {
    if (this._buffers.active.type !== 'normal' && !this._boundary.anyScreen) return false;
    const from = this._boundary.line;
    if (from === undefined) {
      // Never placed, or gone with the store (ED 3, RIS): nothing xterm holds is in the store.
      this._boundary.place(0);
      return true;
    }
    const taken = this._store.popNewest(from);
    this._boundary.place(from - taken);
    if (taken < from) this._term.options.scrollback = Math.max(0, this._buffers.normal.baseY - (from - taken)); // trims them
    return true;
  }

  /**
   * Moves every row above the screen of the normal buffer into the store, whichever screen is
   * active. False when this boundary can only be placed on the normal screen (boundary.ts) and
   * the alternate one is active: nothing moved.
   */
  private _harvestAll(): boolean {
    if (this._buffers.active.type !== 'normal' && !this._boundary.anyScreen) return false;
    if (this._boundary.line === undefined) this._boundary.place(0);
    const from = this._boundaryLine();
    const to = this._buffers.normal.baseY;
    if (from >= to) return true;
    this._moveRows(from, to);
    this._boundary.place(to);
    return true;
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
    // The addon's text is made for a fresh screen, its cursor at the top left (it counts which of
    // its line breaks scroll, and so paint a row with the pen): the store's rows are scrolled up
    // into the scrollback whole, leaving a blank screen.
    if (out !== '') out += '\r\n'.repeat(this._term.rows - 1) + '\x1b[H';
    // Made only for the call: an idle session pays nothing for it.
    return out + serializeTerminal(this._term, fromXterm, (buffer) => this._savedCursor.savedOf(buffer));
  }

  /** The visible screen now (call whenParsed() first for an up-to-date view). */
  screen(): ScreenSnapshot {
    const buf = this._buffers.active;
    const rows: string[] = [];
    for (let y = 0; y < this._term.rows; y++) rows.push(rowText(buf, buf.baseY + y));
    return {
      rows,
      cursor: { row: buf.cursorY + 1, col: this._cursorColumn(buf.cursorX) + 1 },
      size: this.size,
      alternate: buf.type === 'alternate',
    };
  }

  /**
   * The cursor's column as a terminal shows it: one past the edge while a wrap is pending, as tmux
   * reports it; with autowrap off nothing is pending, and it stays on the last column (xterm.js
   * keeps it past). The modes are read only at the edge (`term.modes` makes an object each call).
   */
  private _cursorColumn(x: number): number {
    const cols = this._term.cols;
    return x < cols || this._term.modes.wraparoundMode ? x : cols - 1;
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
  rowsBetween(from: number, to: number, joinWrapped = false): string[] {
    const out: string[] = [];
    const start = Math.max(from, this.firstRetainedRow);
    const end = Math.min(to, this.endRow);
    const storeEnd = this._store.firstAbsolute + this._store.length;
    const normal = this._buffers.normal;
    const boundary = this._boundaryLine();
    const screenTop = this._screenTopAbsolute();
    const active = this._buffers.active;
    const cols = this._term.cols;
    /** The spaces at the right edge of the row before, which its text leaves out: part of a line that wrapped there. */
    let prevEdge = (): number => 0;
    for (let r = start; r < end; r++) {
      let text: string;
      let wrapped = false;
      let edge = prevEdge;
      if (r < storeEnd) {
        const i = r - this._store.firstAbsolute;
        const kept = (text = this._store.get(i));
        if (joinWrapped) {
          wrapped = this._store.wrapped(i);
          // Kept without its trailing spaces: a row a line wrapped from was full, a cell a character.
          edge = () => (ASCII_ONLY.test(kept) ? Math.max(0, cols - kept.length) : 0);
        }
      } else {
        const [buf, y] = r < screenTop ? [normal, boundary + (r - storeEnd)] : [active, active.baseY + (r - screenTop)];
        text = rowText(buf, y);
        if (joinWrapped) {
          wrapped = rowIsWrapped(buf, y);
          edge = () => writtenSpacesAtEnd(buf, y);
        }
      }
      // With joinWrapped, a row the terminal wrapped onto goes back onto its line, as the program wrote it.
      if (wrapped && out.length > 0) out[out.length - 1] += ' '.repeat(prevEdge()) + text;
      else out.push(text);
      prevEdge = edge;
    }
    return out;
  }

  /**
   * Parses `data`, except the heads of long runs of plain lines when the terminal is in a state
   * where xterm would only print them and scroll them away: their rows go to the store as text.
   * xterm parses each run's tail, at least its whole buffer's worth of rows (scrollback and screen),
   * so its buffer, cursor and state end exactly as if it had parsed the whole run
   * (docs/architecture.md#plain-runs; test/unit/core/mirror/plain-run.fuzz.test.ts compares).
   */
  private _writeRuns(parse: (data: Uint8Array) => void, chunk: Uint8Array): void {
    // A plain view: a Buffer's subarrays are Buffers, each made through a slower constructor.
    const data = chunk.constructor === Uint8Array ? chunk : new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.length);
    const cols = this._term.cols;
    const tailRows = MirrorTuning.XtermScrollback + this._term.rows;
    let at = 0;
    let retries = MAX_RUN_RETRIES;
    for (;;) {
      const run = this._runs.find(data, at, cols, tailRows, MirrorTuning.MinSkippedRows);
      if (!run) break;
      if (run.start > at) parse(data.subarray(at, run.start));
      const ready = this._plainRunReady();
      if (ready === true) {
        this._skipRun(data, run);
        parse(data.subarray(run.tail, run.end));
      } else if (ready > 0 && retries > 0) {
        // The cursor is within a line (the run began with a line's end, cut off by the last write)
        // or above the bottom row (a cleared screen): xterm prints the lines that bring it to the
        // bottom row's start, and the rest of the run is looked at again.
        retries--;
        const to = this._runs.linesCovering(run, cols, ready);
        parse(data.subarray(run.start, to));
        at = to;
        continue;
      } else parse(data.subarray(run.start, run.end));
      at = run.end;
      retries = MAX_RUN_RETRIES;
    }
    if (at < data.length) parse(at === 0 ? data : data.subarray(at));
  }

  /**
   * True when a plain line printed now lands as plain-run.ts assumes, and its rows would only
   * scroll into the store: the normal screen, nothing half-parsed, plain ASCII printing, the
   * cursor at column 0 (no wrap pending) of the bottom row of a whole-screen scroll region, that row
   * blank and no continuation, and no rows pulled back onto the screen from the store (a taller
   * resize). When only the cursor is elsewhere, the rows that the next lines must fill to bring it
   * there (1 to end the line it is within); else 0.
   */
  private _plainRunReady(): true | number {
    const print = this._print;
    if (!print || this._buffers.active.type !== 'normal' || !print.idle() || !print.plainPrint()) return 0;
    const rows = this._term.rows;
    const c = print.cursor();
    if (c.x !== 0) return 1;
    if (c.scrollTop !== 0 || c.scrollBottom !== rows - 1 || c.ydisp !== c.ybase) return 0;
    const buf = this._buffers.normal;
    const from = this._boundary.line;
    if (from === undefined || from > buf.baseY) return 0;
    const line = buf.getLine(buf.baseY + c.y);
    if (!line || line.isWrapped || rowText(buf, buf.baseY + c.y) !== '') return 0;
    return c.y === rows - 1 ? true : rows - 1 - c.y;
  }

  /**
   * Moves to the store, in their order, every row the run's head scrolls away before its tail
   * reaches xterm: the rows waiting above the screen, the screen's rows above the cursor, then the
   * head's own rows. The boundary then points at the cursor's row, where xterm prints the tail,
   * and the harvest count is where the whole run would have left it, so the rows xterm scrolls
   * away from here are moved exactly as without the fast path.
   */
  private _skipRun(data: Uint8Array, run: PlainRun): void {
    const cols = this._term.cols;
    const cursorLine = this._buffers.normal.baseY + this._term.rows - 1;
    this._moveRows(this._boundaryLine(), cursorLine);
    this._runs.pushRows(data, run, cols, (bytes, start, end, wrapped) => this._store.pushAscii(bytes, start, end, wrapped));
    this._boundary.place(cursorLine);
    this._scrolledSinceCheck = (this._scrolledSinceCheck + run.skippedRows) % MirrorTuning.HarvestBatch;
    this._plainRowsSkipped += run.skippedRows;
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
    const to = this._buffers.normal.baseY;
    this._moveRows(from, to);
    this._boundary.place(to);
  }

  /** Moves rows [from, to) of the normal buffer into the store, oldest first (the caller places the boundary). */
  private _moveRows(from: number, to: number): void {
    const buf = this._buffers.normal;
    const cols = this._term.cols;
    for (let i = from; i < to; i++) this._store.pushRow(buf, i, cols);
  }

  /**
   * The program is about to clear the scrollback (ED 3) or reset the terminal (RIS, which also
   * wipes the screen): drop the store and count every vanishing row, so row numbers only grow.
   */
  private _dropScrollback(reset: boolean): void {
    const pending = Math.max(0, this._buffers.normal.baseY - this._boundaryLine());
    this._store.clear(pending + (reset ? this._term.rows : 0));
    this._erasedBelow = this._store.firstAbsolute;
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
