import type { Writable } from 'node:stream';

/** One reusable block: a burst's notifications (64 KiB of output each) go out a few per block. */
const BLOCK_BYTES = 256 * 1024;
/** Blocks kept for reuse, process-wide: enough for a few busy subscribers, 2 MiB at most. */
const MAX_FREE_BLOCKS = 8;
/** Below this, Node encodes a string write on its stack: a direct write costs no allocation. */
const SMALL_TEXT_CHARS = 4 * 1024;

const freeBlocks: Buffer[] = [];

/** Returns a block to the pool once nothing refers to its bytes any more. */
function release(block: Buffer): void {
  if (freeBlocks.length < MAX_FREE_BLOCKS) freeBlocks.push(block);
}

/**
 * Writes text frames to a socket through reused memory. Node encodes every large string write
 * into freshly allocated memory, and fresh memory costs a page fault per 4 KiB (about 14 µs on
 * these VMs). Encoding into blocks that return to a pool once the kernel has taken them makes most
 * writes fault-free (measured alone: ~25 % less CPU to write 64 KiB notifications).
 * Between `cork()` and `uncork()` frames are gathered into one block: one system call for a batch.
 */
export class FrameWriter {
  private _block: Buffer | undefined;
  private _used = 0;
  private _corked = 0;

  constructor(private readonly _socket: Writable) {}

  /** Bytes gathered and not yet handed to the socket. */
  get gatheredBytes(): number {
    return this._used;
  }

  cork(): void {
    this._corked++;
  }

  uncork(): void {
    if (this._corked > 0 && --this._corked === 0) this._flush();
  }

  write(text: string): void {
    if (this._corked === 0 && text.length < SMALL_TEXT_CHARS) {
      this._flush();
      this._socket.write(text);
      return;
    }
    const bytes = Buffer.byteLength(text);
    if (bytes > BLOCK_BYTES) {
      this._flush(); // keep frames in order
      this._socket.write(text);
      return;
    }
    if (this._used + bytes > BLOCK_BYTES) this._flush();
    this._block ??= freeBlocks.pop() ?? Buffer.allocUnsafeSlow(BLOCK_BYTES);
    this._used += this._block.write(text, this._used, 'utf8');
    if (this._corked === 0) this._flush();
  }

  private _flush(): void {
    const block = this._block;
    if (!block || this._used === 0) return;
    const length = this._used;
    this._block = undefined;
    this._used = 0;
    // A socket that is behind (its client reads slowly, or not at all) queues what it is given, and
    // a queued view would pin a whole block for the few KiB of one frame: 16 times the bytes queued
    // for a client held at its high-water mark. It gets a copy
    // of just those bytes, and the block is free again at once.
    if (this._socket.writableLength > 0) {
      this._socket.write(Buffer.from(block.subarray(0, length)));
      release(block);
      return;
    }
    // Otherwise the kernel takes the bytes now, or the socket keeps this one view until it has: reuse only after.
    this._socket.write(block.subarray(0, length), () => release(block));
  }
}
