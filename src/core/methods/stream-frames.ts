import { z } from 'zod';
import { exitNotification } from './notifications';

// The messages of the stream WebSocket (`GET /sessions/:id/stream`, docs/protocol.md#websocket-get-sessionsidstream),
// in the method table's style: each has a schema, the host builds and reads them through it, the
// browser view reads them through the derived types, and the protocol reference's table of them is
// generated from here. Nothing of Node is imported here (the browser view imports these types).

/** One message of the stream: which way it goes, its `type`, its schema, one sentence for the reference. */
export interface StreamFrameSpec<T extends string = string, S extends z.ZodObject = z.ZodObject> {
  from: 'host' | 'client';
  type: T;
  /** The whole message, `type` included. */
  schema: S;
  summary: string;
}

function frame<T extends string, S extends z.ZodObject>(spec: StreamFrameSpec<T, S>): StreamFrameSpec<T, S> {
  return spec;
}

export const dataFrame = frame({
  from: 'host',
  type: 'data',
  summary: "Raw output: first the session's retained output (the replay), then output as it comes, in order.",
  schema: z.object({ type: z.literal('data'), data: z.string().describe('Raw output, escape sequences included.') }),
});

export const snapshotFrame = frame({
  from: 'host',
  type: 'snapshot',
  summary: 'Only with `?resync=1`, where output the client had not received was overwritten: a picture that replaces it (below).',
  schema: z.object({
    type: z.literal('snapshot'),
    data: z.string().describe("Written into a terminal reset to cols×rows, it reproduces the screen (as pty/snapshot's, with up to 1000 scrollback rows)."),
    cols: z.number().describe("The session's columns."),
    rows: z.number().describe("The session's rows."),
  }),
});

export const exitFrame = frame({
  from: 'host',
  type: 'exit',
  summary: 'The program ended, after its last `data`; the host then closes with 1000.',
  schema: z.object({ type: z.literal('exit'), exitCode: exitNotification.params.shape.exitCode }),
});

export const errorFrame = frame({
  from: 'host',
  type: 'error',
  summary: 'A refused or failed input message; the stream stays open, except after a message over 1 MiB (-32600, then 1009).',
  schema: z.object({
    type: z.literal('error'),
    code: z.number().describe('The JSON-RPC code of [Error codes](#4-error-codes) (read-only: -32004; an unknown message type: -32602).'),
    message: z.string(),
    data: z.unknown().optional().describe("The error's data, when it has some."),
  }),
});

export const writeFrame = frame({
  from: 'client',
  type: 'write',
  summary: "Input, written as is (through `pty/write`, so the token's scope and the agent guards apply).",
  schema: z.object({
    type: z.literal('write'),
    data: z.string().describe('Raw input.'),
    // Anything but `true` is "no", as it always was here: a client's stray value does not refuse its input.
    submit: z
      .boolean()
      .optional()
      .catch(undefined)
      .describe(
        'Default false here (REST\'s write defaults to true): with true, a "\\n" is appended unless data ends in "\\r" or "\\n". Any value but true counts as false, never an error (the input is still written).',
      ),
  }),
});

export const resizeFrame = frame({
  from: 'client',
  type: 'resize',
  summary: 'Resize the terminal (through `pty/resize`, which checks the size); a read-only stream ignores it.',
  schema: z.object({
    type: z.literal('resize'),
    cols: z.number().describe('Columns, as pty/resize takes them.'),
    rows: z.number().describe('Rows, as pty/resize takes them.'),
  }),
});

/** Every message of the stream, in the order docs/protocol.md lists them. */
export const STREAM_FRAMES = [dataFrame, snapshotFrame, exitFrame, errorFrame, writeFrame, resizeFrame] as const;

/** What the host sends on the stream. */
export type StreamServerFrame = z.infer<(typeof dataFrame | typeof snapshotFrame | typeof exitFrame | typeof errorFrame)['schema']>;
/** What a client sends on the stream as JSON (any other text frame is raw input). */
export type StreamClientFrame = z.infer<(typeof writeFrame | typeof resizeFrame)['schema']>;

/** One way the host closes the stream: its WebSocket close code and what it means. */
export interface StreamCloseSpec {
  code: number;
  /** The sentence of the reference's close-code table. */
  meaning: string;
}

/**
 * The stream's close codes, declared once: the host closes with these, the browser view tells
 * them apart by their types, and the reference's table is generated from here. 1000 and 1009 are
 * the WebSocket's own (RFC 6455: normal closure, message too big); 4000–4999 are left to
 * applications, and the host's read as the HTTP status they stand for (4004 not found, 4401 the
 * credential is gone, 4008 timed out: the client fell behind). The `/rpc` WebSocket closes with
 * 1009 and 4401 too.
 */
export const STREAM_CLOSE = {
  exited: { code: 1000, meaning: 'the session exited (after the `exit` message)' },
  tooBig: { code: 1009, meaning: 'a message over 1 MiB (after an `error` message saying so: -32600)' },
  unknownSession: { code: 4004, meaning: 'unknown session' },
  tokenEnded: {
    code: 4401,
    meaning:
      'the scoped token (or link) the stream was opened with was revoked or expired, ended with its session, or its link was opened in a browser (reason `token revoked`, `token expired`, `session ended` or `link opened`; see [Scoped tokens](#scoped-tokens) and [Links and page cookies](#links-and-page-cookies))',
  },
  tooSlow: {
    code: 4008,
    meaning:
      'the client read so slowly that output it had not received was overwritten in the ring. The stream does not skip output silently; reconnect to get the retained output again (or open the stream with `?resync=1`, below).',
  },
} as const satisfies Record<string, StreamCloseSpec>;
