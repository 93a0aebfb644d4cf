/**
 * Most bytes of one OSC or DCS string (a title, a hyperlink, a colour, a DECRQSS query) the
 * mirror's parser is handed. xterm.js keeps such a string whole until it ends, up to 10 million
 * characters, and drops it past that: a program that opens one and never ends it (`printf
 * '\e]0;'; yes`, or `cat` of a file that holds such bytes) made each session's mirror build
 * strings of megabytes that outlived the young generation, and the mirror thread grew by hundreds
 * of MiB a session until a full collection (an outside audit). No string the mirror acts on comes
 * near this size.
 */
export const MAX_STRING_SEQUENCE_BYTES = 64 * 1024;

const ESC = 0x1b;
const BEL = 0x07;
const CAN = 0x18;
const SUB = 0x1a;
/** The first byte of the UTF-8 for U+0080–U+00BF: C1 controls (U+0080–U+009F) are this and 0x80–0x9f. */
const C2 = 0xc2;
const CANCEL = Uint8Array.of(CAN);
const C1_FIRST_BYTE = Uint8Array.of(C2);
// Node's byte search is ~15 times faster than a typed array's indexOf on a plain view (30 against 2 bytes a ns).
const indexOfBytes = Buffer.prototype.indexOf as (this: Uint8Array, value: Uint8Array | number, from: number) => number;
/** What opens an OSC or a DCS string: ESC ] and ESC P, and the C1 controls OSC and DCS in UTF-8. */
const OPENERS = [Uint8Array.of(ESC, 0x5d), Uint8Array.of(ESC, 0x50), Uint8Array.of(C2, 0x9d), Uint8Array.of(C2, 0x90)];

const enum In {
  /** Outside any string. */
  Ground,
  /** Inside an OSC or DCS string, handed on to the parser as it comes. */
  String,
  /** Inside a string past the cap: dropped up to its end. */
  Cut,
}

/**
 * Hands the parser every byte of the output except what an OSC or DCS string holds past
 * MAX_STRING_SEQUENCE_BYTES. At the cap the parser gets a CAN, which ends the string unfinished, so
 * xterm drops it as it drops one over its own limit, and the rest of the string up to its end is
 * left out. The string ends where xterm's parser ends it (ESC, CAN, SUB, a C1 control, and BEL
 * for an OSC), so everything after it is parsed as before. A run of output with no such string
 * over the cap is handed on as it is (the same array).
 */
export class StringSequenceCap {
  private _in = In.Ground;
  private _isOsc = false;
  private _bytes = 0;
  /** The chunk ended with ESC (Ground), or with the first byte of a possible C1 control. */
  private _afterEsc = false;
  private _afterC2 = false;
  /** Where each of OPENERS is next in the chunk being filtered: -1 none, -2 not searched yet. */
  private readonly _openerAt = [-2, -2, -2, -2];

  constructor(private readonly _maxBytes = MAX_STRING_SEQUENCE_BYTES) {}

  filter(data: Uint8Array): Uint8Array {
    this._openerAt.fill(-2);
    let kept: Uint8Array[] | undefined;
    let keepFrom = 0;
    let i = 0;
    const n = data.length;
    while (i < n) {
      if (this._in === In.Ground) {
        i = this._ground(data, i);
        continue;
      }
      // A C2 held back at the end of the last chunk (Cut) that starts a C1 control goes on with it.
      const heldC2 = this._in === In.Cut && this._afterC2;
      const end = this._stringEnd(data, i);
      if (this._in === In.String) {
        const room = this._maxBytes - this._bytes;
        const upTo = end < 0 ? n : end;
        if (upTo - i <= room) {
          this._bytes += upTo - i;
          if (end < 0) break;
          this._in = In.Ground;
          i = end;
          continue;
        }
        // Past the cap: what fits goes on, then CAN ends the string for the parser.
        (kept ??= []).push(data.subarray(keepFrom, i + room), CANCEL);
        this._in = In.Cut;
        i += room;
        keepFrom = n;
        continue;
      }
      // Cut: left out up to the end; a BEL, CAN or SUB ends it and goes with it, an ESC or a C1 control is parsed.
      if (end < 0) {
        keepFrom = n;
        break;
      }
      this._in = In.Ground;
      if (heldC2 && end === i && data[i] >= 0x80 && data[i] <= 0x9f) (kept ??= []).push(C1_FIRST_BYTE);
      const b = data[end];
      keepFrom = b === BEL || b === CAN || b === SUB ? end + 1 : end;
      i = keepFrom;
    }
    if (!kept) return keepFrom === 0 ? data : data.subarray(keepFrom);
    return join(kept, data.subarray(keepFrom));
  }

  /** Outside a string from `i`: where to go on (past the start of a string, or the chunk's end). */
  private _ground(data: Uint8Array, i: number): number {
    const n = data.length;
    if (this._afterEsc || this._afterC2) {
      const b = data[i];
      const opens = this._afterEsc ? b === 0x5d || b === 0x50 : b === 0x9d || b === 0x90; // ESC ] / ESC P, or C1 OSC / DCS
      this._afterEsc = this._afterC2 = false;
      if (opens) return this._open(b === 0x5d || b === 0x9d, i + 1);
    }
    // The nearest opener, each searched for once a chunk (SGR-heavy output has an ESC every few bytes).
    let at = -1;
    let opener = 0;
    for (let k = 0; k < OPENERS.length; k++) {
      let p = this._openerAt[k];
      if (p !== -1 && p < i) p = this._openerAt[k] = nextOpener(data, k, i);
      if (p >= 0 && (at < 0 || p < at)) {
        at = p;
        opener = k;
      }
    }
    if (at < 0) {
      // An ESC or a C2 last may open a string with the next chunk's first byte.
      this._afterEsc = data[n - 1] === ESC;
      this._afterC2 = data[n - 1] === C2;
      return n;
    }
    return this._open(OPENERS[opener][1] === 0x5d || OPENERS[opener][1] === 0x9d, at + 2);
  }

  private _open(osc: boolean, at: number): number {
    this._in = In.String;
    this._isOsc = osc;
    this._bytes = 0;
    return at;
  }

  /**
   * Where the string ends from `i` on (the terminator's first byte), or -1 if not in this chunk.
   * A C2 at the chunk's end is a C1 control only if the next chunk says so: held as `_afterC2`.
   */
  private _stringEnd(data: Uint8Array, i: number): number {
    const n = data.length;
    if (this._afterC2) {
      this._afterC2 = false;
      const b = data[i];
      // The C2 before it was held back (Cut) or handed on (String): either way the control ends the string here.
      if (b >= 0x80 && b <= 0x9f) return i;
    }
    for (let j = i; j < n; j++) {
      const b = data[j];
      if (b === ESC || b === CAN || b === SUB || (b === BEL && this._isOsc)) return j;
      if (b === C2) {
        if (j === n - 1) {
          this._afterC2 = true;
          return -1;
        }
        const next = data[j + 1];
        if (next >= 0x80 && next <= 0x9f) return j;
      }
    }
    return -1;
  }
}

/**
 * Where OPENERS[k] is next from `i`, or -1. A byte search for its rarer byte first (`]` or `P`
 * after ESC, C2 before the C1 control): SGR-heavy output has an ESC every few bytes, which a
 * search for the pair stops at each time, and often none of these bytes.
 */
function nextOpener(data: Uint8Array, k: number, i: number): number {
  const pair = OPENERS[k];
  const rare = pair[0] === ESC ? indexOfBytes.call(data, pair[1], i + 1) : indexOfBytes.call(data, C2, i);
  if (rare < 0) return -1;
  return indexOfBytes.call(data, pair, pair[0] === ESC ? rare - 1 : rare);
}

function join(parts: Uint8Array[], last: Uint8Array): Uint8Array {
  if (last.length > 0) parts.push(last);
  let size = 0;
  for (const p of parts) size += p.length;
  const out = new Uint8Array(size);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
