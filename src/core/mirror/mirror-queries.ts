import type { Mirror, ScreenSnapshot } from './mirror';
import { pageBounds, type ScrollbackPage, type SealedScrollback } from './scrollback-page';

export type { ScrollbackPage } from './scrollback-page';

/** The rows a `pty/send` produced: from the row it started on (or the topmost it changed) to the end of what is retained. */
export interface RenderedRows {
  rows: string[];
  /** Some of those rows already left the retained scrollback. */
  truncated: boolean;
  /** A full-screen program took over: `rows` is its screen. */
  alternate: boolean;
}

/**
 * Every read of a screen mirror, by name. They run in the mirror thread, each on a screen that has
 * parsed exactly the output up to the moment it was asked for, and return plain data (structured
 * clone). One table, so the main thread's calls are typed by it and nothing else can be called.
 */
export const MIRROR_QUERIES = {
  screen: (m: Mirror): ScreenSnapshot => m.screen(),

  /** Absolute number of the row the cursor is on (a send's output starts there, or higher up: renderedSince), and a watch of the rows the output changes. */
  watchRows: (m: Mirror): { watch: number; row: number } => m.watchRows(),

  /** The cursor's row left of the cursor: what a prompt that reads keys asks (secret input, docs/protocol.md#secret-input). */
  lineBeforeCursor: (m: Mirror): { text: string; alternate: boolean } => m.lineBeforeCursor(),

  /** The retained rows' absolute range [first, end). */
  extent: (m: Mirror): { firstRetainedRow: number; endRow: number } => ({ firstRetainedRow: m.firstRetainedRow, endRow: m.endRow }),

  /** Ends the watch `watchRows` began: the rows from `startRow`, or from higher up when the output changed rows above it. */
  renderedSince: (m: Mirror, startRow: number, watch: number): RenderedRows => {
    const { from, truncated } = m.endRowWatch(watch, startRow);
    const snap = m.screen();
    if (snap.alternate) return { rows: snap.rows, truncated: false, alternate: true };
    // A long line the terminal wrapped is one line of the answer, as the program printed it.
    return { rows: m.rowsBetween(from, m.endRow, true), truncated, alternate: false };
  },

  /**
   * With `withSealed`, also the sealed rows and the retained range as of this page, from which the
   * main thread answers later pages while the screen stays as it is (scrollback-page.ts).
   */
  scrollbackPage: (m: Mirror, offset: number, lines: number, withSealed = false): ScrollbackPage & { sealed?: SealedScrollback } => {
    const firstRetainedRow = m.firstRetainedRow;
    const endRow = m.endRow;
    const b = pageBounds(firstRetainedRow, endRow, offset, lines);
    const page = { text: m.rowsBetween(b.from, b.to).join('\n'), firstLine: b.firstLine, lastLine: b.lastLine, totalLines: b.totalLines };
    return withSealed ? { ...page, sealed: { ...m.sealedRows(), firstRetainedRow, endRow } } : page;
  },

  /** Text that redraws the terminal (see Mirror.serialize). */
  serialize: (m: Mirror, scrollbackRows: number): string => m.serialize(scrollbackRows),
};

export type MirrorQueries = typeof MIRROR_QUERIES;
export type QueryName = keyof MirrorQueries;
export type QueryArgs<K extends QueryName> = MirrorQueries[K] extends (m: Mirror, ...args: infer A) => unknown ? A : never;
export type QueryResult<K extends QueryName> = ReturnType<MirrorQueries[K]>;
