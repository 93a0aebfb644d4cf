// Property-based fuzzing of key names (`pty/write` `action.key`, MCP `send_keys`, `shared-pty
// keys`): any string is either a key, whose bytes are a non-empty string, or refused with a
// KeyNameError that names it — never another exception, never a non-string. Modifiers mean the
// same in any order. Over the wire, a key is written as exactly its bytes or refused with -32602.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { KeyNameError, keyToBytes } from '../../../../src/core/io/keys';
import { keyName, nastyString } from '../../../helpers/arbitraries';
import { fuzz, fuzzSync } from '../../../helpers/fuzz';
import { FuzzHost, RAW_CAT } from '../../../helpers/fuzz-host';
import { LineClient } from '../../../helpers/protocol';
import { clientsClosed } from '../../../helpers/host';
import { ensureNoDisposablesAreLeakedBySuite } from '../../../helpers/leak-tracker';

/** What keyToBytes makes of a name: its bytes, or the refusal. */
function outcome(name: string): { bytes: string } | { refused: KeyNameError } {
  try {
    const bytes = keyToBytes(name);
    return { bytes };
  } catch (e) {
    assert.ok(e instanceof KeyNameError, `keyToBytes(${JSON.stringify(name)}) threw ${(e as Error)?.name}: ${(e as Error)?.message}`);
    return { refused: e };
  }
}

// Once the shared host is closed, nothing the suite made is left (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedBySuite(clientsClosed);

describe('fuzz: key names', () => {
  test('any name is a key (a non-empty string of bytes) or a KeyNameError naming it', () => {
    fuzzSync(
      [fc.oneof(keyName, nastyString)],
      (name) => {
        const o = outcome(name);
        if ('bytes' in o) {
          assert.equal(typeof o.bytes, 'string', `keyToBytes(${JSON.stringify(name)}) is a string`);
          assert.ok(o.bytes.length > 0, `keyToBytes(${JSON.stringify(name)}) is not empty`);
        } else assert.equal(o.refused.keyName, name);
      },
      2000,
    );
  });

  test('modifiers mean the same in any order', () => {
    const base = fc.constantFrom('ArrowUp', 'F1', 'F5', 'Delete', 'PageDown', 'Enter', 'Tab', 'Backspace', 'Escape', 'Space', 'a', 'z', '[', '2', 'é');
    fuzzSync(
      [fc.shuffledSubarray(['Ctrl', 'Shift', 'Alt'], { minLength: 2 }), base],
      (mods, b) => {
        const forward = outcome([...mods, b].join('+'));
        const backward = outcome([...mods].reverse().concat(b).join('+'));
        assert.deepEqual('bytes' in forward ? forward.bytes : 'refused', 'bytes' in backward ? backward.bytes : 'refused', `${mods.join('+')}+${b}`);
      },
      500,
    );
  });
});

describe('fuzz: key names over the wire', () => {
  let fh: FuzzHost;
  let client: LineClient;

  before(async () => {
    fh = await FuzzHost.start({ target: RAW_CAT });
    client = await LineClient.connect({ path: fh.target.address.slice('unix:'.length) });
  });

  after(async () => {
    client?.close();
    await fh?.close();
  });

  test("pty/write {key}: the key's bytes are written, or -32602 naming the key and nothing is written", { timeout: 120_000 }, async () => {
    await fuzz(
      [fc.array(keyName, { minLength: 1, maxLength: 4 })],
      async (names) => {
        const res = await client.call('pty/write', { action: names.map((key) => ({ key })) });
        const outcomes = names.map(outcome);
        const refused = outcomes.findIndex((o) => 'refused' in o);
        if (refused === -1) {
          const bytes = outcomes.map((o) => ('bytes' in o ? o.bytes : '')).join('');
          assert.equal(res.error, undefined, `${JSON.stringify(names)}: ${JSON.stringify(res.error)}`);
          assert.equal(res.result.written, Buffer.byteLength(bytes), JSON.stringify(names));
        } else {
          assert.equal(res.error?.code, -32602, `${JSON.stringify(names)}: ${JSON.stringify(res)}`);
          assert.deepEqual(res.error.data, { key: names[refused] });
        }
        await fh.afterBatch();
      },
      60,
    );
  });
});
