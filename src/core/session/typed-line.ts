/**
 * The line being typed into a session, as the shell will run it when Enter comes: what every
 * writer (the human, agents, scripts) typed since the last Enter, with the editing keys applied.
 * Deny rules are matched against it (docs/protocol.md "Agent guards"), so a line split across
 * writes (`send_keys ["r"]`, then `send "m -rf …"`) is judged whole.
 *
 * It follows keystrokes, not the shell's line editor: a line recalled from history, a completion
 * or an edit after moving the cursor are not seen (the text typed is, in the order typed).
 */
export class TypedLine {
  private _pending = '';
  /** Typed past MAX_TYPED_LINE_CHARS: the line can no longer be judged (writes refused under deny rules). */
  private _overflow = false;

  /** The characters typed since the last Enter (editing applied). */
  get pending(): string {
    return this._pending;
  }

  /** The pending line went past MAX_TYPED_LINE_CHARS and was not kept whole. */
  get overflow(): boolean {
    return this._overflow;
  }

  /**
   * Something was written to the program. While it reads a secret (`secret`), what is typed is no
   * shell line and is not kept; its Enter still ends the line.
   */
  observe(data: string, secret: boolean): void {
    const r = applyKeys(this._pending, this._overflow, data, secret);
    this._pending = r.pending;
    this._overflow = r.overflow;
  }

  /**
   * The lines `data` would submit if written now (each as the shell would receive it), and last the
   * line left pending after it when it is not empty, with whether one of them overflowed.
   */
  preview(data: string): { lines: string[]; overflow: boolean } {
    const r = applyKeys(this._pending, this._overflow, data, false);
    const lines = r.submitted;
    if (r.pending.trim() !== '') lines.push(r.pending);
    return { lines, overflow: r.overflow || r.submittedOverflow };
  }
}

/**
 * Most characters of one typed line kept: a shell line longer than this is not something a person
 * or an agent types, and keeping it bounded keeps a session's memory bounded.
 */
export const MAX_TYPED_LINE_CHARS = 64 * 1024;

/** A CSI or SS3 sequence (arrows, function keys) or an Alt+key: moving about is not typing text. */
const KEY_SEQUENCE = /^\x1b(?:\[[0-9;?]*[ -/]*[@-~]|O[@-~]|[^[O])?/;

/** Applies typed text to a pending line: Enter submits, Backspace, Ctrl+W, Ctrl+U and Ctrl+C edit or drop it. */
function applyKeys(
  start: string,
  startOverflow: boolean,
  data: string,
  secret: boolean,
): { pending: string; overflow: boolean; submitted: string[]; submittedOverflow: boolean } {
  let line = start;
  let overflow = startOverflow;
  let submittedOverflow = false;
  const submitted: string[] = [];
  for (let i = 0; i < data.length; i++) {
    const c = data[i]!;
    if (c === '\r' || c === '\n') {
      if (line.trim() !== '') submitted.push(line);
      if (overflow) submittedOverflow = true;
      line = '';
      overflow = false;
      secret = false; // the secret was answered with this Enter
    } else if (c === '\x03' || c === '\x15') {
      line = ''; // Ctrl+C abandons the line, Ctrl+U erases it
      overflow = false;
    } else if (c === '\x7f' || c === '\b') {
      line = line.slice(0, -1);
    } else if (c === '\x17') {
      line = line.replace(/\S*\s*$/, ''); // Ctrl+W: the word before the cursor
    } else if (c === '\x1b') {
      const m = KEY_SEQUENCE.exec(data.slice(i));
      i += (m?.[0].length ?? 1) - 1;
    } else if (c === '\t') {
      if (!secret) line += ' '; // completion may add anything; a word break is the least it does
    } else if (c < ' ') {
      // other control keys type nothing
    } else if (!secret) {
      if (line.length < MAX_TYPED_LINE_CHARS) line += c;
      else overflow = true;
    }
  }
  return { pending: line, overflow, submitted, submittedOverflow };
}
