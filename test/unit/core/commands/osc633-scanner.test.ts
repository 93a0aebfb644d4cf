// The OSC 633 scanner finds each mark at its exact output cursors however the PTY splits the
// output into reads: a record's cursors must not depend on where a read happened to end.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Osc633Scanner, type Osc633Sequence } from '../../../../src/core/commands/osc633-scanner';
import { decodeValue } from '../../../../src/core/commands/command-tracker';

/** Scans `output` cut into chunks at `cuts` (byte offsets), as reads of the PTY deliver it. */
function scanInChunks(output: Buffer, cuts: number[]): Osc633Sequence[] {
  const scanner = new Osc633Scanner();
  const found: Osc633Sequence[] = [];
  let from = 0;
  for (const cut of [...new Set(cuts)].sort((a, b) => a - b).concat(output.length)) {
    if (cut <= from) continue;
    found.push(...scanner.scan(output.subarray(from, cut), cut));
    from = cut;
  }
  return found;
}

test('marks are found with their exact cursors, terminated by BEL or ST, however the output is cut', () => {
  const piece = fc.oneof(
    fc.string({ maxLength: 12 }).map((t) => ({ text: t.replace(/\x1b/g, ''), mark: undefined as string | undefined })),
    fc.constantFrom('A', 'B', 'C', 'D;0', 'D;127', 'E;ls -l\\x3b echo ä', 'P;Cwd=/tmp/x y').map((m) => ({ text: '', mark: m })),
  );
  fc.assert(
    fc.property(fc.array(piece, { maxLength: 12 }), fc.boolean(), fc.array(fc.nat(400), { maxLength: 8 }), (pieces, useSt, cuts) => {
      const parts: Buffer[] = [];
      const expected: Osc633Sequence[] = [];
      let at = 0;
      for (const p of pieces) {
        const bytes = Buffer.from(p.mark === undefined ? p.text : `\x1b]633;${p.mark}${useSt ? '\x1b\\' : '\x07'}`, 'utf8');
        if (p.mark !== undefined) expected.push({ payload: p.mark, start: at, cursor: at + bytes.length });
        parts.push(bytes);
        at += bytes.length;
      }
      const output = Buffer.concat(parts);
      assert.deepEqual(scanInChunks(output, cuts.map((c) => c % (output.length + 1))), expected);
    }),
    { numRuns: 300 },
  );
});

test('other escape sequences, an OSC of another number, and an OSC cut short by an escape are not marks', () => {
  const output = Buffer.from('\x1b[31mred\x1b]0;title\x07\x1b]633;A\x1b[0m\x1b]6330;X\x07\x1b]633;B\x07');
  const found = scanInChunks(output, [5, 17, 18, 19]);
  assert.deepEqual(found.map((f) => f.payload), ['B']);
  assert.equal(found[0].cursor, output.length);
});

test('escaped values decode: \\\\ is a backslash, \\xNN a byte (UTF-8 together)', () => {
  assert.equal(decodeValue('cat <<EOF\\x0asemi\\x3bcolon back\\\\slash\\x0aEOF'), 'cat <<EOF\nsemi;colon back\\slash\nEOF');
  assert.equal(decodeValue('caf\\xc3\\xa9 ä'), 'café ä');
  assert.equal(decodeValue('no escapes'), 'no escapes');
});
