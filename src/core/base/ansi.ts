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
