// How the suites are laid out (docs/testing.md): test/unit mirrors src, so a part's suites are found
// where its code is; and every core and transport suite runs the leak guard (docs/testing.md#leaks),
// so a new suite cannot forget it. Read from the tree, as the layers test reads src.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';

const ROOT = path.join(__dirname, '..', '..');
const UNIT = path.join(ROOT, 'test', 'unit');
const SRC = path.join(ROOT, 'src');

/** The parts of src whose suites must run the leak guard: the engine and its transports. */
const GUARDED = ['core', 'transport'];

/** Suites of those parts that do not run the guard, each with the reason. */
const UNGUARDED: Record<string, string> = {
  'core/base/leak-tracker.test.ts': 'it tests the tracker itself, installing and removing trackers of its own',
};

/** A call of either guard (test/helpers/leak-tracker.ts) on a line of its own: at the top level, or for one describe. */
const GUARD_CALL = /^[ \t]*ensureNoDisposablesAreLeaked(InTestSuite|BySuite)\(/m;

/** Every folder below `dir`, relative to it. */
function folders(dir: string, rel = ''): string[] {
  return fs
    .readdirSync(path.join(dir, rel), { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .flatMap((e) => [path.join(rel, e.name), ...folders(dir, path.join(rel, e.name))]);
}

/** Every suite below `dir`, relative to test/unit. */
function suites(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return suites(p);
    return e.name.endsWith('.test.ts') ? [path.relative(UNIT, p).split(path.sep).join('/')] : [];
  });
}

test('test/unit mirrors src: every folder of suites is a folder of src', () => {
  const strays = folders(UNIT).filter((rel) => !fs.statSync(path.join(SRC, rel), { throwIfNoEntry: false })?.isDirectory());
  assert.deepEqual(strays, [], `folders of test/unit with no folder of that name in src (move their suites beside what they test): ${strays.join(', ')}`);
});

test(`every ${GUARDED.join(' and ')} suite runs the leak guard, below the after hook that closes what it shares`, () => {
  const all = GUARDED.flatMap((part) => suites(path.join(UNIT, part)));
  assert.ok(all.length > 50, `found the suites (${all.length})`);
  const without: string[] = [];
  const tooEarly: string[] = [];
  for (const rel of all) {
    if (rel in UNGUARDED) continue;
    const text = fs.readFileSync(path.join(UNIT, rel), 'utf8');
    const call = GUARD_CALL.exec(text);
    if (!call) {
      without.push(rel);
      continue;
    }
    // Hooks run in the order they are registered: a suite-wide check registered above the `after`
    // that closes the shared host would check while the host is still open.
    const lastAfter = text.lastIndexOf('\nafter(');
    if (call[1] === 'BySuite' && lastAfter > call.index) tooEarly.push(rel);
  }
  assert.deepEqual(without, [], 'suites that call neither ensureNoDisposablesAreLeakedInTestSuite() nor ensureNoDisposablesAreLeakedBySuite()');
  assert.deepEqual(tooEarly, [], 'suites whose ensureNoDisposablesAreLeakedBySuite() is registered above their top-level after hook');
  for (const rel of Object.keys(UNGUARDED)) assert.ok(all.includes(rel), `${rel} is excused from the guard but no longer exists`);
});
