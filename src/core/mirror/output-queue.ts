/**
 * Output waiting to go to the mirror thread, in order, each chunk ready to move there (its memory
 * transferred, not copied, by `postMessage`). Small reads (the echo of keys, a byte or
 * two each) are copied together into a stage as they come, so each read's own buffer dies young:
 * held for a trickle's batch (up to 200 ms), every key's read outlived the main thread's young
 * collections and was promoted, ~200 bytes a key, and the collections took three times as long as
 * a raw node-pty host's (bench/README.md, "Issue 25: what an echo keeps alive").
 */
export class OutputQueue {
  private _chunks: Uint8Array[] = [];
  private _bytes = 0;
  /** The stage small reads are copied into; it joins `_chunks` when a larger read or `take` comes. */
  private _stage: Uint8Array | undefined;
  private _staged = 0;

  /** Bytes queued, staged ones included. */
  get bytes(): number {
    return this._bytes;
  }

  /** Queues a read; a small one is copied, so the caller's buffer is not kept. */
  push(data: Buffer): void {
    this._bytes += data.length;
    if (data.length >= STAGED_READ_BYTES) {
      this._closeStage();
      this._chunks.push(movable(data));
      return;
    }
    if (this._stage && this._staged + data.length > this._stage.length) this._closeStage();
    this._stage ??= new Uint8Array(STAGE_BYTES);
    this._stage.set(data, this._staged);
    this._staged += data.length;
  }

  /** Everything queued, in order, and the queue empty: each chunk's buffer may be transferred. */
  take(): Uint8Array[] {
    this._closeStage();
    const chunks = this._chunks;
    this._chunks = [];
    this._bytes = 0;
    return chunks;
  }

  clear(): void {
    this._chunks = [];
    this._bytes = 0;
    this._stage = undefined;
    this._staged = 0;
  }

  private _closeStage(): void {
    if (!this._stage) return;
    // The stage is this queue's alone: its buffer moves to the thread as it is, the unused end with it.
    this._chunks.push(new Uint8Array(this._stage.buffer, 0, this._staged));
    this._stage = undefined;
    this._staged = 0;
  }
}

/** Reads shorter than this are copied into the stage (as long as the mirror's joined small reads). */
export const STAGED_READ_BYTES = 256;
/** A stage holds this much (a trickle is at most 1 KiB; a stage that fills starts another). */
const STAGE_BYTES = 4 * 1024;

/**
 * The read itself when it owns its whole ArrayBuffer (node-pty's reads do), so it moves to the
 * thread without a copy; else a copy that does (a view into a shared pool must not be
 * transferred). Copying a burst into fresh buffers cost 5.5 ms per MB here, most of it page faults
 * (~14 us each on these VMs), as much as reading it.
 */
function movable(chunk: Buffer): Uint8Array {
  if (chunk.byteOffset === 0 && chunk.buffer.byteLength === chunk.length && !(chunk.buffer instanceof SharedArrayBuffer)) {
    return new Uint8Array(chunk.buffer, 0, chunk.length);
  }
  const copy = new Uint8Array(chunk.length);
  copy.set(chunk);
  return copy;
}
