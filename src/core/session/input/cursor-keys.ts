/**
 * Whether the program asked for application cursor keys (DECCKM, `CSI ? 1 h`), as a terminal keeps
 * it: the arrow keys, Home and End a client presses by name are then sent as a terminal sends them
 * in that mode (`ESC O A`), which is what a full-screen program that turned it on reads
 * (ncurses' keypad mode: htop, nano, dialog). `CSI ? 1 l`, a full reset (`ESC c`) and a soft
 * reset (`CSI ! p`) turn it off. Followed on the main thread as output passes, so a key written
 * right after the output that set the mode is sent for that mode (the mirror parses later).
 */
export class CursorKeysMode {
  /** `CSI ? 1 h` is in force. */
  application = false;
  /** A sequence cut at the end of the last chunk, prepended to the next. */
  private _tail: Buffer | undefined;

  sawOutput(chunk: Buffer): void {
    // A sequence cut at the last read's end: read with the start of this one (only what began before it counts there).
    const before = this._tail;
    this._tail = undefined;
    if (before) this._scan(Buffer.concat([before, chunk.subarray(0, MAX_SEQUENCE)]), before.length);
    this._scan(chunk, chunk.length);
    // Kept for the next read: a mode change, full or soft reset cut here (an SGR cut here is not),
    // also one that began reads ago (cut into more than two).
    const esc = chunk.lastIndexOf(ESC_BYTE);
    const open = esc >= 0 ? chunk.subarray(esc) : before && Buffer.concat([before, chunk]);
    if (open && open.length <= MAX_SEQUENCE && mayBeCutChange(open, 0)) this._tail = Buffer.from(open);
  }

  /** Applies the changes in `data` that begin before `startsBefore`, in order (the last one stands). */
  private _scan(data: Buffer, startsBefore: number): void {
    // Most output holds none of these: three searches for rare byte runs, no parse.
    const firstMode = data.indexOf(MODE_INTRO);
    const firstRis = data.indexOf(RIS);
    const firstSoft = data.indexOf(SOFT_RESET);
    if (firstMode < 0 && firstRis < 0 && firstSoft < 0) return;
    let last = -1;
    let value = this.application;
    for (let i = firstMode; i >= 0 && i - 1 < startsBefore; i = data.indexOf(MODE_INTRO, i + 2)) {
      if (data[i - 1] !== ESC_BYTE) continue;
      const set = decckmOf(data, i + 2);
      if (set !== undefined) [last, value] = [i - 1, set];
    }
    for (const [first, pattern] of [
      [firstRis, RIS],
      [firstSoft, SOFT_RESET],
    ] as const) {
      for (let i = first; i >= 0 && i < startsBefore; i = data.indexOf(pattern, i + 1)) if (i > last) [last, value] = [i, false];
    }
    this.application = value;
  }
}

const ESC_BYTE = 0x1b;
/** `[?` after an ESC: a DEC private mode's set or reset (or a query). */
const MODE_INTRO = Buffer.from('[?', 'latin1');
const RIS = Buffer.from('\x1bc', 'latin1');
const SOFT_RESET = Buffer.from('\x1b[!p', 'latin1');
/** Longest sequence kept across reads (a mode list such as `?1;1049;2004h` is well within it). */
const MAX_SEQUENCE = 32;

/**
 * Whether the escape at `esc`, the chunk's last, may be a change not ended yet: a lone ESC, `ESC [`,
 * or `ESC [ ?` / `ESC [ !` with no final byte yet.
 */
function mayBeCutChange(data: Buffer, esc: number): boolean {
  if (esc + 1 >= data.length) return true;
  if (data[esc + 1] !== 0x5b) return false; // ESC c is whole; another escape is not ours
  if (esc + 2 >= data.length) return true;
  if (data[esc + 2] !== 0x3f && data[esc + 2] !== 0x21) return false; // not `?` or `!`: an SGR or a cursor move
  for (let i = esc + 3; i < data.length; i++) if (data[i] >= 0x40 && data[i] <= 0x7e) return false;
  return true;
}

/** For `Pm h` / `Pm l` from `at`: true or false when its list names mode 1, undefined otherwise. */
function decckmOf(data: Buffer, at: number): boolean | undefined {
  let param = 0;
  let names1 = false;
  let digits = 0;
  for (let i = at; i < data.length && i < at + MAX_SEQUENCE; i++) {
    const c = data[i];
    if (c >= 0x30 && c <= 0x39) {
      param = param * 10 + (c - 0x30);
      digits++;
    } else if (c === 0x3b) {
      if (digits > 0 && param === 1) names1 = true;
      param = 0;
      digits = 0;
    } else {
      if (digits > 0 && param === 1) names1 = true;
      if (!names1) return undefined;
      return c === 0x68 ? true : c === 0x6c ? false : undefined; // h, l
    }
  }
  return undefined;
}
