import { z } from 'zod';
import { ErrorCode, invalidParams, RpcError, serverError } from '../base/errors';
import { keyToBytes, KeyNameError } from '../io/keys';
import { signalForegroundGroup } from '../process/proc-state';
import { MAX_COLS, MAX_ROWS } from '../session/registry';
import { screenText } from '../mirror/screen-text';
import { send, DEFAULT_SEND_MAX_BYTES } from '../io/send';
import type { Session } from '../session/session';
import { ClientLink } from '../io/client-link';
import type { MethodContext } from './types';
import { stripAnsi } from '../base/ansi';
import { MAX_WAIT_MS, waitFor } from '../io/wait';

/** Most lines one `pty/scrollback` page returns (CONTRACT §3.1). */
export const MAX_SCROLLBACK_PAGE = 10000;
/** Scrollback rows a `pty/snapshot` carries by default (VS Code's own terminal keeps 1000). */
export const DEFAULT_SNAPSHOT_SCROLLBACK = 1000;
/** Default and largest `pty/output` read: the whole ring. */
export const MAX_OUTPUT_READ_BYTES = 1024 * 1024;

/** Who a method is about: one session (implied by a session socket, or named by `session`), or the host. */
export type MethodScope = 'session' | 'host';

/** One entry of the method table: every transport serves it, none re-implements it. */
export interface MethodSpec<S extends z.ZodType = z.ZodType> {
  name: string;
  scope: MethodScope;
  /** One sentence for the protocol reference and tool descriptions. */
  summary: string;
  params: S;
  handler(ctx: MethodContext, params: z.infer<S>): unknown;
}

function method<S extends z.ZodType>(spec: MethodSpec<S>): MethodSpec {
  return spec as unknown as MethodSpec;
}

const int = () => z.number().int();
const nonNegInt = () => int().min(0);
const waitMs = () => nonNegInt().max(MAX_WAIT_MS);
const signalName = z.enum(['SIGINT', 'SIGTERM', 'SIGKILL', 'SIGHUP', 'SIGQUIT', 'SIGTSTP', 'SIGCONT']);

const writeAction = z.object({ text: z.string().optional(), key: z.string().optional() }).strict();
const writeParams = z.object({ action: z.union([writeAction, z.array(writeAction)]) });

const readParams = z
  .object({ top: nonNegInt().optional(), bottom: nonNegInt().optional(), start: nonNegInt().optional(), end: nonNegInt().optional() })
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

function requireSession(ctx: MethodContext): Session {
  if (!ctx.session) throw new RpcError(ErrorCode.InvalidParams, 'Missing session');
  return ctx.session;
}

/** Turns a `pty/write` action (or list of them) into the bytes to write. */
export function actionBytes(action: z.infer<typeof writeParams>['action']): string {
  const list = Array.isArray(action) ? action : [action];
  if (list.length === 0) throw invalidParams('action must not be an empty array');
  let out = '';
  for (const a of list) {
    const hasText = a.text !== undefined;
    const hasKey = a.key !== undefined;
    if (hasText && hasKey) throw invalidParams('An action takes text or key, not both');
    if (!hasText && !hasKey) throw invalidParams('An action needs text or key');
    if (hasText) out += a.text;
    else {
      try {
        out += keyToBytes(a.key as string);
      } catch (e) {
        if (e instanceof KeyNameError) throw invalidParams(e.message, { key: a.key });
        throw e;
      }
    }
  }
  return out;
}

async function screenResult(session: Session, sel: z.infer<typeof readParams>) {
  const snap = await session.mirror.screen();
  return { screen: screenText(snap, sel), cursor: snap.cursor, size: snap.size };
}

/** The one table of methods; the JSON-RPC sockets, WebSocket `/rpc`, REST and MCP all serve it. */
export const METHODS: readonly MethodSpec[] = [
  method({
    name: 'pty/read',
    scope: 'session',
    summary: 'Read the current screen (or its top/bottom N rows, or rows start..end).',
    params: readParams,
    async handler(ctx, p) {
      return screenResult(requireSession(ctx), p);
    },
  }),
  method({
    name: 'pty/write',
    scope: 'session',
    summary: 'Write text and/or named keys; returns the UTF-8 bytes written.',
    params: writeParams,
    handler(ctx, p) {
      const s = requireSession(ctx);
      const bytes = actionBytes(p.action);
      if (!s.running) throw serverError('The session has exited');
      return { written: s.write(bytes, ctx.caller) };
    },
  }),
  method({
    name: 'pty/wait',
    scope: 'session',
    summary: 'Wait until the screen (or output since a cursor) shows a text or regex, goes idle, or the program exits.',
    params: z.object({
      match: z.string().optional(),
      regex: z.string().optional(),
      since: nonNegInt().optional(),
      timeout: waitMs().optional(),
      idleMs: int().min(1).max(MAX_WAIT_MS).optional(),
    }),
    handler(ctx, p) {
      if (p.match !== undefined && p.regex !== undefined) throw invalidParams('match and regex are mutually exclusive');
      return waitFor(requireSession(ctx), p, ctx.signal);
    },
  }),
  method({
    name: 'pty/status',
    scope: 'session',
    summary: 'Whether the program runs, its exit code and pid.',
    params: z.object({}),
    handler(ctx) {
      const s = requireSession(ctx);
      return { running: s.running, exitCode: s.exitCode, pid: s.pid };
    },
  }),
  method({
    name: 'pty/resize',
    scope: 'session',
    summary: 'Resize the terminal.',
    params: z.object({ cols: int().min(2).max(MAX_COLS), rows: int().min(1).max(MAX_ROWS) }),
    handler(ctx, p) {
      requireSession(ctx).resize(p.cols, p.rows);
      return {};
    },
  }),
  method({
    name: 'pty/kill',
    scope: 'session',
    summary: 'End the session (in socket-pty compatible serve, the server too).',
    params: z.object({}),
    async handler(ctx) {
      const s = requireSession(ctx);
      ctx.afterResponse(() => void ctx.services.killSession(s));
      return {};
    },
  }),
  method({
    name: 'pty/info',
    scope: 'session',
    summary: 'The session\'s SessionInfo.',
    params: z.object({}),
    handler(ctx) {
      return ctx.services.describe(requireSession(ctx));
    },
  }),
  method({
    name: 'pty/scrollback',
    scope: 'session',
    summary: 'A page of the retained rows (scrollback then screen), counted back from the newest.',
    params: z.object({ offset: nonNegInt().optional(), lines: int().min(1).max(MAX_SCROLLBACK_PAGE).optional() }),
    async handler(ctx, p) {
      return requireSession(ctx).mirror.query('scrollbackPage', p.offset ?? 0, p.lines ?? 100);
    },
  }),
  method({
    name: 'pty/output',
    scope: 'session',
    summary: 'Raw output after a byte cursor, from the ring buffer; waits up to waitMs for more.',
    params: z.object({
      since: nonNegInt().optional(),
      waitMs: waitMs().optional(),
      maxBytes: int().min(1).optional(),
      strip: z.boolean().optional(),
    }),
    async handler(ctx, p) {
      const s = requireSession(ctx);
      const since = p.since ?? 0;
      if (p.waitMs && s.running && since >= s.cursor) await nextOutput(s, p.waitMs, ctx.signal);
      const r = s.ring.read(since, Math.min(p.maxBytes ?? MAX_OUTPUT_READ_BYTES, MAX_OUTPUT_READ_BYTES));
      return { data: p.strip ? stripAnsi(r.text) : r.text, cursor: r.cursor, dropped: r.dropped, running: s.running, exitCode: s.exitCode };
    },
  }),
  method({
    name: 'pty/snapshot',
    scope: 'session',
    summary: 'Text that redraws the terminal (scrollback, screen, colours, cursor) and the output cursor it corresponds to; subscribe from that cursor to follow on.',
    params: z.object({ scrollback: nonNegInt().max(MAX_SCROLLBACK_PAGE).optional() }),
    async handler(ctx, p) {
      const s = requireSession(ctx);
      // The picture and the cursor describe the same moment: the mirror says which output it reflects.
      const { value: data, cursor } = await s.mirror.queryAt('serialize', p.scrollback ?? DEFAULT_SNAPSHOT_SCROLLBACK);
      const { cols, rows } = s.mirror.size;
      return { data, cursor, cols, rows };
    },
  }),
  method({
    name: 'pty/send',
    scope: 'session',
    summary: 'Type a command (Enter appended unless submit is false) and wait until the program is ready for input again.',
    params: z.object({
      text: z.string(),
      submit: z.boolean().optional(),
      timeout: int().min(1).max(MAX_WAIT_MS).optional(),
      idleMs: int().min(1).max(MAX_WAIT_MS).optional(),
      maxBytes: int().min(1).max(16 * DEFAULT_SEND_MAX_BYTES).optional(),
    }),
    handler(ctx, p) {
      return send(requireSession(ctx), p, ctx.caller, ctx.signal);
    },
  }),
  method({
    name: 'pty/signal',
    scope: 'session',
    summary: 'Send a signal to the terminal\'s foreground process group (Ctrl+C even when the program ignores the key).',
    params: z.object({ signal: signalName }),
    handler(ctx, p) {
      const s = requireSession(ctx);
      if (!s.running) throw serverError('The session has exited');
      const { pgid } = signalForegroundGroup(s.pid, p.signal);
      return { signal: p.signal, pgid };
    },
  }),
  method({
    name: 'pty/subscribe',
    scope: 'session',
    summary: 'Stream pty/output notifications (replayed from since, if given) and a final pty/exit.',
    params: z.object({ since: nonNegInt().optional() }),
    handler(ctx, p) {
      const s = requireSession(ctx);
      const link = ctx.caller;
      if (!(link instanceof ClientLink)) throw serverError('pty/subscribe needs a connection that can receive notifications');
      const sub = link.subscribe(s, p.since);
      ctx.afterResponse(() => sub.pump());
      return { cursor: sub.startCursor };
    },
  }),
  method({
    name: 'pty/unsubscribe',
    scope: 'session',
    summary: 'Stop the notifications of pty/subscribe.',
    params: z.object({}),
    handler(ctx) {
      const s = requireSession(ctx);
      if (ctx.caller instanceof ClientLink) ctx.caller.unsubscribe(s.id);
      return {};
    },
  }),
  method({
    name: 'session/list',
    scope: 'host',
    summary: 'Every session of this host.',
    params: z.object({}),
    handler(ctx) {
      return { sessions: ctx.services.registry.list().map((s) => ctx.services.describe(s)) };
    },
  }),
  method({
    name: 'session/create',
    scope: 'host',
    summary: 'Start a program in a new session (default: the user\'s shell).',
    params: z.object({
      command: z.string().min(1).optional(),
      args: z.array(z.string()).optional(),
      cwd: z.string().min(1).optional(),
      env: z.record(z.string(), z.string()).optional(),
      cols: int().min(2).max(MAX_COLS).optional(),
      rows: int().min(1).max(MAX_ROWS).optional(),
      name: z.string().min(1).max(200).optional(),
      origin: z.enum(['user', 'agent', 'script']).optional(),
      leaseSeconds: z.number().min(0).max(7 * 24 * 3600).optional(),
      workspace: z.string().min(1).optional(),
    }),
    async handler(ctx, p) {
      const session = await ctx.services.createSession(p);
      return ctx.services.describe(session);
    },
  }),
  method({
    name: 'session/keep',
    scope: 'session',
    summary: 'Keep the session running when no client is attached (clears its lease; a detach, as in tmux).',
    params: z.object({ leaseSeconds: z.number().min(0).max(7 * 24 * 3600).optional() }),
    handler(ctx, p) {
      const s = requireSession(ctx);
      s.leaseSeconds = p.leaseSeconds;
      s.addClient().dispose(); // re-evaluates the lease now
      return { id: s.id, leaseSeconds: s.leaseSeconds ?? null };
    },
  }),
  method({
    name: 'session/viewUrl',
    scope: 'session',
    summary: 'A link that opens the session live in a browser (readOnly: a link that cannot type).',
    params: z.object({ readOnly: z.boolean().optional() }),
    handler(ctx, p) {
      const url = ctx.services.viewUrl?.(requireSession(ctx), p.readOnly ?? false);
      if (!url) throw serverError('This host serves no HTTP (started with --no-http)');
      return { url, readOnly: p.readOnly ?? false };
    },
  }),
  method({
    name: 'host/info',
    scope: 'host',
    summary: 'This host\'s discovery record, without the token.',
    params: z.object({}),
    handler(ctx) {
      return ctx.services.hostInfo();
    },
  }),
];

/** The table by name. */
export const METHOD_INDEX: ReadonlyMap<string, MethodSpec> = new Map(METHODS.map((m) => [m.name, m]));

/** Resolves when new output arrives, the program exits, `ms` pass, or the client leaves. */
function nextOutput(session: Session, ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      out.dispose();
      exit.dispose();
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    const out = session.onOutput(done);
    const exit = session.onExit(done);
    signal.addEventListener('abort', done);
  });
}

/** Validates raw params against a method's schema; -32602 with the first problem otherwise. */
export function parseParams(spec: MethodSpec, raw: unknown): unknown {
  const r = spec.params.safeParse(raw ?? {});
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  const where = issue.path.length ? `${issue.path.join('.')}: ` : '';
  throw invalidParams(`Invalid params for ${spec.name}: ${where}${issue.message}`);
}
