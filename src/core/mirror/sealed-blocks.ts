// The scrollback store's sealed blocks (scrollback-store.ts): full runs of rows that never change
// once made. They live in shared memory, so the main thread can read old rows without asking the
// mirror thread (MirrorProxy.scrollbackPage, docs/architecture.md#reading-old-rows). Nothing here
// loads xterm: the main thread imports it.

/** Rows in one block: a buffer per block, not a string per row (scrollback-store.ts). */
export const BLOCK_ROWS = 256;

/** Bytes at the front of a block's memory: where each of its rows ends, one Uint32 each. */
const ENDS_BYTES = BLOCK_ROWS * Uint32Array.BYTES_PER_ELEMENT;

const NEWLINE = 0x0a;

/**
 * BLOCK_ROWS rows as UTF-8 text back to back (`bytes`) and where each row ends (`ends`), both views
 * of `memory`. Never written once sealed: a thread holding it reads it without a lock.
 */
export interface SealedBlock {
  memory: SharedArrayBuffer;
  ends: Uint32Array;
  bytes: Buffer;
}

/** A block made of the first `size` bytes of `text` and the BLOCK_ROWS row ends in `ends`. */
export function sealBlock(text: Buffer, size: number, ends: Uint32Array): SealedBlock {
  const block = blockOf(new SharedArrayBuffer(ENDS_BYTES + size));
  block.ends.set(ends.subarray(0, BLOCK_ROWS));
  text.copy(block.bytes, 0, 0, size);
  return block;
}

/** The views of a block's memory (what another thread makes of the memory it was handed). */
export function blockOf(memory: SharedArrayBuffer): SealedBlock {
  return { memory, ends: new Uint32Array(memory, 0, BLOCK_ROWS), bytes: Buffer.from(memory, ENDS_BYTES) };
}

/** Row `r` of the block (0 ≤ r < BLOCK_ROWS). */
export function blockRow(block: SealedBlock, r: number): string {
  return block.bytes.toString('utf8', r === 0 ? 0 : block.ends[r - 1], block.ends[r]);
}

let scratch = Buffer.allocUnsafeSlow(16 * 1024);

/**
 * Rows `from` to `to` (exclusive) of `blocks`, counted from row 0 of the first block, joined by
 * newlines: one string made, not one per row.
 */
export function joinRows(blocks: readonly SealedBlock[], from: number, to: number): string {
  if (to <= from) return '';
  let size = to - from - 1;
  for (let k = from; k < to; ) {
    const { ends } = blocks[Math.floor(k / BLOCK_ROWS)];
    const r = k % BLOCK_ROWS;
    const last = Math.min(BLOCK_ROWS, r + (to - k)) - 1;
    size += ends[last] - (r === 0 ? 0 : ends[r - 1]);
    k += last - r + 1;
  }
  if (scratch.length < size) scratch = Buffer.allocUnsafeSlow(Math.max(size, scratch.length * 2));
  let w = 0;
  for (let k = from; k < to; k++) {
    const { ends, bytes } = blocks[Math.floor(k / BLOCK_ROWS)];
    const r = k % BLOCK_ROWS;
    if (k > from) scratch[w++] = NEWLINE;
    w += bytes.copy(scratch, w, r === 0 ? 0 : ends[r - 1], ends[r]);
  }
  return scratch.toString('utf8', 0, w);
}
