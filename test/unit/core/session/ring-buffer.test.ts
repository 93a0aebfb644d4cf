import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RingBuffer } from '../../../../src/core/session/ring-buffer';
import { completeUtf8Length } from '../../../../src/core/base/utf8';
import { ensureNoDisposablesAreLeakedInTestSuite } from '../../../helpers/leak-tracker';
import { heldBytes } from '../../../helpers/held-memory';

// Every disposable a test makes is disposed by its end (docs/testing.md).
ensureNoDisposablesAreLeakedInTestSuite();

test('ring keeps the newest bytes and reports what it dropped', () => {
  const ring = new RingBuffer(16);
  ring.append(Buffer.from('0123456789'));
  ring.append(Buffer.from('abcdefghij'));
  assert.equal(ring.end, 20);
  assert.equal(ring.start, 4);
  const r = ring.read(0);
  assert.equal(r.text, '456789abcdefghij');
  assert.equal(r.dropped, 4);
  assert.equal(r.cursor, 20);
  const tail = ring.read(18);
  assert.equal(tail.text, 'ij');
  assert.equal(tail.dropped, 0);
});

test('ring reads are bounded and never split a UTF-8 character', () => {
  const ring = new RingBuffer(1024);
  ring.append(Buffer.from('aé€😀b'));
  const r = ring.read(0, 4); // 'a' (1) + 'é' (2) fit, '€' (3) does not
  assert.equal(r.text, 'aé');
  assert.equal(r.cursor, 3);
  const rest = ring.read(r.cursor);
  assert.equal(rest.text, '€😀b');
});

test('a read smaller than the character at its start returns that character whole, so paging moves on', () => {
  const ring = new RingBuffer(1024);
  ring.append(Buffer.from('é€😀b'));
  const pages: string[] = [];
  for (let cursor = 0; cursor < ring.end;) {
    const r = ring.read(cursor, 1);
    assert.equal(r.cursor, cursor + Buffer.byteLength(r.text));
    assert.ok(r.cursor > cursor, `a read from ${cursor} moves on`);
    pages.push(r.text);
    cursor = r.cursor;
  }
  assert.deepEqual(pages, ['é', '€', '😀', 'b']);
  // Bytes that are no UTF-8 (stray continuation bytes) move on too, at most a character's 4 a read.
  const raw = new RingBuffer(64);
  raw.append(Buffer.from([0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x41]));
  assert.equal(raw.read(0, 1).cursor, 4);
  assert.equal(raw.read(4, 1).cursor, 6);
  assert.equal(raw.read(6, 1).text, 'A');
});

test('a dropped prefix that cut a character is skipped, not decoded as garbage', () => {
  const ring = new RingBuffer(8);
  ring.append(Buffer.from('€€€')); // 9 bytes: the first byte of the first € is dropped
  const r = ring.read(0);
  assert.equal(r.text, '€€');
  assert.equal(r.dropped, 3);
});

test('a chunk larger than the ring keeps its tail', () => {
  const ring = new RingBuffer(8);
  ring.append(Buffer.from('x'.repeat(100) + 'ABCDEFGH'));
  assert.equal(ring.read(0).text, 'ABCDEFGH');
  assert.equal(ring.read(0).dropped, 100);
});

test('UTF-8 boundary detection holds back an incomplete character', () => {
  const euro = Buffer.from('€'); // e2 82 ac
  assert.equal(completeUtf8Length(Buffer.concat([Buffer.from('ab'), euro.subarray(0, 2)])), 2);
  assert.equal(completeUtf8Length(Buffer.concat([Buffer.from('ab'), euro])), 5);
  assert.equal(completeUtf8Length(Buffer.from('plain')), 5);
});

test('reads anywhere in a wrapped ring return exactly the retained bytes', () => {
  const ring = new RingBuffer(32);
  let all = Buffer.alloc(0);
  const pieces = ['ab', 'é€', 'xyz😀', '0123456789', 'q'];
  for (let i = 0; i < 60; i++) {
    const chunk = Buffer.from(pieces[i % pieces.length]);
    ring.append(chunk);
    all = Buffer.concat([all, chunk]);
    // Cursors a client can hold: character boundaries, and any offset the ring has since dropped.
    const cursors = [0, ring.start - 1].filter((c) => c >= 0);
    for (let c = ring.start; c <= ring.end; c++) if (c === all.length || (all[c] & 0xc0) !== 0x80) cursors.push(c);
    for (const since of cursors) {
      for (const max of [1, 5, 13, Infinity]) {
        const r = ring.read(since, max);
        // What a decoder of the real stream would see from the first whole character on.
        const bytes = all.subarray(r.cursor - Buffer.byteLength(r.text), r.cursor);
        assert.equal(r.text, bytes.toString('utf8'));
        assert.ok(!r.text.includes('\ufffd'), `no split character at ${since}/${max}`);
        // At most max bytes, unless the first character alone is longer: then that one, whole.
        assert.ok(Buffer.byteLength(r.text) <= max || [...r.text].length === 1, `${JSON.stringify(r.text)} at ${since}/${max}`);
        if (r.cursor < ring.end) assert.ok(r.text.length > 0 || r.dropped > 0 || since < ring.start, `a read from ${since} moves on`);
      }
    }
  }
});

test('retained(): everything while nothing was dropped, else from the first whole line, as a copy', () => {
  const r = new RingBuffer(16);
  r.append(Buffer.from('ab\ncd'));
  assert.deepEqual(r.retained(), { from: 0, bytes: Buffer.from('ab\ncd') });
  r.append(Buffer.from('\x1b[31mred\nnext\n')); // 20 bytes in all: the ring keeps the last 16
  const kept = r.retained();
  assert.equal(kept.bytes.toString(), 'next\n', 'the cut line (inside an escape sequence) is left out');
  assert.equal(kept.from + kept.bytes.length, r.end, 'the copy ends at the newest byte');
  kept.bytes.fill(0);
  assert.equal(r.read(r.end - 5).text, 'next\n', 'the ring is untouched by changes to the copy');
});

test('an idle ring holds a few KiB, and grows to keep every byte up to its capacity', () => {
  // A host with hundreds of idle sessions holds one ring each (docs/guarantees.md#retained-buffer).
  const before = heldBytes();
  // Enough rings that the heap's own noise between the two counts (a few hundred KB) is small beside them.
  const rings = Array.from({ length: 256 }, () => new RingBuffer());
  const perRing = (heldBytes() - before) / rings.length;
  assert.ok(perRing <= 8 * 1024, `${Math.round(perRing)} bytes held by an empty ring`);
  // Then output comes: all of it is kept, up to the capacity, as before.
  const ring = rings[0];
  let all = '';
  for (let i = 0; ring.end < 3 * ring.capacity; i++) {
    const line = `line ${i} ${'x'.repeat(i % 200)}\r\n`;
    all += line;
    ring.append(Buffer.from(line));
  }
  assert.equal(ring.end - ring.start, ring.capacity);
  assert.equal(all.length, ring.end);
  assert.equal(ring.read(ring.start, ring.capacity).text, all.slice(ring.start));
});

test('a ring that fills grows in a few steps, so little storage is left behind for the collector', () => {
  const ring = new RingBuffer();
  let made = 0;
  const allocUnsafeSlow = Buffer.allocUnsafeSlow;
  Buffer.allocUnsafeSlow = (size: number) => ((made += size), allocUnsafeSlow(size));
  const line = Buffer.from('y\n');
  try {
    while (ring.end < 2 * ring.capacity) ring.append(line);
  } finally {
    Buffer.allocUnsafeSlow = allocUnsafeSlow;
  }
  // Doubling from 4 KiB made 8 + 16 + … + 1024 KiB: almost twice the capacity.
  assert.ok(made <= ring.capacity + 64 * 1024, `${made} bytes of storage made to hold ${ring.capacity}`);
  assert.equal(ring.read(ring.end - 4).text, 'y\ny\n', 'the newest output');
  assert.equal(ring.end - ring.start, ring.capacity, 'the last capacity bytes kept');
});
