import { escapeStep, NOT_ASCII, Seq } from './escape-sequences';

/**
 * The text a person reads in raw terminal output, worked out byte by byte across chunks, the way
 * `stripAnsi` (./ansi.ts) does for a whole string: escape sequences go (CSI, OSC/DCS/SOS/PM/APC up to
 * BEL or ST, other ESC sequences, each where ./escape-sequences.ts says it starts and ends), C0 controls but tab and newline go, DEL goes, a backspace
 * erases the character before it on the same line. One difference on purpose: a carriage return
 * that no newline follows starts its line over, as on the screen (a progress bar is its last
 * state, and zsh's end-of-output mark, spaces and `\r \r`, is nothing), where `stripAnsi` joins
 * the states. Lengths are counted as JavaScript counts them (UTF-16 code units), so they equal
 * the `.length` of the text kept.
 *
 * It counts a command's whole output as it is written (characters, lines, and checkpoints: places
 * where a line starts and no sequence is open, from which any part can be stripped alone and counted
 * exactly), and, given somewhere to keep it, keeps the text too (a budget's head and tail, see
 * docs/protocol.md "Output budget"). One more difference from `stripAnsi`, rare: a backspace
 * erases one character, never a newline, and never two in a row (`\b\b` after `abc` leaves `ab`).
 */
export class StrippedText {
  private _chars = 0;
  /** Newlines so far. */
  newlines = 0;
  private _lineChars = 0;
  /** A carriage return was the last thing: the line starts over, unless a newline comes next. */
  private _pendingReturn = false;
  /** Where the current line starts in the text kept. */
  private _lineStartOut = 0;
  /** Bytes fed so far. */
  bytes = 0;
  /** Where a line starts outside any sequence (every `checkpointBytes` or so), oldest first. */
  readonly checkpoints: Checkpoint[] = [];
  private _state: Seq | typeof AFTER_C2 = Seq.Outside;
  /** Bytes and code units of the character a backspace would erase (0: none). */
  private _lastBytes = 0;
  private _lastUnits = 0;
  private _lastCheckpoint = 0;
  /** The text kept (UTF-8), when keeping. */
  private _out: Uint8Array | undefined;
  private _outLength = 0;
  /** Where each kept line ends: byte offset after its newline in the input, and chars up to it. */
  readonly lineEnds: Array<{ offset: number; chars: number }> = [];

  /**
   * @param checkpointBytes how far apart checkpoints are (0: none)
   * @param keep keep the text (and each line's end) too
   */
  constructor(
    private readonly _checkpointBytes = 0,
    keep = false,
  ) {
    if (keep) this._out = new Uint8Array(4096);
  }

  /** UTF-16 code units of text so far (a line ended by a carriage return so far counts as started over). */
  get chars(): number {
    return this._pendingReturn ? this._chars - this._lineChars : this._chars;
  }

  /** Code units on the current (last) line. */
  get lineChars(): number {
    return this._pendingReturn ? 0 : this._lineChars;
  }

  /** Lines of text so far: the newlines, and the last line if it has characters. */
  get lines(): number {
    return this.newlines + (this.lineChars > 0 ? 1 : 0);
  }

  /** The text kept (when keeping). */
  text(): string {
    const length = this._pendingReturn ? this._lineStartOut : this._outLength;
    return this._out ? Buffer.from(this._out.buffer, this._out.byteOffset, length).toString('utf8') : '';
  }

  /** The next line start outside any sequence is a checkpoint, however near the last one. */
  checkpointSoon(): void {
    if (this._checkpointBytes > 0) this._lastCheckpoint = -this._checkpointBytes;
  }

  /** Reads `data`, the next bytes of the output. */
  feed(data: Uint8Array): void {
    const base = this.bytes;
    let state: Seq | typeof AFTER_C2 = this._state;
    let chars = this._chars;
    let lineChars = this._lineChars;
    let pendingReturn = this._pendingReturn;
    let newlines = this.newlines;
    let lastBytes = this._lastBytes;
    let lastUnits = this._lastUnits;
    const keep = this._out !== undefined;
    const n = data.length;
    for (let i = 0; i < n; i++) {
      const b = data[i];
      switch (state) {
        case Seq.Outside:
          if (pendingReturn && b !== 0x0a && b !== 0x0d) {
            // The line is drawn again from its start.
            pendingReturn = false;
            chars -= lineChars;
            lineChars = 0;
            lastBytes = 0;
            if (keep) this._outLength = this._lineStartOut;
          }
          if (b >= 0x20 && b < 0x7f) {
            // A run of printable ASCII, the bulk of most output, counted in one go.
            let j = i + 1;
            while (j < n) {
              const c = data[j];
              if (c < 0x20 || c >= 0x7f) break;
              j++;
            }
            chars += j - i;
            lineChars += j - i;
            lastBytes = 1;
            lastUnits = 1;
            if (keep) for (let k = i; k < j; k++) this._put(data[k]);
            i = j - 1;
          } else if (b === 0x0a) {
            pendingReturn = false;
            chars++;
            newlines++;
            lineChars = 0;
            lastBytes = 0;
            if (keep) {
              this._put(b);
              this._lineStartOut = this._outLength;
              this.lineEnds.push({ offset: base + i + 1, chars });
            }
            if (this._checkpointBytes > 0 && base + i + 1 - this._lastCheckpoint >= this._checkpointBytes) {
              this._lastCheckpoint = base + i + 1;
              this.checkpoints.push({ offset: base + i + 1, chars, newlines });
            }
          } else if (b === 0xc2) {
            // Maybe the 8-bit CSI: the next byte says.
            state = AFTER_C2;
          } else if (b >= 0x80) {
            if (b < 0xc0) {
              // A continuation byte: part of the character before.
              if (lastBytes > 0) lastBytes++;
            } else {
              const units = b >= 0xf0 ? 2 : 1;
              chars += units;
              lineChars += units;
              lastBytes = 1;
              lastUnits = units;
            }
            if (keep) this._put(b);
          } else if (b === 0x0d) {
            pendingReturn = true;
          } else if (b === 0x09) {
            chars++;
            lineChars++;
            lastBytes = 1;
            lastUnits = 1;
            if (keep) this._put(b);
          } else if (b === 0x08) {
            if (lastBytes > 0) {
              chars -= lastUnits;
              lineChars -= lastUnits;
              if (keep) this._outLength -= lastBytes;
              lastBytes = 0;
            }
          } else {
            // ESC opens a sequence; other C0 controls and DEL are not text.
            state = escapeStep(Seq.Outside, b);
          }
          break;
        case AFTER_C2:
          // 0xC2 then 0x9B is the 8-bit CSI (U+009B), which opens a sequence as ESC [ does.
          if (b === 0x9b) {
            state = escapeStep(Seq.Outside, b);
            break;
          }
          // Else the 0xC2 began a character: count it, and read this byte as usual.
          chars++;
          lineChars++;
          lastBytes = 1;
          lastUnits = 1;
          if (keep) this._put(0xc2);
          state = Seq.Outside;
          i--;
          break;
        default: {
          // Inside a sequence: ./escape-sequences.ts says where it ends (a byte of a character
          // beyond ASCII, U+009B aside, never continues one but a string).
          const next = escapeStep(state, b < 0x80 ? b : NOT_ASCII);
          if (next === Seq.Outside) {
            // This byte broke the sequence off: it is read again outside (text, most likely).
            state = Seq.Outside;
            i--;
          } else state = next === Seq.Ended ? Seq.Outside : next;
        }
      }
    }
    this.bytes = base + n;
    this._state = state;
    this._chars = chars;
    this.newlines = newlines;
    this._lineChars = lineChars;
    this._pendingReturn = pendingReturn;
    this._lastBytes = lastBytes;
    this._lastUnits = lastUnits;
  }

  private _put(b: number): void {
    let out = this._out!;
    if (this._outLength === out.length) {
      const bigger = new Uint8Array(out.length * 2);
      bigger.set(out);
      out = this._out = bigger;
    }
    out[this._outLength++] = b;
  }
}

/** A place in the output where a line starts outside any sequence, with the counts up to it. */
export interface Checkpoint {
  /** Byte offset in the output. */
  offset: number;
  /** Characters and newlines before it. */
  chars: number;
  newlines: number;
}

/** StrippedText's own place beyond the shared ones: just after a byte 0xC2 outside any sequence. */
const AFTER_C2 = -1;
