// `pty/write`'s params as most clients send a key, `{action: {text}}`, are taken without the
// schema (src/core/methods/input-methods.ts quickWriteParams): what they are taken as must be
// exactly what the schema makes of them, and anything else must still go to the schema.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { writeMethod } from '../../../../src/core/methods/input-methods';
import { METHOD_INDEX, parseParams } from '../../../../src/core/methods/table';
import { ensureNoDisposablesAreLeakedInTestSuite } from '../../../helpers/leak-tracker';

ensureNoDisposablesAreLeakedInTestSuite();

const quick = (raw: unknown) => writeMethod.quickParams!(raw as Record<string, unknown>);

test('a key as clients send it is taken as the schema takes it', () => {
  for (const text of ['a', '', 'é', '\r', 'ls -la\n', '\u001b[A']) {
    const raw = JSON.parse(JSON.stringify({ action: { text } })) as Record<string, unknown>;
    const taken = quick(raw);
    assert.ok(taken, `taken without the schema: ${JSON.stringify(raw)}`);
    assert.deepEqual(taken, writeMethod.params.parse(raw));
    assert.deepEqual(parseParams(writeMethod, raw), taken);
  }
});

test('anything else goes to the schema: its defaults, its checks and its errors stay', () => {
  const others: unknown[] = [
    {},
    { action: null },
    { action: 'a' },
    { action: { text: 1 } },
    { action: { key: 'Enter' } },
    { action: { text: 'a', key: 'Enter' } },
    { action: { text: 'a', extra: true } },
    { action: [{ text: 'a' }] },
    { action: { text: 'a' }, wait: true },
    { action: { text: 'a' }, timeout: 5 },
    { action: { text: 'a' }, unknown: 1 },
    JSON.parse('{"action":{"text":"a","__proto__":{"x":1}}}'),
    JSON.parse('{"__proto__":{"action":{"text":"a"}}}'),
  ];
  for (const raw of others) assert.equal(quick(raw), undefined, `left to the schema: ${JSON.stringify(raw)}`);
  assert.throws(() => parseParams(writeMethod, { action: { text: 'a', key: 'Enter' } }), /text or key, not both/);
  assert.throws(() => parseParams(writeMethod, { action: { text: 1 } }), /Invalid params for pty\/write/);
});

// An integer far below its bound was told the safe-integer range (`>=-9007199254740991`), the
// first check zod makes of an integer, instead of the bound (an outside audit).
test('an integer param far below its bound is told the bound, not the safe-integer range', () => {
  for (const [method, params, field, bound] of [
    ['pty/output', {}, 'since', 0],
    ['pty/scrollback', {}, 'offset', 0],
    ['pty/scrollback', {}, 'lines', 1],
    ['pty/resize', { rows: 24 }, 'cols', 1],
    ['pty/commandOutput', { id: 1 }, 'maxBytes', 1],
    ['pty/send', { text: 'x' }, 'maxBytes', 1],
  ] as const) {
    const spec = METHOD_INDEX.get(method)!;
    for (const below of [-1, -1e308, -(2 ** 60)]) {
      assert.throws(
        () => parseParams(spec, { ...params, [field]: below }),
        (e: Error) => e.message.includes(`${field}: Too small: expected number to be >=${bound}`) && !e.message.includes('9007199254740991'),
        `${method} ${field}: ${below}`,
      );
    }
    // A fraction within the bound is still not an integer.
    assert.throws(() => parseParams(spec, { ...params, [field]: bound + 1.5 }), new RegExp(`${field}: .*expected int`), `${method} ${field}: ${bound + 1.5}`);
  }
});

test('a wait that must be at least 1 ms says so for any value below it, a negative one too', () => {
  for (const [method, params, field] of [
    ['pty/send', { text: 'x' }, 'timeout'],
    ['pty/send', { text: 'x' }, 'idleMs'],
    ['pty/write', { action: { text: 'x' }, wait: true }, 'timeout'],
    ['pty/write', { action: { text: 'x' }, wait: true }, 'idleMs'],
    ['pty/signal', { signal: 'SIGINT', wait: true }, 'timeout'],
    ['pty/signal', { signal: 'SIGINT', wait: true }, 'idleMs'],
    ['pty/wait', {}, 'idleMs'],
  ] as const) {
    const spec = METHOD_INDEX.get(method)!;
    for (const below of [-1, 0, 0.5]) {
      assert.throws(
        () => parseParams(spec, { ...params, [field]: below }),
        new RegExp(`${field}: Too small: expected number to be >=1`),
        `${method} ${field}: ${below}`,
      );
    }
  }
  // MCP send_keys' own timeout, as its tool's schema has it.
  const keysTimeout = z.object(writeMethod.mcp!.input!.shape!);
  for (const below of [-1, 0]) {
    const issue = keysTimeout.safeParse({ keys: ['a'], timeout: below }).error?.issues[0];
    assert.match(String(issue?.message), /expected number to be >=1/, `send_keys timeout: ${below}`);
  }
});
