// Scrollback pages answered on the main thread (MirrorProxy.scrollbackPage, docs/architecture.md#reading-old-rows):
// only while the screen is exactly as the mirror thread last told it. Whatever happened since (more
// output trimming the oldest rows, the program's exit, a resize), a page reflects all output the
// host had received when it was asked, as the thread's own answer does.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Session } from '../../../../src/core/session/session';
import type { ScrollbackPage } from '../../../../src/core/mirror/scrollback-page';
import { MirrorThread } from '../../../../src/core/mirror/mirror-thread';
import { startHost, TEST_WRITER, until } from '../../../helpers/host';
import { ensureNoDisposablesAreLeakedBySuite } from '../../../helpers/leak-tracker';

/** Rows of scrollback a session keeps (the host's default). */
const SCROLLBACK = 10_000;
/** A page of the oldest rows: how far back from the newest, once the scrollback is full. */
const OLDEST = 100;

/** `seq 1 first`, then one more batch of rows per line typed, then exit. */
const batches = (first: number, ...more: Array<[number, number]>) => ['seq 1 ' + first, ...more.map(([a, b]) => `read _; seq ${a} ${b}`)].join('; ');

// Once the shared host is closed, nothing the suite made is left (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedBySuite();

describe('scrollback pages on the main thread', () => {
  let host: Awaited<ReturnType<typeof startHost>>;
  before(async () => {
    host = await startHost();
  });
  after(async () => {
    await host.close();
  });

  /** Counts the session's reads that went to the mirror thread. */
  function countThreadReads(s: Session): () => number {
    let n = 0;
    const mirror = s.mirror as unknown as { queryAt(...args: unknown[]): unknown };
    const original = mirror.queryAt.bind(mirror);
    mirror.queryAt = (...args: unknown[]) => {
      n++;
      return original(...args);
    };
    return () => n;
  }

  /** The oldest page as the mirror thread computes it, once everything received is parsed. */
  async function threadPage(s: Session, offset: number, lines: number) {
    await s.mirror.whenParsed();
    return s.mirror.query('scrollbackPage', offset, lines);
  }

  async function printed(s: Session, last: number): Promise<void> {
    await until(async () => (await s.mirror.screen()).rows.includes(String(last)), 20_000, `row ${last}`);
  }

  test('reads of an idle session’s oldest rows are answered without the mirror thread, with the thread’s rows', { timeout: 30_000 }, async () => {
    const s = await host.host.createSession({ command: 'sh', args: ['-c', batches(12_000) + '; read _'], cols: 80, rows: 24 });
    try {
      await printed(s, 12_000);
      const threadReads = countThreadReads(s);
      const head = await s.mirror.scrollbackPage(0, 1);
      const offset = head.totalLines - OLDEST;
      const pages: ScrollbackPage[] = [];
      for (let i = 0; i < 5; i++) pages.push(await s.mirror.scrollbackPage(offset, OLDEST));
      assert.equal(threadReads(), 1, 'only the first read (the newest row) went to the thread');
      assert.deepEqual(pages[4], await s.mirror.query('scrollbackPage', offset, OLDEST));
      assert.ok(pages.every((p) => p.firstLine === 1 && p.text === pages[0].text));
      assert.equal(pages[0].text.split('\n').length, OLDEST);
    } finally {
      host.host.registry.remove(s.id);
    }
  });

  test('rows trimmed off the front after the thread told its sealed rows: the next read shows it', { timeout: 30_000 }, async () => {
    const s = await host.host.createSession({ command: 'sh', args: ['-c', batches(12_000, [12_001, 12_600]) + '; read _'], cols: 80, rows: 24 });
    try {
      await printed(s, 12_000);
      const offset = (await s.mirror.scrollbackPage(0, 1)).totalLines - OLDEST;
      const old = await s.mirror.scrollbackPage(offset, OLDEST);
      s.write('\r', TEST_WRITER);
      // The page is asked as soon as the host has the output, before the thread says it is parsed.
      await until(() => s.ring.retained().bytes.subarray(-7).toString() === '12600\r\n', 20_000, 'the second batch received');
      const page = await s.mirror.scrollbackPage(offset, OLDEST);
      assert.deepEqual(page, await threadPage(s, offset, OLDEST));
      assert.notEqual(page.text, old.text, 'the oldest rows moved on');
    } finally {
      host.host.registry.remove(s.id);
    }
  });

  test('the program exits after more output: the page after the exit reflects all of it', { timeout: 30_000 }, async () => {
    const s = await host.host.createSession({ command: 'sh', args: ['-c', batches(12_000, [12_001, 12_300])], cols: 80, rows: 24 });
    try {
      await printed(s, 12_000);
      const offset = (await s.mirror.scrollbackPage(0, 1)).totalLines - OLDEST;
      const old = await s.mirror.scrollbackPage(offset, OLDEST);
      s.write('\r', TEST_WRITER);
      await s.exited;
      const page = await s.mirror.scrollbackPage(offset, OLDEST);
      assert.deepEqual(page, await threadPage(s, offset, OLDEST));
      assert.notEqual(page.text, old.text, 'the oldest rows moved on');
    } finally {
      host.host.registry.remove(s.id);
    }
  });

  test('a resize changes the retained rows: the next page shows it', { timeout: 30_000 }, async () => {
    // Rows 150 wide wrap in two at 80 columns and unwrap at 200: the rows above the screen change.
    const wide = 'printf "%0150d\\n" $(seq 1 40)';
    const s = await host.host.createSession({ command: 'sh', args: ['-c', `seq 1 12000; ${wide}; read _`], cols: 80, rows: 24 });
    try {
      await until(async () => (await s.mirror.screen()).rows.some((r) => /^0{60,}40$/.test(r)), 20_000, 'the wide rows');
      const offset = (await s.mirror.scrollbackPage(0, 1)).totalLines - OLDEST;
      const old = await s.mirror.scrollbackPage(offset, OLDEST);
      s.resize(200, 10);
      const page = await s.mirror.scrollbackPage(offset, OLDEST);
      assert.deepEqual(page, await threadPage(s, offset, OLDEST));
      assert.notEqual(page.totalLines, old.totalLines, 'the resize changed the retained rows');
    } finally {
      host.host.registry.remove(s.id);
    }
  });

  test('during a flood every page of the oldest rows reflects all output received before it', { timeout: 90_000 }, async () => {
    const n = 600_000;
    const s = await host.host.createSession({ command: 'seq', args: ['1', String(n)], cols: 80, rows: 24 });
    try {
      let reads = 0;
      for (let last = 0; s.running || reads === 0; reads++) {
        const received = s.cursor;
        // The number being printed when the read is asked: every row before it was received.
        const at = numberAt(received);
        const head = await s.mirror.scrollbackPage(0, 1);
        const page = await s.mirror.scrollbackPage(Math.max(0, head.totalLines - OLDEST), OLDEST);
        const rows = page.text.split('\n');
        // Rows are the numbers in order: the oldest retained one is firstLine - 1 rows before the page's first.
        const oldest = Number(rows[0]) - (page.firstLine - 1);
        // Retained: the scrollback and the screen; so the oldest row is at most that far before `at`.
        assert.ok(oldest >= at - SCROLLBACK - 24, `read ${reads}: oldest row ${oldest}, but ${at} had been received`);
        assert.ok(oldest >= last, `read ${reads}: the oldest row went back from ${last} to ${oldest}`);
        // (the newest row may be a number half printed)
        rows.slice(0, -1).forEach((r, i) => assert.equal(r, String(Number(rows[0]) + i), `read ${reads}: consecutive rows`));
        last = oldest;
      }
      assert.ok(reads > 5, `${reads} reads during the flood`);
      const page = await s.mirror.scrollbackPage(0, OLDEST);
      assert.equal(
        page.text
          .split('\n')
          .filter((r) => r !== '')
          .at(-1),
        String(n),
        'the last page has the last row',
      );
    } finally {
      host.host.registry.remove(s.id);
    }
  });
});

// Keys typed one at a time are echoed a byte or two a read; the proxy hands a run of such reads to
// the mirror thread joined in one copy, a larger read as it is. The screen shows them all, in order.
describe('output handed to the mirror thread', () => {
  let host: Awaited<ReturnType<typeof startHost>>;
  before(async () => {
    host = await startHost();
  });
  after(async () => {
    await host.close();
  });

  test('keys echoed a few bytes a read, with a paste among them, reach the screen whole and in order', { timeout: 30_000 }, async () => {
    const s = await host.host.createSession({ command: 'cat', cols: 80, rows: 24 });
    try {
      const typeKeys = async (keys: string) => {
        for (const key of keys) {
          const before = s.cursor;
          s.write(key, TEST_WRITER);
          await until(() => s.cursor > before, 5000, `the echo of ${key}`);
        }
      };
      const paste = 'p'.repeat(600);
      await typeKeys('naïve café, ');
      s.write(paste, TEST_WRITER);
      await until(() => s.ring.read(0, Infinity).text.endsWith(paste), 5000, 'the paste echoed');
      await typeKeys('then ünïcödé keys');
      const screen = await s.mirror.screen();
      assert.equal(screen.rows.join('').trimEnd(), 'naïve café, ' + paste + 'then ünïcödé keys');
    } finally {
      host.host.registry.remove(s.id);
    }
  });

  // A key's echo waits for a pause in the typing (50 ms) or 200 ms at most before it goes to the
  // thread, so keys typed back to back wake the thread once per batch. The thread's "parsed" notice
  // must not send the echoes queued meanwhile at once: that turned the batches into a ping-pong,
  // a message (and two wake-ups) per round trip between the threads.
  test('echoes of keys typed back to back go to the thread in batches, not one message per round trip', { timeout: 30_000 }, async () => {
    const s = await host.host.createSession({ command: 'cat', cols: 200, rows: 24 });
    const thread = MirrorThread.shared();
    const post = thread.post;
    try {
      s.write('x', TEST_WRITER);
      await until(() => s.cursor > 0, 5000, 'cat to echo');
      await s.mirror.screen(); // the thread is running, and has parsed everything so far
      const KEYS = 300;
      let writes = 0;
      thread.post = (msg, transfer) => {
        if (msg.t === 'write') writes++;
        post.call(thread, msg, transfer);
      };
      // Each key is typed as the previous one's echo arrives; pauses long enough to send a batch are counted.
      let typed = 0;
      let pauses = 0;
      let last = performance.now();
      const started = last;
      await new Promise<void>((resolve) => {
        const sub = s.onOutput(() => {
          const now = performance.now();
          if (now - last >= TRICKLE_QUIET_MS) pauses++;
          last = now;
          if (++typed === KEYS) {
            sub.dispose();
            resolve();
          } else s.write('k', TEST_WRITER);
        });
        s.write('k', TEST_WRITER);
      });
      const elapsed = performance.now() - started;
      await s.mirror.screen();
      thread.post = post;
      // At most a batch per pause, one per 200 ms of steady typing, and the read's own flush.
      const bound = pauses + Math.ceil(elapsed / TRICKLE_MAX_MS) + 2;
      assert.ok(writes <= bound, `${writes} messages to the thread for ${KEYS} keys in ${elapsed.toFixed(0)} ms with ${pauses} pauses (at most ${bound})`);
      assert.equal((await s.mirror.screen()).rows.join('').trimEnd(), 'x' + 'k'.repeat(KEYS));
    } finally {
      thread.post = post;
      host.host.registry.remove(s.id);
    }
  });
});

/** mirror-thread.ts ThreadTuning: a trickle goes after a pause this long… */
const TRICKLE_QUIET_MS = 50;
/** …or after this long at most. */
const TRICKLE_MAX_MS = 200;

/** Bytes `seq 1 N` prints before the number n, with the terminal's \r\n line ends. */
function bytesBefore(n: number): number {
  let total = 0;
  for (let digits = 1, from = 1; from < n; digits++, from *= 10) total += (Math.min(n, from * 10) - from) * (digits + 2);
  return total;
}

/** The number `seq` is printing at output cursor `c`. */
function numberAt(c: number): number {
  let lo = 1;
  let hi = 1e9;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (bytesBefore(mid) <= c) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}
