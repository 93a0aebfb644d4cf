import { completeUtf8Length } from '../../base/utf8';

/** Joins output read in chunks so that no chunk passed on ends in the middle of a UTF-8 character. */
export class Utf8Joiner {
  private _tail: Buffer | undefined;

  /** The complete characters of what was held back and `chunk`; an incomplete last one is held for the next chunk. */
  join(chunk: Buffer): Buffer {
    let data = chunk;
    if (this._tail) {
      data = Buffer.concat([this._tail, chunk]);
      this._tail = undefined;
    }
    const complete = completeUtf8Length(data);
    if (complete < data.length) {
      this._tail = Buffer.from(data.subarray(complete));
      data = data.subarray(0, complete);
    }
    return data;
  }

  /** What is held back (the program ended mid-character), and nothing after. */
  takeTail(): Buffer {
    const tail = this._tail ?? Buffer.alloc(0);
    this._tail = undefined;
    return tail;
  }
}
