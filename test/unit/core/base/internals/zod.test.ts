// What zod declares only on its concrete schemas (src/core/base/internals/zod.ts), which REST's
// query parameters are typed by: a zod that reshapes it fails here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { schemaDefOf } from '../../../../../src/core/base/internals/zod';
import { ensureNoDisposablesAreLeakedInTestSuite } from '../../../../helpers/leak-tracker';

// Every test leaves nothing undisposed (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedInTestSuite();

test('a schema says its type, and a wrapper the schema inside', () => {
  assert.equal(schemaDefOf(z.string()).type, 'string');
  assert.equal(schemaDefOf(z.number()).type, 'number');
  assert.equal(schemaDefOf(z.boolean()).type, 'boolean');
  for (const [wrapped, type] of [
    [z.number().optional(), 'optional'],
    [z.number().nullable(), 'nullable'],
    [z.number().default(1), 'default'],
  ] as const) {
    const def = schemaDefOf(wrapped);
    assert.equal(def.type, type);
    assert.ok(def.innerType, `${type} wraps a schema`);
    assert.equal(schemaDefOf(def.innerType).type, 'number');
  }
});
