// A headless xterm's screen as `pty/read` gives one, so a test can compare a client's picture with the host's.
import type { Terminal } from '@xterm/headless';

/** The screen's rows without trailing spaces, each ended by `\n`, trailing empty rows dropped (docs/guarantees.md#screen-text). */
export function screenTextOf(term: Terminal): string {
  const b = term.buffer.active;
  const rows: string[] = [];
  for (let y = 0; y < term.rows; y++) rows.push((b.getLine(b.baseY + y)?.translateToString(true) ?? '').replace(/ +$/, ''));
  while (rows.length && rows[rows.length - 1] === '') rows.pop();
  return rows.map((r) => r + '\n').join('');
}

/** Writes `data` into `term` and resolves once it is parsed. */
export function writeAll(term: Terminal, data: string): Promise<void> {
  return new Promise((resolve) => term.write(data, resolve));
}
