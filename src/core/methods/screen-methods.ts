import { z } from 'zod';
import { screenText } from '../mirror/screen-text';
import { DEFAULT_WAIT_TIMEOUT_MS, waitFor, waitReason } from '../io/wait';
import { MAX_SCROLLBACK_PAGE, MAX_WAIT_MS } from '../base/param-limits';
import { byDefault, cursorPos, int, millis, nonNegInt, screenSize, snapshotResult } from './schemas';
import { method } from './spec';
import { requireSession } from './context';

/** Scrollback rows a `pty/snapshot` carries by default (VS Code's own terminal keeps 1000). */
export const DEFAULT_SNAPSHOT_SCROLLBACK = 1000;
/** Lines one `pty/scrollback` page returns when the caller does not say: a screenful or three. */
export const DEFAULT_SCROLLBACK_PAGE = 100;

// Out-of-range rows, negative ones included, are clamped to the screen, as socket-pty's pty/read does.
const readParams = z
  .object({
    top: int().optional().describe('Only the first N rows.'),
    bottom: int().optional().describe('Only the last N rows.'),
    start: int().optional().describe('Rows start..end (1-based, inclusive; give both; out-of-range rows are clamped to the screen).'),
    end: int().optional(),
  })
  .superRefine((p, ctx) => {
    const problem = rowSelectionProblem(p);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });

function rowSelectionProblem(p: { top?: number; bottom?: number; start?: number; end?: number }): string | undefined {
  const hasTB = p.top !== undefined || p.bottom !== undefined;
  const hasSE = p.start !== undefined || p.end !== undefined;
  if (p.top !== undefined && p.bottom !== undefined) return 'top and bottom are mutually exclusive';
  if (hasTB && hasSE) return 'top/bottom and start/end cannot be combined';
  if ((p.start === undefined) !== (p.end === undefined)) return 'start and end must be given together';
  if (p.start !== undefined && p.end !== undefined && p.start > p.end) return 'start must not be greater than end';
  return undefined;
}

/** The screen row (1-based) a `pty/read` selection starts at, on a screen of `rows` rows. */
function firstRowOf(sel: { top?: number; bottom?: number; start?: number }, rows: number): number {
  if (sel.bottom !== undefined) return rows - Math.min(Math.max(sel.bottom, 0), rows) + 1;
  if (sel.start !== undefined) return Math.max(1, sel.start);
  return 1;
}

const screenResult = z.object({ screen: z.string(), cursor: cursorPos, size: screenSize });

export const readMethod = method({
  name: 'pty/read',
  target: 'session',
  scope: 'read',
  summary: 'Read the current screen (or its top/bottom N rows, or rows start..end).',
  params: readParams,
  result: screenResult,
  async handler(ctx, p) {
    const snap = await requireSession(ctx).mirror.screen();
    return { screen: screenText(snap, p), cursor: snap.cursor, size: snap.size };
  },
  mcp: {
    tool: 'read_screen',
    title: 'Read the screen',
    app: 'shows',
    description:
      'Read what the terminal shows now, exactly as the user sees it (text only), with the cursor position. Optionally only the top or bottom N rows, or rows start..end (1-based). A screen longer than maxChars keeps its first and last rows; the line between says which rows to read for the rest.',
    budget: {
      field: 'screen',
      locate: (r, a) => {
        const first = firstRowOf(a, r.size.rows);
        return (e) => `read them with read_screen start=${first + e.firstLine} end=${first + e.lastLine}`;
      },
    },
    text: (r) => `${r.screen}\n[cursor row ${r.cursor.row}, col ${r.cursor.col}; size ${r.size.cols}x${r.size.rows}]`,
  },
});

export const waitMethod = method({
  name: 'pty/wait',
  target: 'session',
  scope: 'read',
  summary: 'Wait until the screen (or output since a cursor) shows a text or regex, goes idle, or the program exits.',
  params: z
    .object({
      match: z.string().optional().describe('Text to wait for.'),
      regex: z.string().optional().describe('JavaScript regular expression source (instead of match).'),
      since: nonNegInt().optional().describe('Match the output after this byte cursor (escapes removed) instead of the screen.'),
      // socket-pty sets no maximum: a longer wait is a day's (the caller asks again), not an error.
      timeout: byDefault(
        DEFAULT_WAIT_TIMEOUT_MS,
        millis().optional().describe(`Milliseconds (default ${DEFAULT_WAIT_TIMEOUT_MS}; more than a day waits a day).`),
      ),
      idleMs: millis(1).max(MAX_WAIT_MS).optional().describe('Return once the output has been quiet this long.'),
    })
    .superRefine((p, ctx) => {
      if (p.match !== undefined && p.regex !== undefined) ctx.addIssue({ code: 'custom', message: 'match and regex are mutually exclusive' });
    }),
  result: z.object({
    matched: z.boolean(),
    screen: z.string(),
    cursor: cursorPos,
    size: screenSize,
    waitedMs: z.number(),
    reason: waitReason,
  }),
  handler(ctx, p) {
    const timeout = Math.min(p.timeout ?? DEFAULT_WAIT_TIMEOUT_MS, MAX_WAIT_MS);
    return waitFor(requireSession(ctx), { ...p, timeout }, ctx.signal, ctx.caller.regexBudgets);
  },
  mcp: {
    tool: 'wait_for',
    title: 'Wait for text',
    app: 'shows',
    description:
      'Wait until the screen shows a text (match) or regex, the output goes quiet for idleMs, the program exits, or timeout passes. With since (a byte cursor from read_output) it matches the output after that point instead of the screen. reason says which happened: matched, idle, session_exit or timeout.',
    text: (r) => `[${r.reason} after ${r.waitedMs} ms]\n${r.screen}`,
  },
});

export const scrollbackMethod = method({
  name: 'pty/scrollback',
  target: 'session',
  scope: 'read',
  summary: 'A page of the retained rows (scrollback then screen), counted back from the newest.',
  params: z.object({
    offset: byDefault(0, nonNegInt().optional().describe('Rows back from the newest (default 0).')),
    lines: byDefault(DEFAULT_SCROLLBACK_PAGE, int(1).max(MAX_SCROLLBACK_PAGE).optional().describe(`Rows in the page (default ${DEFAULT_SCROLLBACK_PAGE}).`)),
  }),
  result: z.object({ text: z.string(), firstLine: z.number(), lastLine: z.number(), totalLines: z.number() }),
  async handler(ctx, p) {
    return requireSession(ctx).mirror.scrollbackPage(p.offset ?? 0, p.lines ?? DEFAULT_SCROLLBACK_PAGE);
  },
  mcp: {
    tool: 'read_scrollback',
    title: 'Read scrollback',
    description:
      "Read a page of the terminal's history (scrollback followed by the screen), counted back from the newest row: offset 0 is the latest page. Use it for output that scrolled away or was truncated. firstLine/lastLine/totalLines tell where you are; ask for a larger offset to go further back. A page longer than maxChars keeps its head and tail; the line between says which offset and lines hold the rest.",
    budget: {
      field: 'text',
      // Text line i is row firstLine + i; the page ending at row L is offset totalLines - L.
      locate: (r) => (e) => `read them with read_scrollback offset=${r.totalLines - (r.firstLine + e.lastLine)} lines=${e.lines}`,
    },
    text: (r) => {
      const more = r.firstLine > 1 ? ` Older rows: offset ${r.totalLines - r.firstLine + 1}.` : '';
      return `${r.text}\n[rows ${r.firstLine}-${r.lastLine} of ${r.totalLines}.${more}]`;
    },
  },
});

export const snapshotMethod = method({
  name: 'pty/snapshot',
  target: 'session',
  scope: 'read',
  summary:
    'Text that redraws the terminal (scrollback, screen, colours, cursor) and the output cursor it corresponds to; subscribe from that cursor to follow on.',
  params: z.object({
    scrollback: byDefault(
      DEFAULT_SNAPSHOT_SCROLLBACK,
      nonNegInt().max(MAX_SCROLLBACK_PAGE).optional().describe(`Scrollback rows to include (default ${DEFAULT_SNAPSHOT_SCROLLBACK}).`),
    ),
  }),
  result: snapshotResult,
  async handler(ctx, p) {
    const s = requireSession(ctx);
    // The picture and the cursor describe the same moment: the mirror says which output it reflects.
    const { value: data, cursor } = await s.mirror.queryAt('serialize', p.scrollback ?? DEFAULT_SNAPSHOT_SCROLLBACK);
    const { cols, rows } = s.mirror.size;
    return { data, cursor, cols, rows };
  },
  mcp: {
    tool: 'terminal_snapshot',
    title: 'Terminal snapshot (for the terminal view)',
    description:
      'For the terminal view of MCP Apps: text with escape sequences that redraws the terminal (scrollback, screen, colours, cursor) and the output cursor it corresponds to; follow on with read_output since that cursor. To read the screen, use read_screen instead.',
    app: 'feeds',
    // A model gets no escape sequences: the picture is in the structured result only.
    text: (r) => `Snapshot of ${r.cols}x${r.rows} at output cursor ${r.cursor} (${r.data.length} characters, in the structured result).`,
  },
});
