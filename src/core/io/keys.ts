/**
 * Key names (as accepted by `pty/write` `action.key` and MCP `send_keys`) → the bytes an
 * xterm-compatible terminal (TERM=xterm-256color) sends for them, in normal cursor-key mode or,
 * when the program turned it on (`CSI ? 1 h`), application cursor-key mode (arrows, Home, End).
 *
 * A name is `[Modifier+]...Base`, modifiers `Ctrl`, `Shift`, `Alt` in any order, each at most once.
 * Names are case-sensitive; `Del` is accepted for `Delete`; any single character (one code point)
 * is a name of its own and yields itself.
 */

/** Thrown for a key name that cannot be resolved; callers map it to JSON-RPC -32602. */
export class KeyNameError extends Error {
  /** The key name as given. */
  readonly keyName: string;

  constructor(name: string, detail?: string) {
    super(`Unknown key name: ${JSON.stringify(name)}${detail ? ` (${detail})` : ''}`);
    this.name = 'KeyNameError';
    this.keyName = name;
  }
}

/** Keys whose sequence ends in a final letter: unmodified as given, modified as `CSI 1;m <final>`. */
const FINAL_LETTER_KEYS: Readonly<Record<string, string>> = {
  ArrowUp: '\x1b[A',
  ArrowDown: '\x1b[B',
  ArrowRight: '\x1b[C',
  ArrowLeft: '\x1b[D',
  Home: '\x1b[H',
  End: '\x1b[F',
  F1: '\x1bOP',
  F2: '\x1bOQ',
  F3: '\x1bOR',
  F4: '\x1bOS',
};

/** Keys sent as `CSI n ~`, modified as `CSI n;m ~`. */
const TILDE_KEYS: Readonly<Record<string, number>> = {
  Insert: 2,
  Delete: 3,
  Del: 3,
  PageUp: 5,
  PageDown: 6,
  F5: 15,
  F6: 17,
  F7: 18,
  F8: 19,
  F9: 20,
  F10: 21,
  F11: 23,
  F12: 24,
};

/** Single-byte keys, with the byte xterm sends when Shift or Ctrl changes it (Alt prefixes ESC). */
const PLAIN_KEYS: Readonly<Record<string, { plain: string; shift?: string; ctrl?: string }>> = {
  Enter: { plain: '\r' },
  Tab: { plain: '\t', shift: '\x1b[Z' },
  Backspace: { plain: '\x7f', ctrl: '\x08' },
  Escape: { plain: '\x1b' },
};

/** Named keys that behave exactly like a character. */
const CHAR_KEYS: Readonly<Record<string, string>> = {
  Space: ' ',
};

/** Ctrl+<char> for characters other than letters (which map to code & 0x1f), as xterm/VT220 send. */
const CTRL_CHARS: Readonly<Record<string, string>> = {
  ' ': '\x00',
  '@': '\x00',
  '2': '\x00',
  '[': '\x1b',
  '3': '\x1b',
  '\\': '\x1c',
  '4': '\x1c',
  ']': '\x1d',
  '5': '\x1d',
  '^': '\x1e',
  '6': '\x1e',
  _: '\x1f',
  '7': '\x1f',
  '/': '\x1f',
  '?': '\x7f',
  '8': '\x7f',
};

/** xterm modifier bits; the CSI parameter is 1 + their sum. */
const MODIFIER_BITS = { Shift: 1, Alt: 2, Ctrl: 4 } as const;
type Modifier = keyof typeof MODIFIER_BITS;

const ESC = '\x1b';
const MODIFIER_PREFIX = /^(Ctrl|Shift|Alt)\+(.+)$/su;

/**
 * `table[name]` when `name` is one of the table's own entries: a name like `constructor` or
 * `__proto__` must not find what every object inherits.
 */
function entry<T>(table: Readonly<Record<string, T>>, name: string): T | undefined {
  return Object.hasOwn(table, name) ? table[name] : undefined;
}

function isSingleChar(s: string): boolean {
  const it = s[Symbol.iterator]();
  return !it.next().done && it.next().done === true;
}

function ctrlOf(name: string, ch: string): string {
  if (/^[A-Za-z]$/.test(ch)) return String.fromCharCode(ch.charCodeAt(0) & 0x1f);
  const mapped = entry(CTRL_CHARS, ch);
  if (mapped === undefined) throw new KeyNameError(name, `no Ctrl code for ${JSON.stringify(ch)}`);
  return mapped;
}

function charBytes(name: string, ch: string, mods: ReadonlySet<Modifier>): string {
  let out = ch;
  if (mods.has('Shift')) {
    const upper = ch.toUpperCase();
    if (isSingleChar(upper)) out = upper;
  }
  if (mods.has('Ctrl')) out = ctrlOf(name, out);
  return mods.has('Alt') ? ESC + out : out;
}

/**
 * Returns the byte sequence (as a JS string) for key name `name`, e.g. `keyToBytes('Ctrl+C') === '\x03'`,
 * `keyToBytes('Ctrl+ArrowUp') === '\x1b[1;5A'`, `keyToBytes('q') === 'q'`; with `applicationCursor`,
 * `keyToBytes('ArrowUp', true) === '\x1bOA'`.
 * @throws {KeyNameError} when the name is unknown or the combination has no byte sequence.
 */
export function keyToBytes(name: string, applicationCursor = false): string {
  if (isSingleChar(name)) return name;

  const mods = new Set<Modifier>();
  let base = name;
  for (let m = MODIFIER_PREFIX.exec(base); m; m = MODIFIER_PREFIX.exec(base)) {
    const mod = m[1] as Modifier;
    if (mods.has(mod)) throw new KeyNameError(name, `repeated modifier ${mod}`);
    mods.add(mod);
    base = m[2]!;
  }
  const param = 1 + [...mods].reduce((sum, mod) => sum + MODIFIER_BITS[mod], 0);

  const finalLetter = entry(FINAL_LETTER_KEYS, base);
  if (finalLetter !== undefined) {
    if (param !== 1) return `${ESC}[1;${param}${finalLetter.slice(-1)}`;
    // Application cursor keys: SS3 instead of CSI, as xterm sends them (modified ones keep CSI 1;m).
    return applicationCursor && finalLetter.startsWith(`${ESC}[`) ? `${ESC}O${finalLetter.slice(-1)}` : finalLetter;
  }
  const tilde = entry(TILDE_KEYS, base);
  if (tilde !== undefined) {
    return param === 1 ? `${ESC}[${tilde}~` : `${ESC}[${tilde};${param}~`;
  }
  const plain = entry(PLAIN_KEYS, base);
  if (plain !== undefined) {
    const shifted = mods.has('Shift') ? plain.shift : undefined;
    const out = shifted ?? (mods.has('Ctrl') ? plain.ctrl : undefined) ?? plain.plain;
    return mods.has('Alt') ? ESC + out : out;
  }
  const ch = entry(CHAR_KEYS, base) ?? (isSingleChar(base) ? base : undefined);
  if (ch !== undefined) return charBytes(name, ch, mods);

  throw new KeyNameError(name);
}
