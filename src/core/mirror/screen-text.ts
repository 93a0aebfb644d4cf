import type { ScreenSnapshot } from './screen';

/** Which rows of the screen a `pty/read` wants (docs/protocol.md#ptyread): one group or none. */
export interface RowSelection {
  top?: number;
  bottom?: number;
  start?: number;
  end?: number;
}

/**
 * Screen text as `pty/read` returns it: the selected rows, trailing spaces removed, trailing
 * empty rows dropped, each row ended by `\n` (socket-pty's examples: `"root@host:~$\n"`).
 */
export function screenText(snap: ScreenSnapshot, sel: RowSelection = {}): string {
  const n = snap.rows.length;
  let from = 0;
  let to = n;
  const clamp = (v: number) => Math.min(Math.max(v, 0), n);
  if (sel.top !== undefined) to = clamp(sel.top);
  else if (sel.bottom !== undefined) from = n - clamp(sel.bottom);
  else if (sel.start !== undefined && sel.end !== undefined) {
    from = clamp(sel.start - 1);
    to = clamp(sel.end);
  }
  return joinRows(snap.rows.slice(from, Math.max(from, to)));
}

/** Rows with trailing empty rows dropped, each ended by a newline. */
export function joinRows(rows: string[]): string {
  let end = rows.length;
  while (end > 0 && rows[end - 1] === '') end--;
  let out = '';
  for (let i = 0; i < end; i++) out += rows[i] + '\n';
  return out;
}
