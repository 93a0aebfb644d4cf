import type { Mirror, ScreenSnapshot } from './mirror';

/** The rows a `pty/send` produced: from the row it started on to the end of what is retained. */
export interface RenderedRows {
  rows: string[];
  /** Some of those rows already left the retained scrollback. */
  truncated: boolean;
  /** A full-screen program took over: `rows` is its screen. */
  alternate: boolean;
}

/** One page of `pty/scrollback` (docs/protocol.md#ptyscrollback), lines counted from the oldest retained row. */
export interface ScrollbackPage {
  text: string;
  firstLine: number;
  lastLine: number;
  totalLines: number;
}

/**
 * Every read of a screen mirror, by name. They run in the mirror thread, each on a screen that has
 * parsed exactly the output up to the moment it was asked for, and return plain data (structured
 * clone). One table, so the main thread's calls are typed by it and nothing else can be called.
 */
export const MIRROR_QUERIES = {
  screen: (m: Mirror): ScreenSnapshot => m.screen(),

  /** Absolute number of the row the cursor is on (a send's output starts there). */
  cursorRow: (m: Mirror): number => m.cursorRow,

  /** The cursor's row left of the cursor: what a prompt that reads keys asks (secret input, docs/protocol.md#secret-input). */
  lineBeforeCursor: (m: Mirror): { text: string; alternate: boolean } => m.lineBeforeCursor(),

  /** The retained rows' absolute range [first, end). */
  extent: (m: Mirror): { firstRetainedRow: number; endRow: number } => ({ firstRetainedRow: m.firstRetainedRow, endRow: m.endRow }),

  renderedSince: (m: Mirror, startRow: number): RenderedRows => {
    const snap = m.screen();
    if (snap.alternate) return { rows: snap.rows, truncated: false, alternate: true };
    return { rows: m.rowsBetween(startRow, m.endRow), truncated: startRow < m.firstRetainedRow, alternate: false };
  },

  scrollbackPage: (m: Mirror, offset: number, lines: number): ScrollbackPage => {
    const first = m.firstRetainedRow;
    const totalLines = m.endRow - first;
    const lastLine = Math.max(0, totalLines - offset);
    const firstLine = lastLine === 0 ? 0 : Math.max(1, lastLine - lines + 1);
    const rows = lastLine === 0 ? [] : m.rowsBetween(first + firstLine - 1, first + lastLine);
    return { text: rows.join('\n'), firstLine, lastLine, totalLines };
  },

  /** Text that redraws the terminal (see Mirror.serialize). */
  serialize: (m: Mirror, scrollbackRows: number): string => m.serialize(scrollbackRows),
};

export type MirrorQueries = typeof MIRROR_QUERIES;
export type QueryName = keyof MirrorQueries;
export type QueryArgs<K extends QueryName> = MirrorQueries[K] extends (m: Mirror, ...args: infer A) => unknown ? A : never;
export type QueryResult<K extends QueryName> = ReturnType<MirrorQueries[K]>;
