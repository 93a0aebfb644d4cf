// Generators (fast-check arbitraries) the fuzzers share: hostile JSON values (deep nesting, huge
// numbers, wrong types, unicode, NUL, lone surrogates, prototype keys), params shaped like a
// method's schema but wrong in places, key names, and raw lines. A value is built as `Wild`, which
// can say what plain JS values cannot (a duplicate or `__proto__` key, `1e400`, `-0`), and is
// turned into JSON text with `jsonText`.
import fc from 'fast-check';
import type { z } from 'zod';

/** JSON text written as is (a number JS cannot hold, a nesting too deep to build as a value). */
export class RawJson {
  constructor(readonly text: string) {}
}

/** A JSON object as its entries, in order: duplicates and `__proto__` stay what they are on the wire. */
export class Entries {
  constructor(readonly entries: ReadonlyArray<readonly [string, Wild]>) {}
}

/** A value to send: plain JSON values, plus RawJson and Entries anywhere inside. */
export type Wild = null | boolean | number | string | RawJson | Entries | Wild[];

/** The JSON text of a Wild value (NaN and infinities, which JSON lacks, become null as JSON.stringify does). */
export function jsonText(v: Wild): string {
  if (v instanceof RawJson) return v.text;
  if (v instanceof Entries) return `{${v.entries.map(([k, x]) => `${JSON.stringify(k)}:${jsonText(x)}`).join(',')}}`;
  if (Array.isArray(v)) return `[${v.map(jsonText).join(',')}]`;
  return JSON.stringify(v) ?? 'null';
}

/** An object of plain entries (the usual way to build params). */
export function obj(fields: Record<string, Wild>): Entries {
  return new Entries(Object.entries(fields));
}

/** The value a JSON parser makes of a Wild value (what the host sees). */
export function parsed(v: Wild): unknown {
  return JSON.parse(jsonText(v));
}

/** Strings that broke programs before: empty, NUL, lone surrogates, prototype names, escapes, RTL, emoji. */
export const NASTY_STRINGS = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\ud800',
  '\udfff',
  'x\ud83d',
  '\udc00y',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  'valueOf',
  '__defineGetter__',
  '\u202eevil',
  '😀',
  '👍🏽',
  'e\u0301',
  '中文',
  '\r\n',
  '\r',
  '\t',
  '\x1b[31m',
  '\x1b]0;t\x07',
  '%s%n',
  '${PATH}',
  '$(id)',
  '`id`',
  '../../etc/passwd',
  '-1',
  '0',
  'NaN',
  'null',
  'true',
  '{}',
  '[]',
  '"',
  '\\',
  '\u2028\u2029',
  '\ufeff',
  'ArrowUp',
  'Ctrl+C',
  'Ctrl+',
  '+',
  'Ctrl+Ctrl+C',
  'x'.repeat(300),
];

/** Any string, often a nasty one; lone surrogates and control characters included. */
export const nastyString: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...NASTY_STRINGS) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 24 }) },
  { weight: 2, arbitrary: fc.string({ maxLength: 12 }) },
  { weight: 1, arbitrary: fc.string({ unit: fc.constantFrom('\u0000', '\x1b', '\ud800', '\udc00', '\n', '\r', 'a', 'é', '😀'), maxLength: 16 }) },
);

/** Numbers at the edges: zero, signs, fractions, 2^31, 2^53 and beyond, the largest doubles. */
export const nastyNumber: fc.Arbitrary<number> = fc.oneof(
  fc.constantFrom(
    0,
    -0,
    1,
    -1,
    0.5,
    -0.5,
    1e308,
    -1e308,
    5e-324,
    2 ** 31,
    2 ** 31 - 1,
    2 ** 32,
    -(2 ** 31),
    2 ** 53,
    2 ** 53 + 2,
    1e21,
    86_400_001,
    65536,
    1001,
  ),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);

/** Number literals only JSON text can carry: overflow to Infinity, more digits than a double, -0, exponents. */
export const rawNumber: fc.Arbitrary<RawJson> = fc
  .constantFrom('1e400', '-1e400', '123456789012345678901234567890', '-0', '0.0000000000000000000000001', '1E2', '1e-400', '9007199254740993')
  .map((t) => new RawJson(t));

/** Nesting far deeper than any real request (arrays and objects), as text. */
export const deepNesting: fc.Arbitrary<RawJson> = fc
  .tuple(fc.constantFrom(100, 5_000, 100_000), fc.boolean())
  .map(([depth, arrays]) => new RawJson(arrays ? '['.repeat(depth) + ']'.repeat(depth) : '{"a":'.repeat(depth) + '1' + '}'.repeat(depth)));

/** Object keys worth trying: prototype names, the empty key, unicode, and ordinary words. */
export const nastyKey: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('__proto__', 'constructor', 'prototype', '', 'session', 'id', 'then', 'toJSON'),
  nastyString,
);

/** Any JSON value, hostile at every level (depth bounded as values; deeper ones come as deepNesting). */
export const wildJson: fc.Arbitrary<Wild> = fc.letrec<{ value: Wild; leaf: Wild }>((tie) => ({
  leaf: fc.oneof(fc.constant(null), fc.boolean(), nastyNumber, nastyString, rawNumber as fc.Arbitrary<Wild>),
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    { weight: 5, arbitrary: tie('leaf') },
    { weight: 1, arbitrary: fc.array(tie('value'), { maxLength: 4 }) },
    { weight: 1, arbitrary: fc.array(fc.tuple(nastyKey, tie('value')), { maxLength: 4 }).map((e) => new Entries(e) as Wild) },
    { weight: 1, arbitrary: deepNesting as fc.Arbitrary<Wild> },
  ),
})).value;

/** Field names whose values a fuzzer wants to choose itself (a selector, a safe command, key names). */
export type FieldArbitraries = Partial<Record<string, fc.Arbitrary<Wild>>>;

interface ZodDef {
  type: string;
  innerType?: z.ZodType;
  shape?: Record<string, z.ZodType>;
  element?: z.ZodType;
  options?: z.ZodType[];
  entries?: Record<string, string>;
  values?: unknown[];
  valueType?: z.ZodType;
}

const defOf = (t: z.ZodType) => (t as unknown as { def: ZodDef }).def;

/**
 * Values shaped by a zod schema but often wrong: each field is usually of its type with an edge
 * value, sometimes any hostile value; fields come and go; `fields` picks some fields' values.
 */
export function plausible(t: z.ZodType, fields: FieldArbitraries = {}, name = ''): fc.Arbitrary<Wild> {
  const own = fields[name];
  if (own) return fc.oneof({ weight: 12, arbitrary: own }, { weight: 1, arbitrary: wildJson });
  const d = defOf(t);
  const typed = ((): fc.Arbitrary<Wild> => {
    switch (d.type) {
      case 'optional':
      case 'default':
      case 'nullable':
        return plausible(d.innerType!, fields, name);
      case 'string':
        return fc.oneof({ weight: 3, arbitrary: fc.constantFrom('x', 'hello', 'a b') }, { weight: 1, arbitrary: nastyString });
      case 'number':
        return fc.oneof(
          { weight: 6, arbitrary: fc.integer({ min: 0, max: 120 }) },
          { weight: 2, arbitrary: nastyNumber },
          { weight: 1, arbitrary: rawNumber as fc.Arbitrary<Wild> },
        );
      case 'boolean':
        return fc.boolean();
      case 'enum':
        return fc.constantFrom(...Object.values(d.entries!));
      case 'literal':
        return fc.constantFrom(...(d.values as Wild[]));
      case 'array':
        return fc.array(plausible(d.element!, fields, name), { maxLength: 4 });
      case 'object':
        return objectOf(d.shape!, fields);
      case 'union':
        return fc.oneof(...d.options!.map((o) => plausible(o, fields, name)));
      case 'record':
        return fc.array(fc.tuple(nastyKey, plausible(d.valueType!, fields, name)), { maxLength: 3 }).map((e) => new Entries(e) as Wild);
      default:
        return wildJson;
    }
  })();
  return fc.oneof({ weight: 12, arbitrary: typed }, { weight: 1, arbitrary: wildJson });
}

/** An object of the shape's fields (each present or not) plus, now and then, unknown keys. */
export function objectOf(shape: Record<string, z.ZodType>, fields: FieldArbitraries = {}): fc.Arbitrary<Wild> {
  const known = Object.entries(shape).map(([k, t]) => fc.option(plausible(t, fields, k), { nil: undefined, freq: 3 }).map((v) => [k, v] as const));
  const extra = fc.array(fc.tuple(nastyKey, wildJson), { maxLength: 2 });
  return fc.tuple(fc.tuple(...known), fc.oneof({ weight: 4, arbitrary: fc.constant([]) }, { weight: 1, arbitrary: extra })).map(([k, x]) => {
    const entries = [...k.filter((e): e is readonly [string, Wild] => e[1] !== undefined), ...x];
    return new Entries(entries);
  });
}

/** Modifiers and bases of key names, and names made of them (valid, misspelt, mis-cased, or made up). */
export const keyName: fc.Arbitrary<string> = fc.oneof(
  fc
    .tuple(
      fc.subarray(['Ctrl', 'Shift', 'Alt', 'Ctrl', 'ctrl', 'Meta']),
      fc.constantFrom(
        'ArrowUp',
        'End',
        'F1',
        'F4',
        'F5',
        'F12',
        'F13',
        'Delete',
        'Del',
        'PageUp',
        'Insert',
        'Enter',
        'Tab',
        'Backspace',
        'Escape',
        'Space',
        'a',
        'Z',
        '1',
        '2',
        '[',
        '?',
        '/',
        ' ',
        'é',
        '😀',
        'enter',
        'arrowup',
        '',
        'constructor',
        'toString',
        '__proto__',
        'valueOf',
        'hasOwnProperty',
      ),
    )
    .map(([mods, base]) => [...mods, base].join('+')),
  nastyString,
);

/** One line of raw bytes without a newline: invalid UTF-8, NUL, a CR at the end (what a broken client sends). */
export const rawLine: fc.Arbitrary<Buffer> = fc
  .oneof(
    fc.uint8Array({ minLength: 1, maxLength: 64 }).map((b) => Buffer.from(b)),
    fc
      .constantFrom('{"jsonrpc":"2.0","id":1,"method":"pty/status"', '\u0000', '{"jsonrpc":"2.0","id":"\ud800"}', '  ', '\r', 'null', '{}')
      .map((s) => Buffer.from(s)),
    fc
      .tuple(fc.constantFrom('{"jsonrpc":"2.0","id":1,"method":"pty/write","params":{"action":{"text":"'), fc.uint8Array({ maxLength: 8 }))
      .map(([a, b]) => Buffer.concat([Buffer.from(a), Buffer.from(b), Buffer.from('"}}}')])),
  )
  .map((b) => Buffer.from(b.filter((x) => x !== 0x0a)))
  .filter((b) => b.length > 0 && !(b.length === 1 && b[0] === 0x0d));

/** Keys of timing params: a fuzz case bounds them so no call legitimately waits long. */
const TIMING_KEYS = new Set(['timeout', 'waitMs', 'idleMs', 'timeoutMs']);
/** Longest wait a fuzz case allows a call (valid larger values are folded under it). */
export const FUZZ_WAIT_MS = 100;

/**
 * Folds valid long waits (`timeout`, `waitMs`, `idleMs`) under FUZZ_WAIT_MS, keeping invalid
 * ones, and gives the calls that wait by default (`defaults`) a short timeout. `noMaximum`: keys
 * whose every larger value is valid too (pty/wait's `timeout`: more than a day waits a day).
 */
export function boundWaits(v: Wild, defaults: Record<string, number> = {}, noMaximum: readonly string[] = []): Wild {
  // An object as raw text (deepNesting's `{"a":{"a":…}}`): its unknown keys are ignored, so the
  // method would wait its default; the defaults go in front (a key given again later still wins).
  if (v instanceof RawJson && /^\{\s*"/.test(v.text)) {
    const given = Object.entries(defaults).map(([k, ms]) => `${JSON.stringify(k)}:${ms},`);
    return given.length ? new RawJson(`{${given.join('')}${v.text.slice(1)}`) : v;
  }
  if (!(v instanceof Entries)) return v;
  const entries = v.entries.map(([k, x]) => {
    // A number written as text (`123456789012345678901234567890`) is the same wait once parsed.
    const ms = x instanceof RawJson ? Number(x.text) : x;
    if (TIMING_KEYS.has(k) && typeof ms === 'number' && Number.isFinite(ms) && ms > FUZZ_WAIT_MS && (ms <= 86_400_000 || noMaximum.includes(k)))
      return [k, Number.isInteger(ms) ? (ms % FUZZ_WAIT_MS) + 1 : FUZZ_WAIT_MS] as const;
    return [k, x] as const;
  });
  for (const [k, ms] of Object.entries(defaults)) if (!entries.some(([key]) => key === k)) entries.push([k, ms]);
  return new Entries(entries);
}
