// The store of runs apart from their requests (src/transport/mcp/tool-run.ts), on its own: the pages
// of tasks/list and their cursors, the ttl a run gets, its expiry by the store's one timer (no
// access needed), and a store that ends leaving nothing behind. The MCP tests drive the same store
// through real clients and a real host (mcp-tasks-2025.test.ts); here are the cases a client can
// hardly arrange (a run dropped between two pages, a cursor of another store).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { grantedTtl, MAX_RUN_TTL_MS, MIN_RUN_TTL_MS, RUN_TTL_MS, RunStore, ToolRun, type ToolCallResult } from '../../../../src/transport/mcp/tool-run';
import { until } from '../../../helpers/host';
import { ensureNoDisposablesAreLeakedInTestSuite } from '../../../helpers/leak-tracker';

ensureNoDisposablesAreLeakedInTestSuite();

const DONE: ToolCallResult = { content: [{ type: 'text', text: 'done' }] };
/** A run that is over at once. */
const over = (ttlMs?: number) => new ToolRun(async () => DONE, ttlMs);
/** A run that waits until it is aborted (as a task waits for its program). */
const waiting = (ttlMs?: number) =>
  new ToolRun(
    (_prompt, signal) => new Promise<ToolCallResult>((_resolve, reject) => signal.addEventListener('abort', () => reject(new Error('aborted')))),
    ttlMs,
  );

test('grantedTtl: the ttl asked for, within 1 s and a day, in whole ms; none or not a number: 30 minutes', () => {
  assert.equal(grantedTtl(45_000), 45_000);
  assert.equal(grantedTtl(1500.4), 1500);
  assert.equal(grantedTtl(0), MIN_RUN_TTL_MS);
  assert.equal(grantedTtl(-5), MIN_RUN_TTL_MS);
  assert.equal(grantedTtl(1e15), MAX_RUN_TTL_MS);
  for (const none of [undefined, null, '60000', Number.NaN, Number.POSITIVE_INFINITY]) assert.equal(grantedTtl(none), RUN_TTL_MS, String(none));
});

test("pages: each run once, oldest first; runs dropped between pages skip nothing; another owner's runs are not there", () => {
  const store = new RunStore();
  try {
    const me = {};
    const other = {};
    const mine = Array.from({ length: 7 }, () => store.add(over(), me));
    store.add(over(), other);
    const first = store.page(me, undefined, 3)!;
    assert.deepEqual(first.runs, mine.slice(0, 3));
    assert.equal(typeof first.nextCursor, 'string');
    // The last run of the first page and the first of the next go before the next page is asked for.
    store.delete(mine[2]);
    store.delete(mine[3]);
    const added = store.add(over(), me);
    const second = store.page(me, first.nextCursor, 3)!;
    assert.deepEqual(second.runs, mine.slice(4, 7));
    const third = store.page(me, second.nextCursor, 3)!;
    assert.deepEqual(third.runs, [added], 'a run added meanwhile comes on a later page');
    assert.equal(third.nextCursor, undefined, 'no cursor on the last page');
    assert.deepEqual(store.page(other, undefined, 3)!.runs.length, 1);
    // Exactly a page left: no cursor to an empty page.
    assert.equal(store.page(me, undefined, 6)!.nextCursor, undefined);
  } finally {
    store.dispose();
  }
});

test('a cursor this store did not give is refused: garbage, tampered, from another store, from the future', () => {
  const a = new RunStore();
  const b = new RunStore();
  try {
    const me = {};
    for (let i = 0; i < 3; i++) {
      a.add(over(), me);
      b.add(over(), me);
    }
    const cursor = a.page(me, undefined, 1)!.nextCursor!;
    assert.ok(a.page(me, cursor, 1), 'its own cursor');
    const future = Buffer.from(Buffer.from(cursor, 'base64url').toString().replace(/\d+$/, '99')).toString('base64url');
    for (const bad of ['', 'not-a-cursor', `${cursor}A`, cursor.slice(0, -1), future]) assert.equal(a.page(me, bad, 1), undefined, JSON.stringify(bad));
    assert.equal(b.page(me, cursor, 1), undefined, "another store's cursor");
  } finally {
    a.dispose();
    b.dispose();
  }
});

test('a run expires after its ttl by the store timer alone: a waiting one stops, failed with -32602; then it is unknown', async () => {
  const store = new RunStore();
  try {
    const me = {};
    const run = store.add(waiting(MIN_RUN_TTL_MS), me);
    const kept = store.add(waiting(), me);
    assert.equal(run.ttlMs, MIN_RUN_TTL_MS);
    // Nothing asks the store meanwhile: the timer alone ends it.
    await until(() => run.abort.signal.aborted, 20_000, 'the run aborted by its expiry');
    assert.equal(run.status, 'failed');
    assert.equal(run.error?.code, -32602);
    assert.match(run.error!.message, /expired/);
    assert.equal(store.get(run.id, me), undefined);
    assert.deepEqual(store.page(me, undefined)!.runs, [kept], 'the other run is kept');
  } finally {
    store.dispose();
  }
});

test('dispose ends every run (their waits stop) and leaves no timer behind', async () => {
  const store = new RunStore();
  const run = store.add(waiting(), {});
  store.dispose();
  assert.equal(run.abort.signal.aborted, true);
  assert.equal(run.status, 'cancelled');
  // A run added to a store that is gone does not wait either.
  const late = store.add(waiting(), {});
  assert.equal(late.abort.signal.aborted, true);
});
