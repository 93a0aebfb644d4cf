// What the person did in the terminal view, told to the model (`ui/update-model-context`,
// docs/guarantees.md#the-terminal-in-the-agents-chat): the lines they submitted and the keys that
// stop programs, never what they typed while the program asked for a secret.

/** Actions kept: a host sends only the last context update, so it carries the recent ones together. */
const MAX_ACTIONS = 10;
/** Longest line told as typed; a paste of a file is summarised, not repeated into the model's context. */
const MAX_LINE_CHARS = 200;

/** Control keys worth telling, by the byte the view's terminal sends for them. */
const NAMED_KEYS: Readonly<Record<string, string>> = { '\x03': 'Ctrl+C', '\x04': 'Ctrl+D', '\x1a': 'Ctrl+Z', '\x1c': 'Ctrl+\\' };

/**
 * Follows what the person types, chunk by chunk as the view sends it, and says what they did:
 * each submitted line (a secret one only as "a secret"), and Ctrl+C and the like.
 */
export class PersonActivity {
  private _line = '';
  private _lineSecret = false;
  private readonly _actions: string[] = [];

  /**
   * One chunk the person typed; `secret`: the program asked for a secret when it arrived.
   * Returns true when an action was completed (then `describe` says something new).
   */
  typed(data: string, secret: boolean): boolean {
    let completed = false;
    if (secret) {
      this._lineSecret = true;
      this._line = '';
    }
    // Escape sequences (arrows, function keys, a mouse report) move or edit: not told character by character.
    const plain = data.replace(/\x1b(\[[0-9;?<>]*[ -/]*[@-~]|O.|.)/g, '');
    for (const ch of plain) {
      if (ch === '\r' || ch === '\n') {
        this._push(this._lineSecret ? "answered the program's secret prompt (what they typed is not shown)" : `submitted: ${quoteLine(this._line)}`);
        this._line = '';
        this._lineSecret = false;
        completed = true;
      } else if (NAMED_KEYS[ch]) {
        this._push(`pressed ${NAMED_KEYS[ch]}`);
        this._line = '';
        this._lineSecret = false;
        completed = true;
      } else if (ch === '\x7f' || ch === '\b') {
        this._line = [...this._line].slice(0, -1).join('');
      } else if (ch >= ' ' && !this._lineSecret) {
        this._line += ch;
      }
    }
    return completed;
  }

  /** What the model is told: the recent actions in the session, oldest first. */
  describe(sessionName: string): string {
    if (this._actions.length === 0) return '';
    const list = this._actions.map((a) => `- ${a}`).join('\n');
    return `The person typed in the Shared PTY terminal view of session ${sessionName} (most recent last):\n${list}\nRead the screen (read_screen) before acting on the session.`;
  }

  private _push(action: string): void {
    this._actions.push(action);
    if (this._actions.length > MAX_ACTIONS) this._actions.shift();
  }
}

function quoteLine(line: string): string {
  if (line === '') return '(an empty line: Enter)';
  const chars = [...line];
  const shown = chars.length > MAX_LINE_CHARS ? `${chars.slice(0, MAX_LINE_CHARS).join('')}… (${chars.length} characters)` : line;
  return JSON.stringify(shown);
}
