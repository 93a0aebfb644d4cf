import { escapeStep, inSequence, opensSequence, Seq } from './escape-sequences';

/**
 * Removes terminal escape sequences and control characters from raw output, leaving text a
 * person would read: CSI/OSC/DCS/other ESC sequences go (their bounds as ./escape-sequences.ts
 * reads them, so a sequence the input ends inside goes too), CR LF becomes LF, a lone CR and other
 * C0 controls (except tab and newline) are dropped, backspace erases the previous character.
 */
export function stripAnsi(input: string): string {
  const stripper = new AnsiStripper();
  stripper.feed(input);
  return stripper.text();
}

/**
 * `stripAnsi` over output that comes in pieces: after feeding pieces in order, `text()` is what
 * `stripAnsi` of all of them joined would be (a sequence or a backspace may span two pieces). Each
 * piece is read once, so a wait that looks at a growing output again and again costs what is new,
 * not all of it each time (a `pty/wait { since }` during a 1.6 MB `cat` took 40 s, not 0.3).
 */
export class AnsiStripper {
  private _state = Seq.Outside;
  /** The text settled so far. */
  private _kept = '';
  /** Characters (code points) kept since: a backspace pops one in constant time. */
  private _fresh: string[] = [];
  /** Backspaces past `_fresh`: characters to take off `_kept`'s end when it is next settled. */
  private _erase = 0;

  /** Reads the next piece of the output. */
  feed(input: string): void {
    let state = this._state;
    const fresh = this._fresh;
    for (const ch of input) {
      const c = ch.codePointAt(0)!;
      state = escapeStep(state, c);
      if (state !== Seq.Outside) continue; // part of a sequence
      if (c === 0x08) {
        if (fresh.length > 0) fresh.pop();
        else this._erase++;
      } else if (c < 0x20 && c !== 0x0a && c !== 0x09) continue;
      else if (c === 0x7f) continue;
      else fresh.push(ch);
    }
    this._state = state;
  }

  /** The text so far, at most its last `maxUnits` UTF-16 code units (never half a surrogate pair). */
  text(maxUnits = Infinity): string {
    if (this._erase > 0) this._kept = withoutLastCodePoints(this._kept, this._erase);
    this._erase = 0;
    if (this._fresh.length > 0) this._kept += this._fresh.join('');
    this._fresh = [];
    if (this._kept.length > maxUnits) {
      let from = this._kept.length - maxUnits;
      if (isLowSurrogate(this._kept.charCodeAt(from))) from++;
      this._kept = this._kept.slice(from);
    }
    return this._kept;
  }
}

function isHighSurrogate(unit: number): boolean {
  return unit >= 0xd800 && unit <= 0xdbff;
}

function isLowSurrogate(unit: number): boolean {
  return unit >= 0xdc00 && unit <= 0xdfff;
}

/** `text` without its last `n` code points (a surrogate pair is one). */
function withoutLastCodePoints(text: string, n: number): string {
  let end = text.length;
  for (let i = 0; i < n && end > 0; i++) {
    const pair = end >= 2 && isLowSurrogate(text.charCodeAt(end - 1)) && isHighSurrogate(text.charCodeAt(end - 2));
    end -= pair ? 2 : 1;
  }
  return text.slice(0, end);
}

/**
 * Where `text` ends inside an escape sequence: the index of that sequence's ESC (or 8-bit CSI),
 * or -1 when it ends outside any. Output read in pieces (a byte budget, a program still writing)
 * can end halfway through a sequence, and `stripAnsi` on half of one would drop what the whole
 * keeps or keep what it drops; a reader that strips stops before it and reads it whole next time.
 */
export function unfinishedEscapeAt(text: string): number {
  let state = Seq.Outside;
  let start = -1;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    state = escapeStep(state, c);
    if (opensSequence(c, state)) start = i;
  }
  return inSequence(state) ? start : -1;
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
