import { z } from 'zod';

/**
 * What happens in a session that a client may want to hear about without polling (docs/protocol.md#events-ptyevents-and-ptywaitevent).
 * A session fires these bodies (`Session.emitEvent`); the host's EventLog numbers them. Declared
 * once as a schema: the types below are inferred from it, and the method table's `pty/event`
 * notification, `pty/events` replay and `pty/waitEvent` result use it. Nothing of Node here, so
 * the browser views can import the types too.
 */

/** What every event carries besides its body. */
const eventBase = {
  session: z.string().describe("The session's id."),
  seq: z.number().describe('One more per event of the host.'),
  at: z.string().describe('When, ISO 8601.'),
};

/** One event of the host's log: `pty/event` notifications, `pty/events` replays, `wait_event`. */
export const hostEvent = z
  .discriminatedUnion('type', [
    // The shell started a command line (shell integration, docs/guarantees.md#shell-integration).
    z.object({ ...eventBase, type: z.literal('command_started'), command: z.string() }),
    // That command finished; `exitCode` is null when the shell did not report one.
    z.object({ ...eventBase, type: z.literal('command_finished'), command: z.string(), exitCode: z.number().nullable(), durationMs: z.number() }),
    // The foreground process waits for terminal input (a prompt, a REPL, `read`).
    z.object({ ...eventBase, type: z.literal('input_wait') }),
    // It waits for a secret: the terminal reads a line without echo (sudo, ssh, passwd, getpass).
    z.object({ ...eventBase, type: z.literal('secret_input') }),
    // The program rang the bell (BEL outside an escape sequence).
    z.object({ ...eventBase, type: z.literal('bell') }),
    // The program set the window title (OSC 0 or 2).
    z.object({ ...eventBase, type: z.literal('title'), title: z.string() }),
    z.object({ ...eventBase, type: z.literal('resize'), cols: z.number(), rows: z.number() }),
    z.object({ ...eventBase, type: z.literal('exit'), exitCode: z.number(), signal: z.string().nullable() }),
  ])
  .meta({ title: 'Event' });

/** An event in the host's log: the body plus which session, its number and when (ISO 8601). */
export type HostEvent = z.infer<typeof hostEvent>;

/** Every event type, in the order docs/protocol.md#events-ptyevents-and-ptywaitevent lists them. */
export const EVENT_TYPES: readonly EventType[] = hostEvent.options.map((o) => o.shape.type.value);

export type EventType = HostEvent['type'];

/** Drops the host's fields from each member of the union (not from the union as a whole). */
type BodyOf<E> = E extends HostEvent ? Omit<E, keyof typeof eventBase> : never;

/** One event as a session fires it: its type and the fields of that type. */
export type SessionEventBody = BodyOf<HostEvent>;
