// The host's event log (docs/protocol.md#events-ptyevents-and-ptywaitevent): seq one more per event of the host, a bounded number of
// events retained, and `since` replaying what is retained after a seq, of one session or all.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventLog } from '../../../../../src/core/session/events/event-log';
import { ensureNoDisposablesAreLeakedInTestSuite } from '../../../../helpers/leak-tracker';

// Every disposable a test makes is disposed by its end (docs/testing.md).
ensureNoDisposablesAreLeakedInTestSuite();

test('seq grows by one per event of the host, whatever the session; since(seq) is what came after', () => {
  const log = new EventLog(10);
  assert.equal(log.seq, 0);
  const a = log.append('a', { type: 'bell' });
  const b = log.append('b', { type: 'resize', cols: 80, rows: 24 });
  const c = log.append('a', { type: 'exit', exitCode: 0, signal: null });
  assert.deepEqual([a.seq, b.seq, c.seq], [1, 2, 3]);
  assert.deepEqual(b, { session: 'b', seq: 2, at: b.at, type: 'resize', cols: 80, rows: 24 });
  assert.deepEqual(
    log.since(0).map((e) => e.seq),
    [1, 2, 3],
  );
  assert.deepEqual(
    log.since(1).map((e) => e.seq),
    [2, 3],
  );
  assert.deepEqual(
    log.since(0, 'a').map((e) => e.seq),
    [1, 3],
  );
  assert.deepEqual(log.since(3), []);
  assert.deepEqual(
    log.since(0, undefined, 2).map((e) => e.seq),
    [1, 2],
  );
  log.dispose();
});

test('only the newest events are retained; a replay from before them starts at the oldest kept', () => {
  const retained = 10;
  const log = new EventLog(retained);
  for (let i = 0; i < 1000; i++) log.append(i % 2 ? 'a' : 'b', { type: 'bell' });
  assert.equal(log.seq, 1000);
  const all = log.since(0);
  assert.deepEqual(
    all.map((e) => e.seq),
    Array.from({ length: retained }, (_, i) => 1000 - retained + 1 + i),
  );
  assert.deepEqual(
    log.since(995).map((e) => e.seq),
    [996, 997, 998, 999, 1000],
  );
  assert.ok(log.since(0, 'a').every((e) => e.session === 'a' && e.seq > 1000 - retained));
  log.dispose();
});

test('listeners hear every event as it is appended', () => {
  const log = new EventLog();
  const heard: number[] = [];
  const sub = log.onEvent((e) => heard.push(e.seq));
  log.append('a', { type: 'input_wait' });
  log.append('a', { type: 'secret_input' });
  sub.dispose();
  log.append('a', { type: 'bell' });
  assert.deepEqual(heard, [1, 2]);
  log.dispose();
});
