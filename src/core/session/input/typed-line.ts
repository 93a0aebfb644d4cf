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
    if (s.line !== '' || s.continued || s.escape || s.quoteNext) this._state = { ...s, unknown: true };
  }
}

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
