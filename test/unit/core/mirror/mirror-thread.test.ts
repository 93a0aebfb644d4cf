// Screens are parsed in the mirror thread, and a burst of output is held unparsed until it ends
// (src/core/mirror-proxy.ts). Whatever the timing, a read must show the screen exactly as of the
// output cursor it reports, and a flood larger than the parser's limit must pause the program
// rather than lose output or grow without bound.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Session } from '../../../../src/core/session/session';
import { MirrorThread } from '../../../../src/core/mirror/mirror-thread';
import { MirrorProxy, type MirrorSignals } from '../../../../src/core/mirror/mirror-proxy';
import { BASH } from '../../../helpers/host';
import { waitFor } from '../../../../src/core/io/wait';
import { CALLER_GONE } from '../../../../src/core/base/call-end';

/** Screen reads made one after another during the flood. */
const FLOOD_READS = 30;
/**
 * Bound on the median of those reads. bench/README.md measured a read during a flood at 39.6 ms at
 * p99 on this kind of machine (target: 100 ms); a test shares the 2 cores with the other test files,
 * so the bound is five times that p99. Before the parser's backlog was bounded, the median read
 * took 0.2 to 3.8 s.
 */
const FLOOD_READ_MEDIAN_MS = 200;
import { startHost, TEST_WRITER, until } from '../../../helpers/host';
import { ensureNoDisposablesAreLeakedBySuite } from '../../../helpers/leak-tracker';

/** Bytes `seq 1 N` prints before the number n, with the terminal's \r\n line ends. */
function bytesBefore(n: number): number {
  let total = 0;
  for (let digits = 1, from = 1; from < n; digits++, from *= 10) total += (Math.min(n, from * 10) - from) * (digits + 2);
  return total;
}

/** What the screen must show at output cursor `c` of `seq`: the last row with text. */
function lastRowAt(c: number): string {
  let lo = 1;
  let hi = 1e9;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (bytesBefore(mid) <= c) lo = mid;
    else hi = mid - 1;
  }
  // `lo` is the number being printed at c; its partial line, or the previous number if none yet.
  const partial = (String(lo) + '\r\n').slice(0, c - bytesBefore(lo)).replace(/[\r\n]/g, '');
  return partial !== '' ? partial : String(lo - 1);
}

// Once the shared host is closed, nothing the suite made is left (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedBySuite();

describe('the mirror thread', () => {
  let host: Awaited<ReturnType<typeof startHost>>;
  before(async () => {
    host = await startHost();
  });
  after(async () => {
    await host.close();
  });

  const exited = (s: Session) => s.exited;

  test('a wait whose caller has gone ends without reading the screen: it rejects, saying so', { timeout: 30_000 }, async () => {
    const s = await host.host.createSession({ command: 'cat', args: [], cols: 80, rows: 24 });
    try {
      const ac = new AbortController();
      let looks = 0;
      const watch = s.mirror.watchScreen.bind(s.mirror);
      s.mirror.watchScreen = () => (looks++, watch());
      const waiting = waitFor(s, { match: 'never printed', timeout: 60_000 }, ac.signal);
      await until(() => looks > 0, 10_000, 'the first look');
      const before = looks;
      ac.abort(CALLER_GONE);
      await assert.rejects(waiting, /caller went away/);
      assert.equal(looks, before, 'no screen read for a caller that has gone');
      // A cancel ($/cancelRequest) is answered still: as its timeout would be, with the screen.
      const cancel = new AbortController();
      const cancelled = waitFor(s, { match: 'never printed', timeout: 60_000 }, cancel.signal);
      cancel.abort();
      assert.equal((await cancelled).reason, 'timeout');
    } finally {
      s.kill();
      await exited(s);
      host.host.registry.remove(s.id);
    }
  });

  test('a session that has printed nothing holds no terminal; its size and colours set meanwhile hold once it prints', { timeout: 30_000 }, async () => {
    // First in this file: no other session opens or closes its mirror meanwhile.
    const terminals = async () => (await MirrorThread.shared().stats()).terminals;
    const before = await terminals();
    // Prints nothing until a line arrives, then asks for the foreground colour and echoes the answer.
    const s = await host.host.createSession({ command: 'sh', args: ['-c', 'read _; printf "\\033]10;?\\007"; exec cat'], cols: 80, rows: 24 });
    try {
      s.resize(100, 30);
      s.mirror.setColors({ 10: 'rgb:1234/5678/9abc' });
      // Ordering fence: the stats request is answered after the open, resize and colours (one queue).
      assert.equal(await terminals(), before, 'no terminal for a silent session');
      s.write('\r', TEST_WRITER);
      await until(async () => (await s.mirror.screen()).rows.join('\n').includes('1234/5678/9abc'), 10_000, 'the answer, echoed');
      const screen = await s.mirror.screen();
      assert.deepEqual(screen.size, { cols: 100, rows: 30 });
      assert.equal(await terminals(), before + 1);
    } finally {
      host.host.registry.remove(s.id);
    }
  });

  test('reads during a burst show the screen exactly as of the cursor they report', { timeout: 60_000 }, async () => {
    const n = 2_000_000; // ~15 MB: still printing while the reads are made
    const s = await host.host.createSession({ command: 'seq', args: ['1', String(n)], cols: 80, rows: 24 });
    const checked: number[] = [];
    for (const at of [1, 3, 6, 9]) {
      await until(() => s.cursor > at * 1024 * 1024 || !s.running, 20000, `${at} MiB of output`);
      const { value: screen, cursor } = await s.mirror.queryAt('screen');
      const rows = screen.rows.filter((r) => r !== '');
      assert.equal(rows.at(-1), lastRowAt(cursor), `the screen at cursor ${cursor}`);
      checked.push(cursor);
    }
    await exited(s);
    const { value: screen, cursor } = await s.mirror.queryAt('screen');
    assert.equal(cursor, bytesBefore(n + 1), 'the final read reflects all of the output');
    assert.equal(screen.rows.filter((r) => r !== '').at(-1), String(n));
    assert.ok(
      checked.every((c, i) => i === 0 || c >= checked[i - 1]),
      `cursors only grow: ${checked}`,
    );
    assert.ok(checked[0] < bytesBefore(n + 1), 'the first read was made during the burst');
    host.host.registry.remove(s.id);
  });

  test('a flood the parser cannot keep up with pauses the program, keeps the backlog bounded and loses nothing', { timeout: 90_000 }, async () => {
    // ~15 MB of short rows: far more than the backlog may hold however fast the parser is.
    const n = 2_000_000;
    const total = bytesBefore(n + 1);
    const s = await host.host.createSession({ command: 'seq', args: ['1', String(n)], cols: 80, rows: 24 });
    let maxPending = 0;
    let maxLimit = 0;
    const sampler = setInterval(() => {
      maxPending = Math.max(maxPending, s.mirror.pendingBytes);
      maxLimit = Math.max(maxLimit, s.mirror.backlogLimit);
    }, 2);
    try {
      await exited(s);
      await s.mirror.whenParsed();
    } finally {
      clearInterval(sampler);
    }
    // Bounded: one PTY read (at most 64 KiB) may land after the pause is asked for.
    assert.ok(maxLimit <= 4 * 1024 * 1024, `the backlog limit stays at most 4 MiB (${maxLimit})`);
    assert.ok(maxPending <= maxLimit + 64 * 1024, `${maxPending} bytes waited for the parser, limit ${maxLimit}`);
    assert.ok(total > maxLimit * 3, 'the flood was much larger than the backlog may be');
    assert.equal(s.cursor, total, 'every byte was read');
    // The cursor's own (empty) row ends the retained rows.
    const page = await s.mirror.query('scrollbackPage', 0, 5001);
    const rows = page.text.split('\n').filter((r) => r !== '');
    assert.equal(rows.length, 5000);
    rows.forEach((r, i) => assert.equal(r, String(n - 4999 + i)));
    host.host.registry.remove(s.id);
  });

  test(
    "during an endless flood (yes) screen reads keep being answered within the bench's bound, each with all output before it",
    { timeout: 60_000 },
    async (t) => {
      const s = await host.host.createSession({ command: 'yes', args: ['flood'], cols: 80, rows: 24 });
      await until(() => s.cursor > 1024 * 1024, 20000, 'the flood');
      // Before #12 a read waited for everything held unparsed (up to 64 MiB): seconds each.
      const took: number[] = [];
      for (let i = 0; i < FLOOD_READS; i++) {
        const before = s.cursor;
        const started = performance.now();
        const { value: screen, cursor } = await s.mirror.queryAt('screen');
        took.push(performance.now() - started);
        assert.ok(cursor >= before, `read ${i} reflects the output received before it (${cursor} < ${before})`);
        assert.equal(screen.rows.filter((r) => r === 'flood').length >= 22, true, `read ${i} shows the flood: ${JSON.stringify(screen.rows)}`);
      }
      assert.ok(s.running, 'the flood was still on while every read was answered');
      took.sort((a, b) => a - b);
      const median = took[Math.floor(took.length / 2)];
      t.diagnostic(`reads during the flood: median ${median.toFixed(1)} ms, slowest ${took.at(-1)!.toFixed(1)} ms`);
      assert.ok(
        median <= FLOOD_READ_MEDIAN_MS,
        `the median read took ${median.toFixed(0)} ms (at most ${FLOOD_READ_MEDIAN_MS}): ${took.map((x) => x.toFixed(0)).join(' ')}`,
      );
      host.host.registry.remove(s.id);
    },
  );

  test('a read is answered on the screen exactly as of the output handed over before it, though more follows at once', { timeout: 30_000 }, async () => {
    // Straight to the thread, so that the read and the output after it reach it in one go (as they
    // do during a flood): 200 KiB of numbered rows, the read, 200 KiB more.
    const thread = MirrorThread.shared();
    const rows = (from: number, to: number) => Buffer.from(Array.from({ length: to - from }, (_, i) => `row ${from + i}\r\n`).join(''));
    const first = rows(0, 20_000);
    const more = rows(20_000, 40_000);
    const id = thread.register({ flush() {}, onParsedUpTo() {}, onSignals() {}, onAnswers() {}, reopen() {} });
    try {
      thread.post({ t: 'open', id, cols: 80, rows: 24, scrollback: 1000, cursor: 0, quietUntil: 0 });
      thread.post({ t: 'write', id, chunks: [new Uint8Array(first)], cursor: first.length });
      const read = thread.request({ t: 'query', id, op: 'screen', args: [] });
      thread.post({ t: 'write', id, chunks: [new Uint8Array(more)], cursor: first.length + more.length });
      const { value, cursor } = await read;
      assert.equal(cursor, first.length, 'answered at the end of the output before the read');
      const shown = (value as { rows: string[] }).rows.filter((r) => r !== '');
      assert.equal(shown.at(-1), 'row 19999', 'the screen as of that output, not later');
    } finally {
      thread.unregister(id);
    }
  });

  test('output that costs much per byte (a large screen cleared in a loop) may keep fewer bytes waiting than text may', { timeout: 60_000 }, async () => {
    // 15 bytes redraw 48,000 cells: 32 KiB of it (text's floor) was seconds of parsing.
    const s = await host.host.createSession({
      command: 'bash',
      args: ['--norc', '--noprofile', '-c', 'while :; do printf "\\e[2J\\e[H%s\\n" $RANDOM; done'],
      cols: 400,
      rows: 120,
    });
    try {
      await until(() => s.cursor > 256 * 1024, 30_000, 'the redraws');
      assert.equal(s.mirror.reading, false);
      // Text's floor is 32 KiB (Backlog.MinBytes): this output's limit is what the parser clears in 20 ms…
      await until(() => s.mirror.backlogLimit < 32 * 1024, 10_000, "a backlog limit below text's floor");
      // …and while a client reads the screen, 8 KiB (ReadingMinBytes) is more than it clears in 5 ms.
      await s.mirror.queryAt('screen');
      assert.equal(s.mirror.reading, true);
      await until(() => s.mirror.backlogLimit < 8 * 1024, 10_000, "a reading backlog limit below text's floor");
    } finally {
      host.host.registry.remove(s.id);
    }
  });

  test(
    'while a client reads the screen during a flood the backlog is kept short; a wait watching the screen does not shorten it',
    { timeout: 60_000 },
    async () => {
      const s = await host.host.createSession({ command: 'yes', args: ['flood'], cols: 80, rows: 24 });
      try {
        await until(() => s.cursor > 1024 * 1024, 20000, 'the flood');
        const unread = s.mirror.backlogLimit;
        assert.equal(s.mirror.reading, false, 'nobody has read this screen yet');
        // pty/wait looks at the screen again and again: that is not a client waiting for each look.
        await waitFor(s, { match: 'never printed', timeout: 300 });
        assert.equal(s.mirror.reading, false, "pty/wait's looks leave the bound as it is");
        let maxPending = 0;
        for (let i = 0; i < FLOOD_READS; i++) {
          const before = s.cursor;
          const { cursor } = await s.mirror.queryAt('screen');
          assert.ok(cursor >= before, `read ${i} reflects the output before it`);
          maxPending = Math.max(maxPending, s.mirror.pendingBytes);
        }
        assert.equal(s.mirror.reading, true);
        const limit = s.mirror.backlogLimit;
        assert.ok(limit < unread, `a shorter backlog while read (${limit} bytes, ${unread} unread)`);
        // At most one PTY read lands after the pause is asked for (64 KiB at most).
        assert.ok(maxPending <= limit + 64 * 1024, `${maxPending} bytes waited, limit ${limit}`);
        await until(() => !s.mirror.reading, 10_000, 'the bound to return once the reads stop');
        assert.ok(s.running, 'the flood was on throughout');
      } finally {
        host.host.registry.remove(s.id);
      }
    },
  );

  test('the thread never keeps the process alive: its port to the host holds no reference', async () => {
    const s = await host.host.createSession({ command: 'true', args: [], cols: 80, rows: 24 });
    await s.mirror.screen(); // the thread runs
    const worker = (MirrorThread.shared() as unknown as { _worker: object })._worker as Record<symbol, { hasRef?: () => boolean }>;
    const port = Object.getOwnPropertySymbols(worker).find((k) => k.description === 'kPublicPort');
    assert.ok(port, 'the worker has its public port');
    // Before the fix a 'message' listener added after unref() made the port hold the process for
    // the thread's idle stop (10 s after the last session) after everything else had ended.
    assert.equal(worker[port].hasRef?.(), false);
    host.host.registry.remove(s.id);
  });

  /** Ends the mirror thread as a crash would (a test only reaches in for it). */
  const crashThread = async () => {
    const worker = (MirrorThread.shared() as unknown as { _worker: { terminate(): Promise<number> } })._worker;
    await worker.terminate();
  };

  test('if the thread dies, sessions keep running and their screens are rebuilt from the ring', { timeout: 30_000 }, async () => {
    const s = await host.host.createSession({ ...BASH, cols: 80, rows: 24 });
    const screen = async () => (await s.mirror.screen()).rows.join('\n');
    await until(async () => (await screen()).includes('$'), 10000, 'the prompt');
    s.write('printf "\\e]0;before\\a"; echo before-$((6*7))\r', TEST_WRITER);
    await until(async () => (await screen()).includes('before-42'), 10000, 'the first command');
    const shown = await s.mirror.queryAt('screen');
    let titles = 0;
    const listener = s.mirror.onSignalled((told) => (titles += told.signals.filter((x) => 'title' in x).length));
    await crashThread();
    assert.ok(s.running, 'the session outlives its screen');
    const rebuilt = await s.mirror.queryAt('screen');
    assert.deepEqual(rebuilt.value, shown.value, 'the rebuilt screen is the one shown before the crash');
    assert.equal(rebuilt.cursor, s.cursor, "the mirror's parsed cursor is the session's output cursor");
    s.write('echo after-$((6*7))\r', TEST_WRITER);
    await until(async () => (await screen()).includes('after-42'), 10000, 'the screen to follow the new output');
    const page = await s.mirror.query('scrollbackPage', 0, 100);
    assert.match(page.text, /before-42[^]*after-42/, 'the retained rows hold the output from before and after the crash, in order');
    assert.equal(titles, 0, 'the replay does not announce the old title again');
    listener.dispose();
    host.host.registry.remove(s.id);
  });

  // A program that opens a title and sends megabytes before ending it (or never does) had the
  // mirror thread keep the string whole, and grow by hundreds of MiB a session (an outside audit).
  test('a title of megabytes is dropped as xterm drops an over-long one; the output after it and a later title are taken', { timeout: 30_000 }, async () => {
    const s = await host.host.createSession({ ...BASH, cols: 80, rows: 24 });
    const screen = async () => (await s.mirror.screen()).rows.join('\n');
    await until(async () => (await screen()).includes('$'), 10000, 'the prompt');
    const titles: string[] = [];
    const listener = s.mirror.onSignalled((told) => told.signals.forEach((x) => 'title' in x && titles.push(x.title)));
    s.write("printf '\\e]0;'; head -c 3000000 /dev/zero | tr '\\0' y; printf '\\a\\e]0;short\\a'; echo done-$((6*7))\r", TEST_WRITER);
    await until(async () => (await screen()).includes('done-42'), 20000, 'the output after the title');
    await until(() => titles.length > 0, 5000, 'the short title');
    assert.deepEqual(
      titles.map((t) => (t.length > 20 ? `${t.length} characters` : t)),
      ['short'],
    );
    assert.doesNotMatch(await screen(), /yyy/, 'nothing of the string reached the screen');
    listener.dispose();
    host.host.registry.remove(s.id);
  });

  test('a crash in the middle of a flood: the flood goes on and every read is exact from the rebuild on', { timeout: 60_000 }, async () => {
    const n = 1_000_000; // ~6.9 MB, far more than the ring (1 MiB) holds
    const total = bytesBefore(n + 1);
    const s = await host.host.createSession({ command: 'seq', args: ['1', String(n)], cols: 80, rows: 24 });
    await until(() => s.cursor > 2 * 1024 * 1024, 20000, '2 MiB of output');
    await crashThread();
    const { value: first, cursor: at } = await s.mirror.queryAt('screen');
    assert.equal(first.rows.filter((r) => r !== '').at(-1), lastRowAt(at), `the rebuilt screen at cursor ${at}`);
    assert.ok(first.rows.filter((r) => r !== '').length >= 23, 'a full screen of rows, not a blank one');
    await s.exited;
    await s.mirror.whenParsed();
    const { value: screen, cursor } = await s.mirror.queryAt('screen');
    assert.equal(s.cursor, total, 'every byte was read: the flood was not left paused');
    assert.equal(cursor, total, 'the final read reflects all of the output');
    assert.equal(screen.rows.filter((r) => r !== '').at(-1), String(n));
    const rows = (await s.mirror.query('scrollbackPage', 0, 3001)).text.split('\n').filter((r) => r !== '');
    assert.equal(rows.length, 3000);
    rows.forEach((r, i) => assert.equal(r, String(n - 2999 + i)));
    host.host.registry.remove(s.id);
  });

  test('a thread that dies again before the replay is parsed gets no replay (the output may be what kills it)', { timeout: 30_000 }, async () => {
    const s = await host.host.createSession({ command: 'seq', args: ['1', '100000'], cols: 80, rows: 24 });
    await s.exited;
    await s.mirror.whenParsed();
    const lastRow = async () => (await s.mirror.screen()).rows.filter((r) => r !== '').at(-1);
    assert.equal(await lastRow(), '100000');
    await crashThread();
    await crashThread(); // the new thread dies while it has not even loaded, let alone parsed the replay
    const blank = await s.mirror.queryAt('screen');
    assert.deepEqual(
      blank.value.rows.filter((r) => r !== ''),
      [],
      'no replay this time: the screen starts blank',
    );
    assert.equal(blank.cursor, s.cursor, 'cursors still in step');
    await crashThread(); // a crash with nothing left unparsed: the replay is tried again
    assert.equal(await lastRow(), '100000', 'rebuilt from the ring again');
    host.host.registry.remove(s.id);
  });
  test('a bell is told before the thread tells that the output it rang in is parsed, by a notice or by a read', { timeout: 30_000 }, async () => {
    const m = new MirrorProxy(80, 24, 100);
    const bells: number[] = [];
    const bellsWhenParsed: Array<{ parsed: number; bells: number }> = [];
    const listeners = [
      m.onSignalled((x) => x.signals.some((y) => 'bell' in y) && bells.push(m.parsedCursor)),
      m.onParsed(() => bellsWhenParsed.push({ parsed: m.parsedCursor, bells: bells.length })),
    ];
    try {
      const one = Buffer.from('one\x07');
      m.write(one, one.length);
      await until(() => bells.length === 1, 10_000, 'the first bell');
      assert.deepEqual(bellsWhenParsed.at(-1), { parsed: one.length, bells: 1 }, 'the notice came after the bell');
      // Bells closer together are one (BellMinIntervalMs is the session's): a read right after one.
      const two = Buffer.from('two\x07');
      m.write(two, one.length + two.length);
      const screen = await m.screen();
      assert.equal(screen.rows[0], 'onetwo');
      assert.equal(bells.length, 2, 'the read answered after the bell in the output it shows was told');
    } finally {
      for (const l of listeners) l.dispose();
      m.dispose();
    }
  });
  test(
    'a fence: the bells and titles before it are told with it (every fence is told, so what waits at it can go), those after every fence without one',
    { timeout: 30_000 },
    async () => {
      const m = new MirrorProxy(80, 24, 100);
      const signals: MirrorSignals[] = [];
      const listener = m.onSignalled((x) => signals.push(x));
      let cursor = 0;
      const write = (text: string) => {
        const bytes = Buffer.from(text);
        cursor += bytes.length;
        m.write(bytes, cursor);
      };
      try {
        write('one\x07');
        m.fence();
        const first = cursor;
        m.fence(); // nothing new before it: told with nothing
        assert.equal(m.pendingFence, first, 'the proxy waits for the first fence');
        write('\x1b]0;two\x07two');
        m.fence();
        const second = cursor;
        write('three\x07');
        await m.whenParsed();
        await until(() => signals.length === 4, 10_000, 'the fourth notice');
        assert.deepEqual(signals, [
          { signals: [{ bell: true }], fence: first },
          { signals: [], fence: first },
          { signals: [{ title: 'two' }], fence: second },
          { signals: [{ bell: true }], fence: undefined },
        ]);
        assert.equal(m.pendingFence, Infinity, 'every fence told');
        // A flood fenced every few KiB is parsed whole, each fence in turn (the parser stops at each).
        signals.length = 0;
        for (let n = 1; n <= 20_000; n++) {
          write(`${n}${n % 1000 === 0 ? '\x07' : ''}\r\n`);
          if (n % 100 === 0) m.fence();
        }
        await m.whenParsed();
        assert.equal((await m.screen()).rows[22], '20000');
        await until(() => signals.filter((x) => x.signals.some((y) => 'bell' in y)).length === 20, 10_000, 'a bell per thousand lines');
        assert.ok(
          signals.every((x) => x.fence !== undefined),
          'each bell before a fence, told with it',
        );
        assert.equal(signals.length, 200, 'each fence told once');
      } finally {
        listener.dispose();
        m.dispose();
      }
    },
  );
});
