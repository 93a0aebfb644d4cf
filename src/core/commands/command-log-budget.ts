import { StrippedText, type Checkpoint } from '../base/stripped-text';

/** How much of a log a budget reads: only its two ends, whatever its size. */
export const enum LogBudgetTuning {
  /** Bytes read at a time while the head or the tail is not yet long enough. */
  ReadBytes = 64 * 1024,
  /**
   * Most bytes read for each end. Output that is nearly all escape sequences (a full-screen program
   * redrawing) may hold less text than the budget in this many bytes: its head or tail is shorter.
   */
  MaxScanBytes = 4 * 1024 * 1024,
}

/**
 * A command's whole output kept within a budget (docs/protocol.md "Output budget"): escape
 * sequences removed, its first lines and its last lines, and what lies between, counted exactly.
 */
export interface LogBudget {
  /** The first lines (the whole text when it fits). */
  head: string;
  /** The last lines ('' when the whole text fits). */
  tail: string;
  /** Characters (UTF-16 code units) and lines of the whole text. */
  totalChars: number;
  totalLines: number;
  /** Bytes of the log the text is made of. */
  totalBytes: number;
  /** What was left out; undefined when nothing was. */
  elided?: {
    chars: number;
    /** Lines left out (a line cut in part counts), the first and last 0-based. */
    lines: number;
    firstLine: number;
    lastLine: number;
    /** The log's bytes [offset, end) hold what was left out (strip them to read it). */
    offset: number;
    end: number;
  };
}

/**
 * What a budget reads of a log: its bytes, and its text counted as it was written (characters,
 * lines, checkpoints). A CommandLog is one; so is a part of one read through `pty/commandOutput`
 * and counted by its reader (what a command printed after a signal, docs/protocol.md "Output budget").
 */
export interface LogSource {
  /** Bytes readable (a CommandLog's file). */
  readonly size: number;
  /** Bytes of the whole output: more than `size` past the session's bound. */
  readonly totalBytes: number;
  readonly text: Pick<StrippedText, 'chars' | 'newlines' | 'lineChars' | 'checkpoints'>;
  read(offset: number, length: number): Promise<Buffer>;
  /** Past the bound (`totalBytes > size`): the last bytes kept, and where they start. */
  keptEnd(): { offset: number; bytes: Buffer };
}

/**
 * The text of `log` within `maxChars` characters: whole lines from its start (about half) and from
 * its end, and the exact count of what lies between, from the counts the log keeps as it is
 * written. Reads only the two ends of the file, never the whole.
 */
export async function budgetOfLog(log: LogSource, maxChars: number): Promise<LogBudget> {
  // One moment's view: the log may still grow while it is read (a command still printing).
  const size = log.size;
  // Past the session's bound then: its tail is the end kept in memory. Known now, not after the
  // head's read, when a log that only grew would look past the bound (an empty tail).
  const pastBound = log.totalBytes > size;
  const keptEnd = pastBound ? log.keptEnd() : undefined;
  const total = { chars: log.text.chars, newlines: log.text.newlines, lineChars: log.text.lineChars };
  const totalLines = total.newlines + (total.lineChars > 0 ? 1 : 0);
  const base = { totalChars: total.chars, totalLines, totalBytes: size };
  const file: Source = { size, read: (offset, length) => log.read(offset, length) };

  const headRoom = total.chars <= maxChars ? maxChars : Math.ceil(maxChars / 2);
  const head = await readHead(file, headRoom, !pastBound);
  if (head.chars === total.chars) return { head: head.text, tail: '', ...base };

  const tailRoom = Math.max(0, Math.min(maxChars - head.chars, total.chars - head.chars));
  const tail = keptEnd
    ? await keptEndTail(keptEnd, log.text.checkpoints, total, tailRoom, head)
    : await readTail(
        file,
        tailRoom,
        head,
        log.text.checkpoints.filter((c) => c.offset <= size),
      );
  const elidedChars = total.chars - head.chars - tail.chars;
  if (elidedChars <= 0) return { head: head.text + tail.text, tail: '', ...base };
  const firstLine = head.newlines;
  const lastLine = tail.atLineStart ? tail.newlinesBefore - 1 : tail.newlinesBefore;
  return {
    head: head.text,
    tail: tail.text,
    ...base,
    // Past the bound the log ends before what was left out does: it holds [offset, size) of it.
    elided: { chars: elidedChars, lines: lastLine - firstLine + 1, firstLine, lastLine, offset: head.end, end: Math.min(tail.start, size) },
  };
}

/** Where a budget reads bytes from: the log's file, or the end it keeps in memory past the bound. */
interface Source {
  /** Where its bytes end (in the whole output's offsets). */
  size: number;
  read(offset: number, length: number): Promise<Buffer>;
}

/**
 * The tail of a command whose output went past the session's bound: from the end the log kept
 * when the budget began, stripped from a checkpoint inside it (a line start outside any sequence,
 * whose counts are exact).
 */
async function keptEndTail(
  end: { offset: number; bytes: Buffer },
  checkpoints: readonly Checkpoint[],
  total: { chars: number; newlines: number },
  room: number,
  head: Head,
): Promise<Tail> {
  const size = end.offset + end.bytes.length;
  const kept: Source = { size, read: async (offset, length) => end.bytes.subarray(offset - end.offset, offset - end.offset + length) };
  const starts = checkpoints.filter((c) => c.offset >= end.offset && c.offset <= size);
  // No line started in it outside a sequence (one line longer than it): no tail, the counts still exact.
  if (starts.length === 0) starts.push({ offset: size, chars: total.chars, newlines: total.newlines });
  return readTail(kept, room, head, starts, false);
}

/** The head: whole lines from the start, at most `room` characters (part of a line when the first is longer). */
interface Head {
  text: string;
  chars: number;
  newlines: number;
  /** Byte offset where the head stops (where what was left out begins). */
  end: number;
  /** A place the tail may be stripped from: the head's end, or the start of the line it cut. */
  floor: Checkpoint;
}

/** The log's text from byte `from`, read while `more` says so and the log lasts; and the byte where reading stopped. */
async function stripFrom(
  source: Source,
  from: number,
  more: (s: StrippedText, offset: number) => boolean = () => true,
): Promise<{ s: StrippedText; offset: number }> {
  const s = new StrippedText(0, true);
  const size = source.size;
  let offset = from;
  while (offset < size && more(s, offset)) {
    const bytes = await source.read(offset, Math.min(LogBudgetTuning.ReadBytes, size - offset));
    if (bytes.length === 0) break;
    s.feed(bytes);
    offset += bytes.length;
  }
  return { s, offset };
}

/** The head read from `source`; `whole`: the source holds the whole output (else its last line goes on past it). */
async function readHead(source: Source, room: number, whole: boolean): Promise<Head> {
  const size = source.size;
  const { s, offset } = await stripFrom(source, 0, (t, at) => t.chars <= room && at < LogBudgetTuning.MaxScanBytes);
  const text = s.text();
  if (s.chars <= room && offset >= size && whole)
    return { text, chars: s.chars, newlines: s.newlines, end: size, floor: { offset: size, chars: s.chars, newlines: s.newlines } };
  // The last whole line that fits.
  let fit = -1;
  for (let i = s.lineEnds.length - 1; i >= 0; i--) {
    if (s.lineEnds[i].chars <= room) {
      fit = i;
      break;
    }
  }
  if (fit >= 0) {
    const end = s.lineEnds[fit];
    const floor = { offset: end.offset, chars: end.chars, newlines: fit + 1 };
    return { text: text.slice(0, end.chars), chars: end.chars, newlines: fit + 1, end: end.offset, floor };
  }
  // The first line alone is longer than the room: part of it.
  const cut = safeCut(text, room);
  return { text: text.slice(0, cut), chars: cut, newlines: 0, end: 0, floor: { offset: 0, chars: 0, newlines: 0 } };
}

/** The tail: whole lines up to the end, at most `room` characters, starting after the head. */
interface Tail {
  text: string;
  chars: number;
  /** Byte offset where what was left out ends (the tail's first line starts there). */
  start: number;
  /** Newlines before the tail, and whether it starts at a line's start. */
  newlinesBefore: number;
  atLineStart: boolean;
}

/** The tail read from `source`, stripped from one of `checkpoints` (and from the head's floor when `afterHead`: the two are in one stretch). */
async function readTail(source: Source, room: number, head: Head, checkpoints: Checkpoint[], afterHead = true): Promise<Tail> {
  const size = source.size;
  const starts = afterHead ? [...checkpoints.filter((c) => c.offset >= head.floor.offset), head.floor].sort((a, b) => a.offset - b.offset) : checkpoints;
  // The latest place from which at least `room` bytes remain (a character is at least a byte).
  let at = starts.length - 1;
  while (at > 0 && size - starts[at].offset < room) at--;
  for (;;) {
    const from = starts[at];
    const { s } = await stripFrom(source, from.offset);
    const scanned = size - from.offset;
    if (s.chars >= room || at === 0 || scanned >= LogBudgetTuning.MaxScanBytes) return tailFrom(s, from, room, head, size);
    // The checkpoints count the characters before them: straight to the latest one that leaves
    // `room` (or reaches the scan's bound), not back one at a time, each stretch stripped again.
    const total = from.chars + s.chars;
    at--;
    while (at > 0 && total - starts[at].chars < room && size - starts[at].offset < LogBudgetTuning.MaxScanBytes) at--;
  }
}

/** The tail out of a stripped stretch that runs from `from` to the end. */
function tailFrom(s: StrippedText, from: Checkpoint, room: number, head: Head, size: number): Tail {
  const text = s.text();
  const minChars = Math.max(0, s.chars - room); // local position the tail may start at, at the earliest
  const headEnd = head.chars - from.chars; // …and never inside the head
  const earliest = Math.max(minChars, headEnd);
  // The first line start at or after the earliest position.
  if (earliest === 0) return { text, chars: s.chars, start: from.offset, newlinesBefore: from.newlines, atLineStart: true };
  for (let i = 0; i < s.lineEnds.length; i++) {
    const e = s.lineEnds[i];
    if (e.chars >= earliest && e.chars < s.chars)
      return { text: text.slice(e.chars), chars: s.chars - e.chars, start: from.offset + e.offset, newlinesBefore: from.newlines + i + 1, atLineStart: true };
    if (e.chars >= s.chars) break;
  }
  // The last line alone is longer than the room: its end.
  const cut = Math.min(text.length, Math.max(earliest, safeCut(text, text.length - room)));
  const before = text.slice(0, cut);
  let newlines = 0;
  for (let i = before.indexOf('\n'); i >= 0; i = before.indexOf('\n', i + 1)) newlines++;
  // Where in its bytes the cut falls is not known: what was left out ends, at the latest, at the end.
  // A cut just after a newline (an empty tail after a final one) starts no line of its own.
  const atLineStart = cut > 0 && text[cut - 1] === '\n';
  return { text: text.slice(cut), chars: s.chars - cut, start: size, newlinesBefore: from.newlines + newlines, atLineStart };
}

/** `i`, moved off the middle of a surrogate pair. */
function safeCut(text: string, i: number): number {
  const c = text.charCodeAt(i - 1);
  return c >= 0xd800 && c <= 0xdbff ? i - 1 : i;
}
