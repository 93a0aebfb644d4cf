import { lineEdit, type EditorState, type LineEditorKind } from './line-editor';

/**
 * The line being typed into a session, as the shell will run it when Enter comes: what every
 * writer (the human, agents, scripts) typed since the last Enter, with the line editor's keys
 * applied (moving the cursor, deleting, killing and yanking: line-editor.ts). Deny rules are
 * matched against it (docs/protocol.md "Agent guards"), so a line split across writes
 * (`send_keys ["r"]`, then `send "m -rf …"`) or put together out of order with the arrow keys is
 * judged whole.
 *
 * It follows keystrokes, not the shell's memory: a line recalled from history or a completion's
 * text is not seen (the text typed is, where it was typed).
 */
export class TypedLine {
  private _state: EditorState = { line: '', cursor: 0, overflow: false, killed: '', lastWasKill: false };
  /** Since the line began, every key was a character or an erasing one at its end (APPEND_ONLY). */
  private _appendOnly = true;
  /**
   * The line is `unknown` only because it was typed ahead of a command that ended (commandEnded)
   * with `_appendOnly` keys: the command may have read its start, so the shell's line is an end
   * of it (or nothing), its cursor at the end as this one's. The same keys at the end shorten both
   * alike: once this one is erased to nothing, so is the shell's, and the line is known again.
   */
  private _aheadTail = false;

  /**
   * @param _editor whose keys they are: readline's (bash's, the default), zsh's or fish's.
   * @param _metaBytes the session's locale is not UTF-8 (LineEditOptions.metaBytes).
   */
  constructor(
    private readonly _editor: LineEditorKind = 'readline',
    private _metaBytes = false,
  ) {}

  /** The characters typed since the last Enter (editing applied). */
  get pending(): string {
    return this._state.line;
  }

  /** Where the cursor is in `pending` (UTF-16 units). */
  get cursor(): number {
    return this._state.cursor;
  }

  /** The pending line went past MAX_TYPED_LINE_CHARS and was not kept whole. */
  get overflow(): boolean {
    return this._state.overflow;
  }

  /** Nothing is on the line: no character typed since the last Enter (or all erased), none unknown, no line it continues. */
  get empty(): boolean {
    return this._state.line === '' && !this._state.unknown && !this._state.continued;
  }

  /** The line holds what the keys cannot say (EditorState.unknown). */
  get unknown(): boolean {
    return this._state.unknown ?? false;
  }

  /**
   * Something was written to the program. While it reads a secret (`secret`), what is typed is no
   * shell line and is not kept; its Enter still ends the line. `canonical`: the terminal reads
   * whole lines as it comes (the kernel edits it).
   */
  observe(data: string, secret: boolean, canonical = false): void {
    const r = lineEdit(this._state, data, { secret, editor: this._editor, canonical, metaBytes: this._metaBytes });
    this._state = r.state;
    this._followEnd(data, secret, r.unfollowed);
    // A locale set in the shell may no longer be UTF-8: its bytes beyond ASCII may be Meta keys.
    if (r.submitted.some((line) => LOCALE_VARIABLE.test(line))) this._metaBytes = true;
  }

  /**
   * The lines `data` would submit if written now (each as the shell would receive it), and last the
   * line left pending after it when it is not empty; whether one of them overflowed, whether one it
   * submits is `unknown`, and whether it has a key the model does not follow.
   */
  preview(data: string, canonical = false): { lines: string[]; overflow: boolean; unknown: boolean; unfollowed: boolean } {
    const r = lineEdit(this._state, data, { secret: false, editor: this._editor, canonical, metaBytes: this._metaBytes });
    const lines = r.submitted;
    const pending = (r.state.continued ?? '') + r.state.line;
    if (pending.trim() !== '') lines.push(pending);
    // bash runs what its history expansion brings back (`!!`, `!$`, `^old^new`), which was not typed.
    const unfollowed = r.unfollowed || (this._editor === 'readline' && r.submitted.some(expandsHistory)) || r.submitted.some(rerunsHistory);
    return { lines, overflow: r.state.overflow || r.submittedOverflow, unknown: r.submittedUnknown, unfollowed };
  }

  /**
   * A command ended and the shell reads its line again: what was typed while it ran and is not
   * ended by Enter may be read by the command or by the shell, so the line is no longer known.
   */
  commandEnded(): void {
    const s = this._state;
    if (!(s.line !== '' || s.continued || s.escape || s.quoteNext)) return;
    // A line already unknown keeps what it was: typed ahead (of an earlier command), or not followed.
    if (!s.unknown) this._aheadTail = this._appendOnly && !s.continued && !s.escape && !s.quoteNext && !s.overflow && s.cursor === s.line.length;
    this._state = { ...s, unknown: true };
  }

  /**
   * Keeps `_appendOnly` and `_aheadTail` for a write just applied: a line end starts a new line;
   * keys kept on the line (not a secret's) that are not APPEND_ONLY, or not followed, end both; and
   * a line typed ahead and erased to nothing with such keys is known empty (an agent's next write is
   * judged, the human's line is no longer started: docs/protocol.md#typing-arbitration).
   */
  private _followEnd(data: string, secret: boolean, unfollowed: boolean): void {
    let tail = data;
    for (const m of data.matchAll(LINE_ENDS)) tail = data.slice(m.index! + 1);
    if (tail !== data) {
      this._appendOnly = true;
      this._aheadTail = false;
    }
    // Keys at a secret prompt are not kept (an Enter ends the secret; Ctrl+C does not).
    const kept = !secret || /[\r\n\x0f]/.test(data);
    if (unfollowed || (kept && !APPEND_ONLY.test(tail))) {
      this._appendOnly = false;
      this._aheadTail = false;
    }
    const s = this._state;
    if (this._aheadTail && s.line === '' && s.unknown && !s.continued && !s.escape && !s.quoteNext) {
      this._state = { ...s, unknown: false };
      this._aheadTail = false;
    }
  }
}

/** Keys that end a line, or abandon it: Enter, Ctrl+O (accept and fetch the next), Ctrl+C. */
const LINE_ENDS = /[\r\n\x0f\x03]/g;

/**
 * Characters, Backspace (DEL) and Ctrl+U: keys that act at the line's end only, and alike on any
 * end of it (readline's, zle's, fish's and the kernel's), so what a command did not read of a
 * line made of them is an end of the line kept. (^H is a character to the kernel, an erase to
 * readline: not one of them.)
 */
const APPEND_ONLY = /^[^\x00-\x14\x16-\x1f]*$/;

export { MAX_TYPED_LINE_CHARS } from './line-editor';

/** One key: one character, or one escape sequence (`ESC [ A`, `ESC O P`, Alt+x), as one write sends it. */
export function isOneKey(data: string): boolean {
  return ONE_KEY.test(data);
}

// A character (a surrogate pair counts as one), ESC alone, a CSI or SS3 sequence, or ESC and a character (Alt+x).
const ONE_KEY = /^(?:[^\x1b]|\x1b(?:\[[0-?]*[ -/]*[@-~]|O.|[^[O])?)$/su;

/**
 * Whether bash's history expansion acts on `line`: a `!` that starts an event (`!!`, `!$`, `!-2`,
 * `!#`, `!ls`) outside single quotes, or a line that starts with `^` (`^old^new`). `!` before a
 * blank, `=` or `(`, and `${!name}`, are not.
 */
export function expandsHistory(line: string): boolean {
  if (line.trimStart().startsWith('^')) return true;
  let quote: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote === "'") {
      if (c === "'") quote = undefined;
    } else if (c === '\\') i++;
    else if (c === "'" && quote === undefined) quote = c;
    else if (c === '"') quote = quote === '"' ? undefined : '"';
    else if (c === '!') {
      const next = line[i + 1];
      if (next === undefined || /[\s=(]/.test(next) || (next === '"' && quote === '"')) continue;
      if (line[i - 1] === '{' && line[i - 2] === '$') continue;
      return true;
    }
  }
  return false;
}

/**
 * Whether `line` runs `fc` to run history lines again (`fc -s`, `fc -e -`, `fc` with an editor):
 * what it runs was not typed. `fc -l` only lists them.
 */
export function rerunsHistory(line: string): boolean {
  return line.split(/[;&|()\n]/).some((command) => {
    const words = command.trim().split(/\s+/);
    return words[0] === 'fc' && !words.slice(1).some((w) => /^-[a-zA-Z]*l/.test(w));
  });
}

const LOCALE_VARIABLE = /\b(?:LC_ALL|LC_CTYPE|LANG)\b/;
