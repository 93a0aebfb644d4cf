import { z } from 'zod';
import { ClientLink } from '../io/client-link';
import { waitForEvent } from '../io/wait-event';
import { EVENT_TYPES, hostEvent } from '../session/events/session-events';
import { byDefault, byDefaultSays, nonNegInt, waitMs } from './schemas';
import { method } from './spec';
import { DEFAULT_WAIT_EVENT_TIMEOUT_MS } from '../base/param-limits';
import { requireSession } from './context';

/** How long `wait_event` waits by default: as long as a send (an agent waits for a command or the user). */

export const eventsMethod = method({
  name: 'pty/events',
  target: 'session-or-host',
  scope: 'read',
  summary:
    'Stream pty/event notifications (input_wait, secret_input, bell, title, resize, exit, command_started, command_finished) of the session, or of every session when a control call names none; since replays retained events first.',
  params: z.object({
    since: byDefaultSays('live only', nonNegInt().optional().describe('Replay the retained events with a larger seq first (default: live only).')),
  }),
  result: z.object({
    seq: z.number().describe("The newest event's seq now (0 before the first): live notifications follow it."),
    events: z
      .array(hostEvent)
      .optional()
      .describe('Only for a caller that cannot receive notifications (a one-shot HTTP call): the retained events after since.'),
  }),
  handler(ctx, p) {
    const log = ctx.services.registry.events;
    const session = ctx.session?.id;
    if (ctx.caller instanceof ClientLink) {
      const sub = ctx.caller.subscribeEvents(log, { since: p.since, session });
      ctx.afterResponse(() => sub.start());
      return { seq: sub.startSeq };
    }
    return { seq: log.seq, events: p.since === undefined ? [] : log.since(p.since, session) };
  },
});

export const waitEventMethod = method({
  name: 'pty/waitEvent',
  target: 'session',
  scope: 'read',
  summary: 'Wait for the first event of the session (of the given types) after the call began, or time out.',
  params: z.object({
    types: byDefaultSays('any', z.array(z.enum(EVENT_TYPES)).min(1).optional().describe('Event types to wait for (default: any).')),
    timeoutMs: byDefault(
      DEFAULT_WAIT_EVENT_TIMEOUT_MS,
      waitMs().optional().describe(`Milliseconds to wait at most (default ${DEFAULT_WAIT_EVENT_TIMEOUT_MS}).`),
    ),
  }),
  result: z.object({
    event: hostEvent.nullable(),
    reason: z
      .enum(['matched', 'timeout', 'session_exit'])
      .describe('matched: event is the first matching one; timeout; session_exit: the program ended first.'),
  }),
  handler(ctx, p) {
    return waitForEvent(ctx.services.registry.events, requireSession(ctx), p.types, p.timeoutMs ?? DEFAULT_WAIT_EVENT_TIMEOUT_MS, ctx.signal);
  },
  mcp: {
    tool: 'wait_event',
    title: 'Wait for an event',
    description:
      'Wait until something happens in the terminal, instead of polling: input_wait (the program waits for input: a command finished, a prompt appeared), secret_input (it asks for a password the user must type), command_started / command_finished (with shell integration), bell, title, resize, exit. types picks which to wait for (default any); returns the first one after the call began, or event null with reason timeout.',
    text: (r) => {
      if (!r.event) return `[${r.reason}] no event`;
      const { session: _s, seq, at, type, ...fields } = r.event;
      const more = Object.keys(fields).length ? ` ${JSON.stringify(fields)}` : '';
      return `[matched] ${type}${more} (seq ${seq} at ${at})`;
    },
  },
});
