import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RingBuffer } from '../../src/core/ring-buffer';
import { completeUtf8Length } from '../../src/core/utf8';

test('ring keeps the newest bytes and reports what it dropped', () => {
  const ring = new RingBuffer(16);
  ring.append(Buffer.from('0123456789'));
  ring.append(Buffer.from('abcdefghij'));
  assert.equal(ring.end, 20);
  assert.equal(ring.start, 4);
  const r = ring.read(0);
  assert.equal(r.data.toString(), '456789abcdefghij');
  assert.equal(r.dropped, 4);
  assert.equal(r.cursor, 20);
  const tail = ring.read(18);
  assert.equal(tail.data.toString(), 'ij');
  assert.equal(tail.dropped, 0);
});

test('ring reads are bounded and never split a UTF-8 character', () => {
  const ring = new RingBuffer(1024);
  ring.append(Buffer.from('aé€😀b'));
  const r = ring.read(0, 4); // 'a' (1) + 'é' (2) fit, '€' (3) does not
  assert.equal(r.data.toString(), 'aé');
  assert.equal(r.cursor, 3);
  const rest = ring.read(r.cursor);
  assert.equal(rest.data.toString(), '€😀b');
});

test('a dropped prefix that cut a character is skipped, not decoded as garbage', () => {
  const ring = new RingBuffer(8);
  ring.append(Buffer.from('€€€')); // 9 bytes: the first byte of the first € is dropped
  const r = ring.read(0);
  assert.equal(r.data.toString(), '€€');
  assert.equal(r.dropped, 3);
});

test('a chunk larger than the ring keeps its tail', () => {
  const ring = new RingBuffer(8);
  ring.append(Buffer.from('x'.repeat(100) + 'ABCDEFGH'));
  assert.equal(ring.read(0).data.toString(), 'ABCDEFGH');
  assert.equal(ring.read(0).dropped, 100);
});

test('UTF-8 boundary detection holds back an incomplete character', () => {
  const euro = Buffer.from('€'); // e2 82 ac
  assert.equal(completeUtf8Length(Buffer.concat([Buffer.from('ab'), euro.subarray(0, 2)])), 2);
  assert.equal(completeUtf8Length(Buffer.concat([Buffer.from('ab'), euro])), 5);
  assert.equal(completeUtf8Length(Buffer.from('plain')), 5);
});
