// Request ids past 2^53 echoed as written (src/transport/rpc/raw-id.ts): the id's text is found in
// any message fast-check makes (members in any order, "id" keys and look-alike strings nested in
// params), and the answer written from it carries that text.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { idMayHaveLostDigits, RAW_ID, rawIdText, stringifyMessage } from '../../../../src/transport/rpc/raw-id';
import { fuzzSync } from '../../../helpers/fuzz';
import { ensureNoDisposablesAreLeakedInTestSuite } from '../../../helpers/leak-tracker';

ensureNoDisposablesAreLeakedInTestSuite();

/** An integer literal past what a double holds exactly, either sign. */
const bigId = fc.bigInt({ min: 2n ** 53n + 1n, max: 2n ** 70n }).chain((n) => fc.constantFrom(String(n), `-${n}`));
/** Params that try to mislead a scanner: nested "id" keys, strings holding `"id":`, quotes and braces. */
const params = fc.dictionary(
  fc.constantFrom('id', 'text', '"id"', 'x'),
  fc.oneof(fc.integer(), fc.string(), fc.constant('"id":1}'), fc.constant({ id: 7, inner: { id: '9' } }), fc.array(fc.constant({ id: 3 }))),
);

test('the top-level id of any message is found as written, wherever it stands', () => {
  fuzzSync(
    [bigId, params, fc.integer({ min: 0, max: 3 }), fc.constantFrom('', ' ', '\t', '  ')],
    (id, p, at, space) => {
      const members = [`"jsonrpc":"2.0"`, `"method":"pty/status"`, `"params":${JSON.stringify(p)}`];
      members.splice(at, 0, `"id"${space}:${space}${id}`);
      const line = `{${members.join(',')}}`;
      assert.equal(rawIdText(line), id, line);
      assert.equal(idMayHaveLostDigits(JSON.parse(line).id), true);
    },
    200,
  );
});

test('the answer is written with the id as its client wrote it, the rest as JSON.stringify writes it', () => {
  const response = { jsonrpc: '2.0', id: Number('12345678901234567890'), result: { id: 0, text: '"id":0' }, [RAW_ID]: '12345678901234567890' };
  assert.equal(stringifyMessage(response), '{"jsonrpc":"2.0","id":12345678901234567890,"result":{"id":0,"text":"\\"id\\":0"}}');
  const plain = { jsonrpc: '2.0', id: 5, result: {} };
  assert.equal(stringifyMessage(plain), JSON.stringify(plain));
});

test('ids that lose nothing are left alone: safe integers, fractions, strings; an infinite one is refused elsewhere', () => {
  for (const id of [1, -5, 2 ** 53 - 1, 2.5, 'x', null, Infinity]) assert.equal(idMayHaveLostDigits(id), false, String(id));
  assert.equal(rawIdText('{"jsonrpc":"2.0","id":"9007199254740993"}'), undefined, 'a string id is no number');
});

test('a number written with a fraction or an exponent that a double changes is found as written too (found by an outside audit)', () => {
  for (const id of ['9007199254740993.0', '12345678901234567890e0', '1e-400', '-1.5E+30', '0']) {
    const line = `{"jsonrpc":"2.0","id":${id},"method":"pty/status"}`;
    assert.equal(idMayHaveLostDigits(JSON.parse(line).id), true, id);
    assert.equal(rawIdText(line), id);
  }
});
