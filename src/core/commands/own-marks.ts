import { timingSafeEqual } from 'node:crypto';

/** One of the shell integration's own marks, found in the output and passed on without its nonce. */
export interface OwnMark {
  /** What follows `ESC ] 633 ;`, without the nonce and the terminator: `A`, `D;0`, `E;ls\x3b pwd`, `P;Cwd=/tmp`. */
  payload: string;
  /** Where the mark's first byte (its ESC) is in the output passed on. */
  start: number;
  /** Where the output passed on continues after the mark's terminator. */
  end: number;
}

/** What one chunk of the program's output becomes: the output to pass on, and the marks in it. */
export interface FilteredOutput {
  /** The bytes to pass on: the chunk, less the nonces of marks, less a mark not complete yet (held). */
  output: Buffer;
  /** The integration's own marks that ended in this chunk, at positions in `output`. */
  marks: OwnMark[];
}

/** `ESC ] 633 ;`: how every VS Code shell integration sequence starts. */
const PREFIX = Buffer.from('\x1b]633;', 'latin1');
/**
 * The prefix less its `ESC ]`: what is searched for in each chunk (findPrefix). Rare in any output,
 * where an ESC is not: coloured text has one every few bytes, and searching for the whole prefix
 * from each of them cost the main thread several ms per MB of coloured output (bench/README.md).
 */
const PREFIX_TAIL = PREFIX.subarray(2);
/** The same with the 8-bit OSC introducer (U+009D as UTF-8), which xterm.js takes too. */
const C1_PREFIX = Buffer.from([0xc2, 0x9d, ...PREFIX_TAIL]);
const BEL = 0x07;
const ESC = 0x1b;
const RIGHT_BRACKET = 0x5d;
const BACKSLASH = 0x5c;
/** CAN and SUB: a terminal abandons an OSC at either (ECMA-48). */
const CAN = 0x18;
const SUB = 0x1a;
const SEMICOLON = 0x3b;
/** The UTF-8 lead byte of the C1 controls, and the second bytes of OSC (U+009D) and ST (U+009C). */
const C1_LEAD = 0xc2;
const C1_OSC = 0x9d;
const C1_ST = 0x9c;

/**
 * The kinds of mark the integration ends with the nonce (a command line, its start and end, the
 * cwd and other properties). One printed without it is passed on with its number made `63X`: no
 * terminal acts on it (xterm.js and tmux drop an OSC whose number is not one), so the editor's
 * terminal (VS Code's own shell integration reads OSC 633) never takes it for a command, an exit
 * code or a cwd. The prompt marks `A` and `B` carry no nonce (they live in the prompt string) and
 * pass on as printed, for the editor's prompt decorations.
 */
const COUNTED_KINDS = new Set([0x43, 0x44, 0x45, 0x50]); // C D E P
/** Where in `ESC ] 633 ;` the byte that is changed is (the last `3`), and what it becomes. */
const NEUTRAL_AT = 4;
const NEUTRAL = 0x58; // 'X'

/** Whether the payload `buf[from, to)` is a mark of a counted kind: its letter, alone or before a `;`. */
function isCountedKind(buf: Buffer, from: number, to: number): boolean {
  return to > from && COUNTED_KINDS.has(buf[from]) && (to === from + 1 || buf[from + 1] === SEMICOLON);
}

/**
 * Longest sequence held while waiting for its terminator. A command line (`E;…`) may be long, but
 * a sequence never ended (a program printed the prefix and then text) must not grow for ever;
 * longer ones are passed on as they are (they are not ours).
 */
const MAX_SEQUENCE_BYTES = 64 * 1024;

/** What the nonce is replaced with wherever the output shows it (`set` prints the shell's variables). */
const NONCE_MASK = 0x2a; // '*'
/**
 * The shortest beginning of the nonce held back at a chunk's end until the next shows whether the
 * nonce goes on there. Shorter ones pass (at most 28 of its 128 bits): ordinary output, and a typed
 * key's echo, never waits; 8 hex digits of the nonce end a chunk by chance once in 4 billion.
 */
const MIN_HELD_NONCE = 8;

/**
 * Picks the shell integration's own marks out of a program's output, chunk by chunk (docs/architecture.md,
 * "Command marks"). The integration the session injected ends each of its OSC 633 marks with
 * `;<nonce>`, a per-session secret the programs in the session cannot know; only those marks count.
 * The nonce is taken out before the output goes anywhere (ring, views, mirror, recordings), so the
 * editor receives VS Code's OSC 633 as before and no copy of the output can forge a mark later.
 * Marks without the nonce (a `cat` of a file holding marks, a recording played back, a nested
 * shell's own integration) are ordinary output: they make nothing here, and those of the kinds the
 * nonce ends pass on with their number changed (COUNTED_KINDS), so no terminal acts on them.
 *
 * A sequence that begins an OSC 633 is held back until it ends: only then is it known whether it
 * is ours. Held bytes are inside an OSC string, which a terminal shows nothing of until it ends.
 */
export class OwnMarkFilter {
  private readonly _suffix: Buffer;
  private readonly _nonce: Buffer;
  /** The start of a sequence (or of its prefix) whose end has not arrived yet. */
  private _pending: Buffer | undefined;
  /** The output's last bytes, a long beginning of the nonce, until the next chunk shows whether it goes on. */
  private _heldNonce: Buffer | undefined;
  /** How many of the nonce's first bytes ended the output passed on (and, when held, came before the held ones). */
  private _passedNonce = 0;

  constructor(nonce: string) {
    this._suffix = Buffer.from(`;${nonce}`, 'latin1');
    this._nonce = Buffer.from(nonce, 'latin1');
  }

  /** Filters one chunk of output (whole UTF-8 characters). */
  filter(data: Buffer): FilteredOutput {
    let buf = data;
    // Where a held sequence's terminator may be: its bytes were searched already (all but a last ESC).
    let resume = 0;
    if (this._pending) {
      buf = Buffer.concat([this._pending, data]);
      resume = this._pending.length - 1;
      this._pending = undefined;
    }
    const pieces: Buffer[] = [];
    const marks: OwnMark[] = [];
    /** Start in `buf` of the bytes not passed on yet, and how many were passed on before it. */
    let from = 0;
    let passed = 0;
    let search = 0;
    for (;;) {
      const start = findPrefix(buf, search);
      if (start < 0) {
        const keep = partialPrefixAtEnd(buf, search);
        if (keep > 0) this._pending = Buffer.from(buf.subarray(buf.length - keep));
        pieces.push(buf.subarray(from, buf.length - keep));
        break;
      }
      const end = terminatorOf(buf, Math.max(start + PREFIX.length, start === 0 ? resume : 0));
      /** A mark not ours, of a kind the nonce ends: passed on with its number changed (COUNTED_KINDS). */
      const neutralize = (payloadEnd: number) => {
        if (!isCountedKind(buf, start + PREFIX.length, payloadEnd)) return;
        // The caller's bytes stay as they were: the pieces before this one are of them too, unchanged.
        if (buf === data) buf = Buffer.from(buf);
        buf[start + NEUTRAL_AT] = NEUTRAL;
      };
      if (end === 'incomplete') {
        // Copied: the chunk's bytes move to the mirror thread once passed on.
        const held = buf.length - start <= MAX_SEQUENCE_BYTES;
        if (held) this._pending = Buffer.from(buf.subarray(start));
        // Too long to be ours, passed on as it comes: a terminal still acts on it when it ends.
        else neutralize(buf.length);
        pieces.push(buf.subarray(from, held ? start : buf.length));
        break;
      }
      search = end.next;
      // Not ours (an ESC that ends it early ends it for xterm.js, which acts on it: changed too).
      if (end.aborted || !this._isOurs(buf, start + PREFIX.length, end.payloadEnd)) {
        neutralize(end.payloadEnd);
        continue;
      }
      const cut = end.payloadEnd - this._suffix.length;
      const markStart = passed + (start - from);
      pieces.push(buf.subarray(from, cut));
      passed += cut - from;
      from = end.payloadEnd;
      marks.push({ payload: buf.toString('utf8', start + PREFIX.length, cut), start: markStart, end: passed + (end.next - from) });
    }
    const output = pieces.length === 1 ? pieces[0] : Buffer.concat(pieces);
    return this._masked(output, marks);
  }

  /** The output ended: bytes held for a sequence that never ended are output like any other. */
  release(): Buffer {
    const held = Buffer.concat([this._heldNonce ?? Buffer.alloc(0), this._pending ?? Buffer.alloc(0)]);
    this._pending = undefined;
    this._heldNonce = undefined;
    this._passedNonce = 0;
    return held;
  }

  /**
   * The nonce masked wherever the output shows it (`set`, zsh's `PROMPT_EOL_MARK`, fish's `set`
   * print the scripts' variables), whole or cut across reads: no copy of the output ever holds it,
   * so nothing read from one can forge a mark. A beginning of it at a read's end passes when short
   * (a typed key's echo never waits), and is held for the next read from MIN_HELD_NONCE on.
   */
  private _masked(output: Buffer, marks: OwnMark[]): FilteredOutput {
    let out = output;
    const held = this._heldNonce;
    if (held) {
      this._heldNonce = undefined;
      out = Buffer.concat([held, out]);
      for (const m of marks) {
        m.start += held.length;
        m.end += held.length;
      }
    }
    const n = this._nonce.length;
    // The last read ended with a short beginning of the nonce, passed on: does this one finish it?
    const k = this._passedNonce;
    this._passedNonce = 0;
    if (k > 0) {
      let m = 0;
      while (m < out.length && k + m < n && out[m] === this._nonce[k + m]) m++;
      if (k + m === n) {
        if (out === output) out = Buffer.from(out); // the caller's bytes stay as they were
        out.fill(NONCE_MASK, 0, m);
      } else if (m === out.length) {
        // All of it goes on with the nonce, not to its end yet: held from MIN_HELD_NONCE on.
        if (k + m >= MIN_HELD_NONCE) {
          this._heldNonce = Buffer.from(out);
          this._passedNonce = k;
          return { output: Buffer.alloc(0), marks };
        }
        this._passedNonce = k + m;
        return { output: out, marks };
      }
    }
    let at = out.indexOf(this._nonce);
    if (at >= 0 && out === output) out = Buffer.from(out);
    for (; at >= 0; at = out.indexOf(this._nonce, at + n)) out.fill(NONCE_MASK, at, at + n);
    const begun = nonceBeginningAtEnd(out, this._nonce);
    if (begun >= MIN_HELD_NONCE) {
      this._heldNonce = Buffer.from(out.subarray(out.length - begun));
      out = out.subarray(0, out.length - begun);
    } else this._passedNonce = begun;
    return { output: out, marks };
  }

  /** Whether the payload `buf[from, to)` ends with `;<nonce>`. */
  private _isOurs(buf: Buffer, from: number, to: number): boolean {
    const n = this._suffix.length;
    if (to - from < n || buf[to - n] !== SEMICOLON) return false;
    return timingSafeEqual(buf.subarray(to - n, to), this._suffix);
  }
}

/** How many bytes at the end of `buf` are a beginning of `nonce` (its longest; 0: none). */
function nonceBeginningAtEnd(buf: Buffer, nonce: Buffer): number {
  for (let n = Math.min(nonce.length - 1, buf.length); n > 0; n--) {
    if (buf[buf.length - n] === nonce[0] && buf.subarray(buf.length - n).equals(nonce.subarray(0, n))) return n;
  }
  return 0;
}

/** How many bytes at the end of `buf` (after `from`) are the beginning of a prefix (`ESC ]6`, `C2 9D 6`). */
function partialPrefixAtEnd(buf: Buffer, from: number): number {
  const longest = Math.min(PREFIX.length - 1, buf.length - from);
  // Most chunks end with no ESC (nor C1 lead) among their last bytes: no prefix begins there.
  if (longest <= 0 || (buf.indexOf(ESC, buf.length - longest) < 0 && buf.indexOf(C1_LEAD, buf.length - longest) < 0)) return 0;
  for (let n = longest; n > 0; n--) {
    const tail = buf.subarray(buf.length - n);
    if (tail.equals(PREFIX.subarray(0, n)) || tail.equals(C1_PREFIX.subarray(0, n))) return n;
  }
  return 0;
}

/**
 * Where the first `ESC ] 633 ;` (or its 8-bit form, C1 OSC as UTF-8: `C2 9D 633;`, which xterm.js
 * takes too) at or after `from` starts, or -1. Both introducers are two bytes long.
 */
function findPrefix(buf: Buffer, from: number): number {
  // Plain text: a scan for each introducer's first byte (the second only when there is no ESC:
  // coloured output has one early, and needs no scan of all of it for a byte it rarely holds).
  if (buf.indexOf(ESC, from) < 0 && buf.indexOf(C1_LEAD, from) < 0) return -1;
  for (let i = buf.indexOf(PREFIX_TAIL, from + 2); i >= 0; i = buf.indexOf(PREFIX_TAIL, i + 1)) {
    if ((buf[i - 1] === RIGHT_BRACKET && buf[i - 2] === ESC) || (buf[i - 1] === C1_OSC && buf[i - 2] === C1_LEAD)) return i - 2;
  }
  return -1;
}

/** Where the OSC whose payload starts at `from` ends: BEL, or ST (`ESC \`, or C1 ST as UTF-8); another ESC, CAN or SUB aborts it. */
function terminatorOf(buf: Buffer, from: number): { payloadEnd: number; next: number; aborted: boolean } | 'incomplete' {
  for (let i = from; i < buf.length; i++) {
    const b = buf[i];
    if (b === BEL) return { payloadEnd: i, next: i + 1, aborted: false };
    if (b === CAN || b === SUB) return { payloadEnd: i, next: i + 1, aborted: true };
    if (b === C1_LEAD) {
      if (i + 1 >= buf.length) return 'incomplete';
      if (buf[i + 1] === C1_ST) return { payloadEnd: i, next: i + 2, aborted: false };
      continue;
    }
    if (b !== ESC) continue;
    if (i + 1 >= buf.length) return 'incomplete';
    if (buf[i + 1] === BACKSLASH) return { payloadEnd: i, next: i + 2, aborted: false };
    return { payloadEnd: i, next: i, aborted: true };
  }
  return 'incomplete';
}
