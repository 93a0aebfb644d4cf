// The compact scrollback: rows leave the headless xterm's short scrollback for the compact store,
// and `pty/scrollback` reads across both. No row may be lost or repeated at the seam, whatever
// the chunking of the output, a resize, a full-screen program, or a clear of the scrollback.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Terminal } from '@xterm/headless';
import { SerializeAddon } from '@xterm/addon-serialize';
import { Mirror } from '../../../../src/core/mirror/mirror';
import { rowText } from '../../../../src/core/mirror/row-text';
import { syncWriteOf } from '../../../../src/core/base/internals/xterm';
import { ScrollbackStore } from '../../../../src/core/mirror/scrollback-store';
import type { RpcClient } from '../../../../src/transport/client/rpc-client';
import { BASH, connect, startHost, until, clientsClosed } from '../../../helpers/host';
import { ensureNoDisposablesAreLeakedBySuite } from '../../../helpers/leak-tracker';

interface Page {
  text: string;
  firstLine: number;
  lastLine: number;
  totalLines: number;
}

const ROWS = 24;
const COLS = 80;

/** Checks that `rows` are exactly `from`, `from + 1`, … `to`. */
function assertConsecutive(rows: string[], from: number, to: number, label: string): void {
  assert.equal(rows.length, to - from + 1, `${label}: ${rows.length} rows, expected ${to - from + 1} (${from}..${to})`);
  for (let i = 0; i < rows.length; i++) {
    if (rows[i] !== String(from + i)) {
      const ctx = rows.slice(Math.max(0, i - 3), i + 4).join(' | ');
      assert.fail(`${label}: row ${i} is ${JSON.stringify(rows[i])}, expected ${from + i} (around: ${ctx})`);
    }
  }
}

// Once the shared host is closed, nothing the suite made is left (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedBySuite(clientsClosed);

describe('pty/scrollback over a real session', () => {
  let host: Awaited<ReturnType<typeof startHost>>;
  let client: RpcClient;

  before(async () => {
    host = await startHost();
    client = await connect(host.host.controlAddress);
  });
  after(async () => {
    client?.close();
    await host?.close();
  });

  async function open(): Promise<{
    id: string;
    page(offset: number, lines: number): Promise<Page>;
    run(cmd: string, done: RegExp): Promise<void>;
    all(pageLines: number): Promise<{ rows: string[]; total: number }>;
  }> {
    const info = await client.request<{ id: string }>('session/create', { ...BASH, cols: COLS, rows: ROWS });
    const id = info.id;
    const read = async () => (await client.request<{ screen: string }>('pty/read', { session: id })).screen;
    await until(async () => (await read()).startsWith('$'), 5000, 'the first prompt');
    const page = (offset: number, lines: number) => client.request<Page>('pty/scrollback', { session: id, offset, lines });
    return {
      id,
      page,
      async run(cmd, done) {
        await client.request('pty/write', { session: id, action: [{ text: cmd }, { key: 'Enter' }] });
        await until(async () => done.test(await read()), 20000, `${cmd} to finish`);
      },
      /** Every retained row, read back page by page from the newest. */
      async all(pageLines) {
        const first = await page(0, 1);
        const total = first.totalLines;
        const chunks: string[][] = [];
        let offset = 0;
        for (;;) {
          const p = await page(offset, pageLines);
          assert.equal(p.totalLines, total, 'totalLines stays put while nothing is written');
          if (p.lastLine === 0) break;
          assert.equal(p.lastLine, total - offset);
          assert.equal(p.firstLine, Math.max(1, total - offset - pageLines + 1));
          const rows = p.text.split('\n');
          assert.equal(rows.length, p.lastLine - p.firstLine + 1, 'one row per line number');
          chunks.unshift(rows);
          offset += rows.length;
        }
        return { rows: chunks.flat(), total };
      },
    };
  }

  /** Rows of `seq 1 N` followed by the prompt: numbers `from..N`, then `$`. */
  function checkSeqTail(rows: string[], n: number, label: string): number {
    assert.equal(rows[rows.length - 1], '$', `${label}: the prompt is the newest row`);
    const nums = rows.slice(0, -1);
    // The oldest retained row may be the command line itself when everything fits.
    if (nums[0]?.startsWith('$ ')) nums.shift();
    const from = Number(nums[0]);
    assert.ok(Number.isInteger(from), `${label}: oldest row ${JSON.stringify(nums[0])} is a number`);
    assertConsecutive(nums, from, n, label);
    return from;
  }

  test('seq 1 20000: consecutive pages, ~10000 + screen rows retained, past the start is empty', async () => {
    const s = await open();
    await s.run('seq 1 20000', /20000\n\$\n?$/);
    const head = await s.page(0, 1);
    // 10000 rows of scrollback plus the 24 screen rows (the prompt is on the last one).
    assert.equal(head.totalLines, 10000 + ROWS);
    assert.equal(head.text, '$');
    for (const pageLines of [100, 1, 997, 4096, 10000]) {
      const { rows, total } = await s.all(pageLines);
      assert.equal(rows.length, total);
      const from = checkSeqTail(rows, 20000, `pages of ${pageLines}`);
      assert.equal(from, 20000 - (10000 + ROWS - 2), `pages of ${pageLines}: the oldest retained number`);
    }
    // One page with everything.
    const whole = await s.page(0, 10000);
    assert.equal(whole.firstLine, ROWS + 1);
    assert.equal(whole.lastLine, 10000 + ROWS);
    // Offsets at and past the start give an empty page.
    for (const offset of [10000 + ROWS, 10000 + ROWS + 1, 1_000_000]) {
      const p = await s.page(offset, 100);
      assert.deepEqual(p, { text: '', firstLine: 0, lastLine: 0, totalLines: 10000 + ROWS }, `offset ${offset}`);
    }
    // The last row of the oldest page is exactly one before the first of the next.
    const p1 = await s.page(5000, 50);
    const p2 = await s.page(5050, 50);
    assert.equal(Number(p2.text.split('\n').at(-1)) + 1, Number(p1.text.split('\n')[0]));
    await client.request('pty/kill', { session: s.id });
  });

  test('more output after the buffer is full keeps the window sliding without gaps', async () => {
    const s = await open();
    await s.run('seq 1 15000', /15000\n\$\n?$/);
    await s.run('seq 15001 31000', /31000\n\$\n?$/);
    const { rows } = await s.all(1000);
    const nums = rows.filter((r) => !r.startsWith('$'));
    assert.equal(rows.at(-1), '$');
    assertConsecutive(nums, Number(nums[0]), 31000, 'after two runs');
    assert.equal(rows.length, 10000 + ROWS);
    await client.request('pty/kill', { session: s.id });
  });

  test("printf '\\e[3J' clears the scrollback, as a terminal does", async () => {
    for (const lines of [20000, 20100, 513, 300]) {
      const s = await open();
      await s.run(`seq 1 ${lines}`, new RegExp(`\\n${lines}\\n\\$\\n?$`));
      await s.run("printf '\\e[3J'; echo cleared", /cleared\n\$\n?$/);
      const { rows, total } = await s.all(100);
      // What was on the screen at the ED 3 stays, plus the two rows scrolled since ('cleared', the prompt).
      assert.ok(total <= ROWS + 2, `seq ${lines}: ${total} rows retained after clearing the scrollback: ${rows.slice(0, 3).join(',')}…`);
      assert.ok(Number(rows[0]) > lines - ROWS, `seq ${lines}: the oldest retained row is ${rows[0]}`);
      assert.deepEqual(rows.slice(-2), ['cleared', '$']);
      // New output scrolls into a fresh scrollback.
      await s.run('seq 1 100', /\n100\n\$\n?$/);
      const again = await s.all(100);
      const nums = again.rows.filter((r) => /^\d+$/.test(r));
      assertConsecutive(nums.slice(nums.indexOf('1')), 1, 100, `seq ${lines}: after the clear`);
      await client.request('pty/kill', { session: s.id });
    }
  });

  test('clear (ED 2 + ED 3) and a resize just before ED 3 still clear the scrollback', async () => {
    const s = await open();
    await s.run('seq 1 5000', /5000\n\$\n?$/);
    // A resize moves every scrolled-off row to the store: nothing waits in xterm's scrollback.
    await client.request('pty/resize', { session: s.id, cols: 90, rows: ROWS });
    await s.run("printf '\\e[3J'; echo cleared", /cleared\n\$\n?$/);
    const after3J = await s.all(100);
    assert.ok(after3J.total <= ROWS + 2, `after a resize then ED 3: ${after3J.total} rows retained (${after3J.rows.slice(0, 3).join(',')}…)`);
    assert.ok(Number(after3J.rows[0]) > 5000 - ROWS, `after a resize then ED 3: the oldest retained row is ${after3J.rows[0]}`);
    await s.run('seq 1 3000', /3000\n\$\n?$/);
    await s.run('clear', /^\$\n?$/);
    const afterClear = await s.all(100);
    assert.equal(afterClear.total, 1, `after clear: ${afterClear.rows.slice(0, 3).join(',')}…`);
    await client.request('pty/kill', { session: s.id });
  });

  test('resizing narrower, wider, shorter and taller keeps the content consecutive', async () => {
    const s = await open();
    await s.run('seq 1 20000', /20000\n\$\n?$/);
    for (const [cols, rows] of [
      [40, 24],
      [120, 24],
      [120, 10],
      [60, 40],
      [80, 24],
    ]) {
      await client.request('pty/resize', { session: s.id, cols, rows });
      const { rows: got } = await s.all(777);
      // Growing the screen pulls rows back from the scrollback: an empty row or two may follow the prompt then.
      while (got.at(-1) === '') got.pop();
      checkSeqTail(got, 20000, `after resize to ${cols}x${rows}`);
    }
    // And output after the resizes continues the sequence.
    await s.run('seq 20001 20500', /20500\n\$\n?$/);
    const { rows: got } = await s.all(1000);
    const nums = got.filter((r) => /^\d+$/.test(r));
    assertConsecutive(nums.slice(0, nums.indexOf('20001')), Number(nums[0]), 20000, 'old run after resizes');
    assertConsecutive(nums.slice(nums.indexOf('20001')), 20001, 20500, 'new run after resizes');
    await client.request('pty/kill', { session: s.id });
  });

  test('the last output of a program that exits at once is never lost', async () => {
    // The kernel still holds the end of the output when the program exits; libuv ends the PTY's
    // stream at the hang-up, so the session must read the rest itself (2-14 KB were lost before).
    for (let run = 0; run < 6; run++) {
      const info = await client.request<{ id: string }>('session/create', { command: 'seq', args: ['1', '300000'], cols: COLS, rows: ROWS });
      await until(async () => !(await client.request<{ running: boolean }>('pty/status', { session: info.id })).running, 20000, 'seq to exit');
      const page = await client.request<Page>('pty/scrollback', { session: info.id, lines: 10000 });
      const rows = page.text.split('\n');
      while (rows.at(-1) === '') rows.pop();
      assertConsecutive(rows, 300000 - rows.length + 1, 300000, `run ${run}`);
      // Every byte counted: the numbers 1..300000, each ended by \r\n.
      let bytes = 0;
      for (let d = 1, from = 1; from <= 300000; d++, from *= 10) bytes += (Math.min(300000, from * 10 - 1) - from + 1) * (d + 2);
      const out = await client.request<{ data: string; cursor: number }>('pty/output', { session: info.id, since: bytes - 16 });
      assert.deepEqual([out.data, out.cursor], ['299999\r\n300000\r\n', bytes], `run ${run}: the raw output ends where seq's does`);
      await client.request('pty/kill', { session: info.id });
    }
  });

  test('a full-screen program (less) on the alternate screen leaves the scrollback intact', async () => {
    const s = await open();
    await s.run('seq 1 20000', /20000\n\$\n?$/);
    const before = await s.all(1000);
    await s.run('seq 1 500 | LESS= less', /^1\n2\n3\n/);
    // Paging inside less (alternate screen) does not add rows to the scrollback.
    for (let i = 0; i < 5; i++) await client.request('pty/write', { session: s.id, action: { key: 'PageDown' } });
    await client.request('pty/write', { session: s.id, action: { text: 'q' } });
    await until(
      async () => /\$ seq 1 500 \| LESS= less\n\$\n?$/.test((await client.request<{ screen: string }>('pty/read', { session: s.id })).screen),
      5000,
      'less to quit',
    );
    const afterLess = await s.all(1000);
    // The normal screen got one more row (the prompt the command was typed at, then a new one): the window moved by one.
    assert.equal(afterLess.total, before.total);
    assert.deepEqual(afterLess.rows.slice(0, -2), before.rows.slice(1, -1));
    assert.deepEqual(afterLess.rows.slice(-2), ['$ seq 1 500 | LESS= less', '$']);
    await client.request('pty/kill', { session: s.id });
  });
});

describe('ScrollbackStore against a plain array', () => {
  test('random pushes, bounds, clears and capacity changes', () => {
    let seed = 7;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    const caps = [1, 5, 255, 256, 257, 600, 1000];
    for (let trial = 0; trial < 100; trial++) {
      let cap = caps[rnd(caps.length)];
      const store = new ScrollbackStore(cap);
      let ref: string[] = [];
      let dropped = 0;
      let n = 0;
      for (let op = 0; op < 2000; op++) {
        const r = rnd(1000);
        if (r < 2) {
          const extra = rnd(5);
          store.clear(extra);
          dropped += ref.length + extra;
          ref = [];
        } else if (r < 4) {
          cap = caps[rnd(caps.length)];
          store.setCapacity(cap);
        } else {
          const row = rnd(3) === 0 ? '' : `r${n++}` + 'x'.repeat(rnd(90)) + (rnd(10) === 0 ? '中😀' : '');
          store.push(row);
          ref.push(row);
        }
        while (ref.length > cap) {
          ref.shift();
          dropped++;
        }
        assert.equal(store.length, ref.length, `trial ${trial} op ${op}: length`);
        assert.equal(store.firstAbsolute, dropped, `trial ${trial} op ${op}: firstAbsolute`);
        if (op % 41 === 0) for (let i = 0; i < ref.length; i++) assert.equal(store.get(i), ref[i], `trial ${trial} op ${op}: row ${i}`);
      }
    }
  });
});

describe('Mirror: synthetic output in chunks of every size', () => {
  /** Feeds `data` to a mirror in chunks whose sizes cycle through `sizes`. */
  async function feed(m: Mirror, data: Buffer, sizes: number[]): Promise<void> {
    let at = 0;
    let i = 0;
    while (at < data.length) {
      const n = sizes[i++ % sizes.length];
      m.write(data.subarray(at, at + n));
      at += n;
    }
    await m.whenParsed();
  }

  function numbers(from: number, to: number, width = 0): Buffer {
    const parts: string[] = [];
    for (let i = from; i <= to; i++) parts.push(width ? String(i).padStart(width, '0') : String(i));
    return Buffer.from(parts.join('\r\n') + '\r\n');
  }

  /** All retained rows as the method handler reads them. */
  function retained(m: Mirror): string[] {
    return m.rowsBetween(m.firstRetainedRow, m.endRow);
  }

  const chunkings: Array<[string, number[]]> = [
    ['1 byte', [1]],
    ['7 bytes', [7]],
    ['mixed small', [1, 2, 3, 5, 8, 13, 21, 34, 55, 89]],
    ['4 KB', [4096]],
    ['64 KB', [65536]],
    ['mixed large', [65536, 1, 30000, 4095, 12345, 2]],
  ];

  for (const [label, sizes] of chunkings) {
    test(`no row is lost or repeated: ${label}`, async () => {
      const m = new Mirror(COLS, ROWS, 10000);
      // 1 byte chunks are slow to parse one by one: fewer rows there, still far past the xterm scrollback.
      const n = sizes[0] === 1 && sizes.length === 1 ? 3000 : 25000;
      await feed(m, numbers(1, n), sizes);
      const rows = retained(m);
      // The cursor sits on the empty row after the last number.
      assert.equal(rows.at(-1), '');
      const nums = rows.slice(0, -1);
      const from = Number(nums[0]);
      assertConsecutive(nums, from, n, label);
      if (n > 10000) assert.equal(rows.length, 10000 + ROWS);
      else assert.equal(from, 1);
      m.dispose();
    });
  }

  test('rows that wrap and wide characters survive the move to the store', async () => {
    const m = new Mirror(COLS, ROWS, 10000);
    const lines: string[] = [];
    for (let i = 1; i <= 3000; i++) lines.push(`${i}:` + (i % 3 === 0 ? '中'.repeat(45) : 'x'.repeat(i % 170)));
    await feed(m, Buffer.from(lines.join('\r\n') + '\r\n'), [1, 333, 4096, 17]);
    const rows = retained(m);
    // Re-wrap the expected lines at 80 columns (a CJK character is two columns and never split).
    const want: string[] = [];
    for (const l of lines) {
      let row = '';
      let w = 0;
      for (const ch of l) {
        const cw = ch === '中' ? 2 : 1;
        if (w + cw > COLS) {
          want.push(row);
          row = '';
          w = 0;
        }
        row += ch;
        w += cw;
      }
      want.push(row);
    }
    want.push('');
    assert.deepEqual(rows, want.slice(-rows.length));
    assert.equal(rows.length, Math.min(want.length, 10000 + ROWS));
    m.dispose();
  });

  test("joined, the rows a long line wrapped onto are that line again, spaces at the edge too, in xterm's rows and in the store", async () => {
    for (const plainRuns of [true, false]) {
      const m = new Mirror(COLS, ROWS, 10000, { plainRuns });
      const lines: string[] = [];
      for (let i = 1; i <= 3000; i++) {
        // A space falls on the last column of a wrapped row every few lines (the line goes on after it).
        const edge = i % 4 === 0 ? 'e'.repeat(COLS - String(i).length - 2) + ' ' + 'tail' : '';
        lines.push(`${i}:` + (edge || (i % 3 === 0 ? '中'.repeat(45) : 'x'.repeat(i % 170))));
      }
      await feed(m, Buffer.from(lines.join('\r\n') + '\r\n'), [4096, 17, 65536]);
      const joined = m.rowsBetween(m.firstRetainedRow, m.endRow, true);
      assert.equal(joined.at(-1), '', 'the cursor row');
      const whole = joined.slice(0, -1);
      // The oldest retained line may have lost its first rows: compare from the first whole one.
      const first = whole.findIndex((l) => /^\d+:/.test(l) && lines[Number(l.split(':')[0]) - 1] === l);
      assert.ok(first >= 0 && first < 3, `${plainRuns}: a whole line near the start (${whole.slice(0, 3).join(' | ').slice(0, 200)})`);
      const n = Number(whole[first].split(':')[0]);
      assert.deepEqual(whole.slice(first), lines.slice(n - 1), `plain runs ${plainRuns}`);
      // Unjoined, the same rows are the screen's rows, as before.
      assert.ok(m.rowsBetween(m.firstRetainedRow, m.endRow).length > joined.length);
      m.dispose();
    }
  });

  test('a scroll region (as vim and less use on the normal screen) adds nothing to the scrollback', async () => {
    const m = new Mirror(COLS, ROWS, 10000);
    await feed(m, numbers(1, 100), [4096]);
    const before = retained(m);
    // Scroll region rows 2..10, then 500 line feeds at its bottom: only that region scrolls.
    await feed(m, Buffer.from('\x1b[2;10r\x1b[10;1H' + 'r\n'.repeat(500) + '\x1b[r\x1b[24;1H'), [100]);
    const afterRegion = retained(m);
    assert.deepEqual(afterRegion.slice(0, before.length - ROWS), before.slice(0, before.length - ROWS));
    m.dispose();
  });

  test('ED 3 clears the store however many rows wait in the xterm scrollback', async () => {
    for (const n of [300, 384, 385, 1000, 12000]) {
      const m = new Mirror(COLS, ROWS, 10000);
      await feed(m, numbers(1, n), [65536]);
      m.resize(COLS + 1, ROWS); // moves everything scrolled off into the store
      await feed(m, Buffer.from('\x1b[3J'), [10]);
      const rows = retained(m);
      assert.ok(rows.length <= ROWS, `n=${n}: ${rows.length} rows retained after ED 3 (${rows.slice(0, 2).join(',')}…)`);
      m.dispose();
    }
  });

  test('RIS (reset) empties the scrollback and later rows are kept in order', async () => {
    const m = new Mirror(COLS, ROWS, 10000);
    await feed(m, numbers(1, 1000), [4096]);
    const endBefore = m.endRow;
    await feed(m, Buffer.from('\x1bc'), [2]);
    assert.deepEqual(retained(m), ['']);
    assert.ok(m.firstRetainedRow >= endBefore, 'row numbers keep growing across a reset');
    await feed(m, numbers(2001, 2500), [333]);
    const rows = retained(m);
    assert.equal(rows.at(-1), '');
    assertConsecutive(rows.slice(0, -1), 2001, 2500, 'after RIS');
    m.dispose();
  });

  test('ED 2 (the screen cleared, not the scrollback) keeps every row, wherever the rows last moved to the store stopped', async () => {
    // Rows move to the store 32 at a time: one of these counts leaves the first unmoved row at the screen's top.
    for (let n = 50; n <= 200; n++) {
      const m = new Mirror(COLS, ROWS, 10000);
      await feed(m, numbers(1, n), [4096]);
      const before = retained(m);
      const end = m.endRow;
      await feed(m, Buffer.from('\x1b[2J'), [4]);
      const after = retained(m);
      assert.deepEqual(after.slice(0, before.length - ROWS), before.slice(0, before.length - ROWS), `n=${n}: the scrollback after ED 2`);
      assert.equal(m.endRow, end, `n=${n}: row numbers after ED 2`);
      m.dispose();
    }
  });

  test('ED 3 on the alternate screen leaves the normal scrollback alone', async () => {
    const m = new Mirror(COLS, ROWS, 10000);
    await feed(m, numbers(1, 1000), [4096]);
    const before = retained(m);
    await feed(m, Buffer.from('\x1b[?1049h\x1b[H\x1b[2J\x1b[3Jalt\x1b[?1049l'), [5]);
    assert.deepEqual(retained(m), before);
    m.dispose();
  });

  test('row numbers never go back when ED 3 drops rows waiting above the screen', async () => {
    const m = new Mirror(COLS, ROWS, 10000);
    await feed(m, numbers(1, 1000), [4096]);
    const end = m.endRow;
    await feed(m, Buffer.from('\x1b[3J'), [3]);
    assert.equal(m.endRow, end);
    assert.equal(m.firstRetainedRow, end - ROWS);
    m.dispose();
  });

  test('a saved cursor (ESC 7 / CSI s) returns to its place on the screen after the screen scrolled, as tmux does', async () => {
    for (const [save, restore] of [
      ['\x1b7', '\x1b8'],
      ['\x1b[s', '\x1b[u'],
    ]) {
      const m = new Mirror(COLS, ROWS, 1000);
      // Saved on screen row 2, column 8; 22 rows down to the bottom and one line feed scroll the screen by one.
      await feed(m, Buffer.from(`line 0\r\nline 1 #${save}\x1b[22E\n${restore}X`), [4096]);
      const shot = m.screen();
      assert.deepEqual(
        shot.rows.slice(0, 3),
        ['line 1 #', `${' '.repeat(8)}X`, ''],
        `${JSON.stringify(save)}: X where the cursor was saved, the screen scrolled by one`,
      );
      assert.deepEqual(shot.cursor, { row: 2, col: 10 }, `${JSON.stringify(save)}: the cursor after X`);
      m.dispose();
    }
    // Entering the alternate screen saves the cursor apart from ESC 7's, as tmux keeps it: a DECRC
    // after it went to the row ESC 7 saved but the column the entry saved (an outside audit).
    const m = new Mirror(COLS, ROWS, 1000);
    await feed(m, Buffer.from('\x1b[3;5H\x1b7\x1b[10;20H\x1b[?1049h\x1b[?1049l\x1b[20;1H\x1b8X'), [4096]);
    assert.equal(m.screen().rows[2], `${' '.repeat(4)}X`, 'X where ESC 7 saved the cursor: row 3, column 5');
    m.dispose();
  });

  /**
   * The numbers `from`..`to` (of `width` digits) that the retained rows hold, read in order across
   * however the rows are wrapped: a row lost or shown twice breaks the sequence.
   */
  function assertNumberSequence(m: Mirror, width: number, from: number, to: number, label: string): void {
    const text = retained(m).join('');
    assert.equal(text.length % width, 0, `${label}: ${text.length} digits retained, not whole numbers`);
    const got: number[] = [];
    for (let at = 0; at < text.length; at += width) got.push(Number(text.slice(at, at + width)));
    const want: number[] = [];
    for (let i = from; i <= to; i++) want.push(i);
    assert.deepEqual(got, want, `${label}: the numbers retained`);
  }

  test('a resize that re-wraps the screen into many more rows, then output: no row is lost', async () => {
    // 30 columns, 25-digit rows; at 16 columns each screen row becomes two, and the rows that no
    // longer fit wait above the screen. The next 32 rows of output scrolled the row the store's
    // boundary sat on out of xterm's scrollback before the next harvest: the store was emptied as
    // after ED 3, every row before the resize lost (found by plain-run.fuzz.test.ts).
    const m = new Mirror(30, ROWS, 10000, { plainRuns: false });
    await feed(m, numbers(1, 88, 25), [4096]);
    m.resize(16, 38);
    await feed(m, numbers(89, 188, 25), [4096]);
    assertNumberSequence(m, 25, 1, 188, 'after the resize and more output');
    assert.equal(m.firstRetainedRow, 0);
    m.dispose();
  });

  test('a resize that re-wraps a full xterm scrollback to fewer columns keeps every row, once', async () => {
    // 88 rows fill xterm's buffer (64 rows of scrollback and 24 on the screen): at 16 columns the
    // re-wrapped rows no longer fit it and xterm trimmed its top, the row the store's boundary sat
    // on with it, which read as ED 3: the store was emptied.
    for (const plainRuns of [false, true]) {
      const m = new Mirror(30, ROWS, 10000, { plainRuns });
      await feed(m, numbers(1, 88, 25), [4096]);
      m.resize(16, ROWS);
      assertNumberSequence(m, 25, 1, 88, `plainRuns ${plainRuns}, 30x24 to 16x24`);
      assert.equal(m.firstRetainedRow, 0);
      await feed(m, numbers(89, 300, 25), [4096]);
      assertNumberSequence(m, 25, 1, 300, `plainRuns ${plainRuns}, then 212 more rows`);
      m.dispose();
    }
  });

  test('a resize that re-wraps to fewer columns and more rows shows no row twice', async () => {
    // The rows already moved to the store stayed in xterm's scrollback too; re-wrapped, some of
    // them came down onto the taller screen while the store still held them: 18 rows twice.
    for (const plainRuns of [false, true]) {
      const m = new Mirror(30, ROWS, 10000, { plainRuns });
      await feed(m, numbers(1, 200, 25), [4096]);
      const first = m.firstRetainedRow;
      m.resize(16, 38);
      assertNumberSequence(m, 25, 1, 200, `plainRuns ${plainRuns}, 30x24 to 16x38`);
      assert.ok(m.firstRetainedRow >= first, 'row numbers only grow');
      m.resize(30, ROWS);
      assertNumberSequence(m, 25, 1, 200, `plainRuns ${plainRuns}, back to 30x24`);
      // Taller first (rows come back down onto the screen: xterm pulled them from its scrollback,
      // while the store held them too), then narrower: those rows re-wrapped on the screen.
      await feed(m, numbers(201, 300, 25), [4096]);
      m.resize(30, 40);
      m.resize(16, 40);
      assertNumberSequence(m, 25, 1, 300, `plainRuns ${plainRuns}, 30x40 then 16x40`);
      m.dispose();
    }
  });

  test("a scroll up or a deleted line at the screen's top, right after rows moved to the store, leaves the scrollback whole", async () => {
    // The store's boundary sits on the screen's top row right after rows move: deleting that row
    // (SU, or DL there) read as the row gone, as after ED 3, and the whole scrollback was emptied.
    for (const op of ['\x1b[S', '\x1b[H\x1b[M', '\x1b[2;5r\x1b[r\x1b[T']) {
      for (let n = 6; n <= 80; n++) {
        const m = new Mirror(20, 5, 10000, { plainRuns: false });
        await feed(m, Buffer.concat([numbers(1, n), Buffer.from(op + '\x1b[5;1H'), numbers(n + 1, n + 100)]), [4096]);
        const got = retained(m)
          .filter((r) => r !== '')
          .map(Number);
        const label = `${JSON.stringify(op)} after ${n} rows`;
        assert.equal(got[0], 1, `${label}: the first row kept`);
        assert.equal(got[got.length - 1], n + 100, `${label}: the last row`);
        for (let i = 1; i < got.length; i++) assert.ok(got[i] > got[i - 1], `${label}: ${got[i - 1]} then ${got[i]}`);
        m.dispose();
      }
    }
  });

  /** `text` drawn in a fresh terminal: each screen cell's character and colours, then the cursor. */
  function drawn(text: string, cols: number, rows: number): string[] {
    const t = new Terminal({ cols, rows, allowProposedApi: true });
    try {
      syncWriteOf(t)!(Buffer.from(text));
      const b = t.buffer.active;
      const cells: string[] = [];
      for (let y = 0; y < rows; y++) {
        const line = b.getLine(b.baseY + y)!;
        for (let x = 0; x < cols; x++) {
          const c = line.getCell(x)!;
          cells.push(`${y}:${x} ${c.getChars()} ${c.getFgColorMode()}/${c.getFgColor()} ${c.getBgColorMode()}/${c.getBgColor()}`);
        }
      }
      return [...cells, `cursor ${b.cursorY}:${b.cursorX}`];
    } finally {
      t.dispose();
    }
  }

  test('a taller or wider screen pulls rows back down from the scrollback, with their colours, as xterm itself does', async () => {
    // What the user's own terminal shows after the resize: the mirror's screen must be the same.
    const plain = numbers(1, 150);
    const coloured = Buffer.from(Array.from({ length: 40 }, (_, i) => `\x1b[3${i % 8}mrow ${i}\x1b[0m\r\n`).join(''));
    const numbered = Array.from({ length: 150 }, (_, i) => String(i + 1));
    const everyRow = [...numbered, ...Array.from({ length: 40 }, (_, i) => `row ${i}`), ...numbered, ''];
    for (const plainRuns of [false, true]) {
      const m = new Mirror(20, 10, 10000, { plainRuns });
      const bare = new Terminal({ cols: 20, rows: 10, scrollback: 1000, allowProposedApi: true });
      const parse = syncWriteOf(bare)!;
      for (const out of [plain, coloured, plain]) {
        await feed(m, out, [4096]);
        parse(out);
      }
      for (const [cols, rows] of [
        [20, 30],
        [12, 30],
        [20, 50],
        [20, 8],
        [40, 60],
      ]) {
        m.resize(cols, rows);
        bare.resize(cols, rows);
        const label = `plainRuns ${plainRuns}, ${cols}x${rows}`;
        const buf = bare.buffer.active;
        const want = Array.from({ length: rows }, (_, y) => rowText(buf, buf.baseY + y));
        const got = m.screen();
        assert.deepEqual(got.rows, want, `${label}: the screen`);
        assert.deepEqual(got.cursor, { row: buf.cursorY + 1, col: buf.cursorX + 1 }, `${label}: the cursor`);
        const serializer = new SerializeAddon();
        bare.loadAddon(serializer);
        // The same screen drawn: each cell's character and colours, and the cursor.
        assert.deepEqual(drawn(m.serialize(0), cols, rows), drawn(serializer.serialize({ scrollback: 0 }), cols, rows), `${label}: the screen's colours`);
        serializer.dispose();
        assert.deepEqual(retained(m), everyRow, `${label}: every row once, in order`);
      }
      bare.dispose();
      m.dispose();
    }
  });

  test('a resize while a full-screen program has the alternate screen keeps every row of the normal one, once', async () => {
    // xterm re-wraps the normal screen's rows behind the alternate one: the same faults as above.
    for (const plainRuns of [false, true]) {
      const m = new Mirror(30, ROWS, 10000, { plainRuns });
      await feed(m, numbers(1, 200, 25), [4096]);
      await feed(m, Buffer.from('\x1b[?1049h\x1b[H\x1b[2Jfull screen'), [4096]);
      m.resize(16, 38);
      m.resize(12, 20);
      await feed(m, Buffer.from('\x1b[?1049l'), [4096]);
      assertNumberSequence(m, 25, 1, 200, `plainRuns ${plainRuns}, after the alternate screen`);
      m.dispose();
    }
  });

  test('a small retention bound is honoured', async () => {
    const m = new Mirror(COLS, ROWS, 500);
    await feed(m, numbers(1, 5000), [999]);
    const rows = retained(m);
    assert.equal(rows.length, 500 + ROWS);
    assertConsecutive(rows.slice(0, -1), 5000 - 500 - ROWS + 2, 5000, 'bound 500');
    m.dispose();
  });
});
