// Follows one session through MCP tool calls only (the terminal view of MCP Apps has no connection
// of its own): a picture first (`terminal_snapshot`), then the output after its cursor, read with
// `read_output` long polls. Output lost before it was read (dropped) means a fresh picture.

/** How long one `read_output` waits for new output: well under the bridge's request timeout (60 s). */
const LONG_POLL_MS = 20_000;
/** Most bytes one read returns (the method's own limit is 1 MiB; a chat host relays every byte). */
const READ_BYTES = 256 * 1024;
/** Pause before asking again after a call that failed for a reason other than the session (a busy host). */
const RETRY_MS = 2000;

/** A tool call through the chat host: its structured result, or an Error with the tool's message. */
export type CallTool = (name: string, args: Record<string, unknown>) => Promise<Record<string, unknown>>;

/** A tool answered with isError: about the session (unknown, ended), not the bridge. */
export class ToolError extends Error {}

/** What the follower reports to the page. */
export interface FollowSink {
  /** A fresh picture: a clean terminal of this size, then this text. */
  redraw(data: string, cols: number, rows: number): void;
  /** New output. */
  write(data: string): void;
  /** The program ended (exitCode null: unknown, or a signal). */
  exited(exitCode: number | null): void;
  /** Something went wrong; `lasting` when following has stopped for good. */
  problem(message: string, lasting: boolean): void;
}

/** A running follow of one session; `stop()` ends it at its next step. */
export interface Following {
  readonly session: string;
  stop(): void;
}

/** Starts following `session`. */
export function followSession(session: string, call: CallTool, sink: FollowSink): Following {
  let stopped = false;
  const run = async () => {
    let cursor: number | undefined;
    while (!stopped) {
      try {
        if (cursor === undefined) {
          const snap = await call('terminal_snapshot', { session });
          if (stopped) return;
          sink.redraw(String(snap.data), Number(snap.cols), Number(snap.rows));
          cursor = Number(snap.cursor);
        }
        const out = await call('read_output', { session, since: cursor, waitMs: LONG_POLL_MS, maxBytes: READ_BYTES });
        if (stopped) return;
        if (Number(out.dropped) > 0) {
          cursor = undefined; // we fell behind the ring: redraw from a new picture
          continue;
        }
        if (typeof out.data === 'string' && out.data.length > 0) sink.write(out.data);
        cursor = Number(out.cursor);
        if (out.running === false && !(typeof out.data === 'string' && out.data.length > 0)) {
          sink.exited(typeof out.exitCode === 'number' ? out.exitCode : null);
          return;
        }
      } catch (e) {
        if (stopped) return;
        const lasting = e instanceof ToolError;
        sink.problem((e as Error).message, lasting);
        if (lasting) return;
        await new Promise((r) => setTimeout(r, RETRY_MS));
      }
    }
  };
  void run();
  return {
    session,
    stop: () => {
      stopped = true;
    },
  };
}
