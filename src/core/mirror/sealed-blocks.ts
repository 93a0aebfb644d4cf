// The scrollback store's sealed blocks (scrollback-store.ts): full runs of rows that never change
// once made. They live in shared memory, so the main thread can read old rows without asking the
// mirror thread (MirrorProxy.scrollbackPage, docs/architecture.md#reading-old-rows). Nothing here
// loads xterm: the main thread imports it.

/** Rows in one block: a buffer per block, not a string per row (scrollback-store.ts). */
export const BLOCK_ROWS = 256;

/** Bytes at the front of a block's memory: where each of its rows ends, one Uint32 each. */
const ENDS_BYTES = BLOCK_ROWS * Uint32Array.BYTES_PER_ELEMENT;

/**
 * The byte stored after each row: a run of rows is then the page's text as it is, one decode for
 * the whole run (a copy per row cost ~70 us for 100 rows before the code was warm; the bench reads
 * 50 pages from cold). One byte a row more, ~10 KB for 10,000 rows.
 */
export const ROW_END = 0x0a;

/**
 * BLOCK_ROWS rows as UTF-8 text, each followed by ROW_END (`bytes`), and where each row's ROW_END
 * ends (`ends`), both views of `memory`. Never written once sealed: a thread holding it reads it
 * without a lock.
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

/** Row `r` of the block (0 ≤ r < BLOCK_ROWS), sealed or not yet (scrollback-store.ts). */
export function blockRow(block: Pick<SealedBlock, 'ends' | 'bytes'>, r: number): string {
  return block.bytes.toString('utf8', r === 0 ? 0 : block.ends[r - 1], block.ends[r] - 1);
}

/**
 * Rows `from` to `to` (exclusive) of `blocks`, counted from row 0 of the first block, joined by
 * newlines: one decode per block they span, not a string per row.
 */
export function joinRows(blocks: readonly SealedBlock[], from: number, to: number): string {
  let text = '';
  for (let k = from; k < to;) {
    const { ends, bytes } = blocks[Math.floor(k / BLOCK_ROWS)];
    const r = k % BLOCK_ROWS;
    const last = Math.min(BLOCK_ROWS, r + (to - k)) - 1;
    // Up to the last row's ROW_END, which the page does not end with.
    const run = bytes.toString('utf8', r === 0 ? 0 : ends[r - 1], ends[last] - 1);
    text = k === from ? run : text + '\n' + run;
    k += last - r + 1;
  }
  return text;
}
