/**
 * Whether the program asked for application cursor keys (DECCKM, `CSI ? 1 h`), as a terminal keeps
 * it: the arrow keys, Home and End a client presses by name are then sent as a terminal sends them
 * in that mode (`ESC O A`), which is what a full-screen program that turned it on reads
 * (ncurses' keypad mode: htop, nano, dialog). `CSI ? 1 l` and a soft reset (`CSI ! p`, which
 * `reset` sends) turn it off. Followed on the main thread as output passes, so a key written right
 * after the output that set the mode is sent for that mode (the mirror parses later). A full reset
 * (`ESC c`) is not looked for: its ESC-led pair is a slow search in coloured output, where ESC
 * is every few bytes, and a shell's line editor reads the arrows in either mode.
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
    // Kept for the next read: a mode change or soft reset cut here (an SGR cut here is not),
    // also one that began reads ago (cut into more than two).
    const esc = chunk.lastIndexOf(ESC_BYTE);
    const open = esc >= 0 ? chunk.subarray(esc) : before && Buffer.concat([before, chunk]);
    if (open && open.length <= MAX_SEQUENCE && mayBeCutChange(open)) this._tail = Buffer.from(open);
  }

  /** Applies the changes in `data` that begin before `startsBefore`, in order (the last one stands). */
  private _scan(data: Buffer, startsBefore: number): void {
    // Searched by a byte that is rare in output (an ESC is not: coloured text has one every few
    // bytes, 0.3 ms a MB to look for an ESC-led pair), then checked for the ESC before it: the `?`
    // of a mode list, the `!` of DECSTR.
    const firstMode = next(data, QUESTION, 0, isModeIntro);
    const firstSoft = next(data, BANG, 0, isSoftReset);
    if (firstMode < 0 && firstSoft < 0) return;
    let last = -1;
    let value = this.application;
    for (let i = firstMode; i >= 0 && i - 2 < startsBefore; i = next(data, QUESTION, i + 1, isModeIntro)) {
      const set = decckmOf(data, i + 1);
      if (set !== undefined) [last, value] = [i - 2, set];
    }
    for (let i = firstSoft; i >= 0 && i - 2 < startsBefore; i = next(data, BANG, i + 1, isSoftReset)) if (i - 2 > last) [last, value] = [i - 2, false];
    this.application = value;
  }
}

/** The next `byte` at or after `from` that `fits` (its sequence's start checked), or -1. */
function next(data: Buffer, byte: number, from: number, fits: (data: Buffer, at: number) => boolean): number {
  for (let i = data.indexOf(byte, from); i >= 0; i = data.indexOf(byte, i + 1)) if (fits(data, i)) return i;
  return -1;
}

const QUESTION = 0x3f;
const BANG = 0x21;
/** `ESC [ ?` ends at `at`. */
const isModeIntro = (d: Buffer, at: number) => d[at - 1] === 0x5b && d[at - 2] === ESC_BYTE;
/** `ESC [ ! p` has its `!` at `at`. */
const isSoftReset = (d: Buffer, at: number) => d[at + 1] === 0x70 && d[at - 1] === 0x5b && d[at - 2] === ESC_BYTE;

const ESC_BYTE = 0x1b;
/** Longest sequence kept across reads (a mode list such as `?1;1049;2004h` is well within it). */
const MAX_SEQUENCE = 32;

/**
 * Whether `seq`, from the chunk's last ESC on, may be a change not ended yet: a lone ESC, `ESC [`,
 * or `ESC [ ?` / `ESC [ !` with no final byte yet.
 */
function mayBeCutChange(seq: Buffer): boolean {
  if (seq.length === 1) return true;
  if (seq[1] !== 0x5b) return false; // not a CSI: not ours
  if (seq.length === 2) return true;
  if (seq[2] !== 0x3f && seq[2] !== 0x21) return false; // not `?` or `!`: an SGR or a cursor move
  for (let i = 3; i < seq.length; i++) if (seq[i] >= 0x40 && seq[i] <= 0x7e) return false;
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
