import { ErrorCode, RpcError } from '../../core/base/errors';

/** Default longest JSON-RPC line a host accepts (docs/protocol.md#2-framing: 1 MiB). */
export const DEFAULT_MAX_LINE_BYTES = 1024 * 1024;

const CR = 0x0d;

/**
 * The answer to a JSON-RPC line (sockets) or message (`/rpc`, one per frame) over the host's limit,
 * sent with `id: null` before the connection closes (docs/protocol.md#2-framing).
 */
export function tooLongError(limit: number, what: 'line' | 'message'): RpcError {
  return new RpcError(ErrorCode.InvalidRequest, `Invalid Request: ${what} longer than ${limit} bytes; closing the connection`);
}

/**
 * Splits a byte stream into `\n`-terminated lines without ever holding more than `maxBytes`
 * of an unfinished line: past that it reports an overflow and stops, so a client that never
 * sends a newline cannot grow our memory.
 */
export class LineReader {
  private _parts: Buffer[] = [];
  private _partBytes = 0;
  private _overflowed = false;

  constructor(
    private readonly _maxBytes: number,
    private readonly _onLine: (line: Buffer) => void,
    private readonly _onOverflow: () => void,
  ) {}

  push(chunk: Buffer): void {
    if (this._overflowed) return;
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(0x0a, start);
      if (nl === -1) break;
      const piece = chunk.subarray(start, nl);
      const last = piece.length > 0 ? piece[piece.length - 1] : this._lastByte();
      if (this._partBytes + piece.length > this._limitEndingWith(last)) return this._overflow();
      const line = this._parts.length ? Buffer.concat([...this._parts, piece]) : piece;
      this._parts = [];
      this._partBytes = 0;
      this._onLine(line);
      if (this._overflowed) return;
      start = nl + 1;
    }
    const rest = chunk.subarray(start);
    if (rest.length === 0) return;
    // One byte more may be the `\r` of a CRLF line whose `\n` has not come yet; any other is over.
    if (this._partBytes + rest.length > this._limitEndingWith(rest[rest.length - 1])) return this._overflow();
    this._parts.push(Buffer.from(rest));
    this._partBytes += rest.length;
  }

  /**
   * The input ended: an unfinished last line counts as a line (a client that half-closes after
   * `printf '{…}'` without a newline means it as one).
   */
  end(): void {
    if (this._overflowed || this._partBytes === 0) return;
    if (this._partBytes > this._limitEndingWith(this._lastByte())) return this._overflow();
    const line = Buffer.concat(this._parts);
    this._parts = [];
    this._partBytes = 0;
    this._onLine(line);
  }

  /** A line's longest, its `\n` left out: a trailing `\r` (CRLF, tolerated) is not counted either. */
  private _limitEndingWith(lastByte: number | undefined): number {
    return lastByte === CR ? this._maxBytes + 1 : this._maxBytes;
  }

  /** The last byte of the unfinished line held so far. */
  private _lastByte(): number | undefined {
    const part = this._parts.at(-1);
    return part?.[part.length - 1];
  }

  private _overflow(): void {
    this._overflowed = true;
    this._parts = [];
    this._partBytes = 0;
    this._onOverflow();
  }
}
