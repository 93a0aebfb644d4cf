// What a screen looks like to its readers: shared by the main thread and the mirror thread
// (src/core/mirror.ts), without loading xterm.js where no screen is parsed.

/** Default rows of scrollback retained per session (docs/editor.md#settings: 10000). */
export const DEFAULT_SCROLLBACK_LINES = 10000;

export interface CursorPos {
  /** 1-based row on the screen. */
  row: number;
  /** 1-based column. */
  col: number;
}

export interface ScreenSize {
  cols: number;
  rows: number;
}

/** A snapshot of the visible screen. */
export interface ScreenSnapshot {
  /** Every screen row, trailing spaces removed. */
  rows: string[];
  cursor: CursorPos;
  size: ScreenSize;
  /** True when a full-screen program (vim, less) is on the alternate screen. */
  alternate: boolean;
}
