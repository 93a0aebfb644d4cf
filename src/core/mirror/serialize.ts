import { SerializeAddon } from '@xterm/addon-serialize';
import type { IBuffer, IBufferCell, IBufferLine, Terminal } from '@xterm/headless';
import { cellsOfLine, currentPenOf, hiddenModesOf, savedCursorOf, savedPenOf, scrollRegionOfBuffer, tabStopsOf } from '../base/internals/xterm';

/*
 * xterm's SerializeAddon, shown a terminal where a wrapped row that begins with an empty cell
 * begins with a space of that cell's colours instead. The addon writes a wrapped row by letting
 * the row before wrap into it: with that row full and this one starting empty (a continuation
 * erased by `ESC[1K`), it printed nothing that wraps, so the row was missing from the replay and
 * every later row came out one higher (@xterm/addon-serialize 0.14; the tmux-oracle fuzzer,
 * FUZZ_SEED=259726652). A space there looks the same and makes the wrap happen. Nothing of the
 * terminal changes: the addon reads it through proxies, for this call only.
 *
 * The addon also moves the cursor by a count it computes, and writes a count of 0 when it means no
 * move; a terminal reads `ESC[0C` as one column. After filling a row that holds nothing but erased
 * cells (to wrap into the next), it went back to erase the fill from the row's second column, and
 * a filler `-` stayed in the first (FUZZ_SEED=1206422212). Those moves are dropped from its text: a
 * cell never holds an escape, so the text has no other `ESC[0C` or `ESC[0D`.
 */

/** A cursor move by 0 columns, which the addon means as none. */
const MOVE_BY_ZERO = /\x1b\[0[CD]/g;
/**
 * The addon brings application keypad mode back as `CSI ? 66 h`, which only xterm.js reads: a
 * snapshot drawn in tmux or another terminal (`attach` from inside tmux) lost it (an outside
 * audit). DECKPAM (`ESC =`) after it sets the same mode everywhere.
 */
const KEYPAD_ON_XTERM_JS = '\x1b[?66h';
const KEYPAD_ON_EVERYWHERE = '\x1b[?66h\x1b=';

/**
 * Where the addon turns to the alternate screen, after the normal one: it writes that screen as if
 * onto a blank one with the default pen, but switches with the pen it left on (the program's pen
 * now), which fills the new screen (xterm's erase colour) and colours the first characters that
 * have the default pen (htop's rows, drawn while its pen was cyan). The screen is cleared with the
 * default pen after the switch, which keeps the pen the switch saves for the way back. The normal
 * screen's blank coloured rows are written before the switch (blankRowsWithColour).
 */
const TO_ALTERNATE = '\x1b[?1049h\x1b[H';
const ALTERNATE_BLANK = '\x1b[?1049h\x1b[0m\x1b[2J\x1b[H';

/** The screen row and column a program's save of the cursor recorded on a buffer, when the caller keeps them (saved-cursor.ts). */
export type SavedScreenRow = (buffer: 'normal' | 'alternate') => { row: number; x: number } | undefined;

/**
 * The addon's text for `term` with up to `scrollback` rows above the screen (its `serialize`), and
 * the modes it leaves out (modesLeftOut).
 */
export function serializeTerminal(term: Terminal, scrollback: number, savedScreenRow?: SavedScreenRow): string {
  const serializer = new SerializeAddon();
  const scrolls = scrollback > 0 && term.buffer.normal.length > term.rows;
  // The addon is typed for the browser's Terminal; it reads only what the headless one has too
  // (Terminal.loadAddon gives it the same object).
  serializer.activate(addonView(term, scrolls) as unknown as Parameters<SerializeAddon['activate']>[0]);
  try {
    // Shown a screen a row shorter, the addon serves one row of scrollback less (see addonView).
    const text = serializer
      .serialize({ scrollback: scrolls ? scrollback + 1 : scrollback })
      .replace(MOVE_BY_ZERO, '')
      .replace(KEYPAD_ON_XTERM_JS, KEYPAD_ON_EVERYWHERE);
    const at = text.indexOf(TO_ALTERNATE);
    const normal = boldAndDimKept(at < 0 ? text : text.slice(0, at));
    // The normal screen's tab stops and scroll region, when the alternate one is shown: they are the
    // normal one's again once the program leaves it (apt's progress bar under a dialog).
    const region = at < 0 ? '' : tabStopsLeftOut(term, 'normal') + scrollRegionOf(term, 'normal');
    // Entering the alternate screen saves the pen with the cursor (for the way back): the one the
    // program had when it entered, which xterm keeps, not the one it has now.
    const saved = at < 0 ? undefined : savedPenOf(term, 'normal');
    const normalPen = saved ? `\x1b[0${cellSgr(saved)}m` : penAtEnd(normal);
    let out =
      normal + blankRowsWithColour(term, term.buffer.normal) + region + cursorAndPen(term, term.buffer.normal, at < 0 ? penNow(term, normal) : normalPen);
    let last = normal;
    if (at >= 0) {
      last = boldAndDimKept(text.slice(at + TO_ALTERNATE.length));
      out += ALTERNATE_BLANK + last + blankRowsWithColour(term, term.buffer.alternate) + cursorAndPen(term, term.buffer.alternate, penNow(term, last));
    }
    const pen = penNow(term, last);
    return out + savedCursorLeftOut(term, pen, savedScreenRow) + modesLeftOut(term, pen);
  } finally {
    serializer.dispose();
  }
}

/**
 * The cursor put at its place on `buffer`'s screen, then the pen. The addon moves it there from
 * the last cell it wrote, by rows and columns: from a wrap pending at the right edge (a row written
 * to its last column) a move up or down first takes it back into the row, and the columns then
 * counted from the edge left it one short. The screen's rows are the buffer's screen's by then (the
 * addon's text scrolls the rows above it away, or starts at the top and has no more rows than the
 * screen). A cursor whose wrap is pending is put on the row's last cell, and that cell written
 * again (with its own colours), which leaves the wrap pending as it was: the next character goes
 * to the next row. The pen is then put back.
 */
function cursorAndPen(term: Terminal, buffer: IBuffer, pen: string, top = 0): string {
  // In origin mode rows count from the scroll region's top (`top`).
  const row = buffer.cursorY + 1 - top;
  if (buffer.cursorX < term.cols) return `\x1b[${row};${buffer.cursorX + 1}H\x1b[0m${pen}`;
  const line = buffer.getLine(buffer.baseY + buffer.cursorY);
  let x = term.cols - 1;
  let cell = line?.getCell(x);
  // The second half of a wide character (or a cell it hides: hiddenAfterWide): the whole character
  // is written again, from its first half.
  if (cell && x > 0 && line?.getCell(x - 1)?.getWidth() === 2) cell = line.getCell(--x);
  const char = cell?.getChars() || ' ';
  return `\x1b[${row};${x + 1}H\x1b[0${cell ? cellSgr(cell) : ''}m${char}\x1b[0m${pen}`;
}

/** The SGR parameters (each after a `;`) that give a cell's colours and attributes after a reset. */
function cellSgr(cell: IBufferCell): string {
  let sgr = '';
  if (!cell.isFgDefault()) {
    const c = cell.getFgColor();
    sgr += cell.isFgRGB() ? `;38;2;${(c >> 16) & 0xff};${(c >> 8) & 0xff};${c & 0xff}` : c < 8 ? `;${30 + c}` : c < 16 ? `;${90 + c - 8}` : `;38;5;${c}`;
  }
  const bg = backgroundSgr(cell);
  if (bg !== undefined) sgr += `;${bg}`;
  const flags: Array<[boolean | number, number]> = [
    [cell.isBold(), 1],
    [cell.isDim(), 2],
    [cell.isItalic(), 3],
    [cell.isUnderline(), 4],
    [cell.isBlink(), 5],
    [cell.isInverse(), 7],
    [cell.isInvisible(), 8],
    [cell.isStrikethrough(), 9],
    [cell.isOverline(), 53],
  ];
  for (const [on, code] of flags) if (on) sgr += `;${code}`;
  return sgr;
}

/**
 * The scroll region of `which` buffer (DECSTBM), with the cursor put back after it (setting it
 * homes the cursor); '' for a region that is the whole screen.
 */
function scrollRegionOf(term: Terminal, which: 'normal' | 'alternate'): string {
  const region = scrollRegionOfBuffer(term, which);
  if (!region || (region.top === 0 && region.bottom === term.rows - 1)) return '';
  return `\x1b[${region.top + 1};${region.bottom + 1}r`;
}

/**
 * `text` (the addon's, for one screen) with bold and dim kept where a pen turns one off and the
 * other on. Both are turned off by the same SGR 22, and the addon writes each attribute's change in
 * turn: from dim to bold it wrote `1;22` (bold on, then both off: the text came back plain), from
 * bold and dim to dim `22` alone (dim lost too). Each SGR with a 22 is written again as what the
 * addon meant: its other parameters, then 22, then bold and dim for each that is on after it.
 */
function boldAndDimKept(text: string): string {
  let bold = false;
  let dim = false;
  return text.replace(SGR, (whole, params: string) => {
    const codes = sgrCodes(params);
    if (codes.length === 0 || (codes.length === 1 && codes[0] === '0')) {
      bold = dim = false;
      return whole;
    }
    const turnsBold = codes.includes('1');
    const turnsDim = codes.includes('2');
    const offs = codes.filter((c) => c === '22').length;
    if (offs === 0) {
      bold ||= turnsBold;
      dim ||= turnsDim;
      return whole;
    }
    // Which of the two a lone 22 turned off: the one not turned on, or the one that alone was on;
    // with both on, the one its place in the addon's order names (bold's comes before italic's 3/23, dim's after).
    let boldAfter = turnsBold;
    let dimAfter = turnsDim;
    if (!turnsBold && !turnsDim) {
      if (offs >= 2 || !(bold && dim)) boldAfter = dimAfter = false;
      else if (boldOffByPlace(codes)) dimAfter = true;
      else boldAfter = true;
    }
    // Else the 22 is the other one's: turned off.
    bold = boldAfter;
    dim = dimAfter;
    const rest = codes.filter((c) => c !== '22' && c !== '1' && c !== '2');
    return `\x1b[${[...rest, '22', ...(boldAfter ? ['1'] : []), ...(dimAfter ? ['2'] : [])].join(';')}m`;
  });
}

/** An SGR sequence and its parameters. */
const SGR = /\x1b\[([0-9;:]*)m/g;

/** An SGR's parameters, each colour (`38;5;N`, `48;2;R;G;B`) one item. */
function sgrCodes(params: string): string[] {
  const parts = params === '' ? [] : params.split(';');
  const out: string[] = [];
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i];
    if ((p === '38' || p === '48' || p === '58') && (parts[i + 1] === '5' || parts[i + 1] === '2')) {
      const n = parts[i + 1] === '5' ? 3 : 5;
      out.push(parts.slice(i, i + n).join(';'));
      i += n - 1;
    } else out.push(p);
  }
  return out;
}

/** The attributes the addon writes after bold's and before dim's, in its order (underline, overline, blink, invisible, italic). */
const BETWEEN_BOLD_AND_DIM = new Set(['4', '24', '53', '55', '5', '25', '8', '28', '3', '23']);

/** Whether the lone 22 in `codes` is bold's: an attribute written between bold's and dim's follows it. */
function boldOffByPlace(codes: string[]): boolean {
  const at = codes.indexOf('22');
  return codes.slice(at + 1).some((c) => BETWEEN_BOLD_AND_DIM.has(c)) || !codes.slice(0, at).some((c) => BETWEEN_BOLD_AND_DIM.has(c));
}

/**
 * The pen the program writes with now, as one SGR after a reset; else the one `text` leaves on (the
 * addon ends with the pen's changes since its last cell, which for bold and dim can be unclear:
 * boldAndDimKept).
 */
function penNow(term: Terminal, text: string): string {
  const pen = currentPenOf(term);
  return pen ? `\x1b[0${cellSgr(pen)}m` : penAtEnd(text);
}

/** The start of an SGR's parameters that resets the pen (`ESC[m`, `ESC[0m`, `ESC[0;…m`). */
const RESETS = /^0?(;|$)/;

/**
 * The pen the addon's text leaves on at its end: the SGRs since the last reset, in order (the
 * addon sets the pen of each run of cells it writes, and ends a row with the pen its line break
 * scrolls in with: xterm fills a scrolled-in row with the pen's background, which the addon uses).
 */
function penAtEnd(text: string): string {
  let pen = '';
  for (const m of text.matchAll(/\x1b\[([0-9;:]*)m/g)) {
    const after = m[1].replace(RESETS, '');
    if (!RESETS.test(m[1])) pen += m[0];
    else pen = after === '' ? '' : `\x1b[0;${after}m`;
  }
  return pen;
}

/**
 * The cursor a program saved (DECSC), which the addon does not write: saved again at its place
 * (its pen the default one), then the cursor and the pen put back. A program that saved it to draw
 * elsewhere (a status line, apt's progress bar) comes back to the right place after DECRC.
 */
function savedCursorLeftOut(term: Terminal, pen: string, savedScreenRow: SavedScreenRow | undefined): string {
  const saved = savedCursorOf(term);
  // Never saved (or saved at the top left of a screen that never scrolled): a fresh terminal's own.
  if (!saved || (saved.x === 0 && saved.row === 0)) return '';
  const b = term.buffer.active;
  // A screen row and column when the caller keeps them so (as tmux does), else xterm's, its row
  // counted from the scrollback's top.
  const kept = savedScreenRow?.(b.type);
  const row = Math.max(0, Math.min(term.rows - 1, kept?.row ?? saved.row - b.baseY));
  const col = Math.min(kept?.x ?? saved.x, term.cols - 1);
  return `\x1b[0m\x1b[${row + 1};${col + 1}H\x1b7${cursorAndPen(term, b, pen)}`;
}

/**
 * The rows of `buffer`'s screen that hold no character but a background colour (`ESC[44m ESC[2J`
 * paints them), which the addon leaves out below its last row with text: each run of one colour erased with it
 * (ECH takes the pen's background). The cursor and the pen are put back after it (cursorAndPen),
 * by moving there, not by a save and restore (DECSC, DECRC): a program that never saved a cursor
 * would have its DECRC go to the snapshot's end instead of the top left.
 */
function blankRowsWithColour(term: Terminal, buffer: IBuffer): string {
  const cell = buffer.getNullCell();
  let out = '';
  for (let y = 0; y < term.rows; y++) {
    const line = buffer.getLine(buffer.baseY + y);
    if (!line || line.translateToString(true) !== '') continue;
    let x = 0;
    while (x < term.cols) {
      line.getCell(x, cell);
      const sgr = backgroundSgr(cell);
      let end = x + 1;
      if (sgr !== undefined) {
        while (end < term.cols && backgroundSgr(line.getCell(end, cell)!) === sgr) end++;
        out += `\x1b[${y + 1};${x + 1}H\x1b[0;${sgr}m\x1b[${end - x}X`;
      }
      x = end;
    }
  }
  return out;
}

/** The SGR parameters of a cell's background when it has one (undefined: the default). */
function backgroundSgr(cell: IBufferCell): string | undefined {
  if (cell.isBgDefault()) return undefined;
  const c = cell.getBgColor();
  if (cell.isBgRGB()) return `48;2;${(c >> 16) & 0xff};${(c >> 8) & 0xff};${c & 0xff}`;
  return c < 8 ? `${40 + c}` : c < 16 ? `${100 + c - 8}` : `48;5;${c}`;
}

/** What designates a character set as G0, G1, G2, G3 (`ESC ( 0`: DEC line drawing as G0). */
const DESIGNATE = ['(', ')', '*', '+'];
/** What puts G1, G2, G3 into GL (SO, LS2, LS3); G0 is there after a reset. */
const SHIFT = ['', '\x0e', '\x1bn', '\x1bo'];

/**
 * The final character that designates `charset` (xterm's map of the characters it replaces): DEC
 * special graphics (line drawing, `0`) and the UK set (`A`), the ones programs use; undefined for
 * ASCII (what a reset leaves) and for the national sets, left as ASCII.
 */
function designatorOf(charset: Readonly<Record<string, string>> | null | undefined): string | undefined {
  if (!charset) return undefined;
  if (charset.q === '\u2500') return '0';
  if (charset['#'] === '\u00a3') return 'A';
  return undefined;
}

/** DECSCUSR's parameter for a steady cursor of each shape (one less blinks). */
const CURSOR_SHAPE: Readonly<Record<string, number>> = { block: 2, underline: 4, bar: 6 };

/**
 * The modes the addon does not write (0.14 writes the cursor keys', keypad, paste, insert, origin,
 * wrap, focus and mouse tracking modes), so that a snapshot reproduces them too: the scroll region
 * (DECSTBM, which homes the cursor, so the cursor is put back; with origin mode on, counted from the
 * region's top), the tab stops a program set, a hidden cursor, the mouse reports' encoding, the
 * cursor's shape, the character sets (line drawing) designated and the one in use.
 */
function modesLeftOut(term: Terminal, pen: string): string {
  const m = hiddenModesOf(term);
  if (!m) return '';
  let out = tabStopsLeftOut(term, term.buffer.active.type);
  if (out !== '') out += cursorAndPen(term, term.buffer.active, pen);
  if (m.scrollTop !== 0 || m.scrollBottom !== term.rows - 1) {
    const top = term.modes.originMode ? m.scrollTop : 0;
    out += `\x1b[${m.scrollTop + 1};${m.scrollBottom + 1}r${cursorAndPen(term, term.buffer.active, pen, top)}`;
  }
  if (m.cursorHidden) out += '\x1b[?25l';
  if (m.mouseEncoding === 'SGR') out += '\x1b[?1006h';
  else if (m.mouseEncoding === 'SGR_PIXELS') out += '\x1b[?1016h';
  const shape = m.cursorStyle && CURSOR_SHAPE[m.cursorStyle.style];
  if (shape) out += `\x1b[${shape - (m.cursorStyle!.blink ? 1 : 0)} q`;
  // The character sets last: the rows above are already the characters they drew.
  m.charsets.forEach((charset, g) => {
    const final = g < DESIGNATE.length ? designatorOf(charset) : undefined;
    if (final) out += `\x1b${DESIGNATE[g]}${final}`;
  });
  out += SHIFT[m.glevel] ?? '';
  return out;
}

/** Columns between tab stops, as a terminal sets them at first (and after a reset). */
const TAB_WIDTH = 8;

/**
 * The tab stops, when a program set others than every 8 columns (`tabs -4`): all cleared (TBC),
 * then each set (HTS) where it is; '' for the usual ones. The cursor is moved for it.
 */
function tabStopsLeftOut(term: Terminal, which: 'normal' | 'alternate'): string {
  const stops = tabStopsOf(term, which);
  if (!stops) return '';
  const usual = stops.length === Math.ceil(term.cols / TAB_WIDTH) && stops.every((x, i) => x === i * TAB_WIDTH);
  return usual ? '' : '\x1b[3g' + stops.map((x) => `\x1b[1;${x + 1}H\x1bH`).join('');
}

/**
 * `term` as the addon reads it: its buffers' wrapped rows that begin empty begin with a space
 * (above), and, when the text scrolls (`scrolls`), its screen a row shorter. The addon expects the
 * pen's background to fill each row a line break scrolls in (xterm's erase colour), but counts the
 * first such line break one row late: the row after a row ending in a coloured erase came back
 * painted after its text. A row shorter, it counts them where they are (served one more row of
 * scrollback, it starts at the same row). Its other use of the height, whether to trim the rows
 * after the last text, only applies to a text that never scrolls.
 */
function addonView(term: Terminal, scrolls: boolean): Terminal {
  const views = new Map<IBuffer, IBuffer>();
  const view = (buffer: IBuffer): IBuffer => {
    let v = views.get(buffer);
    if (!v) views.set(buffer, (v = bufferView(buffer, term.cols)));
    return v;
  };
  const buffers = {
    get active() {
      return view(term.buffer.active);
    },
    get normal() {
      return view(term.buffer.normal);
    },
    get alternate() {
      return view(term.buffer.alternate);
    },
  };
  const rows = scrolls ? term.rows - 1 : term.rows;
  return new Proxy(term, { get: (target, key) => (key === 'buffer' ? buffers : key === 'rows' ? rows : bound(target, key)) });
}

function bufferView(buffer: IBuffer, cols: number): IBuffer {
  const probe = buffer.getNullCell(); // one cell to read into, for every row
  const getLine = (y: number): IBufferLine | undefined => {
    const line = buffer.getLine(y);
    if (!line) return line;
    const first = line.isWrapped ? line.getCell(0, probe) : undefined;
    const spaceFirst = first !== undefined && first.getChars() === '' && first.getWidth() === 1;
    // A row kept longer than the screen (narrowed, where xterm does not re-wrap: the alternate
    // screen, autowrap off) may end the screen with a wide character's first half: the addon
    // wrote it at the last column, where it does not fit, so it went to the next row and every
    // row after it one lower. A space there keeps the rows in place (found by an audit).
    const spaceLast = line.length > cols && cols > 0 && line.getCell(cols - 1, probe)?.getWidth() === 2;
    const hidden = hiddenAfterWide(line, probe);
    if (spaceLast) hidden.push(cols - 1);
    return spaceFirst || hidden.length > 0 ? lineView(line, buffer, spaceFirst, hidden, spaceLast ? cols - 1 : -1) : line;
  };
  return new Proxy(buffer, { get: (target, key) => (key === 'getLine' ? getLine : bound(target, key)) });
}

/** A cell's width in xterm's own row (bits 22–23 of its content word). */
const WIDTH_SHIFT = 22;

/**
 * The columns of `line` whose cell xterm keeps but does not show: the cell after a wide character,
 * where its second half belongs, holding a character of its own. With autowrap off, xterm prints
 * what comes after a wide character in the last two columns there, and leaves the wide character
 * whole (a resize may then move the pair inside the row). Its text (and the screen's, `pty/read`)
 * shows the wide character, while the addon wrote both: the second past the row's end, onto the
 * next row of the snapshot, or after the wide character. The addon is shown an empty second half
 * there, as a row that shows the wide character has. Read as xterm reads a row for its text: after
 * a wide character, the next cell is passed over.
 */
function hiddenAfterWide(line: IBufferLine, probe: IBufferCell): number[] {
  const hidden: number[] = [];
  const n = line.length;
  const cells = cellsOfLine(line);
  const data = cells?._data;
  if (data instanceof Uint32Array && cells!.length === n && data.length >= n * 3) {
    for (let x = 0; x + 1 < n; x++) {
      if (((data[x * 3] >>> WIDTH_SHIFT) & 3) !== 2) continue;
      x++;
      if (((data[x * 3] >>> WIDTH_SHIFT) & 3) !== 0) hidden.push(x);
    }
    return hidden;
  }
  for (let x = 0; x + 1 < n; x++) {
    if (line.getCell(x, probe)?.getWidth() !== 2) continue;
    x++;
    if (line.getCell(x, probe)?.getWidth() !== 0) hidden.push(x);
  }
  return hidden;
}

/**
 * `line`, its first cell a space with that cell's colours and attributes (`spaceFirst`), as is
 * the cell at `spaceAt`, and the other cells at `hidden` empty second halves of the wide
 * characters before them.
 */
function lineView(line: IBufferLine, buffer: IBuffer, spaceFirst: boolean, hidden: readonly number[], spaceAt = -1): IBufferLine {
  const getCell = (x: number, cell?: IBufferCell): IBufferCell | undefined => {
    const space = (x === 0 && spaceFirst) || x === spaceAt;
    if (!space && !hidden.includes(x)) return line.getCell(x, cell);
    // The cell passed is filled as xterm fills it (the addon reads some it passes, for their
    // colours, without looking at what comes back); the stand-in is a cell of its own, since the
    // addon passes the same cells again for the next ones while keeping the last one returned.
    if (cell) line.getCell(x, cell);
    const own = line.getCell(x, buffer.getNullCell());
    return own && (space ? cellShowing(own, ' ', 0x20, 1) : cellShowing(own, '', 0, 0));
  };
  return new Proxy(line, { get: (target, key) => (key === 'getCell' ? getCell : bound(target, key)) });
}

/** `cell` with its colours and attributes, holding `chars` (code `code`, `width` columns). */
function cellShowing(cell: IBufferCell, chars: string, code: number, width: number): IBufferCell {
  const shown: Partial<Record<keyof IBufferCell, () => unknown>> = { getChars: () => chars, getCode: () => code, getWidth: () => width };
  return new Proxy(cell, { get: (target, key) => shown[key as keyof IBufferCell] ?? bound(target, key) });
}

/** `target[key]`, a method bound to `target` (the proxies pass everything else through). */
function bound(target: object, key: string | symbol): unknown {
  const value: unknown = Reflect.get(target, key, target);
  return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
}
