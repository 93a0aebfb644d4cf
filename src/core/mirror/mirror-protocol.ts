// Messages between the host's main thread and the mirror thread (src/core/mirror-worker.ts).
// Every mirror is named by a number; byte positions are the session's output cursors, so
// "parsed up to cursor N" means the same on both sides.
import type { QueryName } from './mirror-queries';
import type { ReportedColors } from './query-answers';

export type ToMirrorThread =
  /**
   * A new (or rebuilt) mirror whose output starts at `cursor`. Output up to `quietUntil` is a
   * replay of what was parsed before the thread restarted: its bells and titles are not told again.
   */
  | { t: 'open'; id: number; cols: number; rows: number; scrollback: number; cursor: number; quietUntil: number }
  /**
   * Output ending at byte cursor `cursor`, in the chunks it was read in (moved, not copied).
   * `fence`: an event is tied to `cursor` (a command mark): bells and titles before it are told
   * before the thread parses past it, with `cursor`, so the session can order its events.
   */
  | { t: 'write'; id: number; chunks: Uint8Array[]; cursor: number; fence?: true }
  /** A fence (see `write`) at the end of the output written so far, when none of it is left to send. */
  | { t: 'fence'; id: number }
  /** Applied once everything written before it is parsed, as the program saw it. */
  | { t: 'resize'; id: number; cols: number; rows: number }
  | { t: 'query'; req: number; id: number; op: QueryName; args: unknown[] }
  /** The colours a view reported: the answers to colour queries parsed after this. */
  | { t: 'colors'; id: number; colors: ReportedColors }
  | { t: 'close'; id: number }
  /** The thread's own heap figures after a full GC when available (benchmarks). */
  | { t: 'stats'; req: number };

/** A bell the program rang, or a window title it set (in output order: MirrorSignals). */
export type ProgramSignal = { bell: true } | { title: string };

export type FromMirrorThread =
  /**
   * Everything up to `cursor` is parsed (sent at most once per turn of the thread's loop). `rate`:
   * the session's parse speed since the last one that had it, bytes per ms of the time its output
   * waited in the thread (see mirror-worker.ts `Entry.spanMs`).
   */
  | { t: 'parsed'; id: number; cursor: number; rate?: number }
  /**
   * What the program signalled while its output was parsed since the last notice (at most one
   * message per mirror per turn of the thread's loop), in output order: bells (a run of them told
   * once) and each new window title. `fence`: told on reaching a fence at this cursor; the signals
   * came in output before it (and after any earlier fence). Without it: in output after every
   * fence the thread has reached.
   */
  | { t: 'signals'; id: number; signals: ProgramSignal[]; fence?: number }
  /**
   * The terminal's answers to queries in the output parsed since the last notice, in order (sent
   * once per turn of the thread's loop): the session writes them to the program.
   */
  | { t: 'answers'; id: number; data: string }
  /**
   * Output the thread has parsed, handed back (transferred) so that its memory is freed at the
   * main thread's next collection, which comes within milliseconds while output flows; the thread's
   * own collections are rare, and held ~30 MB of parsed output in a flood (mirror-worker.ts `spent`).
   */
  | { t: 'spent'; buffers: ArrayBuffer[] }
  /** `cursor`: the output the answer reflects, exactly. */
  | { t: 'reply'; req: number; ok: true; value: unknown; cursor: number }
  | { t: 'reply'; req: number; ok: false; error: string };

/** The mirror thread's own V8 heap (bytes). */
export interface MirrorThreadStats {
  heapUsed: number;
  /** Memory outside the heap held by its objects (xterm's cell buffers). */
  external: number;
  mirrors: number;
  /** Mirrors whose terminal has been made (a mirror makes it on its first output, query or resize). */
  terminals: number;
}
