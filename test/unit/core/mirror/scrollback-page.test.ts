// Pages of the scrollback store's sealed blocks, as the main thread reads them (scrollback-page.ts):
// the same rows as the store's own reads, across block seams, after rows were trimmed off the
// front, with characters of every UTF-8 length; a page reaching past the sealed rows is left to
// the mirror thread.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ScrollbackStore } from '../../../../src/core/mirror/scrollback-store';
import { pageBounds, SealedPages } from '../../../../src/core/mirror/scrollback-page';
import { BLOCK_ROWS } from '../../../../src/core/mirror/sealed-blocks';
import { ensureNoDisposablesAreLeakedInTestSuite } from '../../../helpers/leak-tracker';

/** Row i's text: numbered, of varying length, some with 2-, 3- and 4-byte characters, some empty. */
const rowOf = (i: number): string => (i % 17 === 0 ? '' : `${i} ${'é€😀x'.slice(0, i % 5)}${'-'.repeat(i % 23)}`);

/** The page the store itself gives (its rows one by one), as the mirror thread answers it. */
function expected(store: ScrollbackStore, offset: number, lines: number): { text: string; firstLine: number; lastLine: number; totalLines: number } {
  const first = store.firstAbsolute;
  const b = pageBounds(first, first + store.length, offset, lines);
  const rows: string[] = [];
  for (let r = b.from; r < b.to; r++) rows.push(store.get(r - first));
  return { text: rows.join('\n'), firstLine: b.firstLine, lastLine: b.lastLine, totalLines: b.totalLines };
}

function pagesOf(store: ScrollbackStore): SealedPages {
  return new SealedPages({ ...store.sealed(), firstRetainedRow: store.firstAbsolute, endRow: store.firstAbsolute + store.length });
}

// Every test leaves nothing undisposed (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedInTestSuite();

test('pages of sealed rows read from shared memory equal the store’s rows, before and after trimming', () => {
  const capacity = 5 * BLOCK_ROWS + 40;
  const store = new ScrollbackStore(capacity);
  let pushed = 0;
  for (const upTo of [3 * BLOCK_ROWS + 7, capacity, capacity + 100, capacity + BLOCK_ROWS + 3, 4 * capacity + 11]) {
    for (; pushed < upTo; pushed++) store.push(rowOf(pushed));
    const pages = pagesOf(store);
    const sealed = store.length - (pushed % BLOCK_ROWS); // the rest is the unsealed tail
    assert.equal(store.sealed().first, store.firstAbsolute);
    let answered = 0;
    for (const lines of [1, 2, 100, BLOCK_ROWS, BLOCK_ROWS + 1, 1000]) {
      for (let offset = 0; offset <= store.length + 1; offset += 37) {
        const page = pages.page(offset, lines);
        const want = expected(store, offset, lines);
        if (want.lastLine > sealed) {
          assert.equal(page, undefined, `${pushed} rows, offset ${offset}, lines ${lines}: reaches into the tail`);
          continue;
        }
        assert.deepEqual(page, want, `${pushed} rows, offset ${offset}, lines ${lines}`);
        answered++;
      }
    }
    assert.ok(answered > 50, `${pushed} rows: ${answered} pages answered from the sealed rows`);
  }
  assert.ok(store.firstAbsolute > 0, 'rows were trimmed off the front');
});

test('sealed rows stay as they were when the store trims or clears them afterwards', () => {
  const store = new ScrollbackStore(2 * BLOCK_ROWS);
  for (let i = 0; i < 3 * BLOCK_ROWS; i++) store.push(rowOf(i));
  const pages = pagesOf(store);
  const before = expected(store, store.length - 10, 10);
  for (let i = 0; i < 4 * BLOCK_ROWS; i++) store.push(`later ${i}`);
  store.clear();
  assert.deepEqual(pages.page(before.totalLines - 10, 10), before, 'the page of that moment, whatever the store did since');
});

test('a flood into a full store makes no new block memory, and pages told before it stay as they were', () => {
  const store = new ScrollbackStore(4 * BLOCK_ROWS);
  // `yes`: every row the same, so each dropped block can hold the next one.
  for (let i = 0; i < 6 * BLOCK_ROWS; i++) store.push('y');
  const pages = pagesOf(store);
  const told = expected(store, 100, 300);
  const made = { buffers: 0, shared: 0 };
  const allocUnsafeSlow = Buffer.allocUnsafeSlow;
  const Shared = globalThis.SharedArrayBuffer;
  Buffer.allocUnsafeSlow = (size: number) => (made.buffers++, allocUnsafeSlow(size));
  globalThis.SharedArrayBuffer = class extends Shared {
    constructor(size: number) {
      super(size);
      made.shared++;
    }
  } as SharedArrayBufferConstructor;
  try {
    for (let i = 0; i < 40 * BLOCK_ROWS; i++) store.push(i % BLOCK_ROWS === 0 ? `n${i}` : 'y');
  } finally {
    Buffer.allocUnsafeSlow = allocUnsafeSlow;
    globalThis.SharedArrayBuffer = Shared;
  }
  // At most one per block the store holds (those told went to shared memory); 40 blocks went by.
  assert.equal(made.shared, 0, 'no shared memory while nothing is told');
  assert.ok(made.buffers <= 5, `${made.buffers} blocks' memory made for 40 blocks of rows`);
  assert.deepEqual(pages.page(100, 300), told, 'the page told before the flood');
  const now = pagesOf(store);
  for (const [offset, lines] of [
    [0, 10],
    [100, 300],
    [BLOCK_ROWS - 3, 2 * BLOCK_ROWS],
  ])
    assert.deepEqual(now.page(offset, lines), expected(store, offset, lines), `after the flood: offset ${offset}, lines ${lines}`);
});
