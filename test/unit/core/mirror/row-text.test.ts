// Rows are read from xterm's cells directly (src/core/row-text.ts) because the public
// translateToString is too slow for a flood of output; both must give the same text.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Terminal, type IBuffer } from '@xterm/headless';
import { Unicode11Addon } from '@xterm/addon-unicode11';
import { readsCellsDirectly, rowBytes, rowText } from '../../../../src/core/mirror/row-text';
import { ensureNoDisposablesAreLeakedInTestSuite } from '../../../helpers/leak-tracker';

// Every disposable a test makes is disposed by its end (docs/testing.md).
ensureNoDisposablesAreLeakedInTestSuite();

function terminal(cols: number, rows: number): Terminal {
  const t = new Terminal({ cols, rows, scrollback: 100, allowProposedApi: true });
  t.loadAddon(new Unicode11Addon());
  t.unicode.activeVersion = '11';
  return t;
}

const write = (t: Terminal, s: string) => new Promise<void>((r) => t.write(s, r));

/** What the public API says: the row's text, trailing spaces removed. */
function publicText(buf: IBuffer, y: number): string {
  return (buf.getLine(y)?.translateToString(true) ?? '').replace(/ +$/, '');
}

test('the direct read of a row equals translateToString for every kind of content', async () => {
  const t = terminal(20, 12);
  const samples = [
    'plain ascii',
    'trailing spaces   ',
    '  leading',
    'café naïve ÿ',
    '中文字符和中文',
    'emoji 😀 and 🎉!',
    'e\u0301 combining accent',
    'zwj 👩\u200d💻 family',
    '\x1b[31mred\x1b[0m and \x1b[1;44mbold blue\x1b[0m',
    'gap\x1b[5Cafter a cursor move',
    'a row that is long enough to wrap past twenty columns, 中文 at the edge',
    '\ttab\tstops',
    'Ω≈ç√∫ greek and maths',
    '',
  ];
  for (const s of samples) await write(t, s + '\r\n');
  // The alternate screen and a wide character that does not fit at the end of a row.
  await write(t, '\x1b[?1049h' + 'x'.repeat(19) + '中\r\nalt screen row');
  const out = Buffer.alloc(20 * 4 + 3);
  for (const which of ['normal', 'alternate'] as const) {
    const buf = t.buffer[which];
    for (let y = 0; y < buf.length; y++) {
      assert.equal(rowText(buf, y), publicText(buf, y), `${which} row ${y}`);
      // The bytes the compact scrollback stores: the same text in UTF-8, or -1 (read as a string).
      const end = rowBytes(buf, y, out, 3);
      if (end >= 0) assert.equal(out.toString('utf8', 3, end), publicText(buf, y), `${which} row ${y} as bytes`);
      else assert.match(publicText(buf, y), /\u0301|\u200d/, `${which} row ${y}: only rows with combined characters are read as strings`);
    }
  }
  t.dispose();
});

test('the direct read is in use (a new xterm.js with another cell layout would make floods slow again)', async () => {
  const t = terminal(10, 3);
  await write(t, 'hello');
  assert.ok(readsCellsDirectly(t.buffer.active), 'xterm.js cell layout changed: src/core/row-text.ts falls back to translateToString');
  assert.equal(rowText(t.buffer.active, 0), publicText(t.buffer.active, 0));
  t.dispose();
});
