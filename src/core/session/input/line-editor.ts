/**
 * What a shell's line editor does with the keys typed at its prompt, as far as the keys alone say:
 * readline's emacs keys, which bash uses and zsh's and fish's defaults share for these. Moving the
 * cursor (arrows, Home/End, Ctrl+A/E/B/F, Alt+B/F, Ctrl+arrows), deleting (Backspace, Delete,
 * Ctrl+D), killing and yanking (Ctrl+K/U/W/Y, Alt+D, Alt+Backspace; consecutive kills add up as
 * readline's kill ring does), Ctrl+T, Alt+U/L/C, Ctrl+V, Ctrl+C. What the keys cannot say (a line
 * recalled from history, a completion's text, any key not above) is not guessed: it leaves the line
 * `unknown` and the write `unfollowed` (Tab also types a space, the least a completion makes).
 */

/**
 * Most characters of one typed line kept: a shell line longer than this is not something a person
 * or an agent types, and keeping it bounded keeps a session's memory bounded.
 */
export const MAX_TYPED_LINE_CHARS = 64 * 1024;

/**
 * Characters one write may have the editor copy (an edit in the middle of the line copies the line).
 * A person types a key at a time; only a write made to be costly (a megabyte of "a, Left" into a
 * long line) goes past it, and is then not followed further: the line it leaves cannot be judged.
 */
const EDIT_WORK_PER_WRITE = 8 * 1024 * 1024;

/** The line as the editor holds it between writes. */
export interface EditorState {
  readonly line: string;
  /** Where the next character goes, in UTF-16 units of `line`. */
  readonly cursor: number;
  /** Typed past MAX_TYPED_LINE_CHARS: the line can no longer be judged. */
  readonly overflow: boolean;
  /** What the last kill took (Ctrl+Y types it again). */
  readonly killed: string;
  /** The last key killed: the next kill adds to `killed` instead of replacing it. */
  readonly lastWasKill: boolean;
  /** Ctrl+V came last: the next character is typed as it is. */
  readonly quoteNext?: boolean;
  /** The start of an escape sequence that ended a write: the editor reads on into the next write. */
  readonly escape?: string;
  /**
   * The line holds what the keys cannot say: a key the model does not follow came (history, a
   * completion, an undo…), or text typed ahead while a command ran may reach it. Cleared by Enter
   * and Ctrl+C.
   */
  readonly unknown?: boolean;
  /**
   * The lines before this one that bash reads as one command with it: a line ended by a backslash
   * (joined without it) or inside an open quote (joined with a newline).
   */
  readonly continued?: string;
}

/**
 * The line editor reading the keys: bash's readline (also the default for any other program),
 * zsh's or fish's. zsh's Ctrl+U erases the whole line and Ctrl+T at the start swaps the first two;
 * both have other word characters than readline and need no binding for Home, End or Delete to
 * exist, and fish takes its autosuggestion into the line with Right or End at the line's end: keys
 * the model then does not follow.
 */
export type LineEditorKind = 'readline' | 'zle' | 'fish';

/** The line editor of a program, by its name. */
export function lineEditorOf(command: string): LineEditorKind {
  const name = command.slice(command.lastIndexOf('/') + 1);
  return name === 'zsh' ? 'zle' : name === 'fish' ? 'fish' : 'readline';
}

/** Whether the locale of this environment reads UTF-8 (LC_ALL, else LC_CTYPE, else LANG). */
export function isUtf8Locale(env: Readonly<Record<string, string | undefined>>): boolean {
  const locale = env.LC_ALL || env.LC_CTYPE || env.LANG || '';
  return /utf-?8/i.test(locale);
}

/** Keys readline's way only: word characters, and the bindings of Debian's /etc/inputrc. */
const READLINE_ONLY: ReadonlySet<Action> = new Set<Action>([
  'backwardWord',
  'forwardWord',
  'killWord',
  'backwardKillWord',
  'unixWordRubout',
  'upcaseWord',
  'downcaseWord',
  'capitalizeWord',
]);
/** Escape sequences bound in Debian's /etc/inputrc, not in zsh or fish without a configuration. */
const INPUTRC_SEQUENCES = new Set(['\x1b[1~', '\x1b[4~', '\x1b[3~', '\x1b[5C', '\x1b[5D', '\x1b\x1b[C', '\x1b\x1b[D', '\x1b[H', '\x1b[F', '\x1bOH', '\x1bOF']);

/** How a write is read. */
export interface LineEditOptions {
  /** The program reads a secret: nothing typed is kept, and its Enter ends it. */
  secret: boolean;
  editor: LineEditorKind;
  /** The terminal reads whole lines (the kernel edits them). */
  canonical?: boolean;
  /** The locale is not UTF-8: readline reads a byte above 127 as Meta and a key (convert-meta). */
  metaBytes?: boolean;
}

/** What `lineEdit` made of a write. */
export interface LineEdit {
  state: EditorState;
  /** The lines the write submits, as the shell gets them. */
  submitted: string[];
  /** One of them overflowed (MAX_TYPED_LINE_CHARS, or the write's work). */
  submittedOverflow: boolean;
  /** One of them was `unknown`. */
  submittedUnknown: boolean;
  /** The write has a key the model does not follow. */
  unfollowed: boolean;
}

/** A CSI or SS3 sequence (arrows, function keys) or an Alt+key. */
const KEY_SEQUENCE = /^\x1b(?:\x1b?\[[0-9;?]*[ -/]*[@-~]|\x1b?O[@-~]|[^[O])?/;

/** A write that ends inside a sequence (`ESC`, `ESC [`, `ESC [ 1 ;`): its end comes with the next write. */
const UNFINISHED_SEQUENCE = /^\x1b\x1b?(?:\[[0-9;?]*[ -/]*|O)?$/;

/** Escape sequences that move or delete (xterm's, and the ones Debian's /etc/inputrc binds). */
const SEQUENCE_ACTIONS: Readonly<Record<string, Action>> = {
  '\x1b[D': 'left',
  '\x1bOD': 'left',
  '\x1b[C': 'right',
  '\x1bOC': 'right',
  '\x1b[H': 'home',
  '\x1bOH': 'home',
  '\x1b[1~': 'home',
  '\x1b[F': 'end',
  '\x1bOF': 'end',
  '\x1b[4~': 'end',
  '\x1b[3~': 'delete',
  '\x1b[1;5D': 'backwardWord',
  '\x1b\x1b[D': 'backwardWord',
  '\x1b[5D': 'backwardWord',
  '\x1b[1;5C': 'forwardWord',
  '\x1b\x1b[C': 'forwardWord',
  '\x1b[5C': 'forwardWord',
  '\x1bb': 'backwardWord',
  '\x1bf': 'forwardWord',
  '\x1bd': 'killWord',
  '\x1b\x7f': 'backwardKillWord',
  '\x1b\b': 'backwardKillWord',
  '\x1bu': 'upcaseWord',
  '\x1bl': 'downcaseWord',
  '\x1bc': 'capitalizeWord',
};

/** The Insert key. */
const QUOTED_INSERT = '\x1b[2~';

/** Control keys that edit (Enter, Ctrl+O and Ctrl+C are handled before these). */
const CONTROL_ACTIONS: Readonly<Record<string, Action>> = {
  '\x01': 'home',
  '\x05': 'end',
  '\x02': 'left',
  '\x06': 'right',
  '\x04': 'deleteOrEof',
  '\x7f': 'backspace',
  '\b': 'backspace',
  '\x0b': 'killLine',
  '\x15': 'discardLine',
  '\x17': 'unixWordRubout',
  '\x19': 'yank',
  '\x14': 'transpose',
};

/** Control keys that leave the line as it is: set-mark, abort, clear-screen, and the terminal's Ctrl+Z, Ctrl+\\ and Ctrl+Q. */
const CONTROL_NO_OPS = new Set(['\x00', '\x07', '\x0c', '\x1a', '\x1c', '\x11']);

const NOT_ASCII = /[^\x00-\x7f]/;

/** Characters that combine with the one before or have no width: readline edits them with it, the model could not. */
const COMBINING = /[\p{M}\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff]/u;

type Action =
  | 'left'
  | 'right'
  | 'home'
  | 'end'
  | 'delete'
  | 'deleteOrEof'
  | 'backspace'
  | 'backwardWord'
  | 'forwardWord'
  | 'killWord'
  | 'backwardKillWord'
  | 'killLine'
  | 'discardLine'
  | 'unixWordRubout'
  | 'yank'
  | 'transpose'
  | 'upcaseWord'
  | 'downcaseWord'
  | 'capitalizeWord';

/**
 * Applies `data` to the line: Enter (and Ctrl+O, accept and fetch the next history line) submits,
 * the editing keys edit, and any other key leaves the line `unknown`. While the program reads a
 * secret nothing typed is kept. `editor`: whose keys they are (LineEditorKind). `canonical`: the terminal reads whole lines (a command runs), so the
 * kernel edits what is typed ahead: Backspace, Ctrl+W and Ctrl+U at the line's end, every other
 * key as a character.
 */
export function lineEdit(start: EditorState, data: string, how: LineEditOptions): LineEdit {
  const { editor, canonical = false, metaBytes = false } = how;
  let secret = how.secret;
  const ed = new Editor(start, editor === 'zle');
  data = ed.escape + data;
  ed.escape = '';
  if (canonical) return kernelLineEdit(ed, data, secret, how);
  for (let i = 0; i < data.length; i++) {
    const c = data[i]!;
    if (ed.work > EDIT_WORK_PER_WRITE) {
      // What this write leaves is not known: the line, or the one after the write's last Enter.
      if (/[\r\n\x0f]/.test(data.slice(i))) {
        ed.submittedOverflow = true;
        ed.clear();
      }
      ed.overflow = true;
      ed.quoteNext = false;
      break;
    }
    if (c === '\x03') {
      ed.clear(); // Ctrl+C abandons the line: the terminal makes it a signal, quoted or not
    } else if (ed.quoteNext) {
      ed.quoteNext = false;
      if (!secret) ed.insert(c);
    } else if (c === '\r' || c === '\n' || c === '\x0f') {
      ed.submit(secret);
      if (c === '\x0f' && !secret) ed.lose(); // the next line from history
      secret = false; // the secret was answered with this Enter
    } else if (c === '\x1b') {
      const rest = data.slice(i, i + 32);
      if (i + rest.length === data.length && UNFINISHED_SEQUENCE.test(rest)) {
        ed.escape = rest;
        break;
      }
      let seq = KEY_SEQUENCE.exec(rest)?.[0] ?? c;
      // Ctrl+C is the terminal's signal even after an Escape: the sequence is dropped, the line too.
      if (seq.endsWith('\x03')) seq = c;
      i += seq.length - 1;
      // Insert is quoted-insert in Debian's /etc/inputrc (as Ctrl+V): the key after it is typed as it is.
      if (seq === QUOTED_INSERT && editor === 'readline' && !secret) {
        ed.quoteNext = true;
        continue;
      }
      if (secret) continue;
      const action = SEQUENCE_ACTIONS[seq];
      if (action && followed(action, editor, ed, seq)) ed.apply(action);
      else ed.lose(); // history, function keys, a paste, other Alt+keys: nothing the keys can say
    } else if (secret) {
      // a secret's keys are no shell line
    } else if (c === '\x16') {
      ed.quoteNext = true;
    } else if (c < ' ' || c === '\x7f') {
      const action = CONTROL_ACTIONS[c];
      if (action && followed(action, editor, ed)) ed.apply(action);
      else if (action) ed.lose();
      else if (CONTROL_NO_OPS.has(c)) ed.lastWasKill = false;
      else {
        ed.lose(); // Tab's completion, Ctrl+X…, undo, searches
        if (c === '\t') ed.insert(' '); // and judged with a word break, the least a completion makes
      }
    } else {
      // A run of text goes in at once: one copy of the line per write, not per character.
      let j = i + 1;
      while (j < data.length && data[j]! >= ' ' && data[j] !== '\x7f') j++;
      // readline reads the text and the key after it in one go when they come together, and then
      // does not count the text as a command between two kills: they add up as if it were not there.
      const wasKill = ed.lastWasKill;
      const text = data.slice(i, j);
      ed.insert(text);
      if (j < data.length) ed.lastWasKill = wasKill;
      if (COMBINING.test(text) || (metaBytes && NOT_ASCII.test(text))) ed.lose();
      i = j - 1;
    }
  }
  return ed.result();
}

/** Whether `action` does in `editor` what the model does (`seq`: the escape sequence that asked for it). */
function followed(action: Action, editor: LineEditorKind, ed: Editor, seq?: string): boolean {
  if (editor === 'readline') return true;
  if (READLINE_ONLY.has(action) || (seq !== undefined && INPUTRC_SEQUENCES.has(seq))) return false;
  // fish's autosuggestion comes into the line with Right or End at its end.
  return !(editor === 'fish' && (action === 'right' || action === 'end') && ed.cursor === ed.line.length);
}

/**
 * A write the kernel reads as lines (canonical mode, ICRNL, ISIG, the default erase, word-erase,
 * kill and next-literal keys): what it edits, it edits at the line's end; every other character
 * is part of the line, an escape sequence too.
 */
function kernelLineEdit(ed: Editor, data: string, secret: boolean, how: LineEditOptions): LineEdit {
  // A line the kernel hands on may be read by the shell's line editor once the command ends (typed
  // ahead), which then acts on the keys in it: judged that way too, and its keys must be followed.
  const asTheShellReadsIt = (text: string) => {
    const view = lineEdit(EMPTY_LINE, text, { secret: false, editor: how.editor, metaBytes: how.metaBytes });
    ed.submitted.push(...view.submitted);
    if (view.state.line.trim() !== '') ed.submitted.push(view.state.line);
    if (view.unfollowed || view.state.escape || view.state.quoteNext) ed.unfollowed = true;
  };
  ed.cursor = ed.line.length;
  for (let i = 0; i < data.length && ed.work <= EDIT_WORK_PER_WRITE; i++) {
    const c = data[i]!;
    if (c === '\x03') ed.clear();
    else if (ed.quoteNext) {
      ed.quoteNext = false;
      if (!secret) ed.insert(c);
    } else if (c === '\r' || c === '\n') {
      if (!secret) asTheShellReadsIt(ed.line + '\r');
      ed.submit(secret);
      secret = false;
    } else if (secret) {
      // a secret's keys are no shell line
    } else if (c === '\x16') ed.quoteNext = true;
    else if (c === '\x7f') ed.apply('backspace');
    else if (c === '\x17') ed.apply('unixWordRubout');
    else if (c === '\x15') ed.apply('discardLine');
    else if (c !== '\x04' && c !== '\x1a' && c !== '\x1c') ed.insert(c);
    ed.cursor = ed.line.length;
  }
  if (ed.work > EDIT_WORK_PER_WRITE) ed.overflow = true;
  if (!secret && ed.line !== '') asTheShellReadsIt(ed.line);
  return ed.result();
}

const EMPTY_LINE: EditorState = { line: '', cursor: 0, overflow: false, killed: '', lastWasKill: false };

/** A letter or digit of any script (readline's word characters), tested where `lastIndex` says. */
const WORD_CHAR_AT = /[\p{L}\p{N}]/uy;

/** What looking at one character costs against EDIT_WORK_PER_WRITE, counted in characters copied. */
const SCAN_WORK = 16;

/** The mutable line that `lineEdit` works on. */
class Editor {
  line: string;
  cursor: number;
  overflow: boolean;
  killed: string;
  lastWasKill: boolean;
  quoteNext: boolean;
  escape: string;
  unknown: boolean;
  continued: string;
  /** Characters copied for this write (EDIT_WORK_PER_WRITE). */
  work = 0;
  /** This write had a key the model does not follow. */
  unfollowed = false;
  /** What this write submits (LineEdit). */
  readonly submitted: string[] = [];
  submittedOverflow = false;
  submittedUnknown = false;
  /** The command being continued grew past MAX_TYPED_LINE_CHARS: the next line cannot be judged. */
  overflowNext = false;

  constructor(
    s: EditorState,
    private readonly _zle: boolean,
  ) {
    this.line = s.line;
    this.cursor = s.cursor;
    this.overflow = s.overflow;
    this.killed = s.killed;
    this.lastWasKill = s.lastWasKill;
    this.quoteNext = s.quoteNext ?? false;
    this.escape = s.escape ?? '';
    this.unknown = s.unknown ?? false;
    this.continued = s.continued ?? '';
  }

  state(): EditorState {
    const { line, cursor, overflow, killed, lastWasKill, quoteNext, escape, unknown, continued } = this;
    return { line, cursor, overflow, killed, lastWasKill, quoteNext, escape, unknown, continued };
  }

  /** What the write made of the line. */
  result(): LineEdit {
    const { submitted, submittedOverflow, submittedUnknown, unfollowed } = this;
    return { state: this.state(), submitted, submittedOverflow, submittedUnknown, unfollowed };
  }

  /** Enter: the command the shell now runs, if any, is submitted, and a new line starts. */
  submit(secret: boolean): void {
    const line = this.enter(secret);
    if (line !== undefined) this.submitted.push(line);
    if (this.overflow) this.submittedOverflow = true;
    if (this.unknown && !secret) this.submittedUnknown = true;
    this.clearLine();
  }

  /**
   * The command the shell runs at Enter (the lines it continues included), or undefined when
   * there is none, or when bash reads on (a trailing backslash, an open quote: `continued`).
   */
  private enter(secret: boolean): string | undefined {
    if (secret) {
      this.continued = '';
      return undefined;
    }
    const whole = this.continued + this.line;
    const joiner = continuation(whole);
    this.continued = joiner === undefined ? '' : joiner === '' ? whole.slice(0, -1) : whole + joiner;
    if (this.continued.length > MAX_TYPED_LINE_CHARS) {
      this.continued = '';
      this.overflowNext = true;
    }
    return joiner === undefined && (whole.trim() !== '' || this.unknown) ? whole : undefined;
  }

  /** After Enter: a new line, the command it continues kept. */
  private clearLine(): void {
    const { continued, overflowNext } = this;
    this.clear();
    this.continued = continued;
    this.overflow = overflowNext;
    this.overflowNext = false;
  }

  /** A key the model does not follow: what the line holds is no longer known. */
  lose(): void {
    this.lastWasKill = false;
    this.unknown = true;
    this.unfollowed = true;
  }

  clear(): void {
    this.quoteNext = false;
    this.unknown = false;
    this.continued = '';
    this.line = '';
    this.cursor = 0;
    this.overflow = false;
    this.lastWasKill = false;
  }

  insert(text: string): void {
    this.lastWasKill = false;
    const room = MAX_TYPED_LINE_CHARS - this.line.length;
    if (text.length > room) {
      this.overflow = true;
      text = text.slice(0, Math.max(0, room));
    }
    if (this.cursor === this.line.length) {
      this.line += text;
      this.work += text.length;
    } else {
      this.line = this.line.slice(0, this.cursor) + text + this.line.slice(this.cursor);
      this.work += this.line.length;
    }
    this.cursor += text.length;
  }

  apply(action: Action): void {
    const wasKill = this.lastWasKill;
    this.lastWasKill = false;
    const { line, cursor } = this;
    switch (action) {
      case 'left':
        this.cursor = prevChar(line, cursor);
        return;
      case 'right':
        this.cursor = nextChar(line, cursor);
        return;
      case 'home':
        this.cursor = 0;
        return;
      case 'end':
        this.cursor = line.length;
        return;
      case 'backspace':
        return this.remove(prevChar(line, cursor), cursor);
      case 'delete':
        return this.remove(cursor, nextChar(line, cursor));
      case 'deleteOrEof':
        // On an empty line it is end-of-file (the shell exits or says so); the line stays empty.
        return this.remove(cursor, nextChar(line, cursor));
      case 'backwardWord':
        this.cursor = this.wordStart(cursor);
        return;
      case 'forwardWord':
        this.cursor = this.wordEnd(cursor);
        return;
      case 'killWord':
        return this.kill(cursor, this.wordEnd(cursor), wasKill, false);
      case 'backwardKillWord':
        return this.kill(this.wordStart(cursor), cursor, wasKill, true);
      case 'killLine':
        return this.kill(cursor, line.length, wasKill, false);
      case 'discardLine':
        if (this._zle) return this.kill(0, line.length, wasKill, true);
        return this.kill(0, cursor, wasKill, true);
      case 'unixWordRubout': {
        let from = cursor;
        while (from > 0 && isBlank(line[from - 1]!)) from--;
        while (from > 0 && !isBlank(line[from - 1]!)) from--;
        return this.kill(from, cursor, wasKill, true);
      }
      case 'yank':
        return this.insert(this.killed);
      case 'transpose':
        return this.transpose();
      case 'upcaseWord':
      case 'downcaseWord':
      case 'capitalizeWord':
        return this.changeCase(action);
    }
  }

  private remove(from: number, to: number): void {
    this.work += this.line.length;
    this.line = this.line.slice(0, from) + this.line.slice(to);
    this.cursor = from;
    if (this.line === '') this.overflow = false; // nothing left that was not seen
  }

  /** Removes [from, to) into the kill buffer; a kill right after a kill adds to it (before it when killing backward). */
  private kill(from: number, to: number, afterKill: boolean, backward: boolean): void {
    if (from === to) return; // nothing killed: the buffer stays, and the next kill starts afresh
    this.lastWasKill = true;
    const text = this.line.slice(from, to);
    this.killed = !afterKill ? text : backward ? text + this.killed : this.killed + text;
    if (this.killed.length > MAX_TYPED_LINE_CHARS) this.killed = this.killed.slice(0, MAX_TYPED_LINE_CHARS);
    this.remove(from, to);
  }

  /** Ctrl+T: the characters before and at the cursor change places (at the end, the last two), and the cursor moves on; at the start, readline does nothing. */
  private transpose(): void {
    const { line } = this;
    if (line.length < 2 || (line.length === 2 && nextChar(line, 0) === 2)) return; // fewer than two characters
    if (this.cursor === 0) {
      if (!this._zle) return;
      this.cursor = nextChar(line, 0); // zsh swaps the first two
    }
    const at = this.cursor === line.length ? prevChar(line, this.cursor) : this.cursor;
    const before = prevChar(line, at);
    const after = nextChar(line, at);
    this.line = line.slice(0, before) + line.slice(at, after) + line.slice(before, at) + line.slice(after);
    this.cursor = after;
    this.work += line.length;
  }

  /** Where backward-word lands from `i` (the scan charged to the write's work). */
  private wordStart(i: number): number {
    const to = wordStartBefore(this.line, i);
    this.work += SCAN_WORK * (i - to);
    return to;
  }

  /** Where forward-word lands from `i`. */
  private wordEnd(i: number): number {
    const to = wordEndAfter(this.line, i);
    this.work += SCAN_WORK * (to - i);
    return to;
  }

  /** Alt+U/L/C: the text from the cursor to the end of the next word, in upper or lower case or capitalized. */
  private changeCase(action: 'upcaseWord' | 'downcaseWord' | 'capitalizeWord'): void {
    const end = this.wordEnd(this.cursor);
    this.work += SCAN_WORK * (end - this.cursor); // and each character mapped
    let changed = '';
    let inWord = false;
    for (const ch of this.line.slice(this.cursor, end)) {
      const word = isWordAt(ch, 0);
      const upper = action === 'upcaseWord' || (action === 'capitalizeWord' && word && !inWord);
      const mapped = upper ? ch.toUpperCase() : ch.toLowerCase();
      changed += mapped.length === ch.length ? mapped : ch; // one character for one, as the editor maps them
      inWord = word;
    }
    this.line = this.line.slice(0, this.cursor) + changed + this.line.slice(end);
    this.cursor = end;
    this.work += this.line.length;
  }
}

/**
 * How bash reads on after `text` when Enter comes: '' when a backslash ends it (the next line is
 * joined to it without the two), a newline inside an open quote, undefined when the command is whole.
 * A comment ends the reading (what is in it opens no quote).
 */
function continuation(text: string): '' | '\n' | undefined {
  let quote: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quote === "'") {
      if (c === "'") quote = undefined;
    } else if (c === '\\') {
      if (i === text.length - 1) return '';
      i++;
    } else if (quote === '"') {
      if (c === '"') quote = undefined;
    } else if (c === "'" || c === '"') quote = c;
    else if (c === '#' && (i === 0 || isBlank(text[i - 1]!) || text[i - 1] === ';')) return undefined;
  }
  return quote === undefined ? undefined : '\n';
}

function isBlank(c: string): boolean {
  return c === ' ' || c === '\t';
}

/** The index of the character before `i` (a surrogate pair is one character). */
function prevChar(line: string, i: number): number {
  if (i <= 0) return 0;
  const low = line.charCodeAt(i - 1);
  return i >= 2 && low >= 0xdc00 && low <= 0xdfff && isHighSurrogate(line.charCodeAt(i - 2)) ? i - 2 : i - 1;
}

/** The index after the character at `i`. */
function nextChar(line: string, i: number): number {
  if (i >= line.length) return line.length;
  return isHighSurrogate(line.charCodeAt(i)) && i + 1 < line.length ? i + 2 : i + 1;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isWordAt(line: string, i: number): boolean {
  const code = line.charCodeAt(i);
  if (code < 0x80) return (code >= 0x30 && code <= 0x39) || ((code | 0x20) >= 0x61 && (code | 0x20) <= 0x7a);
  WORD_CHAR_AT.lastIndex = i;
  return WORD_CHAR_AT.test(line);
}

/** Where backward-word lands: over what is not a word, then to the start of the word before. */
function wordStartBefore(line: string, i: number): number {
  while (i > 0 && !isWordAt(line, prevChar(line, i))) i = prevChar(line, i);
  while (i > 0 && isWordAt(line, prevChar(line, i))) i = prevChar(line, i);
  return i;
}

/** Where forward-word lands: over what is not a word, then to the end of the word after. */
function wordEndAfter(line: string, i: number): number {
  while (i < line.length && !isWordAt(line, i)) i = nextChar(line, i);
  while (i < line.length && isWordAt(line, i)) i = nextChar(line, i);
  return i;
}
