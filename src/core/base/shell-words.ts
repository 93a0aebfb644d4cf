/**
 * Splitting a command line (`serve --cmd "python3 -i"`) into argv words, and quoting one word for a shell.
 */

/** Characters a backslash escapes inside double quotes (POSIX); elsewhere there it stays literal. */
const DOUBLE_QUOTE_ESCAPABLE = new Set(['"', '\\', '$', '`', '\n']);

const WHITESPACE = /[ \t\r\n]/;

/**
 * Splits `line` into words the way a POSIX shell does for simple commands: unquoted whitespace
 * separates words; '…' is literal; "…" is literal except that a backslash escapes `"` `\` `$` `` ` ``;
 * an unquoted backslash escapes the next character (backslash-newline is removed); adjacent
 * quoted and unquoted parts join into one word (`a"b c"d` → `ab cd`); `''` is an empty word.
 * Expansions, operators and comments are not interpreted: `$`, `*`, `|`, `;`, `#` are literal.
 * @throws {Error} "unterminated quote in command line" when a quote is never closed.
 */
export function splitShellWords(line: string): string[] {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  let i = 0;

  const unterminated = (quote: string, at: number): Error => new Error(`unterminated quote in command line: ${quote} opened at offset ${at} is never closed`);

  while (i < line.length) {
    const c = line[i]!;
    if (WHITESPACE.test(c)) {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
      i++;
      continue;
    }
    if (c === "'") {
      const end = line.indexOf("'", i + 1);
      if (end < 0) throw unterminated("'", i);
      word += line.slice(i + 1, end);
      inWord = true;
      i = end + 1;
      continue;
    }
    if (c === '"') {
      const start = i;
      i++;
      for (;;) {
        if (i >= line.length) throw unterminated('"', start);
        const d = line[i]!;
        if (d === '"') break;
        if (d === '\\' && i + 1 < line.length && DOUBLE_QUOTE_ESCAPABLE.has(line[i + 1]!)) {
          if (line[i + 1] !== '\n') word += line[i + 1];
          i += 2;
          continue;
        }
        word += d;
        i++;
      }
      inWord = true;
      i++;
      continue;
    }
    if (c === '\\') {
      if (i + 1 >= line.length) {
        // A trailing backslash has nothing to escape; sh -c keeps it literally.
        word += c;
        inWord = true;
        i++;
        continue;
      }
      const next = line[i + 1]!;
      if (next !== '\n') {
        word += next;
        inWord = true;
      }
      i += 2;
      continue;
    }
    word += c;
    inWord = true;
    i++;
  }
  if (inWord) words.push(word);
  return words;
}

/** `value` as one single-quoted word of a POSIX shell (sh, bash, zsh): nothing inside is special. */
export function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}
