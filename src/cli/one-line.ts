/** Longest run of characters without a space a message shows whole (a user's 100 KB argument is not). */
const LONGEST_WORD = 200;
/** How much of such a word is shown: its start, then `…`. */
const WORD_SHOWN = 60;
/** Longest message shown whole. */
const LONGEST_LINE = 1000;

/**
 * A message as one line of stderr: control characters a user's argument may carry (a newline in
 * a session name or a text to wait for) are shown escaped (`\n`), so an error stays one line, and
 * a word longer than LONGEST_WORD (a text of 100 KB named in "unknown session: …") by its start.
 */
export function oneLine(message: string): string {
  const escaped = message.replace(/[\u0000-\u001f\u007f]/g, (c) => JSON.stringify(c).slice(1, -1));
  // The punctuation that ends such a word stays: `Cannot record to /tmp/aaa…: why`.
  const short = escaped.replace(
    new RegExp(`([^\\s]{${LONGEST_WORD + 1},}?)([:,;.)'"]*)(?=\\s|$)`, 'g'),
    (_, word: string, end: string) => `${cutAt(word, WORD_SHOWN)}…${end}`,
  );
  // A long text with spaces in it (a 6 KB line to wait for): its start and its end, which says why.
  return short.length > LONGEST_LINE ? `${cutAt(short, LONGEST_LINE - 200)}…${short.slice(-150)}` : short;
}

/** `word`'s first `n` UTF-16 units, one fewer where that would split a surrogate pair. */
export function cutAt(word: string, n: number): string {
  const c = word.charCodeAt(n - 1);
  return word.slice(0, c >= 0xd800 && c <= 0xdbff ? n - 1 : n);
}
