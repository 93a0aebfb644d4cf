import type { IBuffer, IBufferCell, IBufferLine, Terminal } from '@xterm/headless';

/*
 * What @xterm/headless (6.0) keeps private and the mirror reads for speed (row-text.ts, mirror.ts):
 * each read returns undefined when the shape is not the expected one, and the caller then takes the
 * public path. test/unit/core/base/internals/xterm.test.ts fails when a new xterm changes it.
 */

/**
 * xterm.js's own row of cells, behind the public IBufferLine: three 32-bit words per cell, the
 * first holding the code point (21 bits), a "combined" flag and the width (top bits).
 */
export interface CellRow {
  _data: Uint32Array;
  length: number;
  /** The row continues the one before (xterm's BufferLine has it, as the public line does). */
  isWrapped?: boolean;
}

/** The row of cells behind a public line (`_line`). */
export function cellsOfLine(line: IBufferLine | undefined): CellRow | undefined {
  return (line as unknown as { _line?: CellRow } | undefined)?._line;
}

/** The buffer's own list of rows (`_buffer.lines`), which the public getLine wraps in a new object per call. */
export function rowListOf(buf: IBuffer): { get(i: number): CellRow | undefined } | undefined {
  const lines = (buf as unknown as { _buffer?: { lines?: { get?: (i: number) => CellRow | undefined } } })._buffer?.lines;
  return typeof lines?.get === 'function' ? (lines as { get(i: number): CellRow | undefined }) : undefined;
}

/** xterm's synchronous parse (its core's `writeSync`), or undefined when this version has none. */
export function syncWriteOf(term: Terminal): ((data: Uint8Array) => void) | undefined {
  const core = (term as unknown as { _core?: { writeSync?: (data: Uint8Array) => void } })._core;
  if (!core || typeof core.writeSync !== 'function') return undefined;
  const writeSync = core.writeSync;
  return (data) => writeSync.call(core, data);
}

/**
 * Where the active buffer's saved cursor (DECSC) returns to, as xterm keeps it: `savedY` counts from
 * the top of the scrollback, not of the screen. Undefined when this version keeps it elsewhere.
 */
export function savedCursorRowOf(term: Terminal): { set(absoluteRow: number, column?: number): void } | undefined {
  const active = (term as unknown as { _core?: { buffers?: { active?: { savedY?: unknown; savedX?: unknown } } } })._core?.buffers?.active;
  if (!active || typeof active.savedY !== 'number') return undefined;
  return {
    set: (absoluteRow, column) => {
      active.savedY = absoluteRow;
      if (column !== undefined && typeof active.savedX === 'number') active.savedX = column;
    },
  };
}

/**
 * The active buffer's saved cursor (DECSC) as xterm keeps it: its column, and its row counted from
 * the top of the scrollback (see savedCursorRowOf). Undefined when this version keeps it elsewhere.
 */
export function savedCursorOf(term: Terminal): { x: number; row: number } | undefined {
  const active = (term as unknown as { _core?: { buffers?: { active?: { savedX?: unknown; savedY?: unknown } } } })._core?.buffers?.active;
  if (!active || typeof active.savedX !== 'number' || typeof active.savedY !== 'number') return undefined;
  return { x: active.savedX, row: active.savedY };
}

/**
 * The active buffer's cursor column as xterm keeps it (`cols` while a wrap is pending, and after
 * text written past the edge with autowrap off). Undefined when this version keeps it elsewhere.
 */
export function cursorColumnOf(term: Terminal): { get(): number; set(x: number): void } | undefined {
  const buffers = (term as unknown as { _core?: { buffers?: { active?: { x?: unknown } } } })._core?.buffers;
  if (!buffers || typeof buffers.active?.x !== 'number') return undefined;
  return {
    get: () => buffers.active!.x as number,
    set: (x) => {
      buffers.active!.x = x;
    },
  };
}

/** xterm's own steps of an erase in display, on the active buffer (what erase-above.ts needs). */
export interface EraseSteps {
  /** The cursor as xterm keeps it: `x` may be `cols` while a wrap is pending; `y` counts from the screen's top. */
  cursor(): { x: number; y: number; ybase: number };
  /** Erases cells `start` to `end` of screen row `y` (the row is no longer a continuation). */
  eraseInLine(y: number, start: number, end: number, respectProtect: boolean): void;
  /** Erases the whole of screen row `y`. */
  resetLine(y: number, respectProtect: boolean): void;
  /** Marks screen row `y` for redraw. */
  markDirty(y: number): void;
  /** A row of the buffer counted from the top of the scrollback, if there is one. */
  row(absolute: number): { isWrapped: boolean } | undefined;
}

/** The input handler's erase steps (`_core._inputHandler`), or undefined when this version keeps them elsewhere. */
export function eraseStepsOf(term: Terminal): EraseSteps | undefined {
  interface Handler {
    _eraseInBufferLine?: (y: number, start: number, end: number, clearWrap: boolean, respectProtect: boolean) => void;
    _resetBufferLine?: (y: number, respectProtect: boolean) => void;
    _dirtyRowTracker?: { markDirty?: (y: number) => void };
    _activeBuffer?: { x: number; y: number; ybase: number; lines?: { get?: (i: number) => { isWrapped: boolean } | undefined } };
  }
  const h = (term as unknown as { _core?: { _inputHandler?: Handler } })._core?._inputHandler;
  if (
    !h ||
    typeof h._eraseInBufferLine !== 'function' ||
    typeof h._resetBufferLine !== 'function' ||
    typeof h._dirtyRowTracker?.markDirty !== 'function' ||
    typeof h._activeBuffer?.lines?.get !== 'function'
  )
    return undefined;
  const handler = h as Required<Handler>;
  // The active buffer changes with the alternate screen: read it at each step.
  const buffer = () => handler._activeBuffer as Required<Handler>['_activeBuffer'] & { lines: { get(i: number): { isWrapped: boolean } | undefined } };
  return {
    cursor: () => ({ x: buffer().x, y: buffer().y, ybase: buffer().ybase }),
    eraseInLine: (y, start, end, respectProtect) => handler._eraseInBufferLine(y, start, end, true, respectProtect),
    resetLine: (y, respectProtect) => handler._resetBufferLine(y, respectProtect),
    markDirty: (y) => handler._dirtyRowTracker.markDirty!(y),
    row: (absolute) => buffer().lines.get(absolute),
  };
}

/** How xterm's list of buffer rows reports rows leaving or moving (what its own markers follow). */
export interface RowListEvents {
  /** `amount` rows left the top (the scrollback was full, or ED 3 trimmed it). */
  onTrim(listener: (amount: number) => void): { dispose(): void };
  /** `amount` rows were inserted at `index` (a reflow on resize). */
  onInsert(listener: (e: { index: number; amount: number }) => void): { dispose(): void };
  /** `amount` rows were deleted at `index` (a reflow on resize). */
  onDelete(listener: (e: { index: number; amount: number }) => void): { dispose(): void };
}

/**
 * The normal buffer's list of rows, read anew at each call: a reset (RIS) replaces the buffer and
 * its list. Undefined when this version keeps them elsewhere (the caller then uses markers).
 */
export function normalRowListOf(term: Terminal): (() => RowListEvents | undefined) | undefined {
  const core = (term as unknown as { _core?: { buffers?: { normal?: { lines?: Partial<RowListEvents> } } } })._core;
  const list = () => core?.buffers?.normal?.lines;
  const lines = list();
  if (typeof lines?.onTrim !== 'function' || typeof lines.onInsert !== 'function' || typeof lines.onDelete !== 'function') return undefined;
  return list as () => RowListEvents | undefined;
}

/**
 * What decides where the next printable ASCII character lands, as xterm's input handler keeps it
 * (what the plain-line fast path checks before it lets rows skip the parser: mirror.ts).
 */
export interface PrintState {
  /**
   * True when nothing is half-read: the parser is in its ground state (no escape sequence, OSC
   * or DCS string under way, which would swallow the next lines), no parse is paused, and no
   * UTF-8 character waits for its last bytes.
   */
  idle(): boolean;
  /**
   * True when a printable ASCII character prints as itself into one cell, overwriting, and wraps
   * at the right margin: the GL charset is ASCII (no DEC graphics, no shift), insert mode is off,
   * auto-wrap (DECAWM) is on, and no hyperlink (OSC 8) is open (xterm would record each row in it).
   */
  plainPrint(): boolean;
  /** The active buffer's cursor (`x` is `cols` while a wrap is pending), scroll region and view, 0-based from the screen's top. */
  cursor(): { x: number; y: number; scrollTop: number; scrollBottom: number; ybase: number; ydisp: number };
}

/** The input handler's print state (`_core._inputHandler`), or undefined when this version keeps it elsewhere. */
export function printStateOf(term: Terminal): PrintState | undefined {
  interface Handler {
    _parser?: { currentState?: unknown; initialState?: unknown; _parseStack?: { state?: unknown } };
    _parseStack?: { paused?: unknown };
    _utf8Decoder?: { interim?: unknown };
    _charsetService?: { charset?: unknown; setgCharset?: unknown };
    _coreService?: { modes?: { insertMode?: unknown }; decPrivateModes?: { wraparound?: unknown } };
    _curAttrData?: { extended?: { urlId?: unknown } };
    _activeBuffer?: Record<'x' | 'y' | 'scrollTop' | 'scrollBottom' | 'ybase' | 'ydisp', unknown>;
  }
  const h = (term as unknown as { _core?: { _inputHandler?: Handler } })._core?._inputHandler;
  const b = h?._activeBuffer;
  if (
    !h ||
    !b ||
    typeof h._parser?.currentState !== 'number' ||
    typeof h._parser.initialState !== 'number' ||
    typeof h._parser._parseStack?.state !== 'number' ||
    typeof h._parseStack?.paused !== 'boolean' ||
    !(h._utf8Decoder?.interim instanceof Uint8Array) ||
    // `charset` is unset until a charset is chosen: the service's own method vouches for the shape.
    typeof h._charsetService?.setgCharset !== 'function' ||
    typeof h._coreService?.modes?.insertMode !== 'boolean' ||
    typeof h._coreService.decPrivateModes?.wraparound !== 'boolean' ||
    typeof h._curAttrData?.extended?.urlId !== 'number' ||
    !(['x', 'y', 'scrollTop', 'scrollBottom', 'ybase', 'ydisp'] as const).every((k) => typeof b[k] === 'number')
  )
    return undefined;
  interface Known {
    _parser: { currentState: number; initialState: number; _parseStack: { state: number } };
    _parseStack: { paused: boolean };
    _utf8Decoder: { interim: Uint8Array };
    _charsetService: { charset: unknown };
    _coreService: { modes: { insertMode: boolean }; decPrivateModes: { wraparound: boolean } };
    _curAttrData: { extended?: { urlId?: number } };
    _activeBuffer: { x: number; y: number; scrollTop: number; scrollBottom: number; ybase: number; ydisp: number };
  }
  const k = h as unknown as Known;
  return {
    idle: () =>
      k._parser.currentState === k._parser.initialState && k._parser._parseStack.state === 0 && !k._parseStack.paused && k._utf8Decoder.interim[0] === 0,
    // The attribute's extended part is replaced as SGR changes it: read it at each call.
    plainPrint: () =>
      k._charsetService.charset === undefined &&
      !k._coreService.modes.insertMode &&
      k._coreService.decPrivateModes.wraparound &&
      (k._curAttrData.extended?.urlId ?? 1) === 0,
    // The active buffer changes with the alternate screen: read it at each call.
    cursor: () => {
      const a = k._activeBuffer;
      return { x: a.x, y: a.y, scrollTop: a.scrollTop, scrollBottom: a.scrollBottom, ybase: a.ybase, ydisp: a.ydisp };
    },
  };
}

/** What keepEmptyRowMaps reads of a row: xterm's maps of the row's combined characters and extended attributes. */
interface RowMaps {
  _combined?: unknown;
  _extendedAttrs?: unknown;
}

const KEEPS_EMPTY_ROW_MAPS = Symbol('sharedPty.keepsEmptyRowMaps');

/** True for a plain object with no keys (what xterm's row maps are when nothing is combined or extended). */
function isEmptyMap(o: unknown): boolean {
  if (typeof o !== 'object' || o === null || Object.getPrototypeOf(o) !== Object.prototype) return false;
  for (const _ in o) return false;
  return true;
}

/**
 * At every scroll of a full buffer xterm reuses its oldest row (`BufferLine.copyFrom`) and gives it
 * two new maps, empty but for combined characters and extended attributes. They live as long as the
 * row, one buffer's worth of scrolls: in the mirror thread, which parses many sessions in turn, they
 * outlive young collections and pile up in the old generation until a full one (~28 MiB in a
 * flood of 100 sessions: bench/README.md, "Issue 25: a flood's memory"). So the row keeps its own
 * maps when they were empty and the new ones are too, and the new ones die young. Same state, same
 * behaviour. Applied once to xterm's row class; false when this version's rows look otherwise.
 */
export function keepEmptyRowMaps(term: Terminal): boolean {
  type Row = RowMaps & { copyFrom?: (src: RowMaps) => void; [KEEPS_EMPTY_ROW_MAPS]?: true };
  const lines = (term as unknown as { _core?: { buffers?: { normal?: { lines?: { get?: (i: number) => unknown } } } } })._core?.buffers?.normal?.lines;
  const row = (typeof lines?.get === 'function' ? lines.get(0) : undefined) as Row | undefined;
  const proto = row ? (Object.getPrototypeOf(row) as Row) : undefined;
  if (!row || !proto || typeof proto.copyFrom !== 'function' || !isEmptyMap(row._combined) || !isEmptyMap(row._extendedAttrs)) return false;
  if (proto[KEEPS_EMPTY_ROW_MAPS]) return true;
  const copyFrom = proto.copyFrom;
  proto.copyFrom = function (this: RowMaps, src: RowMaps): void {
    const combined = this._combined;
    const extended = this._extendedAttrs;
    copyFrom.call(this, src);
    if (isEmptyMap(combined) && isEmptyMap(this._combined)) this._combined = combined;
    if (isEmptyMap(extended) && isEmptyMap(this._extendedAttrs)) this._extendedAttrs = extended;
  };
  proto[KEEPS_EMPTY_ROW_MAPS] = true;
  return true;
}

/**
 * The rows xterm's current parse has touched, as its input handler keeps them for a renderer (its
 * dirty-row range): each parse starts the range at the cursor's row and widens it to every row it
 * prints on, erases, scrolls or moves the cursor to. Rows count from the screen's top as it was
 * when each was touched; a scroll marks the whole scroll region, after the public `onScroll`.
 */
export interface TouchedRows {
  /** The topmost screen row touched (0-based). */
  top(): number;
  /** Starts the range again at the cursor's row (a headless terminal repaints nothing from it). */
  restart(): void;
  /** Calls `listener` at each scroll, once xterm has marked the scrolled region (after every public `onScroll` listener). */
  afterScroll(listener: () => void): { dispose(): void };
}

/**
 * The input handler's dirty-row range (`_core._inputHandler._dirtyRowTracker`) and the buffer
 * service's scroll event, or undefined when this version keeps them elsewhere.
 */
export function touchedRowsOf(term: Terminal): TouchedRows | undefined {
  interface Core {
    _inputHandler?: { _dirtyRowTracker?: { start?: unknown; clearRange?: unknown } };
    _bufferService?: { onScroll?: unknown };
  }
  const core = (term as unknown as { _core?: Core })._core;
  const tracker = core?._inputHandler?._dirtyRowTracker;
  const onScroll = core?._bufferService?.onScroll;
  if (!tracker || typeof tracker.start !== 'number' || typeof tracker.clearRange !== 'function' || typeof onScroll !== 'function') return undefined;
  const known = tracker as { start: number; clearRange(): void };
  const scrolled = onScroll as (listener: () => void) => { dispose(): void };
  return {
    top: () => known.start,
    restart: () => known.clearRange(),
    // The core's own listener (which marks the region) subscribed when the terminal was made: this one runs after it.
    afterScroll: (listener) => scrolled.call(core!._bufferService, listener),
  };
}

/** The core's name for each buffer (its BufferSet has `normal` and `alt`). */
const CORE_BUFFER = { normal: 'normal', alternate: 'alt' } as const;

/** The scroll region (DECSTBM) of the normal or the alternate buffer, rows from 0; undefined when this version keeps it elsewhere. */
export function scrollRegionOfBuffer(term: Terminal, which: 'normal' | 'alternate'): { top: number; bottom: number } | undefined {
  const b = (term as unknown as { _core?: { buffers?: Record<string, { scrollTop?: unknown; scrollBottom?: unknown } | undefined> } })._core?.buffers?.[
    CORE_BUFFER[which]
  ];
  if (typeof b?.scrollTop !== 'number' || typeof b.scrollBottom !== 'number') return undefined;
  return { top: b.scrollTop, bottom: b.scrollBottom };
}

/**
 * The pen a buffer's saved cursor holds (xterm's `savedCurAttrData`: what DECSC, or entering the
 * alternate screen, saved with it), read as a cell's colours and attributes are; undefined when
 * this version keeps it elsewhere.
 */
export function savedPenOf(term: Terminal, which: 'normal' | 'alternate'): IBufferCell | undefined {
  const pen = (term as unknown as { _core?: { buffers?: Record<string, { savedCurAttrData?: Partial<IBufferCell> } | undefined> } })._core?.buffers?.[
    CORE_BUFFER[which]
  ]?.savedCurAttrData;
  return pen && PEN_METHODS.every((m) => typeof pen[m] === 'function') ? (pen as IBufferCell) : undefined;
}

/** What a pen is read through (xterm's AttributeData has a cell's colour and attribute methods). */
const PEN_METHODS: ReadonlyArray<keyof IBufferCell> = [
  'isFgDefault',
  'getFgColor',
  'isFgRGB',
  'isBgDefault',
  'getBgColor',
  'isBgRGB',
  'isBold',
  'isDim',
  'isItalic',
  'isUnderline',
  'isBlink',
  'isInverse',
  'isInvisible',
  'isStrikethrough',
  'isOverline',
];

/** The pen the next characters are written with (xterm's `_curAttrData`), read as a cell's colours and attributes are. */
export function currentPenOf(term: Terminal): IBufferCell | undefined {
  const pen = (term as unknown as { _core?: { _inputHandler?: { _curAttrData?: Partial<IBufferCell> } } })._core?._inputHandler?._curAttrData;
  return pen && PEN_METHODS.every((m) => typeof pen[m] === 'function') ? (pen as IBufferCell) : undefined;
}

/** A buffer's tab stops (columns from 0, in order); undefined when this version keeps them elsewhere. */
export function tabStopsOf(term: Terminal, which: 'normal' | 'alternate'): number[] | undefined {
  const tabs = (term as unknown as { _core?: { buffers?: Record<string, { tabs?: unknown } | undefined> } })._core?.buffers?.[CORE_BUFFER[which]]?.tabs;
  if (typeof tabs !== 'object' || tabs === null) return undefined;
  return Object.entries(tabs as Record<string, unknown>)
    .filter(([, on]) => on === true)
    .map(([x]) => Number(x))
    .filter((x) => Number.isInteger(x))
    .sort((a, b) => a - b);
}

/** What the terminal's modes hold that `term.modes` (and so the serialize addon) does not show. */
export interface HiddenModes {
  /** DECTCEM reset (`CSI ? 25 l`). */
  cursorHidden: boolean;
  /** How mouse reports are encoded: `DEFAULT`, `SGR` (`CSI ? 1006 h`) or `SGR_PIXELS` (`CSI ? 1016 h`). */
  mouseEncoding: string;
  /** The cursor's shape (DECSCUSR), when a program set one. */
  cursorStyle?: { style: string; blink: boolean };
  /** The active buffer's scroll region (DECSTBM), rows from 0, and the cursor (`x` is `cols` while a wrap is pending). */
  scrollTop: number;
  scrollBottom: number;
  cursor: { x: number; y: number };
  /** The character sets designated as G0 to G3 (a map of the characters they replace; none: ASCII), and which one is in GL. */
  charsets: ReadonlyArray<Readonly<Record<string, string>> | null | undefined>;
  glevel: number;
}

/** Reads them from xterm's core services (`_core.coreService`, `coreMouseService`, `buffers.active`); undefined when this version keeps them elsewhere. */
export function hiddenModesOf(term: Terminal): HiddenModes | undefined {
  interface Core {
    coreService?: { isCursorHidden?: unknown; decPrivateModes?: { cursorStyle?: unknown; cursorBlink?: unknown } };
    coreMouseService?: { activeEncoding?: unknown };
    buffers?: { active?: Record<'x' | 'y' | 'scrollTop' | 'scrollBottom', unknown> };
    _inputHandler?: { _charsetService?: { _charsets?: unknown; glevel?: unknown } };
  }
  const core = (term as unknown as { _core?: Core })._core;
  const b = core?.buffers?.active;
  const charsets = core?._inputHandler?._charsetService;
  if (
    typeof core?.coreService?.isCursorHidden !== 'boolean' ||
    typeof core.coreMouseService?.activeEncoding !== 'string' ||
    !Array.isArray(charsets?._charsets) ||
    typeof charsets.glevel !== 'number' ||
    !b ||
    !(['x', 'y', 'scrollTop', 'scrollBottom'] as const).every((k) => typeof b[k] === 'number')
  )
    return undefined;
  const modes = core.coreService.decPrivateModes;
  const style = modes?.cursorStyle;
  const active = b as Record<'x' | 'y' | 'scrollTop' | 'scrollBottom', number>;
  return {
    cursorHidden: core.coreService.isCursorHidden,
    mouseEncoding: core.coreMouseService.activeEncoding,
    ...(typeof style === 'string' ? { cursorStyle: { style, blink: modes?.cursorBlink === true } } : {}),
    scrollTop: active.scrollTop,
    scrollBottom: active.scrollBottom,
    cursor: { x: active.x, y: active.y },
    charsets: [...(charsets._charsets as HiddenModes['charsets'])],
    glevel: charsets.glevel,
  };
}
