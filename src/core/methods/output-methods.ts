import { z } from 'zod';
import { invalidParams, serverError } from '../base/errors';
import { stripAnsi, wholeSequences } from '../base/ansi';
import { anyEvent, whenFirst } from '../base/when-first';
import { ClientLink } from '../io/client-link';
import { FlowTuning } from '../io/flow-window';
import type { Session } from '../session/session';
import { DEFAULT_RING_BYTES } from '../session/ring-buffer';
import type { MethodContext } from './types';
import { byDefault, byDefaultSays, int, nonNegInt, outputResult, waitMs } from './schemas';
import { method } from './spec';
import { requireSession } from './context';
import { DEFAULT_SNAPSHOT_SCROLLBACK } from './screen-methods';
import { MAX_SCROLLBACK_PAGE } from '../base/param-limits';

/** Default and largest `pty/output` read: the whole ring. */
export const MAX_OUTPUT_READ_BYTES = 1024 * 1024;

export const outputMethod = method({
  name: 'pty/output',
  target: 'session',
  scope: 'read',
  summary: 'Raw output after a byte cursor, from the ring buffer; waits up to waitMs for more.',
  params: z.object({
    since: byDefault(0, nonNegInt().optional().describe('Byte cursor to read from (default 0: everything retained).')),
    waitMs: byDefault(0, waitMs().optional().describe('Wait up to this long when nothing new has come yet.')),
    // 0 reads nothing: `endCursor - startCursor` of a command that printed nothing.
    maxBytes: byDefault(MAX_OUTPUT_READ_BYTES, nonNegInt().optional().describe(`Most bytes returned (at most ${MAX_OUTPUT_READ_BYTES}; 0: none).`)),
    strip: byDefault(false, z.boolean().optional().describe('Remove escape sequences.')),
  }),
  result: outputResult,
  async handler(ctx, p) {
    const s = requireSession(ctx);
    const since = p.since ?? 0;
    if (p.waitMs && s.running && since >= s.cursor) await nextOutput(s, p.waitMs, ctx.signal);
    const maxBytes = Math.min(p.maxBytes ?? MAX_OUTPUT_READ_BYTES, MAX_OUTPUT_READ_BYTES);
    const r = s.ring.read(since, maxBytes);
    if (!p.strip) return { data: r.text, cursor: r.cursor, dropped: r.dropped, running: s.running, exitCode: s.exitCode };
    // Nothing will finish a sequence cut at the end once more output follows or the program has ended.
    const whole = wholeSequences(r.text, r.cursor < s.cursor || !s.running);
    return { data: stripAnsi(whole.text), cursor: r.cursor - whole.heldBytes, dropped: r.dropped, running: s.running, exitCode: s.exitCode };
  },
  mcp: {
    tool: 'read_output',
    title: 'Read raw output',
    description:
      'Read the raw output stream after a byte cursor (since; 0 = everything retained), optionally waiting up to waitMs for new output. Pass back the returned cursor as since next time to read incrementally. strip:true removes escape sequences (recommended). dropped > 0 means older output was overwritten before you read it. Output longer than maxChars keeps its head and tail; the line between says which cursors to read for the rest.',
    budget: {
      field: 'data',
      async locate(r, a, call) {
        // The left-out lines as byte cursors: counted in the raw bytes (stripping keeps the newlines).
        const from = ((a.since as number | undefined) ?? 0) + r.dropped;
        const raw = a.strip
          ? ((await call('pty/output', { session: a.session, since: from, maxBytes: Math.max(1, r.cursor - from) })) as { data: string }).data
          : r.data;
        return (e) => {
          const start = from + bytesBeforeLine(raw, e.firstLine);
          const end = from + bytesBeforeLine(raw, e.lastLine + 1);
          return `read them with read_output since=${start} maxBytes=${end - start}${a.strip ? ' strip=true' : ''}`;
        };
      },
    },
    async text(r, a, call) {
      const next = (await call('pty/output', { session: a.session, since: r.cursor, maxBytes: 1 })) as { data: string };
      const more = next.data.length > 0 ? ` More output follows: call read_output with since=${r.cursor}.` : '';
      return `${r.data}\n[cursor ${r.cursor}${r.dropped ? `; ${r.dropped} bytes dropped` : ''}.${more}]`;
    },
  },
  rest: { verb: 'GET', path: '/sessions/:id', from: 'query', respond: (r, route) => ({ id: route.id, ...r }) },
});

export const subscribeMethod = method({
  name: 'pty/subscribe',
  target: 'session',
  scope: 'read',
  summary:
    'Stream pty/output notifications (replayed from since, if given) and a final pty/exit; flow-controlled with flow (acknowledge with pty/ack), or from a fresh picture with snapshot.',
  params: z.object({
    since: byDefaultSays('live only', nonNegInt().optional().describe('Replay retained output from this byte cursor first (default: live only).')),
    flow: byDefault(
      false,
      z
        .boolean()
        .optional()
        .describe(
          "Flow-controlled: the program waits rather than you missing output; acknowledge with pty/ack (default false: lossy). A view token's subscription is lossy all the same.",
        ),
    ),
    window: byDefault(
      FlowTuning.DefaultWindowBytes,
      // A larger window than the ring is the ring's (FlowWindow; socket-pty clamps what is out of range).
      int(1)
        .optional()
        .describe(
          `With flow: most unacknowledged bytes before the PTY waits (default ${FlowTuning.DefaultWindowBytes}; more than the ring size, ${DEFAULT_RING_BYTES}, is the ring size).`,
        ),
    ),
    snapshot: byDefault(
      false,
      z
        .boolean()
        .optional()
        .describe('Answer with a picture of the terminal as of cursor (a resync after dropped); notifications continue from there. Replaces since.'),
    ),
    scrollback: byDefault(
      DEFAULT_SNAPSHOT_SCROLLBACK,
      nonNegInt().max(MAX_SCROLLBACK_PAGE).optional().describe(`With snapshot: scrollback rows in the picture (default ${DEFAULT_SNAPSHOT_SCROLLBACK}).`),
    ),
  }),
  result: z.object({
    cursor: z.number(),
    snapshot: z.string().optional().describe('With snapshot: output that, written to a fresh terminal of the session size, redraws it as of cursor.'),
    flow: z
      .boolean()
      .optional()
      .describe(
        'With flow: whether the subscription is flow-controlled; false when a view token asked (only input and control tokens may make the program wait).',
      ),
  }),
  async handler(ctx, p) {
    const s = requireSession(ctx);
    const link = subscriber(ctx, 'pty/subscribe');
    const window = p.flow ? (p.window ?? FlowTuning.DefaultWindowBytes) : undefined;
    if (!p.snapshot) {
      const sub = link.subscribe(s, { since: p.since, window });
      ctx.afterResponse(() => sub.start());
      return { cursor: sub.startCursor, ...flowAnswer(p.flow, sub.flowControlled) };
    }
    // Subscribed first (a flow-controlled subscriber holds the PTY from now), the picture next,
    // then the notifications from exactly the picture's cursor: nothing missed, nothing twice.
    const sub = link.subscribe(s, { window });
    let picture: { value: string; cursor: number };
    try {
      picture = await s.mirror.queryAt('serialize', p.scrollback ?? DEFAULT_SNAPSHOT_SCROLLBACK);
    } catch (e) {
      link.unsubscribe(s.id); // a subscription that never starts must not hold the PTY
      throw e;
    }
    const { value: snapshot, cursor } = picture;
    // A lossy subscriber whose picture the ring has already outrun learns it from `dropped`.
    sub.rebase(cursor);
    ctx.afterResponse(() => sub.start());
    return { cursor, snapshot, ...flowAnswer(p.flow, sub.flowControlled) };
  },
});

export const ackMethod = method({
  name: 'pty/ack',
  target: 'session',
  scope: 'read',
  summary: 'A flow-controlled subscriber has processed the output before cursor (a pty/output cursor); the program may run on.',
  params: z.object({ cursor: nonNegInt().describe('The cursor of the last pty/output notification processed.') }),
  result: z.object({}),
  handler(ctx, p) {
    // An ack after an unsubscribe or a demotion races nothing: it is simply not needed any more.
    subscriber(ctx, 'pty/ack').subscription(requireSession(ctx).id)?.ack(p.cursor);
    return {};
  },
});

/** `flow` in a subscribe's answer, when the client asked for flow control: whether it got it. */
function flowAnswer(asked: boolean | undefined, got: boolean): { flow?: boolean } {
  return asked ? { flow: got } : {};
}

/** The caller as a connection that can receive notifications. */
function subscriber(ctx: MethodContext, name: string): ClientLink {
  if (!(ctx.caller instanceof ClientLink)) throw serverError(`${name} needs a connection that can receive notifications`);
  return ctx.caller;
}

export const unsubscribeMethod = method({
  name: 'pty/unsubscribe',
  target: 'session-or-host',
  scope: 'read',
  summary: 'Stop the notifications of pty/subscribe (of the session), or with events: true those of pty/events.',
  params: z.object({
    events: byDefault(false, z.boolean().optional().describe('Stop the pty/events notifications (output goes on); control endpoints need no session then.')),
  }),
  result: z.object({}),
  handler(ctx, p) {
    if (p.events) {
      if (ctx.caller instanceof ClientLink) ctx.caller.unsubscribeEvents();
      return {};
    }
    if (!ctx.session) throw invalidParams('pty/unsubscribe needs a session selector (id, name or id prefix) in params.session, or events: true');
    if (ctx.caller instanceof ClientLink) ctx.caller.unsubscribe(ctx.session.id);
    return {};
  },
});

/** UTF-8 bytes of `text` before its line `line` (0-based): after that many newlines, or all of it. */
function bytesBeforeLine(text: string, line: number): number {
  let i = 0;
  for (let n = 0; n < line; n++) {
    const nl = text.indexOf('\n', i);
    if (nl < 0) return Buffer.byteLength(text, 'utf8');
    i = nl + 1;
  }
  return Buffer.byteLength(text.slice(0, i), 'utf8');
}

/** Resolves when new output arrives, the program exits, `ms` pass, or the client leaves. */
async function nextOutput(session: Session, ms: number, signal: AbortSignal): Promise<void> {
  await whenFirst(anyEvent<unknown>(session.onOutput, session.onExit), ms, signal);
}
