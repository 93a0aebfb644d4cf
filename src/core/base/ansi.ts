/**
 * Removes terminal escape sequences and control characters from raw output, leaving text a
 * person would read: CSI/OSC/DCS/other ESC sequences go, CR LF becomes LF, a lone CR and other
 * C0 controls (except tab and newline) are dropped, backspace erases the previous character.
 */
export function stripAnsi(input: string): string {
  const withoutEscapes = input
    // OSC … BEL/ST, DCS/SOS/PM/APC … ST
    .replace(/\x1b[\]PX^_][\s\S]*?(?:\x07|\x1b\\)/g, '')
    // CSI sequences (also the 8-bit CSI)
    .replace(/(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]/g, '')
    // two- and three-byte ESC sequences (charset selection, keypad modes, …)
    .replace(/\x1b[ -/]*[0-~]/g, '')
    .replace(/\r+\n/g, '\n');
  // Characters (code points) kept so far: a backspace pops one in constant time, where cutting a
  // string would copy it (quadratic on output full of backspaces) and could split a surrogate pair.
  const out: string[] = [];
  for (const ch of withoutEscapes) {
    const c = ch.charCodeAt(0);
    if (ch === '\b') out.pop();
    else if (c < 0x20 && ch !== '\n' && ch !== '\t') continue;
    else if (c === 0x7f) continue;
    else out.push(ch);
  }
  return out.join('');
}

/** Where the scan of `unfinishedEscapeAt` stands: outside any sequence, or inside one of a kind. */
const enum Seq {
  None,
  /** After ESC. */
  Esc,
  /** After ESC and intermediates (`ESC ( B`). */
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

/**
 * Where `text` ends inside an escape sequence: the index of that sequence's ESC (or 8-bit CSI),
 * or -1 when it ends outside any. Output read in pieces (a byte budget, a program still writing)
 * can end halfway through a sequence, and `stripAnsi` on half of one leaves the rest as text
 * (`\x1b]633;P;Cw` became `633;P;Cw`); a reader that strips stops before it and reads it whole
 * next time. The grammar is `stripAnsi`'s.
 */
export function unfinishedEscapeAt(text: string): number {
  let state = Seq.None;
  let start = -1;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    switch (state) {
      case Seq.Esc:
        if (c === 0x5b) state = Seq.Csi;
        else if (c === 0x5d || c === 0x50 || c === 0x58 || c === 0x5e || c === 0x5f) state = Seq.String;
        else if (c >= 0x20 && c <= 0x2f) state = Seq.EscIntermediate;
        else state = Seq.None;
        break;
      case Seq.EscIntermediate:
        if (c < 0x20 || c > 0x2f) state = Seq.None;
        break;
      case Seq.Csi:
        if (c >= 0x20 && c <= 0x2f) state = Seq.CsiIntermediate;
        else if (c < 0x30 || c > 0x3f) state = Seq.None;
        break;
      case Seq.CsiIntermediate:
        if (c < 0x20 || c > 0x2f) state = Seq.None;
        break;
      case Seq.String:
        if (c === 0x07) state = Seq.None;
        else if (c === 0x1b) state = Seq.StringEsc;
        break;
      case Seq.StringEsc:
        state = c === 0x5c ? Seq.None : c === 0x1b ? Seq.StringEsc : Seq.String;
        break;
    }
    // A character that ended nothing (or ended a sequence malformed) may start the next one.
    if (state === Seq.None && (c === 0x1b || c === 0x9b)) {
      state = c === 0x1b ? Seq.Esc : Seq.Csi;
      start = i;
    }
  }
  return state === Seq.None ? -1 : start;
}

/**
 * Output read in pieces, to strip: `text` ended before an escape sequence its end cuts in two,
 * and how many bytes were held back (the reader's cursor goes back by that much), so the sequence
 * is read whole next time instead of its second half showing as text. A piece that is nothing but
 * the start of a sequence is held back only while the rest may still come (`settled` false: it is
 * the end of the output and the program runs); else it is left out, so a reader always moves on.
 */
export function wholeSequences(text: string, settled: boolean): { text: string; heldBytes: number } {
  const at = unfinishedEscapeAt(text);
  if (at < 0) return { text, heldBytes: 0 };
  if (at === 0 && settled) return { text: '', heldBytes: 0 };
  return { text: text.slice(0, at), heldBytes: Buffer.byteLength(text.slice(at)) };
}
