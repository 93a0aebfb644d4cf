import { z } from 'zod';
import { hostEvent, type EventType } from '../session/events/session-events';
import { approvalAnswer, approvalQuestion, approvalRequest } from '../agent/approval-request';

// The notifications of the method table: what the host sends without being asked, after a method
// started them. Each has a schema like a method's params, so clients read them typed (no casts),
// a test holds the host's real notifications to these schemas, and docs/protocol.md's
// notification tables are generated from them. Nothing of Node is imported here.

/**
 * The session a notification is about, on the control socket and `/rpc` (one connection may follow
 * several sessions); absent on a session's own socket, where the session is implied.
 */
const onControl = { session: z.string().optional().describe("The session's id (control socket and /rpc only).") };

/** One entry of the notification table. */
export interface NotificationSpec<N extends string = string, P extends z.ZodType = z.ZodType> {
  name: N;
  /** The methods whose call starts it. */
  after: readonly string[];
  /** One sentence for the protocol reference. */
  summary: string;
  params: P;
}

function notification<N extends string, P extends z.ZodType>(spec: NotificationSpec<N, P>): NotificationSpec<N, P> {
  return spec;
}

export const outputNotification = notification({
  name: 'pty/output',
  after: ['pty/subscribe'],
  summary: 'Raw output of a subscribed session, in order: each one joins up exactly with the one before (at most 64 KiB, never splitting a UTF-8 character).',
  params: z.object({
    ...onControl,
    data: z.string().describe('Raw output, escape sequences included.'),
    cursor: z.number().describe('The output cursor just after data.'),
    dropped: z
      .number()
      .optional()
      .describe('Bytes the subscriber missed before data (a lossy subscriber that fell behind the ring, or a since older than it).'),
  }),
});

export const exitNotification = notification({
  name: 'pty/exit',
  after: ['pty/subscribe'],
  summary: "The subscribed session's program ended: once, after its last pty/output (right after the replay for a session that had already exited).",
  params: z.object({
    ...onControl,
    exitCode: z.number().describe('Its exit status (128+N when killed by signal N).'),
    signal: z.string().nullable().describe('The signal that ended it, or null.'),
  }),
});

export const flowNotification = notification({
  name: 'pty/flow',
  after: ['pty/subscribe'],
  summary: 'A flow-controlled subscription was demoted to lossy: the client acknowledged nothing for 5 s while output waited.',
  params: z.object({ ...onControl, demoted: z.literal(true) }),
});

export const eventNotification = notification({
  name: 'pty/event',
  after: ['pty/events'],
  summary: 'Something happened in a session (the Event types below), numbered by seq across the host.',
  params: hostEvent,
});

export const approvalNotification = notification({
  name: 'agent/approval',
  after: ['host/watchAgents', 'a call with client.asks'],
  summary:
    "An agent's write waits for the user's answer (host/approve with its id): an ApprovalRequest to watchers, an ApprovalQuestion (id, session, name, text) to the agent's own client when no window watches.",
  params: z.union([approvalRequest, approvalQuestion]),
});

export const approvalEndedNotification = notification({
  name: 'agent/approvalEnded',
  after: ['host/watchAgents', 'a call with client.asks'],
  summary: 'A question is over: answered here or elsewhere, unanswered in time, or its caller went away.',
  params: z.object({
    id: z.string().describe("The ApprovalRequest's id."),
    decision: z
      .union([approvalAnswer, z.literal('unanswered')])
      .optional()
      .describe("What ended it (to watchers; a question put to an agent's own client ends without one)."),
  }),
});

export const typingNotification = notification({
  name: 'agent/typing',
  after: ['host/watchAgents'],
  summary: 'An agent\'s write call started (typing: true) or ended (false) on a session: the editor shows "agent typing".',
  params: z.object({ session: z.string().describe("The session's id."), typing: z.boolean() }),
});

/** When each event type happens, as the protocol reference says (every type must say it). */
export const EVENT_MEANINGS: Record<EventType, string> = {
  command_started: 'the shell started a command line (shell integration)',
  command_finished: 'that command finished (`exitCode` null when the shell did not say)',
  input_wait:
    'the foreground process waits for terminal input: a prompt came back, a REPL or `read` waits (once per wait: a new one after Enter, after the program was seen busy, or when another process group waits: a prompt back after Ctrl+C, Ctrl+D or `q`)',
  secret_input: 'it waits for a secret ([Secret input](#secret-input))',
  bell: 'the program rang the bell (bells within 250 ms make one event)',
  title:
    'the program set the window title (OSC 0 or 2) to a new value (each one, in output order with the bells; at most 16 bells and titles a parse of the output, the newest last)',
  resize: 'the terminal was resized',
  exit: 'the program ended',
};

/** Every notification the host sends, in the order docs/protocol.md lists them. */
export const NOTIFICATIONS = [
  outputNotification,
  exitNotification,
  flowNotification,
  eventNotification,
  approvalNotification,
  approvalEndedNotification,
  typingNotification,
] as const;

type AnyNotification = (typeof NOTIFICATIONS)[number];
/** Every notification's name. */
export type NotificationName = AnyNotification['name'];
/** A notification's params. */
export type NotificationParams<N extends NotificationName> = z.output<Extract<AnyNotification, { name: N }>['params']>;
/** A notification as a client receives it: narrow it by `method` to read its params typed. */
export type HostNotification = { [N in NotificationName]: { method: N; params: NotificationParams<N> } }[NotificationName];

/** The table by name. */
export const NOTIFICATION_INDEX: ReadonlyMap<string, NotificationSpec> = new Map((NOTIFICATIONS as readonly NotificationSpec[]).map((n) => [n.name, n]));

/** A notification as it came off the wire: its method, and params nothing has checked yet. */
export interface ReceivedNotification {
  method: string;
  params: unknown;
}

/**
 * The params of `n` when it is the notification `name` and fits its schema (typed by the table);
 * undefined otherwise. Clients read notifications through this, so what they act on was checked
 * where it entered (a malformed one is ignored rather than half-used).
 */
export function paramsOf<N extends NotificationName>(n: ReceivedNotification, name: N): NotificationParams<N> | undefined {
  if (n.method !== name) return undefined;
  const r = (NOTIFICATION_INDEX.get(name) as Extract<AnyNotification, { name: N }>).params.safeParse(n.params);
  return r.success ? (r.data as NotificationParams<N>) : undefined;
}
