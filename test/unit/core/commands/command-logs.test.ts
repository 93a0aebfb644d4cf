// Command logs (docs/protocol.md#ptycommandoutput), end to end: real bash with shell integration in a real host, a
// temporary HOME; each command's whole output read back page by page with pty/commandOutput over
// the control socket, as a script would.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CommandTracker, type CommandRecord } from '../../../../src/core/commands/command-tracker';
import { CommandLogs } from '../../../../src/core/commands/command-logs';
import type { SessionInfo } from '../../../../src/core/methods/types';
import type { RpcClient } from '../../../../src/transport/client/rpc-client';
import { connect, rejectsWith, startHost, until } from '../../../helpers/host';
import { ensureNoDisposablesAreLeakedBySuite } from '../../../helpers/leak-tracker';

const TEST_TIMEOUT = 60_000;

interface Page {
  id: number;
  data: string;
  offset: number;
  nextOffset: number;
  totalBytes: number;
  eof: boolean;
  running: boolean;
  truncated: boolean;
  log: string;
}
interface SendResult {
  output: string;
  waitReason: string;
  command?: CommandRecord;
}

type Host = Awaited<ReturnType<typeof startHost>>;
const homes: string[] = [];

/** A bash with integration, in a HOME of its own, at its first prompt. */
async function openBash(c: RpcClient) {
  const home = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'spt-logs-')));
  homes.push(home);
  fs.writeFileSync(path.join(home, '.bashrc'), "PS1='my> '\nHISTFILE=/dev/null\n");
  const info = await c.request<SessionInfo>('session/create', { command: 'bash', cwd: home, env: { HOME: home }, cols: 100, rows: 30 });
  const session = info.id;
  await until(async () => (await c.request<{ screen: string }>('pty/read', { session })).screen.trimEnd().endsWith('>'), 15_000, 'the first prompt');
  return {
    session,
    send: (text: string) => c.request<SendResult>('pty/send', { session, text, timeout: 30_000 }),
    page: (id: number, more: Record<string, unknown> = {}) => c.request<Page>('pty/commandOutput', { session, id, ...more }),
    commands: async () => (await c.request<{ commands: CommandRecord[] }>('pty/commands', { session, limit: 100 })).commands,
  };
}

/** Every page of command `id`'s log, `maxBytes` at a time, joined. */
async function readAll(page: (id: number, more?: Record<string, unknown>) => Promise<Page>, id: number, maxBytes: number, strip = false): Promise<string> {
  let out = '';
  for (let offset = 0; ;) {
    const p = await page(id, { offset, maxBytes, strip });
    out += p.data;
    if (p.eof) return out;
    assert.ok(p.nextOffset > offset, 'every page moves on');
    offset = p.nextOffset;
  }
}

after(() => {
  for (const home of homes) fs.rmSync(home, { recursive: true, force: true });
});
// Once the shared host is closed, nothing the suite made is left (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedBySuite();

describe("with shell integration, each command's whole output is kept in a log of its own", () => {
  let h: Host;
  let c: RpcClient;
  before(async () => {
    h = await startHost();
    c = await connect(h.host.controlAddress);
  });
  after(async () => {
    c?.close();
    await h?.close();
  });

  test(
    "the log holds exactly the command's output (0600, in a 0700 folder of the runtime directory); pages never split a character; strip removes escapes",
    { timeout: TEST_TIMEOUT },
    async () => {
      const s = await openBash(c);
      const sent = await s.send(`printf '\\033[31mred\\033[0m\\n'; for i in 1 2 3; do echo "zeile-$i äöü €"; done`);
      const record = sent.command!;
      assert.equal(typeof record.log, 'string', 'CommandRecord.log names the log');
      const log = record.log!;
      assert.ok(log.startsWith(h.dir + path.sep), `the log lives in the runtime directory: ${log}`);
      assert.equal(fs.statSync(log).mode & 0o777, 0o600);
      assert.equal(fs.statSync(path.dirname(log)).mode & 0o777, 0o700);
      const expected = '\x1b[31mred\x1b[0m\r\n' + [1, 2, 3].map((i) => `zeile-${i} äöü €\r\n`).join('');
      const whole = await s.page(record.id);
      assert.equal(whole.data, expected);
      assert.deepEqual(
        {
          offset: whole.offset,
          nextOffset: whole.nextOffset,
          totalBytes: whole.totalBytes,
          eof: whole.eof,
          running: whole.running,
          truncated: whole.truncated,
        },
        {
          offset: 0,
          nextOffset: Buffer.byteLength(expected),
          totalBytes: Buffer.byteLength(expected),
          eof: true,
          running: false,
          truncated: false,
        },
      );
      assert.equal(fs.readFileSync(log, 'utf8'), expected, 'the file itself holds the output');
      // Tiny pages: characters of 2 and 3 bytes are never split, and the pages add up exactly.
      assert.equal(await readAll(s.page, record.id, 1), expected);
      assert.equal(await readAll(s.page, record.id, 5), expected);
      // An offset in the middle of a character starts at the next one.
      const mid = Buffer.byteLength('\x1b[31mred\x1b[0m\r\nzeile-1 ä') - 1;
      assert.equal((await s.page(record.id, { offset: mid, maxBytes: 4 })).offset, mid + 1);
      assert.equal((await s.page(record.id, { strip: true })).data, 'red\n' + [1, 2, 3].map((i) => `zeile-${i} äöü €\n`).join(''));
      // Stripped pages too small for a sequence's two halves end before it, so none shows as text.
      assert.equal(await readAll(s.page, record.id, 5, true), 'red\n' + [1, 2, 3].map((i) => `zeile-${i} äöü €\n`).join(''));
      // A sequence longer than a page (an inline image's OSC, 3 KB of base64) is skipped whole:
      // its second half never reads as text on the next page (found by an outside audit).
      const image = (await s.send(`printf 'before\\n\\033]1337;File=inline=1:%s\\a\\nafter\\n' "$(head -c 2400 /dev/zero | base64 -w0)"`)).command!;
      assert.equal((await s.page(image.id)).data.length > 3000, true, 'the log holds the whole sequence');
      for (const size of [512, 1024, 4000]) assert.equal(await readAll(s.page, image.id, size, true), 'before\n\nafter\n', `pages of ${size} bytes`);
      // The records list names the log too, and each command has its own.
      const second = await s.send('echo second');
      assert.notEqual(second.command!.log, log);
      assert.equal((await s.page(second.command!.id)).data, 'second\r\n');
      assert.deepEqual(
        (await s.commands()).map((r) => r.log),
        [log, image.log, second.command!.log],
      );
      // Bad ids are clear errors.
      await rejectsWith(s.page(99), -32602);
      await rejectsWith(s.page(0), -32602);
      // A page of one byte whose offset falls inside a character of three bytes before another:
      // the next character whole (found by an outside audit: two bytes of a €).
      const euros = (await s.send("printf '€€€\\n'")).command!;
      const inside = await s.page(euros.id, { offset: 1, maxBytes: 1 });
      assert.deepEqual([inside.offset, inside.nextOffset, inside.data], [3, 6, '€']);
    },
  );

  test('a budget of a command still printing has its newest lines as the tail, and counts that add up', { timeout: TEST_TIMEOUT }, async () => {
    const s = await openBash(c);
    const sent = await c.request<SendResult>('pty/send', {
      session: s.session,
      text: 'i=0; while :; do i=$((i+1)); echo line $i; sleep 0.001; done',
      timeout: 1000,
    });
    assert.equal(sent.waitReason, 'timeout');
    const id = sent.command!.id;
    try {
      // The log grows while each budget reads it: the tail was empty, and "left out" ran to the
      // log's end, whenever it grew during the read of the head (found by an outside audit).
      for (let k = 0; k < 40; k++) {
        const b = await c.request<Page & { tail: string; totalChars: number; elided?: { chars: number; end: number } }>('pty/commandOutput', {
          session: s.session,
          id,
          maxChars: 200,
        });
        assert.ok(b.elided, 'the output is longer than the budget');
        assert.match(b.tail, /^(line \d+\n)+(line \d*)?$/, `the tail is the newest lines (budget ${k}): ${JSON.stringify(b)}`);
        assert.equal(b.data.length + b.elided.chars + b.tail.length, b.totalChars, `the counts add up (budget ${k})`);
        assert.ok(b.elided.end < b.totalBytes, 'what was left out ends before the tail');
      }
    } finally {
      await c.request('pty/signal', { session: s.session, signal: 'SIGINT' });
    }
  });

  test('a 26 MB output stays readable page by page: a page from the middle is exact', { timeout: TEST_TIMEOUT }, async () => {
    const s = await openBash(c);
    const sent = await s.send('seq 1 3000000');
    assert.equal(sent.waitReason, 'command_done');
    const id = sent.command!.id;
    const first = await s.page(id, { maxBytes: 16 });
    assert.equal(first.data, '1\r\n2\r\n3\r\n4\r\n5\r\n6');
    // Line n (n ≥ 1000000) starts after every shorter line: 9 of 1 digit, 90 of 2, … each with \r\n.
    const startOf = (n: number) => {
      let off = 0;
      for (let d = 1, lo = 1; lo < n; d++, lo *= 10) off += (Math.min(n, lo * 10) - lo) * (d + 2);
      return off;
    };
    const total = startOf(3000001);
    assert.equal(first.totalBytes, total);
    const middle = await s.page(id, { offset: startOf(1500000), maxBytes: 9 * 100 });
    assert.equal(middle.data, Array.from({ length: 100 }, (_, i) => `${1500000 + i}\r\n`).join(''));
    const last = await s.page(id, { offset: startOf(3000000) });
    assert.equal(last.data, '3000000\r\n');
    assert.equal(last.eof, true);
  });

  test('secret input never reaches a log: what is typed while echo is off is not output', { timeout: TEST_TIMEOUT }, async () => {
    const s = await openBash(c);
    await c.request('pty/write', { session: s.session, action: [{ text: "read -s -p 'Password: ' pw; echo; echo got-${#pw}" }, { key: 'Enter' }] });
    await until(async () => (await c.request<SessionInfo>('pty/info', { session: s.session })).secretInput, 10_000, 'secret input');
    await c.request('pty/write', { session: s.session, action: [{ text: 'hunter2-secret' }, { key: 'Enter' }] });
    await until(async () => (await s.commands()).some((r) => r.exitCode === 0), 10_000, 'the command to finish');
    const [record] = await s.commands();
    const page = await s.page(record.id, { strip: true });
    assert.match(page.data, /Password: \ngot-14\n/);
    for (const f of fs.readdirSync(path.dirname(record.log!))) {
      assert.ok(!fs.readFileSync(path.join(path.dirname(record.log!), f), 'utf8').includes('hunter2'), `${f} holds no secret`);
    }
  });

  test('a link planted where a session keeps its logs (its folder, or a log) is never written nor read through', { timeout: TEST_TIMEOUT }, async () => {
    const victim = fs.mkdtempSync(path.join(os.tmpdir(), 'spt-victim-'));
    try {
      // The folder: planted before the session's first command.
      const s = await openBash(c);
      fs.mkdirSync(path.join(h.host.hostDir, 'logs'), { recursive: true, mode: 0o700 });
      fs.symlinkSync(victim, path.join(h.host.hostDir, 'logs', s.session));
      const sent = await s.send('echo into-the-link');
      assert.match(sent.output, /into-the-link/, 'the command still runs');
      assert.deepEqual(fs.readdirSync(victim), [], 'nothing written through the link');
      assert.equal(sent.command?.log ?? null, null, 'the command has no log');
      // Asked for, it says why: not the words of a log dropped to make room.
      const asked = await s.page(sent.command!.id).then(
        () => '',
        (e: Error) => e.message,
      );
      assert.match(asked, /^Command \d+ has no log: its folder \S+ is a link or not the host user's/);
      await c.request('pty/kill', { session: s.session });
      // A finished log swapped for a link: read as nothing of the link's target.
      const t = await openBash(c);
      const { command } = await t.send('echo mine');
      fs.writeFileSync(path.join(victim, 'secret'), 'SECRET-BYTES\n');
      fs.rmSync(command!.log!);
      fs.symlinkSync(path.join(victim, 'secret'), command!.log!);
      const read = await t.page(command!.id).then(
        (p) => p.data,
        (e: Error) => e.message,
      );
      assert.doesNotMatch(read, /SECRET-BYTES/);
      await c.request('pty/kill', { session: t.session });
    } finally {
      fs.rmSync(victim, { recursive: true, force: true });
    }
  });

  test('the logs go with the session', { timeout: TEST_TIMEOUT }, async () => {
    const s = await openBash(c);
    const { command } = await s.send('echo bye');
    const folder = path.dirname(command!.log!);
    assert.ok(fs.existsSync(command!.log!));
    await c.request('pty/kill', { session: s.session });
    await until(() => !fs.existsSync(folder), 10_000, 'the log folder to go');
  });
});

describe('the logs of a session are bounded', () => {
  let h: Host;
  let c: RpcClient;
  const BUDGET = 100_000;
  before(async () => {
    h = await startHost({ commandLogBytes: BUDGET });
    c = await connect(h.host.controlAddress);
  });
  after(async () => {
    c?.close();
    await h?.close();
  });

  test(
    "the oldest commands' logs are dropped first (log null, file gone, a clear error); one command larger than the budget keeps its start",
    { timeout: TEST_TIMEOUT },
    async () => {
      const s = await openBash(c);
      // 40 000 bytes each: the third one leaves no room for the first.
      const runs = [];
      for (let i = 0; i < 3; i++) runs.push((await s.send(`head -c 39998 /dev/zero | tr '\\0' ${'abc'[i]}; echo`)).command!);
      await until(async () => (await s.commands())[0].log === null, 5000, 'the oldest log to be dropped');
      const after3 = await s.commands();
      assert.deepEqual(
        after3.map((r) => r.log === null),
        [true, false, false],
      );
      assert.ok(!fs.existsSync(runs[0].log!), 'its file is removed');
      const gone = await rejectsWith(s.page(runs[0].id), -32000);
      assert.match(gone.message, /dropped/);
      const kept = await s.page(runs[2].id, { maxBytes: 1024 * 1024 });
      assert.equal(kept.data, 'c'.repeat(39998) + '\r\n');
      // A command larger than the whole budget: every older log goes, and its log keeps its first bytes.
      const big = (await s.send('seq 1 100000')).command!;
      const page = await s.page(big.id, { maxBytes: 1024 * 1024 });
      assert.equal(page.totalBytes, BUDGET);
      assert.equal(page.truncated, true);
      assert.equal(page.eof, true);
      assert.ok(page.data.startsWith('1\r\n2\r\n3\r\n'));
      assert.deepEqual(
        (await s.commands()).map((r) => r.log === null),
        [true, true, true, false],
      );
    },
  );
});

describe("each log gets exactly the bytes between its command's marks, however the output is cut into chunks", () => {
  test("two commands in one chunk, one command over many chunks split anywhere, and one the shell's exit ends", { timeout: TEST_TIMEOUT }, async () => {
    const folder = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'spt-split-')), 'session');
    homes.push(path.dirname(folder));
    const nonce = 'ab'.repeat(16);
    const tracker = new CommandTracker('/', nonce);
    const logs = new CommandLogs(tracker, folder);
    const osc = (s: string) => `\x1b]633;${s};${nonce}\x07`;
    const stream = Buffer.from(
      `${osc('A')}$ ${osc('B')}${osc('E;one')}${osc('C')}first\r\n${osc('D;0')}` +
        `${osc('A')}$ ${osc('B')}${osc('E;two')}${osc('C')}second ä\r\n${'x'.repeat(5000)}\r\n${osc('D;1')}${osc('A')}$ `,
    );
    // All at once, then a second tracker fed a byte or a few at a time, as the session does.
    let cursor = 0;
    const feed = (t: CommandTracker, l: CommandLogs, chunk: Buffer) => {
      const { output, marks } = t.filter(chunk);
      t.apply(marks, cursor);
      cursor += output.length;
      l.append(output, cursor);
    };
    feed(tracker, logs, stream);
    const tracker2 = new CommandTracker('/', nonce);
    const logs2 = new CommandLogs(tracker2, folder + '2');
    cursor = 0;
    for (let i = 0, n = 1; i < stream.length; i += n, n = (n % 7) + 1) feed(tracker2, logs2, stream.subarray(i, i + n));
    for (const [t, l] of [
      [tracker, logs],
      [tracker2, logs2],
    ] as const) {
      const [one, two] = t.list(10);
      assert.equal((await l.get(one.id)!.read(0, 1e6)).toString(), 'first\r\n');
      assert.equal((await l.get(two.id)!.read(0, 1e6)).toString(), `second ä\r\n${'x'.repeat(5000)}\r\n`);
      assert.equal(l.get(two.id)!.finished, true);
      // Told again that it ended (the exit of a shell after its last command): the file stays as it is.
      l.get(two.id)!.finish();
      await new Promise((r) => setTimeout(r, 100));
      assert.equal(fs.readFileSync(two.log!, 'utf8'), `second ä\r\n${'x'.repeat(5000)}\r\n`);
    }
    // A command the shell's exit ends keeps its last bytes, even those that looked like a mark's start.
    // (cursor is where the output passed on ends: the same for both trackers)
    feed(tracker, logs, Buffer.from(`${osc('E;three')}${osc('C')}last words\x1b]6`));
    const held = tracker.release();
    cursor += held.length;
    logs.append(held, cursor);
    tracker.shellEnded(0, cursor);
    const three = tracker.list(10)[2];
    assert.equal(three.endCursor, cursor);
    assert.equal((await logs.get(three.id)!.read(0, 1e6)).toString(), 'last words\x1b]6');
    assert.equal(logs.get(three.id)!.finished, true);
    for (const [t, l] of [
      [tracker, logs],
      [tracker2, logs2],
    ] as const) {
      const two = t.list(10)[1];
      l.dispose();
      t.dispose(); // a session disposes its tracker; this test made its own
      assert.equal(fs.existsSync(path.dirname(two.log!)), false, 'the folder goes with the logs');
    }
  });
});
