/**
 * Where an escape sequence starts and ends in terminal output: the one grammar that `stripAnsi`,
 * `wholeSequences` (./ansi.ts) and `StrippedText` (./stripped-text.ts) read, so a stripped read, a
 * read in pieces and a command's counted text always agree on a sequence's bounds.
 *
 * ESC opens a sequence, and so does the 8-bit CSI (U+009B). After ESC: `[` makes a CSI; `]`, `P`,
 * `X`, `^`, `_` a string (OSC, DCS, SOS, PM, APC) that BEL or ST (`ESC \`) ends and that holds
 * anything else; intermediates (0x20–0x2f) and a final byte (0x30–0x7e) a short one (`ESC ( B`,
 * `ESC 7`). A CSI is parameters (0x30–0x3f), intermediates (0x20–0x2f), then a final byte
 * (0x40–0x7e). A character that cannot continue the sequence open breaks it off: the sequence ends
 * before that character (what came of it is not text), and the character is read as outside any
 * sequence, so it is text or opens the next one (`ESC` then a newline: the newline stays).
 */
export const enum Seq {
  /** Outside any sequence: the character just read is text. */
  Outside,
  /** The character just read ended a sequence (it is not text); the next is read as outside. */
  Ended,
  /** After ESC. */
  Esc,
  /** After ESC and intermediates (`ESC (`). */
  EscIntermediate,
  /** CSI: parameters so far. */
  Csi,
  /** CSI: intermediates so far. */
  CsiIntermediate,
  /** OSC, DCS, SOS, PM or APC: its string so far. */
  String,
  /** That string's ESC, which a `\` makes its end (ST). */
  StringEsc,
}

/** Where the scan stands after the character `c` (a UTF-16 code unit or a code point), read in `state`. */
export function escapeStep(state: Seq, c: number): Seq {
  switch (state) {
    case Seq.Esc:
      if (c === 0x5b) return Seq.Csi;
      if (c === 0x5d || c === 0x50 || c === 0x58 || c === 0x5e || c === 0x5f) return Seq.String;
      if (c >= 0x20 && c <= 0x2f) return Seq.EscIntermediate;
      if (c >= 0x30 && c <= 0x7e) return Seq.Ended;
      break;
    case Seq.EscIntermediate:
      if (c >= 0x20 && c <= 0x2f) return Seq.EscIntermediate;
      if (c >= 0x30 && c <= 0x7e) return Seq.Ended;
      break;
    case Seq.Csi:
      if (c >= 0x30 && c <= 0x3f) return Seq.Csi;
      if (c >= 0x20 && c <= 0x2f) return Seq.CsiIntermediate;
      if (c >= 0x40 && c <= 0x7e) return Seq.Ended;
      break;
    case Seq.CsiIntermediate:
      if (c >= 0x20 && c <= 0x2f) return Seq.CsiIntermediate;
      if (c >= 0x40 && c <= 0x7e) return Seq.Ended;
      break;
    case Seq.String:
      return c === 0x07 ? Seq.Ended : c === 0x1b ? Seq.StringEsc : Seq.String;
    case Seq.StringEsc:
      return c === 0x5c ? Seq.Ended : c === 0x1b ? Seq.StringEsc : Seq.String;
  }
  // Outside any sequence, or `c` broke off the one open: `c` is text, or opens the next sequence.
  return c === 0x1b ? Seq.Esc : c === 0x9b ? Seq.Csi : Seq.Outside;
}

/** The scan is inside a sequence (one not ended yet). */
export function inSequence(state: Seq): boolean {
  return state >= Seq.Esc;
}

/** `c`, read into `next` (escapeStep's answer), opened a new sequence (ESC, or the 8-bit CSI). */
export function opensSequence(c: number, next: Seq): boolean {
  return next === Seq.Esc || (next === Seq.Csi && c === 0x9b);
}

/** What a byte of a character beyond ASCII reads as inside a sequence: neither ESC, BEL, nor any byte a sequence is made of. */
export const NOT_ASCII = 0x80;

/**
 * A scan of UTF-8 output for the end of the sequence that opens at its first byte, over as many
 * pieces as it takes: `end` is the offset just past the sequence in the bytes fed so far (or where a
 * byte broke it off), undefined while it is still open. A reader that pages through output skips a
 * sequence longer than its page this way, instead of showing the sequence's second half as text.
 */
export class SequenceEnd {
  private _state = Seq.Outside;
  private _fed = 0;
  /** A 0xC2 ended the last piece: with 0x9B it is the 8-bit CSI. */
  private _c2 = false;
  end: number | undefined;

  feed(bytes: Uint8Array): void {
    for (let i = 0; i < bytes.length && this.end === undefined; i++) {
      const b = bytes[i];
      if (this._fed === 0 && i === 0 && b === 0xc2) {
        this._c2 = true;
        continue;
      }
      let next: Seq;
      if (this._c2) {
        this._c2 = false;
        next = b === 0x9b ? Seq.Csi : Seq.Outside;
      } else next = escapeStep(this._state, b < 0x80 ? b : NOT_ASCII);
      if (next === Seq.Ended) this.end = this._fed + i + 1;
      else if (next === Seq.Outside || (next === Seq.Esc && this._state !== Seq.Outside && this._state !== Seq.StringEsc)) {
        // Broken off (or a new sequence opened): the sequence ended before this byte.
        this.end = this._fed + i;
      }
      this._state = next;
    }
    this._fed += bytes.length;
  }
}
