import { AnsiStripper } from '../base/ansi';
import { StrippedText } from '../base/stripped-text';
import { CommandLogTuning } from '../commands/command-log';
import { budgetOfLog, type LogSource } from '../commands/command-log-budget';
import type { CommandRecord } from '../commands/command-tracker';
import { applyBudget, joinBudget, MIN_KEPT_CHARS, noteRoom, roomBeside } from '../io/output-budget';
import type { SendResult } from '../io/send';
import { MAX_COMMAND_PAGE_BYTES } from './command-methods';
import { MAX_OUTPUT_READ_BYTES } from './output-methods';
import type { TableCall, WholeBudget } from './spec';

// The output budget of a call that typed and waited (MCP `send`, `signal`, `send_keys` with wait),
// docs/protocol.md "Output budget": with shell integration it is applied to the commands' own
// output, read from their logs; else to what the call saw, read from the ring; else to the rows.

/** What the budget reads of a call's result that typed and waited (a write that did not wait has no output: it is left alone). */
export type WaitedOutput = Pick<Partial<SendResult>, 'output' | 'truncated' | 'command' | 'since' | 'cursor'>;

/**
 * The budget of a call that typed and waited (`send`, `send_keys` with wait, `signal`): the rows it
 * returned, or with shell integration the commands' own output from their logs, and where the rest is.
 */
export const waitedOutputBudget = {
  field: 'output',
  async locate(r: WaitedOutput, a: Record<string, unknown>, call: TableCall) {
    const whole = await commandOutputPointer(r.command, a.session, call);
    return (e: { lastLine: number; lines: number }) => `${scrollbackPointer(r)(e)}${whole}`;
  },
  whole: commandLogBudget,
} as const;

/** What `pty/commandOutput` with `maxChars` answers. */
interface CommandOutputBudget {
  data: string;
  truncated: boolean;
  tail: string;
  totalBytes: number;
  totalChars: number;
  totalLines: number;
  elided?: { chars: number; lines: number; firstLine: number; lastLine: number; offset: number; end: number };
}

/** A page of `pty/commandOutput`. */
interface CommandOutputPage {
  data: string;
  offset: number;
  nextOffset: number;
  totalBytes: number;
  truncated: boolean;
}

/** The largest number a note line may hold: its room is reserved for that. */
const BIG = 9_999_999_999;

/**
 * A call's output within the budget from the commands' own logs (docs/protocol.md "Output budget"):
 * when the rows it returned do not fit, or lost their start, and it ran commands with shell
 * integration, the head is the start of their output and the tail its end, escape sequences
 * removed, and the counts are those of their whole output. A call that answered a command begun
 * before it counts what appeared after it (the ring, else that command's log from there on).
 */
async function commandLogBudget(r: WaitedOutput, a: Record<string, unknown>, call: TableCall, maxChars: number): Promise<WholeBudget | undefined> {
  const command = r.command;
  if (!command?.log) return fromRing(await ringBudget(r, a, call, maxChars));
  // A command that began before the call (a REPL the send's `exit()` ended, the program keys or a
  // signal answered) is not the call's own: what the call returns and counts is what appeared after it.
  if (r.since !== undefined && command.startCursor < r.since) {
    const ring = await ringBudget(r, a, call, maxChars);
    return ring === 'gone' ? afterActBudget(r, command, a, call, maxChars) : fromRing(ring);
  }
  const ran = await commandsRan(r, a, call);
  if (ran.length > 1) {
    // One of them lost its log (the session's bound): their outputs cannot all be read from logs.
    if (ran.some((c) => !c.log)) return fromRing(await ringBudget(r, a, call, maxChars));
    return severalBudget(r, ran, a, call, maxChars);
  }
  // The rows fit: they are returned as rendered (the command line and the next prompt too), and
  // the counts are still those of the command's own output, as they are when it does not fit.
  if ((r.output ?? '').length <= maxChars && !r.truncated) return ownCount(r, command.id, a, call);
  const room = roomBeside(maxChars, Math.max(noteRoom(logPointer(command, BIG, BIG, true, true)), noteRoom(notKeptPointer(command, 0, BIG))));
  let b: CommandOutputBudget;
  try {
    b = (await call('pty/commandOutput', { session: a.session, id: command.id, maxChars: room })) as CommandOutputBudget;
  } catch {
    return undefined; // the log was dropped meanwhile: the rows are what there is
  }
  // The command's own output fits the budget though its rows did not (the command line, the
  // prompt): it is returned whole, with no line saying what was left out.
  if (b.elided && !b.truncated && b.totalChars <= maxChars) {
    try {
      b = (await call('pty/commandOutput', { session: a.session, id: command.id, maxChars })) as CommandOutputBudget;
    } catch {
      return undefined;
    }
  }
  // Nothing of the command's output was cut before the budget (unless its log stopped at the session's bound).
  const fields = { truncated: b.truncated };
  if (!b.elided) return { text: b.data + b.tail, totalChars: b.totalChars, elidedChars: 0, fields };
  const { offset, end } = b.elided;
  if (b.truncated) return { ...joinBudget(b.data, b.tail, b.totalChars, b.elided, notKeptPointer(command, offset, end)), fields };
  const held = await ringHolds(command.startCursor + offset, a.session, call);
  return { ...joinBudget(b.data, b.tail, b.totalChars, b.elided, logPointer(command, offset, end, held, endsInLine(b.data))), fields };
}

/**
 * How to read the log's bytes [offset, end) of `command`, which the ring may hold too (the log's
 * bytes are the output's between its cursors). `lineCut`: the head shown ends inside a line, whose
 * start `offset` is (where in its bytes the cut falls is not known): reading from there shows that part again.
 */
function logPointer(command: CommandRecord, offset: number, end: number, inRing: boolean, lineCut = false): string {
  const from = lineCut ? `where their line starts, the part shown included; they end at offset ${end}` : `they end at offset ${end}`;
  return (
    `read them with read_command_output id=${command.id} offset=${offset} (${from})` +
    (inRing ? `, or read_output since=${command.startCursor + offset} maxBytes=${end - offset} strip=true` : '')
  );
}

/** Whether a head shown ends inside a line (its first line alone was longer than the room). */
function endsInLine(head: string): boolean {
  return head !== '' && !head.endsWith('\n');
}

/** Past the session's log bound the log holds only the start of what was left out (or none of it). */
function notKeptPointer(command: CommandRecord, offset: number, end: number): string {
  return `${offset < end ? `the log holds its start: read_command_output id=${command.id} offset=${offset} (up to offset ${end}); ` : ''}the rest was not kept (the session's command log bound)`;
}

/** Whether the ring still holds the output from `cursor` on. */
async function ringHolds(cursor: number, session: unknown, call: TableCall): Promise<boolean> {
  return ((await call('pty/output', { session, since: cursor, maxBytes: 1 })) as { dropped: number }).dropped === 0;
}

/** Commands a call's record may be the last of: what text of several lines typed at most. */
const SEVERAL_COMMANDS_LOOKED_AT = 100;

/**
 * The commands a call ran, oldest first, its record's last: several when it typed text of several
 * lines (`a\nb` runs two commands; `a; b` is one line, one command, reported once).
 */
async function commandsRan(r: WaitedOutput, a: Record<string, unknown>, call: TableCall): Promise<CommandRecord[]> {
  const command = r.command;
  if (command === undefined) return [];
  if (r.since === undefined || (typeof a.text === 'string' && !a.text.trimEnd().includes('\n'))) return [command];
  const since = r.since;
  const listed = (await call('pty/commands', { session: a.session, limit: SEVERAL_COMMANDS_LOOKED_AT })) as { commands: CommandRecord[] };
  const before = listed.commands.filter((c) => c.id < command.id && c.startCursor >= since).sort((x, y) => x.id - y.id);
  return [...before, command];
}

/** One command's output as a budget of several takes it: whole, its start (`head`), its end (`tail`), both, or none of it. */
interface Part {
  command: CommandRecord;
  /** Its log's counts (from the answer its head or tail came from). */
  log: CommandOutputBudget;
  head: string;
  tail: string;
  /** What of it was left out: its log's bytes [offset, end), characters and lines; undefined when nothing was. */
  left?: { offset: number; end: number; chars: number; lines: number };
}

/** Times the parts are worked out again when a command still running grew meanwhile. */
const SEVERAL_TRIES = 3;

/**
 * The budget of a call that ran several commands (text of several lines): their outputs in order,
 * from their logs. The head is the start of the first ones' output (whole outputs while they fit,
 * then the start of the next), the tail the end of the last ones', and the counts the sum of all of
 * them, exact; the line between says where each part left out is.
 */
async function severalBudget(
  r: WaitedOutput,
  ran: CommandRecord[],
  a: Record<string, unknown>,
  call: TableCall,
  maxChars: number,
): Promise<WholeBudget | undefined> {
  const ask = (id: number, chars: number) =>
    call('pty/commandOutput', { session: a.session, id, maxChars: Math.max(1, chars) }) as Promise<CommandOutputBudget>;
  try {
    const logs = await Promise.all(ran.map((c) => ask(c.id, 1)));
    // The rows fit: as rendered (the typed lines and prompts too), counted as the commands' own output.
    if ((r.output ?? '').length <= maxChars && !r.truncated)
      return { text: r.output ?? '', totalChars: sum(logs.map((l) => l.totalChars)), elidedChars: 0, fields: {} };
    // Sized for two commands cut (the first and the last), with counts as large as they come; the parts shrink if it is longer.
    // Their own output fits whole: no line is needed, nor room kept for one.
    let room = sum(logs.map((l) => l.totalChars)) <= maxChars ? maxChars : roomBeside(maxChars, noteRoom(severalPointer([BIG_LEFT, BIG_LEFT])));
    // What fit with the room the line was sized for, while a larger room is tried (the line is shorter than that).
    let fit: WholeBudget | undefined;
    for (let tries = 1; ;) {
      const parts = await partsWithin(ran, logs, room, ask);
      if (!parts) {
        // A command still running grew past what its count said: counted again.
        if (++tries > SEVERAL_TRIES) return undefined;
        logs.splice(0, logs.length, ...(await Promise.all(ran.map((c) => ask(c.id, 1)))));
        continue;
      }
      // Nothing was cut before the budget (unless a log stopped at the session's bound).
      const b = { ...(await joinParts(parts, a.session, call)), fields: { truncated: parts.some((p) => p.log.truncated) } };
      const over = b.text.length - maxChars;
      if (over < 0 && b.elidedChars > 0 && fit === undefined) {
        // The line is shorter than its room: the parts may take what is left, once.
        fit = b;
        room -= over;
        continue;
      }
      if (over <= 0) return b;
      if (fit) return fit;
      if (room <= MIN_KEPT_CHARS) return b;
      room = Math.max(MIN_KEPT_CHARS, room - over);
    }
  } catch {
    return undefined; // a log was dropped meanwhile: the rows are what there is
  }
}

/**
 * Each command's part within `room` characters in all: about half for the head, from the first
 * command on, half for the tail, from the last back; the command where a side runs out gives its
 * start (or its end; both, where the two sides meet), and the ones between are left out whole.
 * Undefined when a log said to fit does not (its command grew meanwhile, or its bytes are mostly
 * escape sequences, more than a budget reads).
 */
async function partsWithin(
  ran: CommandRecord[],
  logs: CommandOutputBudget[],
  room: number,
  ask: (id: number, chars: number) => Promise<CommandOutputBudget>,
): Promise<Part[] | undefined> {
  const n = ran.length;
  const t = logs.map((l) => l.totalChars);
  const parts: Part[] = ran.map((command, i) => ({ command, log: logs[i], head: '', tail: '' }));
  // Command i whole, on the head's side (before the line) or the tail's (after it).
  const whole = async (i: number, side: 'head' | 'tail' = 'head') => {
    if (t[i] === 0) return true;
    const b = await ask(ran[i].id, t[i]);
    if (b.elided) return false;
    parts[i] = { ...parts[i], log: b, [side]: b.data + b.tail };
    return true;
  };
  if (sum(t) <= room) {
    for (let i = 0; i < n; i++) if (!(await whole(i))) return undefined;
    return parts;
  }
  let headRoom = Math.ceil(room / 2);
  let tailRoom = room - headRoom;
  let k = 0;
  for (; k < n && t[k] <= headRoom; k++) {
    headRoom -= t[k];
    if (!(await whole(k))) return undefined;
  }
  let j = n - 1;
  for (; j > k && t[j] <= tailRoom; j--) {
    tailRoom -= t[j];
    if (!(await whole(j, 'tail'))) return undefined;
  }
  // The whole does not fit: command k does not (k < n).
  if (j === k) {
    // Where the two sides meet: its start and its end.
    if (headRoom + tailRoom === 0) {
      parts[k] = leftWhole(parts[k]);
      return parts;
    }
    const b = await ask(ran[k].id, headRoom + tailRoom);
    if (!b.elided) return undefined;
    parts[k] = { ...parts[k], log: b, head: b.data, tail: b.tail, left: b.elided };
    return parts;
  }
  // The start of command k: a budget smaller than its output keeps at most half of it as the head.
  if (headRoom > 0) {
    const b = await ask(ran[k].id, Math.min(2 * headRoom, t[k] - 1));
    if (!b.elided) return undefined;
    const left = { offset: b.elided.offset, end: b.totalBytes, chars: b.totalChars - b.data.length, lines: b.totalLines - b.elided.firstLine };
    parts[k] = { ...parts[k], log: b, head: b.data, left };
  } else parts[k] = leftWhole(parts[k]);
  for (let i = k + 1; i < j; i++) parts[i] = leftWhole(parts[i]);
  // The end of command j: its budget's tail, which a head shorter than half makes longer than
  // what is left: asked again with less until it fits.
  if (tailRoom > 0) {
    let chars = Math.min(2 * tailRoom, t[j] - 1);
    for (let tries = 1; ; tries++) {
      const b = await ask(ran[j].id, chars);
      if (!b.elided) return undefined;
      const over = b.tail.length - tailRoom;
      if (over <= 0 || chars <= 1 || tries === SEVERAL_TRIES) {
        const left = { offset: 0, end: b.elided.end, chars: b.totalChars - b.tail.length, lines: b.elided.lastLine + 1 };
        parts[j] = { ...parts[j], log: b, tail: b.tail, left };
        break;
      }
      chars = Math.max(1, chars - over);
    }
  } else parts[j] = leftWhole(parts[j]);
  return parts;
}

/** `p` left out whole. */
function leftWhole(p: Part): Part {
  return { ...p, head: '', tail: '', left: { offset: 0, end: p.log.totalBytes, chars: p.log.totalChars, lines: p.log.totalLines } };
}

/** The parts joined: the heads, one line saying what was left out and where, the tails. */
async function joinParts(parts: Part[], session: unknown, call: TableCall): Promise<WholeBudget> {
  const totalChars = sum(parts.map((p) => p.log.totalChars));
  const head = parts.map((p) => p.head).join('');
  const tail = parts.map((p) => p.tail).join('');
  const left = parts.filter((p) => p.left !== undefined && p.left.chars > 0);
  if (left.length === 0) return { text: head + tail, totalChars, elidedChars: 0 };
  const lines = sum(left.map((p) => p.left!.lines));
  const firstLine = head.split('\n').length - 1;
  const elision = { chars: totalChars - head.length - tail.length, lines, firstLine, lastLine: firstLine + lines - 1 };
  if (left.length > 1) return joinBudget(head, tail, totalChars, elision, severalPointer(left.map(leftOf)));
  // One command's bytes left out: said as a single command's budget says it (the ring's cursors too while it holds them).
  const only = left[0];
  const { offset, end } = only.left!;
  if (only.log.truncated) return joinBudget(head, tail, totalChars, elision, notKeptPointer(only.command, offset, end));
  const held = await ringHolds(only.command.startCursor + offset, session, call);
  return joinBudget(head, tail, totalChars, elision, logPointer(only.command, offset, end, held, endsInLine(only.head)));
}

/** Where a part left out is: a command's log bytes [offset, end), all of it (`whole`), past the bound or not. */
interface Left {
  id: number;
  offset: number;
  end: number;
  whole: boolean;
  truncated: boolean;
}

function leftOf(p: Part): Left {
  const { offset, end } = p.left!;
  return { id: p.command.id, offset, end, whole: offset === 0 && p.head === '' && p.tail === '' && !p.log.truncated, truncated: p.log.truncated };
}

/** A part as large as they come, for the room of the line. */
const BIG_LEFT: Left = { id: BIG, offset: BIG, end: BIG, whole: false, truncated: false };

/** How to read what was left out of several commands' output, part by part; whole ones in a row named as one. */
function severalPointer(left: Left[]): string {
  const named: string[] = [];
  for (let i = 0; i < left.length; i++) {
    const p = left[i];
    if (p.whole) {
      let last = i;
      while (last + 1 < left.length && left[last + 1].whole) last++;
      named.push(last === i ? `id=${p.id} (all of it)` : `id=${p.id} to id=${left[last].id} (all of each)`);
      i = last;
    } else if (p.truncated) named.push(`id=${p.id} offset=${p.offset} (up to offset ${p.end}: the rest was not kept, the session's command log bound)`);
    else named.push(`id=${p.id} offset=${p.offset} (they end at offset ${p.end})`);
  }
  return `read them with read_command_output ${named.join(', then ')}`;
}

function sum(values: number[]): number {
  return values.reduce((n, v) => n + v, 0);
}

/**
 * What appeared after the call acted, from the log of the command it answered (a signal, keys):
 * when the ring no longer holds it all. Counted exactly, reading that part of the log once; the
 * head is its start, the tail the command's end. Undefined (the rows) when the log stopped at the
 * session's bound: what came after the act is then not all kept.
 */
async function afterActBudget(
  r: WaitedOutput,
  command: CommandRecord,
  a: Record<string, unknown>,
  call: TableCall,
  maxChars: number,
): Promise<WholeBudget | undefined> {
  let part: LogPart;
  try {
    const first = (await call('pty/commandOutput', {
      session: a.session,
      id: command.id,
      offset: r.since! - command.startCursor,
      maxBytes: 1,
    })) as CommandOutputPage;
    if (first.truncated || first.offset >= first.totalBytes) return undefined;
    part = new LogPart(call, a.session, command.id, first.offset, first.totalBytes - first.offset);
    await part.count();
  } catch {
    return undefined; // the log was dropped meanwhile, or holds bytes that are no UTF-8: the rows are what there is
  }
  // Nothing of it was cut before the budget.
  const fields = { truncated: false };
  if ((r.output ?? '').length <= maxChars && !r.truncated) return { text: r.output ?? '', totalChars: part.text.chars, elidedChars: 0, fields };
  // What appeared after the act fits whole: no line is needed, nor room kept for one.
  const room = part.text.chars <= maxChars ? maxChars : roomBeside(maxChars, noteRoom(logPointer(command, BIG, BIG, true, true)));
  let b;
  try {
    b = await budgetOfLog(part, room);
  } catch {
    return undefined;
  }
  if (!b.elided) return { text: b.head + b.tail, totalChars: b.totalChars, elidedChars: 0, fields };
  const offset = part.from + b.elided.offset;
  const end = part.from + b.elided.end;
  const held = await ringHolds(command.startCursor + offset, a.session, call);
  return { ...joinBudget(b.head, b.tail, b.totalChars, b.elided, logPointer(command, offset, end, held, endsInLine(b.head))), fields };
}

/** Bytes between checkpoints of a part of a log counted by its reader: as the log's own. */
const PART_CHECKPOINT_BYTES = CommandLogTuning.CheckpointBytes;

/**
 * The bytes of a command's log from `from` on (`size` of them), read through `pty/commandOutput`
 * and counted once by `count()`, as a budget reads a log: the counts as the log keeps its own.
 */
class LogPart implements LogSource {
  readonly text = new StrippedText(PART_CHECKPOINT_BYTES);

  constructor(
    private readonly _call: TableCall,
    private readonly _session: unknown,
    private readonly _id: number,
    /** Where the part starts in the log (a character's start). */
    readonly from: number,
    readonly size: number,
  ) {}

  get totalBytes(): number {
    return this.size;
  }

  async read(offset: number, length: number): Promise<Buffer> {
    const maxBytes = Math.max(1, Math.min(length, MAX_COMMAND_PAGE_BYTES));
    const page = (await this._call('pty/commandOutput', { session: this._session, id: this._id, offset: this.from + offset, maxBytes })) as CommandOutputPage;
    const bytes = Buffer.from(page.data, 'utf8');
    // Bytes that are no UTF-8 come as U+FFFD: their offsets and counts would not be the log's.
    if (bytes.length !== page.nextOffset - page.offset) throw new Error('not UTF-8');
    return bytes;
  }

  keptEnd(): { offset: number; bytes: Buffer } {
    return { offset: this.size, bytes: Buffer.alloc(0) }; // (never past the bound: such a part is not read)
  }

  /** Reads the whole part once, counting its text (characters, lines, checkpoints). */
  async count(): Promise<void> {
    for (let at = 0; at < this.size;) {
      const bytes = await this.read(at, Math.min(MAX_COMMAND_PAGE_BYTES, this.size - at));
      if (bytes.length === 0) break;
      this.text.feed(bytes);
      at += bytes.length;
    }
  }
}

/** What the ring gives a call's output: its budget; `rows`, the rows are right as they are; `gone`, the ring no longer holds its start. */
type RingBudget = WholeBudget | 'rows' | 'gone';

function fromRing(b: RingBudget): WholeBudget | undefined {
  return typeof b === 'string' ? undefined : b;
}

/**
 * With no command log (no shell integration, or what a program inside the shell printed: a REPL's
 * line): when the rows do not fit, or lost their start to the scrollback, the budget is applied to
 * everything the call saw, from the ring (escape sequences removed), so the head is its start and
 * the counts are exact, as a command's log gives them.
 */
async function ringBudget(r: WaitedOutput, a: Record<string, unknown>, call: TableCall, maxChars: number): Promise<RingBudget> {
  if (r.since === undefined || r.cursor === undefined || r.cursor <= r.since) return 'rows';
  // A command begun before the call that ended during it (the program a send answered, keys
  // ended): what the call counts ends where that command's output does, not with the next prompt.
  const ended = r.command?.endCursor;
  const end = ended != null && r.command!.startCursor < r.since && ended > r.since && ended < r.cursor ? ended : r.cursor;
  const fits = (r.output ?? '').length <= maxChars && !r.truncated;
  if (fits && end === r.cursor) return 'rows';
  const stripper = new AnsiStripper();
  for (let at = r.since; at < end;) {
    const page = (await call('pty/output', { session: a.session, since: at, maxBytes: Math.min(end - at, MAX_OUTPUT_READ_BYTES) })) as {
      data: string;
      cursor: number;
      dropped: number;
    };
    if (page.dropped > 0) return 'gone';
    if (page.cursor <= at) break;
    stripper.feed(page.data);
    at = page.cursor;
  }
  const text = stripper.text();
  // The rows, as rendered, when they fit: counted as that output.
  if (fits) return { text: r.output ?? '', totalChars: text.length, elidedChars: 0, fields: {} };
  const b = applyBudget(
    text,
    maxChars,
    (e) => `read them with read_output since=${r.since} maxBytes=${end - r.since!} strip=true (lines ${e.firstLine + 1}–${e.lastLine + 1})`,
  );
  // Nothing was cut before the budget: the rows' `truncated` no longer holds.
  return { ...b, fields: { truncated: false } };
}

/** `r`'s rows unchanged, counted as command `id`'s own output (its log, escape sequences removed). */
async function ownCount(r: WaitedOutput, id: number, a: Record<string, unknown>, call: TableCall): Promise<WholeBudget | undefined> {
  try {
    const b = (await call('pty/commandOutput', { session: a.session, id, maxChars: 1 })) as CommandOutputBudget;
    return { text: r.output ?? '', totalChars: b.totalChars, elidedChars: 0, fields: {} };
  } catch {
    return undefined; // the log was dropped meanwhile: the rows are what there is
  }
}

/** Where rows a waiting call's output left out are: its rows end at the newest retained row. */
function scrollbackPointer(r: { output?: string }) {
  // Output line i is the retained row n-1-i back from the newest.
  const n = (r.output ?? '').split('\n').length;
  return (e: { lastLine: number; lines: number }) => `read them with read_scrollback offset=${n - 1 - e.lastLine} lines=${e.lines}`;
}

/** The state of command `id`'s log: its bytes, and whether it stopped at the session's bound; undefined when it has none. */
async function logState(id: number, session: unknown, call: TableCall): Promise<{ totalBytes: number; truncated: boolean } | undefined> {
  try {
    return (await call('pty/commandOutput', { session, id, maxBytes: 1 })) as CommandOutputPage;
  } catch {
    return undefined; // dropped
  }
}

/** Where a command's log is, said as what it holds: the whole output, or its first bytes only. */
function logHolds(command: CommandRecord, log: { totalBytes: number; truncated: boolean }): string {
  return log.truncated
    ? `the command's log holds the first ${log.totalBytes} bytes of its output: read_command_output id=${command.id}`
    : `the command's whole output: read_command_output id=${command.id}`;
}

/**
 * With shell integration, where the whole output of the command a send ran can be read: the ring
 * while it still holds its start, else the command's log (docs/guarantees.md#output-budget-for-agents); '' when neither.
 */
async function commandOutputPointer(command: CommandRecord | undefined, session: unknown, call: TableCall): Promise<string> {
  if (!command) return '';
  if (await ringHolds(command.startCursor, session, call)) {
    const bytes = command.endCursor === null ? '' : ` maxBytes=${command.endCursor - command.startCursor}`;
    return `; the command's whole output: read_output since=${command.startCursor}${bytes} strip=true`;
  }
  const log = command.log ? await logState(command.id, session, call) : undefined;
  return log ? `; ${logHolds(command, log)}` : '';
}

/**
 * What the line after a waiting call's output says when its `truncated` is true: where its own
 * commands' logs stopped at the session's bound, when its output was budgeted from them (its start
 * is shown: only the part past the bound was not kept); else that the output lost its start, and
 * where the rest may be.
 */
export async function truncationNote(r: WaitedOutput, a: Record<string, unknown>, call: TableCall): Promise<string> {
  const command = r.command;
  const own = command?.log && !(r.since !== undefined && command.startCursor < r.since);
  if (command && own) {
    const ran = await commandsRan(r, a, call);
    if (ran.every((c) => c.log)) {
      const logs = await Promise.all(ran.map((c) => logState(c.id, a.session, call)));
      const bound = ran.flatMap((c, i) => (logs[i]?.truncated ? [{ c, bytes: logs[i]!.totalBytes }] : []));
      if (logs.every((l) => l) && bound.length > 0) {
        const whose = (c: CommandRecord) => (ran.length === 1 ? "the command's log" : `the log of command ${c.id}`);
        return bound
          .map(({ c, bytes }) => `${whose(c)} holds the first ${bytes} bytes of its output (the session's command log bound); the rest was not kept`)
          .join('; ');
      }
    }
  }
  const log = command?.log ? await logState(command.id, a.session, call) : undefined;
  // Its start may be past the scrollback's bound too: the output since the act is where the host keeps most.
  const where = r.since !== undefined ? `read_output since=${r.since} has what the host still holds of it` : 'earlier lines may be in read_scrollback';
  return `output truncated, its start left out: ${where}${command && log ? `; ${logHolds(command, log)}` : ''}`;
}
