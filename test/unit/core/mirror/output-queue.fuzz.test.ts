// The queue of output on its way to the mirror thread (src/core/mirror/output-queue.ts): whatever
// reads come, in whatever sizes, the thread gets the same bytes in the same order; small reads are
// copied as they come (the session's read buffers are not kept alive while a trickle waits) and
// go together.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { OutputQueue, STAGED_READ_BYTES } from '../../../../src/core/mirror/output-queue';
import { fuzzSync } from '../../../helpers/fuzz';
import { ensureNoDisposablesAreLeakedInTestSuite } from '../../../helpers/leak-tracker';

ensureNoDisposablesAreLeakedInTestSuite();

/** A read's length: keys' echoes (a byte or two), around the staging bound, and a flood's reads. */
const readLength = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 0, max: 4 }) },
  { weight: 2, arbitrary: fc.integer({ min: STAGED_READ_BYTES - 2, max: STAGED_READ_BYTES + 1 }) },
  { weight: 2, arbitrary: fc.integer({ min: 5, max: 5000 }) },
);
/** Steps: a read of that length, or (-1) the queue taken, as a batch goes to the thread. */
const steps = fc.array(fc.oneof({ weight: 9, arbitrary: readLength }, { weight: 1, arbitrary: fc.constant(-1) }), { maxLength: 400 });

test('whatever reads come, the batches taken hold the same bytes in order; small reads are copied and go together', () => {
  fuzzSync(
    [steps],
    (plan) => {
      const queue = new OutputQueue();
      const sent: number[] = [];
      const taken: number[] = [];
      let next = 0;
      const take = () => {
        const chunks = queue.take();
        assert.equal(queue.bytes, 0, 'the queue is empty once taken');
        for (let i = 0; i < chunks.length; i++) {
          // Two small chunks side by side would be reads that were not put together.
          if (i > 0) assert.ok(chunks[i - 1].length >= STAGED_READ_BYTES || chunks[i].length >= STAGED_READ_BYTES, 'small reads go together');
          taken.push(...chunks[i]);
        }
      };
      for (const length of plan) {
        if (length < 0) {
          take();
          continue;
        }
        const read = Buffer.alloc(length);
        for (let i = 0; i < length; i++) read[i] = next++ % 251;
        sent.push(...read);
        const before = queue.bytes;
        queue.push(read);
        assert.equal(queue.bytes, before + length);
        // The caller may reuse a small read's buffer at once: the queue kept a copy.
        if (length < STAGED_READ_BYTES) read.fill(255);
      }
      take();
      assert.deepEqual(taken, sent);
    },
    60,
  );
});

test('cleared, the queue holds nothing, and what comes after is queued as before', () => {
  const queue = new OutputQueue();
  queue.push(Buffer.from('a'));
  queue.push(Buffer.alloc(STAGED_READ_BYTES, 0x62));
  queue.push(Buffer.from('c'));
  queue.clear();
  assert.equal(queue.bytes, 0);
  assert.deepEqual(queue.take(), []);
  queue.push(Buffer.from('d'));
  assert.deepEqual(Buffer.concat(queue.take()).toString(), 'd');
});
