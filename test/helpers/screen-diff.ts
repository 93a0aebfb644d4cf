// Comparing a screen of Shared PTY's mirror with tmux's (the oracle of the fidelity tests and the
// program-output fuzzer): equal rows and cursor, and a readable diff when they are not.

/** What is compared: the visible rows and the cursor (1-based). */
export interface ComparedScreen {
  rows: string[];
  cursor: { row: number; col: number };
}

/** The same rows and cursor. */
export const sameScreen = (a: ComparedScreen, b: ComparedScreen): boolean =>
  a.rows.every((r, i) => r === b.rows[i]) && a.cursor.row === b.cursor.row && a.cursor.col === b.cursor.col;

/** The two screens row by row (`-` tmux, `+` shared-pty where they differ), then both cursors. */
export function screenDiff(label: string, want: ComparedScreen, got: ComparedScreen): string {
  const lines = [`${label}: screens differ (tmux = expected, shared-pty = actual)`];
  for (let i = 0; i < Math.max(want.rows.length, got.rows.length); i++) {
    const a = want.rows[i];
    const b = got.rows[i];
    lines.push(a === b ? `   ${String(i + 1).padStart(2)} | ${a}` : ` - ${String(i + 1).padStart(2)} | ${a}\n + ${String(i + 1).padStart(2)} | ${b}`);
  }
  lines.push(`cursor: tmux ${JSON.stringify(want.cursor)} shared-pty ${JSON.stringify(got.cursor)}`);
  return lines.join('\n');
}
