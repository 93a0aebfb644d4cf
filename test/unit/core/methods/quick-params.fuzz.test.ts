// Property-based fuzzing of the params some methods take without their schema (`quickParams`:
// `pty/write`'s key, as most clients send one): whatever a client sends, what
// the quick path takes is exactly what the schema makes of it, and what the schema refuses the
// quick path leaves to the schema (so the client gets the schema's -32602 and message).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { METHODS } from '../../../../src/core/methods/table';
import type { MethodSpec } from '../../../../src/core/methods/spec';
import fc from 'fast-check';
import { nastyKey, parsed, plausible, wildJson } from '../../../helpers/arbitraries';
import { fuzzSync } from '../../../helpers/fuzz';
import { ensureNoDisposablesAreLeakedInTestSuite } from '../../../helpers/leak-tracker';

ensureNoDisposablesAreLeakedInTestSuite();

const quick = (METHODS as readonly MethodSpec[]).filter((m) => m.quickParams !== undefined);

/** Params each quick path takes, as clients send them: the cases near them are where a quick path may go wrong. */
const TAKEN: Record<string, Record<string, unknown>> = { 'pty/write': { action: { text: 'a' } } };

/** Every place in `v` (as a path of keys) that holds an object. */
function objectPaths(v: unknown, at: string[] = []): string[][] {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return [];
  return [at, ...Object.entries(v).flatMap(([k, x]) => objectPaths(x, [...at, k]))];
}

/** `v` with one change at one of its objects: a field's value made hostile, a field added, or one dropped. */
function nearby(v: Record<string, unknown>): fc.Arbitrary<unknown> {
  const change = (at: string[], edit: (o: Record<string, unknown>) => void): unknown => {
    const copy = structuredClone(v);
    edit(at.reduce<Record<string, unknown>>((o, k) => o[k] as Record<string, unknown>, copy));
    return copy;
  };
  return fc.constantFrom(...objectPaths(v)).chain((at) =>
    fc.oneof(
      fc
        .tuple(fc.constantFrom(...Object.keys(at.reduce<Record<string, unknown>>((o, k) => o[k] as Record<string, unknown>, v))), wildJson)
        .map(([key, w]) => change(at, (o) => (o[key] = parsed(w)))),
      fc
        .tuple(nastyKey, wildJson)
        .map(([key, w]) => change(at, (o) => Object.defineProperty(o, key, { value: parsed(w), enumerable: true, writable: true, configurable: true }))),
      fc
        .constantFrom(...Object.keys(at.reduce<Record<string, unknown>>((o, k) => o[k] as Record<string, unknown>, v)))
        .map((key) => change(at, (o) => delete o[key])),
    ),
  );
}

describe('fuzz: params taken without the schema', () => {
  test('the methods that have a quick path are the ones a client calls per key', () => {
    assert.deepEqual(quick.map((m) => m.name).sort(), ['pty/write']);
  });

  for (const spec of quick) {
    test(`${spec.name}: what the quick path takes is what the schema makes of it; what the schema refuses, the quick path leaves to it`, () => {
      assert.ok(TAKEN[spec.name], `an example ${spec.name} takes quickly, to fuzz near it`);
      assert.ok(spec.quickParams!(TAKEN[spec.name]), `the example is taken quickly: ${JSON.stringify(TAKEN[spec.name])}`);
      fuzzSync(
        [fc.oneof(plausible(spec.params).map(parsed), nearby(TAKEN[spec.name]))],
        (raw) => {
          if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return; // not params: refused before either
          const schema = spec.params.safeParse(raw);
          const taken = spec.quickParams!(raw as Record<string, unknown>);
          if (taken === undefined) return;
          assert.ok(schema.success, `taken quickly but refused by the schema: ${JSON.stringify(raw)}`);
          assert.deepEqual(taken, schema.data, `taken as the schema takes it: ${JSON.stringify(raw)}`);
        },
        400,
      );
    });
  }
});
