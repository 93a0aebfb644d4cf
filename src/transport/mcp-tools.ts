import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { toRpcError } from '../core/base/errors';
import { VERSION } from '../version';

/** How an MCP server reaches sessions: in the host itself, or through the sockets of every host (stdio). */
export interface ToolBackend {
  /** Calls a method of the table; session-scoped methods carry `session` in params. */
  call(method: string, params: Record<string, unknown>): Promise<unknown>;
}

/** Bytes of raw output `read_output` returns by default: a model's context is precious. */
export const MCP_DEFAULT_OUTPUT_BYTES = 16 * 1024;
/** Bytes of rendered output `send` returns by default, as `pty/send` (the rest stays in the scrollback). */
export const MCP_DEFAULT_SEND_BYTES = 64 * 1024;

const session = z.string().min(1).describe('Session selector: its id, exact name, or a unique id prefix (see list_sessions).');
const cursor = z.object({ row: z.number(), col: z.number() });
const size = z.object({ cols: z.number(), rows: z.number() });
const sessionInfo = z.object({
  id: z.string(),
  name: z.string(),
  pid: z.number(),
  command: z.string(),
  args: z.array(z.string()),
  cwd: z.string(),
  workspace: z.string().nullable(),
  cols: z.number(),
  rows: z.number(),
  createdAt: z.string(),
  running: z.boolean(),
  exitCode: z.number().nullable(),
  origin: z.enum(['user', 'agent', 'script']),
  address: z.string(),
  tcp: z.string().optional(),
  stream: z.string().optional(),
  clients: z.number(),
});
const status = z.union([
  z.object({ kind: z.literal('running') }),
  z.object({ kind: z.literal('exited'), exitCode: z.number().nullable(), signal: z.string().nullable() }),
]);

type Shape = z.ZodRawShape;
interface ToolSpec {
  name: string;
  title: string;
  description: string;
  input: Shape;
  output: Shape;
  run(backend: ToolBackend, args: Record<string, unknown>): Promise<{ data: Record<string, unknown>; text: string }>;
}

const TOOLS: ToolSpec[] = [
  {
    name: 'list_sessions',
    title: 'List terminal sessions',
    description:
      'List every shared terminal session (the user\'s editor terminals and those opened by agents or scripts): id, name, command, size, running state. Start here to find the session to work in.',
    input: {},
    output: { sessions: z.array(sessionInfo) },
    async run(b) {
      const r = (await b.call('session/list', {})) as { sessions: z.infer<typeof sessionInfo>[] };
      const lines = r.sessions.map(
        (s) => `${s.id}  ${s.name}  ${s.running ? 'running' : `exited(${s.exitCode})`}  ${s.cols}x${s.rows}  ${s.origin}  ${[s.command, ...s.args].join(' ')}  cwd=${s.cwd}`,
      );
      return { data: r, text: lines.length ? lines.join('\n') : 'No sessions. Open one with open_session.' };
    },
  },
  {
    name: 'open_session',
    title: 'Open a terminal session',
    description:
      'Start a program (default: the user\'s shell) in a new shared terminal. The user sees it as an editor terminal and can type into it too. Returns the session; use its id with the other tools.',
    input: {
      command: z.string().optional().describe('Program to run; default the user\'s shell.'),
      args: z.array(z.string()).optional(),
      cwd: z.string().optional().describe('Working directory; default the workspace or home.'),
      env: z.record(z.string(), z.string()).optional(),
      cols: z.number().int().min(2).max(1000).optional(),
      rows: z.number().int().min(1).max(500).optional(),
      name: z.string().optional().describe('A name to find the session by.'),
    },
    output: sessionInfo.shape,
    async run(b, a) {
      const s = (await b.call('session/create', { ...a, origin: 'agent' })) as z.infer<typeof sessionInfo>;
      return { data: s, text: `Opened session ${s.id} (${s.name}): ${[s.command, ...s.args].join(' ')} in ${s.cwd}, ${s.cols}x${s.rows}.` };
    },
  },
  {
    name: 'send',
    title: 'Run a command',
    description:
      'Type text into the terminal and press Enter (submit:false to type without Enter), then wait until the program is ready for input again, and return what it printed as rendered on screen. Use this for shell commands and REPL lines. waitReason says why it returned: stdin_read = the program waits for input (done); inferred_idle = no output for idleMs (state unknown); timeout = still running (use read_screen / wait_for later, or signal SIGINT); session_exit = the program ended. If truncated, read_scrollback has the rest. For keys like Ctrl+C, arrows or q use send_keys instead.',
    input: {
      session,
      text: z.string().describe('The text to type.'),
      submit: z.boolean().optional().describe('Press Enter after the text (default true).'),
      timeout: z.number().int().min(1).max(86400000).optional().describe('Milliseconds to wait at most (default 30000).'),
      idleMs: z.number().int().min(1).optional().describe('Silence that counts as ready where the program state cannot be read (default 500).'),
      maxBytes: z.number().int().min(1).max(1048576).optional().describe(`Most output bytes returned (default ${MCP_DEFAULT_SEND_BYTES}; the end is kept).`),
    },
    output: { output: z.string(), waitReason: z.enum(['stdin_read', 'inferred_idle', 'timeout', 'session_exit']), status, truncated: z.boolean(), waitedMs: z.number() },
    async run(b, a) {
      const r = (await b.call('pty/send', { maxBytes: MCP_DEFAULT_SEND_BYTES, ...a })) as { output: string; waitReason: string; truncated: boolean; status: { kind: string; exitCode?: number } };
      const tail = [`[waitReason: ${r.waitReason}`, r.status.kind === 'exited' ? `exited with ${r.status.exitCode}` : 'running'];
      if (r.truncated) tail.push('output truncated: earlier lines are in read_scrollback');
      return { data: r, text: `${r.output}\n${tail.join('; ')}]` };
    },
  },
  {
    name: 'send_keys',
    title: 'Press keys',
    description:
      'Press named keys in order, without waiting: Enter, Tab, Escape, Backspace, ArrowUp/Down/Left/Right, Home, End, PageUp, PageDown, F1..F12, combinations such as Ctrl+C, Ctrl+D, Alt+X, Shift+Tab, or any single character such as "q" or ":" (for pagers, editors and TUIs). Then use read_screen or wait_for to see the effect.',
    input: { session, keys: z.array(z.string()).min(1).describe('Key names, case-sensitive.') },
    output: { written: z.number() },
    async run(b, a) {
      const keys = a.keys as string[];
      const r = (await b.call('pty/write', { session: a.session, action: keys.map((key) => ({ key })) })) as { written: number };
      return { data: r, text: `Pressed ${keys.join(' ')} (${r.written} bytes).` };
    },
  },
  {
    name: 'read_screen',
    title: 'Read the screen',
    description:
      'Read what the terminal shows now, exactly as the user sees it (text only), with the cursor position. Optionally only the top or bottom N rows, or rows start..end (1-based).',
    input: {
      session,
      top: z.number().int().min(0).optional(),
      bottom: z.number().int().min(0).optional(),
      start: z.number().int().min(1).optional(),
      end: z.number().int().min(1).optional(),
    },
    output: { screen: z.string(), cursor, size },
    async run(b, a) {
      const r = (await b.call('pty/read', a)) as { screen: string; cursor: { row: number; col: number }; size: { cols: number; rows: number } };
      return { data: r, text: `${r.screen}[cursor row ${r.cursor.row}, col ${r.cursor.col}; size ${r.size.cols}x${r.size.rows}]` };
    },
  },
  {
    name: 'read_scrollback',
    title: 'Read scrollback',
    description:
      'Read a page of the terminal\'s history (scrollback followed by the screen), counted back from the newest row: offset 0 is the latest page. Use it for output that scrolled away or was truncated. firstLine/lastLine/totalLines tell where you are; ask for a larger offset to go further back.',
    input: {
      session,
      offset: z.number().int().min(0).optional().describe('Rows back from the newest (default 0).'),
      lines: z.number().int().min(1).max(10000).optional().describe('Rows in the page (default 100).'),
    },
    output: { text: z.string(), firstLine: z.number(), lastLine: z.number(), totalLines: z.number() },
    async run(b, a) {
      const r = (await b.call('pty/scrollback', a)) as { text: string; firstLine: number; lastLine: number; totalLines: number };
      const more = r.firstLine > 1 ? ` Older rows: offset ${r.totalLines - r.firstLine + 1}.` : '';
      return { data: r, text: `${r.text}\n[rows ${r.firstLine}-${r.lastLine} of ${r.totalLines}.${more}]` };
    },
  },
  {
    name: 'read_output',
    title: 'Read raw output',
    description:
      'Read the raw output stream after a byte cursor (since; 0 = everything retained), optionally waiting up to waitMs for new output. Pass back the returned cursor as since next time to read incrementally. strip:true removes escape sequences (recommended). dropped > 0 means older output was overwritten before you read it.',
    input: {
      session,
      since: z.number().int().min(0).optional(),
      waitMs: z.number().int().min(0).max(86400000).optional(),
      maxBytes: z.number().int().min(1).max(1048576).optional().describe(`Default ${MCP_DEFAULT_OUTPUT_BYTES}.`),
      strip: z.boolean().optional(),
    },
    output: { data: z.string(), cursor: z.number(), dropped: z.number(), running: z.boolean(), exitCode: z.number().nullable() },
    async run(b, a) {
      const r = (await b.call('pty/output', { maxBytes: MCP_DEFAULT_OUTPUT_BYTES, ...a })) as { data: string; cursor: number; dropped: number; running: boolean; exitCode: number | null };
      const info = await b.call('pty/output', { session: a.session, since: r.cursor, maxBytes: 1 }) as { data: string };
      const more = info.data.length > 0 ? ` More output follows: call read_output with since=${r.cursor}.` : '';
      return { data: r, text: `${r.data}\n[cursor ${r.cursor}${r.dropped ? `; ${r.dropped} bytes dropped` : ''}.${more}]` };
    },
  },
  {
    name: 'wait_for',
    title: 'Wait for text',
    description:
      'Wait until the screen shows a text (match) or regex, the output goes quiet for idleMs, the program exits, or timeout passes. With since (a byte cursor from read_output) it matches the output after that point instead of the screen. reason says which happened: matched, idle, session_exit or timeout.',
    input: {
      session,
      match: z.string().optional(),
      regex: z.string().optional().describe('JavaScript regular expression source.'),
      since: z.number().int().min(0).optional(),
      timeout: z.number().int().min(0).max(86400000).optional().describe('Milliseconds (default 10000).'),
      idleMs: z.number().int().min(1).optional(),
    },
    output: { matched: z.boolean(), screen: z.string(), cursor, size, waitedMs: z.number(), reason: z.enum(['matched', 'timeout', 'idle', 'session_exit']) },
    async run(b, a) {
      const r = (await b.call('pty/wait', a)) as { matched: boolean; screen: string; reason: string; waitedMs: number };
      return { data: r, text: `[${r.reason} after ${r.waitedMs} ms]\n${r.screen}` };
    },
  },
  {
    name: 'resize',
    title: 'Resize the terminal',
    description: 'Change the terminal size in columns and rows.',
    input: { session, cols: z.number().int().min(2).max(1000), rows: z.number().int().min(1).max(500) },
    output: { cols: z.number(), rows: z.number() },
    async run(b, a) {
      await b.call('pty/resize', a);
      return { data: { cols: a.cols, rows: a.rows }, text: `Resized to ${a.cols}x${a.rows}.` };
    },
  },
  {
    name: 'signal',
    title: 'Signal the foreground program',
    description:
      'Send a signal to the program in the foreground of the terminal: SIGINT is Ctrl+C (stop a running command), SIGTSTP suspends, SIGCONT resumes, SIGTERM/SIGKILL end it. Works even when the program ignores the Ctrl+C key.',
    input: { session, signal: z.enum(['SIGINT', 'SIGTERM', 'SIGKILL', 'SIGHUP', 'SIGQUIT', 'SIGTSTP', 'SIGCONT']) },
    output: { signal: z.string(), pgid: z.number() },
    async run(b, a) {
      const r = (await b.call('pty/signal', a)) as { signal: string; pgid: number };
      return { data: r, text: `Sent ${r.signal} to process group ${r.pgid}.` };
    },
  },
  {
    name: 'close_session',
    title: 'Close a session',
    description: 'End the session and its program (the editor terminal closes too). Do not close the user\'s own terminals unless asked.',
    input: { session },
    output: { closed: z.string() },
    async run(b, a) {
      await b.call('pty/kill', a);
      return { data: { closed: String(a.session) }, text: `Closed session ${a.session}.` };
    },
  },
];

/** The names of the MCP tools (CONTRACT §5). */
export const TOOL_NAMES = TOOLS.map((t) => t.name);

/** An MCP server exposing the tools over `backend`; failures come back as tool errors (isError). */
export function createMcpServer(backend: ToolBackend): McpServer {
  const server = new McpServer({ name: 'shared-pty', version: VERSION }, { capabilities: { tools: {} } });
  for (const tool of TOOLS) {
    server.registerTool(
      tool.name,
      { title: tool.title, description: tool.description, inputSchema: tool.input, outputSchema: tool.output },
      async (args: Record<string, unknown>) => {
        try {
          const { data, text } = await tool.run(backend, args ?? {});
          return { content: [{ type: 'text' as const, text }], structuredContent: data };
        } catch (e) {
          const err = toRpcError(e);
          return { isError: true, content: [{ type: 'text' as const, text: `Error ${err.code}: ${err.message}` }] };
        }
      },
    );
  }
  return server;
}
