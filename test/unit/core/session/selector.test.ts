// A session selector (docs/hosts.md#session-selectors: an id, an exact name, or a unique id prefix) follows one rule,
// on plain data: exact id, then a unique exact name, then a unique id prefix.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { resolveSelector, selectOrThrow, type Selection } from '../../../../src/core/session/selector';
import { RpcError } from '../../../../src/core/base/errors';
import { ensureNoDisposablesAreLeakedInTestSuite } from '../../../helpers/leak-tracker';

// Every disposable a test makes is disposed by its end (docs/testing.md).
ensureNoDisposablesAreLeakedInTestSuite();

interface Item {
  id: string;
  name: string;
}

const items: Item[] = [
  { id: 'abc123', name: 'build' },
  { id: 'abd456', name: 'dup' },
  { id: 'xyz789', name: 'dup' },
  // A name that is another item's id (possible only across hosts): either may be meant.
  { id: 'qqq000', name: 'abc123' },
  // A name that is a prefix of other ids: the exact name wins.
  { id: 'www111', name: 'ab' },
];

function pick(selector: string, list: Item[] = items): Selection<Item> {
  return resolveSelector(
    list,
    selector,
    (i) => i.id,
    (i) => i.name,
  );
}

function idOf(s: Selection<Item>): string {
  assert.equal(s.kind, 'found', JSON.stringify(s));
  return (s as { item: Item }).item.id;
}

test('an exact id comes first, before any name or prefix', () => {
  assert.equal(idOf(pick('qqq000')), 'qqq000');
  assert.equal(idOf(pick('abd456')), 'abd456');
});

// Found by an outside audit: `shared-pty kill t3nzal`, meant for the session named so on one host,
// killed the session with that id on another.
test("an id that is another item's name is ambiguous, with both candidates; a session named by its own id is found", () => {
  const r = pick('abc123');
  assert.equal(r.kind, 'ambiguous');
  assert.deepEqual((r as { candidates: Item[] }).candidates.map((i) => i.id).sort(), ['abc123', 'qqq000']);
  assert.equal(idOf(pick('self01', [...items, { id: 'self01', name: 'self01' }])), 'self01');
});

test('then an exact name that only one item has, even when it is a prefix of several ids', () => {
  assert.equal(idOf(pick('build')), 'abc123');
  assert.equal(idOf(pick('ab')), 'www111');
});

test('then an id prefix that only one item has', () => {
  assert.equal(idOf(pick('abc')), 'abc123');
  assert.equal(idOf(pick('x')), 'xyz789');
});

test('several items of one name, or several ids of one prefix, are ambiguous, with the candidates', () => {
  const dup = pick('dup');
  assert.equal(dup.kind, 'ambiguous');
  assert.deepEqual((dup as { candidates: Item[] }).candidates.map((i) => i.id).sort(), ['abd456', 'xyz789']);
  const withoutNamedAb = items.filter((i) => i.name !== 'ab');
  const ab = pick('ab', withoutNamedAb);
  assert.equal(ab.kind, 'ambiguous');
  assert.deepEqual((ab as { candidates: Item[] }).candidates.map((i) => i.id).sort(), ['abc123', 'abd456']);
  // The same id on two hosts is no single match either (and no name stands in for it).
  const twice = pick('abc123', [...items, { id: 'abc123', name: 'other' }]);
  assert.equal(twice.kind, 'ambiguous');
  assert.equal((twice as { candidates: Item[] }).candidates.length, 2);
});

// Names are unique on one host, not across hosts: `kill r2` with a session named r2 on each of two
// hosts killed a third session whose id began "r2" (an outside audit).
test('a name two items have is ambiguous even when one other id has it as its prefix', () => {
  const list = [
    { id: 'vpt5v3', name: 'r2' },
    { id: 'k2nh8t', name: 'r2' },
    { id: 'r2s3d5', name: 'other' },
  ];
  const r2 = pick('r2', list);
  assert.equal(r2.kind, 'ambiguous', JSON.stringify(r2));
  assert.deepEqual((r2 as { candidates: Item[] }).candidates.map((i) => i.id).sort(), ['k2nh8t', 'vpt5v3']);
  // With one of them gone the name is one session's again, and the prefix still not looked at.
  assert.equal(idOf(pick('r2', list.slice(1))), 'k2nh8t');
});

test('an empty selector matches nothing, not every id as a prefix; no match is unknown', () => {
  assert.deepEqual(pick(''), { kind: 'unknown' });
  assert.deepEqual(pick('', [items[0]]), { kind: 'unknown' });
  assert.deepEqual(pick('nosuch'), { kind: 'unknown' });
});

test('selectOrThrow answers -32001 with data {session} for unknown and ambiguous selectors', () => {
  for (const [selector, message] of [
    ['nosuch', /Unknown session: nosuch/],
    ['dup', /ambiguous: dup/],
  ] as const) {
    assert.throws(
      () =>
        selectOrThrow(
          items,
          selector,
          (i) => i.id,
          (i) => i.name,
        ),
      (e: unknown) => e instanceof RpcError && e.code === -32001 && message.test(e.message) && (e.data as { session: string }).session === selector,
    );
  }
  assert.equal(
    selectOrThrow(
      items,
      'build',
      (i) => i.id,
      (i) => i.name,
    ).id,
    'abc123',
  );
});
