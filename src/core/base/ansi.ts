import { escapeStep, inSequence, opensSequence, Seq } from './escape-sequences';

/**
 * Removes terminal escape sequences and control characters from raw output, leaving text a
 * person would read: CSI/OSC/DCS/other ESC sequences go (their bounds as ./escape-sequences.ts
 * reads them, so a sequence the input ends inside goes too), CR LF becomes LF, a lone CR and other
 * C0 controls (except tab and newline) are dropped, backspace erases the previous character.
 */
export function stripAnsi(input: string): string {
  // Characters (code points) kept so far: a backspace pops one in constant time, where cutting a
  // string would copy it (quadratic on output full of backspaces) and could split a surrogate pair.
  const out: string[] = [];
  let state = Seq.Outside;
  for (const ch of input) {
    const c = ch.codePointAt(0)!;
    state = escapeStep(state, c);
    if (state !== Seq.Outside) continue; // part of a sequence
    if (c === 0x08) out.pop();
    else if (c < 0x20 && c !== 0x0a && c !== 0x09) continue;
    else if (c === 0x7f) continue;
    else out.push(ch);
  }
  return out.join('');
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
