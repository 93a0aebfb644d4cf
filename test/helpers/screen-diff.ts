// Comparing a screen of Shared PTY's mirror with tmux's (the oracle of the fidelity tests and the
// program-output fuzzer): equal rows and cursor, equal colours and attributes, and a readable diff
// when they are not.
import type { IBufferCell, Terminal } from '@xterm/headless';

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

/**
 * Each row's colours and attributes, cell by cell over the row's first `widths[row]` columns, as
 * runs: "0-4 fg=p1 bold|5-9 -". Palette colours are one index whichever SGR set them (31 and
 * 38;5;1 are the same red); RGB colours are "#rrggbb"; "-" is the default look. The background of
 * a blank cell is left out: where a wide character is half overwritten, xterm.js clears the other
 * half with the current background and tmux with none, and neither is wrong.
 */
export function styleRows(term: Terminal, widths: number[]): string[] {
  const b = term.buffer.active;
  const cell = b.getNullCell();
  const out: string[] = [];
  for (let y = 0; y < term.rows; y++) {
    const line = b.getLine(b.baseY + y);
    const runs: string[] = [];
    let start = 0;
    let prev = '';
    const width = Math.min(widths[y] ?? 0, term.cols);
    for (let x = 0; x <= width; x++) {
      const look = x < width && line?.getCell(x, cell) ? cellLook(cell, cell.getChars() === '' || cell.getChars() === ' ') : '';
      if (x > 0 && (look !== prev || x === width)) {
        runs.push(`${start}-${x - 1} ${prev}`);
        start = x;
      }
      prev = look;
    }
    out.push(runs.join('|'));
  }
  return out;
}

function colour(isDefault: boolean, isRgb: boolean, value: number): string {
  if (isDefault) return '';
  return isRgb ? `#${value.toString(16).padStart(6, '0')}` : `p${value}`;
}

/** A cell's colours and attributes in a few words ("-" when it has none); a blank cell's without its background. */
function cellLook(c: IBufferCell, blank: boolean): string {
  const fg = colour(c.isFgDefault(), c.isFgRGB(), c.getFgColor());
  const bg = blank ? '' : colour(c.isBgDefault(), c.isBgRGB(), c.getBgColor());
  const parts = [fg && `fg=${fg}`, bg && `bg=${bg}`];
  const flags: Array<[string, number]> = [
    ['bold', c.isBold()],
    ['dim', c.isDim()],
    ['italic', c.isItalic()],
    ['underline', c.isUnderline()],
    ['blink', c.isBlink()],
    ['inverse', c.isInverse()],
    ['invisible', c.isInvisible()],
    ['strike', c.isStrikethrough()],
    ['overline', c.isOverline()],
  ];
  for (const [name, on] of flags) if (on) parts.push(name);
  return parts.filter(Boolean).join(' ') || '-';
}

/** The rows whose looks differ (`-` tmux, `+` shared-pty), or '' when none do. */
export function styleDiff(label: string, want: string[], got: string[]): string {
  const lines: string[] = [];
  for (let i = 0; i < Math.max(want.length, got.length); i++) {
    if (want[i] !== got[i]) lines.push(` - ${String(i + 1).padStart(2)} | ${want[i]}\n + ${String(i + 1).padStart(2)} | ${got[i]}`);
  }
  return lines.length ? `${label}: colours or attributes differ (tmux = expected, shared-pty = actual; columns from 0)\n${lines.join('\n')}` : '';
}
