import { z } from 'zod';
import type { CommandRecord } from '../commands/command-tracker';
import { MAX_COMMAND_RECORDS } from '../base/param-limits';
import { invalidParams, serverError } from '../base/errors';
import { stripAnsi, unfinishedEscapeAt, wholeSequences } from '../base/ansi';
import { SequenceEnd } from '../base/escape-sequences';
import { leadingContinuationBytes, utf8ReadEnd } from '../base/utf8';
import { budgetOfLog, LogBudgetTuning } from '../commands/command-log-budget';
import { byDefault, commandRecord, int, nonNegInt } from './schemas';
import { method } from './spec';
import { requireSession } from './context';
import { isMcpCall } from '../session/input/input-source';

/** Commands `pty/commands` returns when the caller does not say (docs/protocol.md#ptycommands). */
export const DEFAULT_COMMANDS_LIMIT = 20;

export const commandsMethod = method({
  name: 'pty/commands',
  target: 'session',
  scope: 'read',
  summary:
    "The commands the shell ran, oldest first, from its shell integration: command line, cwd, exit code, and the output cursors of each command's own output.",
  params: z.object({
    limit: byDefault(
      DEFAULT_COMMANDS_LIMIT,
      int(1)
        .max(MAX_COMMAND_RECORDS)
        .optional()
        .describe(`The newest this many commands (default ${DEFAULT_COMMANDS_LIMIT}; the session keeps ${MAX_COMMAND_RECORDS}).`),
    ),
  }),
  result: z.object({
    integration: z.boolean().describe('Whether the shell reports its commands; without it the list stays empty.'),
    commands: z.array(commandRecord),
  }),
  handler(ctx, p) {
    const session = requireSession(ctx);
    return { integration: session.integration, commands: session.commands.list(p.limit ?? DEFAULT_COMMANDS_LIMIT) };
  },
  mcp: {
    tool: 'list_commands',
    title: 'List the commands run',
    description:
      "List the commands the shell in a session ran (newest last): each with its command line, working directory, exit code (null while it runs), duration, and startCursor/endCursor. To read one command's whole output, call read_command_output with its id (page by page, from the log the session keeps), or read_output with since=startCursor (and maxBytes=endCursor-startCursor) while the ring still holds it. Needs shell integration (bash, zsh or fish started by Shared PTY); integration=false means the shell does not report commands.",
    text: (r) => {
      if (!r.integration) return 'This session has no shell integration: its commands are not known. Use read_screen or read_output instead.';
      if (r.commands.length === 0) return 'No command has run yet.';
      return r.commands.map(commandLine).join('\n');
    },
  },
  rest: { verb: 'GET', path: '/sessions/:id/commands', from: 'query' },
});

/** Bytes one `pty/commandOutput` page holds by default, and at most. */
export const DEFAULT_COMMAND_PAGE_BYTES = 64 * 1024;
export const MAX_COMMAND_PAGE_BYTES = 1024 * 1024;
/** A smaller page for an agent: a model's context is precious. */
const MCP_COMMAND_PAGE_BYTES = 16 * 1024;

export const commandOutputMethod = method({
  name: 'pty/commandOutput',
  target: 'session',
  scope: 'read',
  summary:
    "A page of one command's whole output, from its log (shell integration): pass nextOffset back as offset for the next page; eof once the command has ended and all is read.",
  params: z.object({
    id: int(1).describe("The command's id (CommandRecord.id, from pty/commands or pty/send)."),
    offset: byDefault(0, nonNegInt().optional().describe('Byte offset in the log to read from (default 0).')),
    maxBytes: byDefault(
      DEFAULT_COMMAND_PAGE_BYTES,
      int(1).max(MAX_COMMAND_PAGE_BYTES).optional().describe(`Most bytes in the page (default ${DEFAULT_COMMAND_PAGE_BYTES}); a character is never split.`),
    ),
    strip: byDefault(false, z.boolean().optional().describe('Remove escape sequences from the page.')),
    // Any size: MCP's send asks for what is left of its own budget once its note line is counted.
    maxChars: int(1)
      .optional()
      .describe(
        'Instead of a page: the whole output within this many characters, escape sequences removed: data holds its first lines, tail its last lines, elided what lies between (counted exactly, and where in the log it is); offset and maxBytes are not taken.',
      ),
  }),
  result: z.object({
    id: z.number(),
    data: z.string().describe('The page.'),
    offset: z.number().describe('Where the page starts (the offset asked for, moved off the middle of a character).'),
    nextOffset: z.number().describe('Where the next page starts.'),
    totalBytes: z.number().describe("The log's length so far."),
    eof: z.boolean().describe('The command has ended and nextOffset is the end of its log.'),
    running: z.boolean().describe('The command still runs: its log grows.'),
    truncated: z.boolean().describe("The log stopped growing at the session's log budget: it holds the first totalBytes bytes of the output."),
    log: z.string().describe('The log file.'),
    tail: z.string().optional().describe("With maxChars: the last lines of the output ('' when all of it is in data)."),
    totalChars: z.number().optional().describe('With maxChars: characters of the whole output so far, escape sequences removed.'),
    totalLines: z.number().optional().describe('With maxChars: its lines.'),
    elided: z
      .object({
        chars: z.number(),
        lines: z.number().describe('Lines left out (a line cut in part counts).'),
        firstLine: z.number().describe('The first line left out, 0-based.'),
        lastLine: z.number(),
        offset: z.number().describe("The log's bytes from offset to end hold what was left out (read them with offset)."),
        end: z.number(),
      })
      .optional()
      .describe('With maxChars, when the output is longer: what lies between data and tail.'),
  }),
  async handler(ctx, p) {
    const session = requireSession(ctx);
    const record = session.commands.get(p.id);
    if (!record) throw invalidParams(`No command ${p.id} in this session (the session's list of commands gives their ids)`, { id: p.id });
    const log = session.commandLogs?.get(p.id);
    if (!log) {
      if (!session.commandLogs) throw serverError('This session keeps no command logs', { id: p.id });
      const ring =
        record.endCursor === null
          ? ''
          : ` ${isMcpCall(ctx.caller) ? 'read_output' : 'pty/output'} since=${record.startCursor} maxBytes=${record.endCursor - record.startCursor} may still hold its end.`;
      const why = session.commandLogs.whyUnlogged(p.id);
      throw serverError(
        why
          ? `Command ${p.id} has no log: ${why}.${ring}`
          : `The log of command ${p.id} was dropped: the session keeps ${session.commandLogs.budget} bytes of command logs, the newest first.${ring}`,
        { id: p.id },
      );
    }
    if (p.maxChars !== undefined) {
      let b;
      try {
        b = await budgetOfLog(log, p.maxChars);
      } catch (e) {
        throw serverError(`The log of command ${p.id} cannot be read: ${(e as Error).message}`, { id: p.id });
      }
      const running = !log.finished;
      const next = b.elided ? b.elided.offset : b.totalBytes;
      const page = {
        id: p.id,
        data: b.head,
        offset: 0,
        nextOffset: next,
        totalBytes: b.totalBytes,
        eof: !running && next >= log.size,
        running,
        truncated: log.truncated,
        log: log.path,
      };
      return { ...page, tail: b.tail, totalChars: b.totalChars, totalLines: b.totalLines, ...(b.elided ? { elided: b.elided } : {}) };
    }
    const maxBytes = p.maxBytes ?? DEFAULT_COMMAND_PAGE_BYTES;
    let offset = Math.min(p.offset ?? 0, log.size);
    let bytes: Buffer;
    try {
      // A few bytes more than the page: up to 3 of a character the offset fell inside (skipped
      // below), and up to 3 to end the page on a character boundary.
      bytes = await log.read(offset, maxBytes + 6);
    } catch (e) {
      throw serverError(`The log of command ${p.id} cannot be read: ${(e as Error).message}`, { id: p.id });
    }
    const skip = offset > 0 ? leadingContinuationBytes(bytes) : 0;
    offset += skip;
    bytes = bytes.subarray(skip);
    // A page smaller than the character at its start still carries that character, so paging moves on.
    const cut = utf8ReadEnd(bytes, maxBytes);
    const running = !log.finished;
    // Stripped, a page ends before an escape sequence it would cut in two (ansi.ts wholeSequences).
    const text = bytes.subarray(0, cut).toString('utf8');
    const settled = offset + cut < log.size || !running;
    const whole = p.strip ? wholeSequences(text, settled) : undefined;
    const page = whole ? whole.text : text;
    let nextOffset = offset + cut - (whole?.heldBytes ?? 0);
    // A sequence longer than the page (an inline image's OSC) is skipped whole, so its second half
    // never reads as text on the next page; one still open where the log ends is held while the
    // command runs (the rest may come), and skipped once it has ended (it was never text).
    if (p.strip && settled && unfinishedEscapeAt(text) === 0) {
      const seq = await sequenceEndInLog(log, offset).catch((e: Error) => {
        throw serverError(`The log of command ${p.id} cannot be read: ${e.message}`, { id: p.id });
      });
      if (seq.end !== undefined) nextOffset = seq.end;
      else if (seq.toEnd) nextOffset = running ? offset : seq.toEnd;
    }
    return {
      id: p.id,
      data: p.strip ? stripAnsi(page) : page,
      offset,
      nextOffset,
      totalBytes: log.size,
      eof: !running && nextOffset >= log.size,
      running,
      truncated: log.truncated,
      log: log.path,
    };
  },
  mcp: {
    tool: 'read_command_output',
    title: "Read a command's whole output",
    description:
      "Read one command's whole output, page by page, from the log the session keeps of it (shells with integration; ids from list_commands or send's command). Pass nextOffset back as offset for the next page until eof. strip:true (recommended) removes escape sequences. Use it when a send's or read_output's output was cut short and the part left out is no longer in read_output.",
    // The whole output within a budget is what `send` gives an agent; this tool pages.
    omit: ['maxChars'],
    defaults: { maxBytes: MCP_COMMAND_PAGE_BYTES, strip: true },
    text: (r) => {
      const where = `bytes ${r.offset}-${r.nextOffset} of ${r.totalBytes}`;
      const next = r.eof
        ? 'end of the output'
        : r.running && r.nextOffset >= r.totalBytes
          ? 'the command still runs: call again later for more'
          : `next page: offset=${r.nextOffset}`;
      return `${r.data}\n[command #${r.id}, ${where}; ${next}${r.truncated ? '; the log keeps only the start of this output (log budget)' : ''}]`;
    },
  },
});

/** One command as a line a model reads: id, status, duration, cwd, the command, its cursors. */
function commandLine(c: CommandRecord): string {
  const status = c.exitCode === null ? (c.endCursor === null ? 'running' : 'ended') : `exit ${c.exitCode}`;
  const took = c.durationMs === null ? '' : ` ${c.durationMs}ms`;
  const cursors = `output ${c.startCursor}..${c.endCursor ?? ''}`;
  return `#${c.id} [${status}${took}] ${c.cwd}$ ${c.command.replace(/\n/g, '\n    ')}  (${cursors})`;
}

/**
 * Where the escape sequence that opens at `offset` of a command's log ends (`end`, the offset past
 * it), read ahead a piece at a time up to LogBudgetTuning.MaxScanBytes; `toEnd` (the log's size)
 * when it is still open where the log ends.
 */
async function sequenceEndInLog(
  log: { size: number; read(offset: number, length: number): Promise<Buffer> },
  offset: number,
): Promise<{ end?: number; toEnd?: number }> {
  const scan = new SequenceEnd();
  const size = log.size;
  const limit = Math.min(size, offset + LogBudgetTuning.MaxScanBytes);
  let at = offset;
  while (at < limit && scan.end === undefined) {
    const piece = await log.read(at, Math.min(LogBudgetTuning.ReadBytes, limit - at));
    if (piece.length === 0) break;
    scan.feed(piece);
    at += piece.length;
  }
  if (scan.end !== undefined) return { end: offset + scan.end };
  return at >= size ? { toEnd: size } : {};
}
