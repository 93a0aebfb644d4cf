/* Answers of slow /proc walks (every process's fds), kept so that a poll does not repeat them. */

const FIRST_NO_MS = 1000;
const LONGEST_MS = 60_000;
const MAX_REMEMBERED = 256;

/**
 * Yes/no answers by key: a "yes" is kept a minute (what it found lasts while the connection or the
 * program does), a "no" for a time that doubles at each look from 1 s to a minute (a tmux client
 * connects before its server is handed the terminal; psql waits on its server for as long as a
 * query runs).
 */
export class RememberedAnswers {
  private readonly _known = new Map<string, { yes: boolean; at: number; forMs: number }>();

  /** The answer for `key`: the kept one while it lasts, else `look()`'s, then kept. */
  answer(key: string, look: () => boolean): boolean {
    const now = Date.now();
    const known = this._known.get(key);
    if (known && now - known.at < known.forMs) return known.yes;
    const yes = look();
    const forMs = yes ? LONGEST_MS : Math.min(LONGEST_MS, known && !known.yes ? known.forMs * 2 : FIRST_NO_MS);
    if (this._known.size >= MAX_REMEMBERED) this._known.clear();
    this._known.set(key, { yes, at: now, forMs });
    return yes;
  }

  /** Drops the answer for `key`: the next `answer` looks again. */
  forget(key: string): void {
    this._known.delete(key);
  }
}
