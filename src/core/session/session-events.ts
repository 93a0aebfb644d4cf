/**
 * What happens in a session that a client may want to hear about without polling (docs/protocol.md#events-ptyevents-and-ptywaitevent).
 * A session fires these bodies (`Session.emitEvent`); the host's EventLog numbers them.
 */

/** Every event type, in the order docs/protocol.md#events-ptyevents-and-ptywaitevent lists them. */
export const EVENT_TYPES = ['command_started', 'command_finished', 'input_wait', 'secret_input', 'bell', 'title', 'resize', 'exit'] as const;

export type EventType = (typeof EVENT_TYPES)[number];

/** One event as a session fires it: its type and the fields of that type. */
export type SessionEventBody =
  /** The shell started a command line (shell integration, docs/guarantees.md#shell-integration). */
  | { type: 'command_started'; command: string }
  /** That command finished; `exitCode` is null when the shell did not report one. */
  | { type: 'command_finished'; command: string; exitCode: number | null; durationMs: number }
  /** The foreground process waits for terminal input (a prompt, a REPL, `read`). */
  | { type: 'input_wait' }
  /** It waits for a secret: the terminal reads a line without echo (sudo, ssh, passwd, getpass). */
  | { type: 'secret_input' }
  /** The program rang the bell (BEL outside an escape sequence). */
  | { type: 'bell' }
  /** The program set the window title (OSC 0 or 2). */
  | { type: 'title'; title: string }
  | { type: 'resize'; cols: number; rows: number }
  | { type: 'exit'; exitCode: number; signal: string | null };

/** An event in the host's log: the body plus which session, its number and when (ISO 8601). */
export type HostEvent = SessionEventBody & { session: string; seq: number; at: string };
