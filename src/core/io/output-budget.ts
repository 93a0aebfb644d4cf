/** Characters an MCP tool returns by default (docs/guarantees.md#output-budget-for-agents): a model's context is precious. */
export const DEFAULT_MAX_CHARS = 20000;
/** The smallest budget a tool accepts. */
export const MIN_MAX_CHARS = 1;
/**
 * Characters of output kept however small the budget: the line that says what was left out takes
 * ~180-230 itself, so a budget too small for it and this much output is exceeded, rather than keep no
 * tail (or no head) at all.
 */
export const MIN_KEPT_CHARS = 80;

/** Characters of output a budget keeps beside a line of `noteChars` characters (line breaks included). */
export function roomBeside(maxChars: number, noteChars: number): number {
  return Math.max(MIN_KEPT_CHARS, maxChars - noteChars);
}

/** What was left out of a text: its characters and the lines they touch (0-based, inclusive). */
export interface Elision {
  /** Characters left out. */
  chars: number;
  /** Lines left out (a line cut in part counts). */
  lines: number;
  /** The first and last line of the text, 0-based, that lost characters. */
  firstLine: number;
  lastLine: number;
  /** The text before and after the cut, as kept. */
  head: string;
  tail: string;
}

/** A text kept within a budget: `text` is what to show, with the counts of docs/guarantees.md#output-budget-for-agents. */
export interface Budgeted {
  text: string;
  totalChars: number;
  /** 0 when nothing was left out. */
  elidedChars: number;
  elision?: Elision;
}

/**
 * Keeps `text` within `maxChars`: when longer, its head and its tail stay and ONE line between
 * them says what was left out and how to read it (`where` tells how, from the elision). Cuts fall
 * on line boundaries when one is near, so the lines kept are whole. A budget too small for that
 * line and MIN_KEPT_CHARS of output still keeps that much output, with the line.
 */
export function applyBudget(text: string, maxChars: number, where: (e: Elision) => string): Budgeted {
  const totalChars = text.length;
  if (totalChars <= maxChars) return { text, totalChars, elidedChars: 0 };
  // The note's length depends on the numbers in it: sized for the largest counts can be. What
  // `where` makes of the real ones (cursors, offsets) may still be longer, and a cut moved off a
  // surrogate pair keeps one more: then the parts shrink by what is over, until it fits.
  const probe: Elision = { chars: totalChars, lines: totalChars, firstLine: totalChars, lastLine: totalChars, head: '', tail: '' };
  const noteChars = noteLine(probe, where(probe)).length + 2;
  const floor = MIN_KEPT_CHARS;
  // The most it may take: the budget, or (a budget too small) that floor and the line.
  const limit = Math.max(maxChars, floor + noteChars);
  let room = roomBeside(maxChars, noteChars);
  for (;;) {
    const kept = keepWithin(text, room, where);
    // Left out, with the line saying so, it would be no shorter: the whole is kept instead.
    if (kept.text.length >= totalChars) return { text, totalChars, elidedChars: 0 };
    const over = kept.text.length - limit;
    if (over <= 0 || room <= floor) return kept;
    room = Math.max(floor, room - over);
  }
}

/** `text`'s head and tail of about `room` characters in all, and the line between. */
function keepWithin(text: string, room: number, where: (e: Elision) => string): Budgeted {
  const totalChars = text.length;
  const headEnd = cutBefore(text, Math.ceil(room / 2));
  const tailStart = cutAfter(text, totalChars - Math.floor(room / 2), headEnd);
  const head = text.slice(0, headEnd);
  const tail = text.slice(tailStart);
  const middle = text.slice(headEnd, tailStart);
  if (middle === '') return { text, totalChars, elidedChars: 0 };
  const firstLine = countNewlines(head);
  const lastLine = firstLine + countNewlines(middle) - (middle.endsWith('\n') ? 1 : 0);
  const elision: Elision = { chars: middle.length, lines: lastLine - firstLine + 1, firstLine, lastLine, head, tail };
  const sep = head === '' || head.endsWith('\n') ? '' : '\n';
  const note = noteLine(elision, where(elision));
  return { text: `${head}${sep}${note}\n${tail}`, totalChars, elidedChars: middle.length, elision };
}

/**
 * A text kept within a budget from parts read elsewhere (a command's log): `head`, then one line
 * saying what `elision` left out and `how` to read it, then `tail`.
 */
export function joinBudget(head: string, tail: string, totalChars: number, elision: Omit<Elision, 'head' | 'tail'>, how: string): Budgeted {
  const sep = head === '' || head.endsWith('\n') ? '' : '\n';
  const note = noteLine({ ...elision, head, tail }, how);
  return { text: `${head}${sep}${note}\n${tail}`, totalChars, elidedChars: elision.chars, elision: { ...elision, head, tail } };
}

/** Characters `joinBudget`'s note line (and its line breaks) takes at most, with counts of up to ten digits. */
export function noteRoom(how: string): number {
  const big = 9_999_999_999;
  return noteLine({ chars: big, lines: big, firstLine: big, lastLine: big, head: '', tail: '' }, how).length + 2;
}

function noteLine(e: Elision, how: string): string {
  const lines = e.lines === 1 ? '1 line' : `${e.lines} lines`;
  return `[… ${lines} (${e.chars} characters) left out; ${how}]`;
}

/** Where the head ends: after the last newline in the first `n` characters, if it keeps most of them. */
function cutBefore(text: string, n: number): number {
  const nl = text.lastIndexOf('\n', n - 1);
  if (nl >= 0 && nl + 1 >= n / 2) return nl + 1;
  return safeIndex(text, n);
}

/** Where the tail starts: just after a newline at or after `from`, if it keeps most of the tail. */
function cutAfter(text: string, from: number, notBefore: number): number {
  const start = Math.max(from, notBefore);
  if (start > 0 && text[start - 1] === '\n') return start;
  const nl = text.indexOf('\n', start);
  if (nl >= 0 && nl + 1 - start <= (text.length - start) / 2) return nl + 1;
  return safeIndex(text, start);
}

/** `i`, moved off the middle of a surrogate pair. */
function safeIndex(text: string, i: number): number {
  const c = text.charCodeAt(i - 1);
  return c >= 0xd800 && c <= 0xdbff ? i + 1 : i;
}

function countNewlines(s: string): number {
  let n = 0;
  for (let i = s.indexOf('\n'); i >= 0; i = s.indexOf('\n', i + 1)) n++;
  return n;
}
