// The shell integration's own marks are told from a program's output by the session's nonce, at
// exact positions however the PTY cuts the output into reads; the nonce never goes further, and
// marks without it are ordinary output: the kinds the nonce ends pass on with their number made
// `63X` (no terminal, the editor's included, acts on them), the prompt marks as printed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { OwnMarkFilter, type OwnMark } from '../../../../src/core/commands/own-marks';
import { decodeValue } from '../../../../src/core/commands/command-tracker';
import { ensureNoDisposablesAreLeakedInTestSuite } from '../../../helpers/leak-tracker';

// Every disposable a test makes is disposed by its end (docs/testing.md).
ensureNoDisposablesAreLeakedInTestSuite();

const NONCE = '0123456789abcdef0123456789abcdef';

/** Filters `output` cut into chunks at `cuts` (byte offsets); marks at positions in the whole output passed on. */
function filterInChunks(output: Buffer, cuts: number[], nonce = NONCE): { passed: Buffer; marks: OwnMark[] } {
  const filter = new OwnMarkFilter(nonce);
  const parts: Buffer[] = [];
  const marks: OwnMark[] = [];
  let passed = 0;
  let from = 0;
  for (const cut of [...new Set(cuts)].sort((a, b) => a - b).concat(output.length)) {
    if (cut <= from) continue;
    const r = filter.filter(output.subarray(from, cut));
    for (const m of r.marks) marks.push({ payload: m.payload, start: passed + m.start, end: passed + m.end });
    parts.push(r.output);
    passed += r.output.length;
    from = cut;
  }
  parts.push(filter.release());
  return { passed: Buffer.concat(parts), marks };
}

test('our marks are found at their exact positions and passed on without the nonce; forged ones pass on acted on by no terminal, whatever the cuts', () => {
  const piece = fc.oneof(
    fc.string({ maxLength: 12 }).map((t) => ({ text: t.replace(/\x1b/g, ''), kind: 'text' as const })),
    fc.constantFrom('C', 'D', 'D;0', 'D;127', 'E;ls -l\\x3b echo ä', 'P;Cwd=/tmp/x y').map((m) => ({ text: m, kind: 'ours' as const })),
    // What a program may print: marks with no nonce, a wrong one, or ours cut short.
    fc
      .tuple(
        fc.constantFrom('D;0', 'D', 'C', 'E;git push --force', `D;0;${NONCE.slice(1)}`, `P;Cwd=/etc;${'f'.repeat(32)}`, `D;0;${NONCE}x`),
        // However it is introduced and ended, as xterm.js takes it: 8-bit OSC and ST (as UTF-8), and
        // an ESC that ends it early (xterm.js acts on what came before it).
        fc.constantFrom('\x1b]', '\u009d'),
        fc.constantFrom('', '\u009c', '\x1b[0m'),
      )
      .map(([m, intro, end]) => ({ text: m, kind: 'forged' as const, intro, end })),
    // The prompt marks, which carry no nonce, and kinds the integration does not send.
    fc.constantFrom('A', 'B', 'Dx', 'F').map((m) => ({ text: m, kind: 'prompt' as const })),
  );
  fc.assert(
    fc.property(fc.array(piece, { maxLength: 12 }), fc.boolean(), fc.array(fc.nat(600), { maxLength: 8 }), (pieces, useSt, cuts) => {
      const st = useSt ? '\x1b\\' : '\x07';
      const printed: Buffer[] = [];
      const expected: Buffer[] = [];
      const marks: OwnMark[] = [];
      let at = 0;
      for (const p of pieces) {
        // A forged mark of a kind the nonce ends is passed on as OSC `63X`, which no terminal acts on.
        const forgedEnd = p.kind === 'forged' ? p.end || st : st;
        const intro = p.kind === 'forged' ? p.intro : '\x1b]';
        const shown = Buffer.from(p.kind === 'text' ? p.text : `${intro}${p.kind === 'forged' ? '63X' : '633'};${p.text}${forgedEnd}`);
        printed.push(
          p.kind === 'ours' ? Buffer.from(`\x1b]633;${p.text};${NONCE}${st}`) : p.kind === 'forged' ? Buffer.from(`${intro}633;${p.text}${forgedEnd}`) : shown,
        );
        // The nonce printed anywhere but at a mark's end (a forged mark that holds it) is masked.
        expected.push(Buffer.from(shown.toString('latin1').split(NONCE).join('*'.repeat(NONCE.length)), 'latin1'));
        if (p.kind === 'ours') marks.push({ payload: p.text, start: at, end: at + shown.length });
        at += shown.length;
      }
      const output = Buffer.concat(printed);
      const r = filterInChunks(
        output,
        cuts.map((c) => c % (output.length + 1)),
      );
      assert.deepEqual(r.marks, marks);
      assert.equal(r.passed.toString('latin1'), Buffer.concat(expected).toString('latin1'));
      assert.ok(!r.passed.includes(`;${NONCE}${st}`), 'the nonce of a mark never goes further');
    }),
    { numRuns: 400 },
  );
});

test('the nonce is masked wherever the output shows it (`set` prints it), however the reads cut it; a short beginning of it never waits', () => {
  fc.assert(
    fc.property(fc.string({ maxLength: 40 }), fc.string({ maxLength: 40 }), fc.array(fc.nat(200), { maxLength: 6 }), (before, after, cuts) => {
      const text = `${before.replace(/\x1b/g, '')}__spty_nonce=${NONCE}\n${after.replace(/\x1b/g, '')}`;
      const output = Buffer.from(text, 'latin1');
      const r = filterInChunks(
        output,
        cuts.map((c) => c % (output.length + 1)),
      );
      const passed = r.passed.toString('latin1');
      assert.ok(!passed.includes(NONCE), 'no copy of the output holds the nonce');
      // What differs is the nonce's, masked; of it at most its first 7 characters pass (a read cut after them).
      const at = text.indexOf(NONCE);
      assert.equal(passed.length, text.length);
      for (let i = 0; i < text.length; i++) {
        if (passed[i] !== text[i]) assert.ok(passed[i] === '*' && i >= at && i < at + NONCE.length, `only the nonce is masked: ${JSON.stringify(passed)}`);
      }
      assert.ok(passed.slice(at + 7, at + NONCE.length) === '*'.repeat(NONCE.length - 7), `masked past its first 7: ${JSON.stringify(passed)}`);
    }),
    { numRuns: 400 },
  );
  // A typed key that happens to begin the nonce is passed on at once (its echo does not wait).
  const filter = new OwnMarkFilter(NONCE);
  assert.equal(filter.filter(Buffer.from(NONCE.slice(0, 7))).output.toString(), NONCE.slice(0, 7));
  // Eight or more: held until the next read says whether the nonce goes on (here it does not).
  assert.equal(filter.filter(Buffer.from(NONCE.slice(0, 9))).output.toString(), '');
  assert.equal(filter.filter(Buffer.from('zz')).output.toString(), `${NONCE.slice(0, 9)}zz`);
});

test('other escape sequences, an OSC of another number, and an OSC cut short by ESC, CAN or SUB are not marks (the cut-short ones of counted kinds pass as OSC 63X)', () => {
  const mark = (m: string) => `\x1b]633;${m};${NONCE}\x07`;
  const text = `\x1b[31mred\x1b]0;title\x07${mark('C').slice(0, 9)}\x1b[0m\x1b]6330;X\x07\x1b]633;D;1;${NONCE}\x18x${mark('D;2')}`;
  const r = filterInChunks(Buffer.from(text), [5, 17, 18, 19, 60]);
  assert.deepEqual(
    r.marks.map((m) => m.payload),
    ['D;2'],
  );
  // Not marks, passed on as printed, but that the nonce in one (cut short by CAN) is masked, and
  // the two cut short, of kinds the nonce ends, as OSC 63X (xterm.js acts on one an ESC ends).
  const expected = text
    .replace(`;${NONCE}\x07`, '\x07')
    .replace(NONCE, '*'.repeat(NONCE.length))
    .replace('\x1b]633;C;0\x1b[0m', '\x1b]63X;C;0\x1b[0m')
    .replace('\x1b]633;D;1;', '\x1b]63X;D;1;');
  assert.equal(r.passed.toString(), expected);
});

test('the beginning of a mark is held back until it ends; at the end of the output it is output after all', () => {
  const filter = new OwnMarkFilter(NONCE);
  const first = filter.filter(Buffer.from(`out\x1b]633;D;0;${NONCE.slice(0, 10)}`));
  assert.equal(first.output.toString(), 'out');
  const second = filter.filter(Buffer.from(`${NONCE.slice(10)}\x07more\x1b]6`));
  assert.equal(second.output.toString(), '\x1b]633;D;0\x07more');
  assert.deepEqual(second.marks, [{ payload: 'D;0', start: 0, end: 10 }]);
  assert.equal(filter.release().toString(), '\x1b]6');
  // A sequence longer than any mark is passed on rather than held for ever.
  const long = filter.filter(Buffer.from(`\x1b]633;E;${'x'.repeat(70_000)}`));
  assert.equal(long.output.length, 70_008);
  // …as OSC 63X: a terminal still acts on it once it ends (found by an audit).
  assert.equal(long.output.subarray(0, 6).toString(), '\x1b]63X;');
  assert.equal(filter.release().length, 0);
});

test('escaped values decode: \\\\ is a backslash, \\xNN a byte (UTF-8 together)', () => {
  assert.equal(decodeValue('cat <<EOF\\x0asemi\\x3bcolon back\\\\slash\\x0aEOF'), 'cat <<EOF\nsemi;colon back\\slash\nEOF');
  assert.equal(decodeValue('caf\\xc3\\xa9 ä'), 'café ä');
  assert.equal(decodeValue('no escapes'), 'no escapes');
});
