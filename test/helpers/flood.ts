// A large, checkable flood of output for flow-control tests: a file of base64 lines, the command
// that prints it between two markers, and the hash of what a terminal subscriber must receive.
import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';

/** Markers the command prints around the file; the typed command line contains neither (`\x3c` is `<`). */
export const FLOOD_START = '<FLOOD-START>\r\n';
export const FLOOD_END = '<FLOOD-END>';

/** A flood file and what a subscriber must see of it. */
export interface Flood {
  file: string;
  /** Bytes of the file. */
  size: number;
  /** Bytes a terminal subscriber receives of it (each `\n` is `\r\n` there). */
  terminalBytes: number;
  /** SHA-256 of the file as the terminal sends it (the PTY turns each `\n` into `\r\n`). */
  sha256: string;
  /** SHA-256 of the file itself (what a check that removes every `\r` must see). */
  fileSha256: string;
  /** What to type (Enter included) to print it between the markers. */
  command: string;
}

/** Writes `bytes` of base64 text (76-character lines, as `base64` prints them) into `dir`. */
export function makeFlood(dir: string, bytes: number): Flood {
  const file = path.join(dir, 'flood.txt');
  const fd = fs.openSync(file, 'w');
  const hash = createHash('sha256');
  const fileHash = createHash('sha256');
  let size = 0;
  let lines = 0;
  try {
    while (size < bytes) {
      // 57 random bytes make one 76-character line; a few thousand lines per write.
      const text = randomBytes(57 * 4096)
        .toString('base64')
        .replace(/.{76}/g, '$&\n');
      const chunk = text.slice(0, bytes - size);
      fs.writeSync(fd, chunk);
      hash.update(chunk.replace(/\n/g, '\r\n'));
      fileHash.update(chunk);
      size += chunk.length;
      lines += chunk.split('\n').length - 1;
    }
  } finally {
    fs.closeSync(fd);
  }
  const command = `printf '\\x3cFLOOD-START>\\n'; cat ${file}; printf '\\x3cFLOOD-END>\\n'\r`;
  return { file, size, terminalBytes: size + lines, sha256: hash.digest('hex'), fileSha256: fileHash.digest('hex'), command };
}

/**
 * Follows a stream of output chunks and hashes what comes between the markers, without keeping
 * the whole flood in memory; `done` once the end marker has been seen.
 */
export class FloodCheck {
  private readonly _start: string;
  private _carry = '';
  private _state: 'before' | 'inside' | 'done' = 'before';
  private readonly _hash = createHash('sha256');
  /** Bytes hashed so far. */
  received = 0;

  /**
   * `stripCR`: remove every `\r` first, for output that went through another terminal (an outer
   * PTY in raw mode still turns `\n` into `\r\n`); compare with `fileSha256` then.
   */
  constructor(private readonly _stripCR = false) {
    this._start = _stripCR ? FLOOD_START.replace('\r', '') : FLOOD_START;
  }

  get done(): boolean {
    return this._state === 'done';
  }

  /** The hash of everything between the markers (once done). */
  digest(): string {
    return this._hash.digest('hex');
  }

  push(data: string): void {
    let text = this._carry + (this._stripCR ? data.replace(/\r/g, '') : data);
    this._carry = '';
    if (this._state === 'before') {
      const i = text.indexOf(this._start);
      if (i === -1) {
        this._carry = text.slice(-this._start.length);
        return;
      }
      this._state = 'inside';
      text = text.slice(i + this._start.length);
    }
    if (this._state !== 'inside') return;
    const end = text.indexOf(FLOOD_END);
    if (end !== -1) {
      this._feed(text.slice(0, end));
      this._state = 'done';
      return;
    }
    // Keep back what could be the start of the end marker.
    const keep = Math.min(text.length, FLOOD_END.length - 1);
    this._feed(text.slice(0, text.length - keep));
    this._carry = text.slice(text.length - keep);
  }

  private _feed(s: string): void {
    this._hash.update(s);
    this.received += Buffer.byteLength(s);
  }
}
