// The output budget of docs/guarantees.md#output-budget-for-agents, spoken by the official MCP SDK client over /mcp as an agent
// would: long output keeps its head and tail, one line between says what was left out and how to
// read it, and following that line gives exactly what was left out.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { BASH, connect, until, withTimeout, clientsClosed } from '../../../helpers/host';
import { startHttpHost, type HttpHost } from '../../../helpers/http';
import type { RpcClient } from '../../../../src/transport/client/rpc-client';
import { promptedShell, type TestShell } from '../../../helpers/shell-home';
import { ensureNoDisposablesAreLeakedBySuite } from '../../../helpers/leak-tracker';

const TEST_TIMEOUT = 60_000;
/** The one line between head and tail. */
const NOTE = /^\[… (\d+) lines? \((\d+) characters\) left out; (.*)\]$/;

let h: HttpHost;
let agent: Client;
let ctl: RpcClient;
const homes: string[] = [];

before(async () => {
  h = await startHttpHost();
  ctl = await connect(h.host.controlAddress);
  agent = new Client({ name: 'budget-test', version: '0.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${h.http.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${h.token}` } } });
  await withTimeout(agent.connect(transport), 20_000, 'MCP connect');
  await agent.listTools(); // the client checks structured results against the output schemas from now on
});

after(async () => {
  await agent?.close().catch(() => {});
  ctl?.close();
  await h?.close();
  for (const home of homes) fs.rmSync(home, { recursive: true, force: true });
});
// Once the shared host is closed, nothing the suite made is left (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedBySuite(clientsClosed);

/**
 * Calls a tool that must succeed. The client waits longer than the tool's own `timeout` (the SDK's
 * default gives up after 60 s, which a long send on a loaded machine can pass), as an agent that
 * asks for a long wait must.
 */
async function call(name: string, args: Record<string, unknown>): Promise<any> {
  const wait = typeof args.timeout === 'number' ? args.timeout + 20_000 : undefined;
  const r = (await agent.callTool({ name, arguments: args }, undefined, wait ? { timeout: wait } : undefined)) as any;
  assert.notEqual(r.isError, true, `${name}: ${JSON.stringify(r.content)}`);
  return r.structuredContent;
}

/** A budgeted text split at its one note line: head, the note's numbers and pointer, tail. */
function split(text: string) {
  const lines = text.split('\n');
  const at = lines.map((l, i) => (NOTE.test(l) ? i : -1)).filter((i) => i >= 0);
  assert.equal(at.length, 1, `exactly one note line in:\n${text.slice(0, 300)}…`);
  const m = NOTE.exec(lines[at[0]])!;
  return { head: lines.slice(0, at[0]).join('\n') + '\n', lines: Number(m[1]), chars: Number(m[2]), how: m[3], tail: lines.slice(at[0] + 1).join('\n') };
}

/** The number after `key=` in a pointer. */
function arg(how: string, key: string): number {
  const m = new RegExp(`\\b${key}=(\\d+)`).exec(how);
  assert.ok(m, `${key}= in "${how}"`);
  return Number(m[1]);
}

async function openPlainBash(rows = 30): Promise<string> {
  const info = await ctl.request<{ id: string }>('session/create', { ...BASH, cols: 100, rows });
  await until(async () => (await ctl.request<{ screen: string }>('pty/read', { session: info.id })).screen.includes('$'), 10_000, 'a prompt');
  return info.id;
}

describe('MCP tools that return output keep within maxChars', () => {
  test(
    'read_output: head and tail within maxChars, one line with the cursors of the rest; reading them gives exactly what was left out',
    { timeout: TEST_TIMEOUT },
    async () => {
      const session = await openPlainBash();
      await ctl.request('pty/send', { session, text: 'seq 1 20000', timeout: 20_000 });
      const whole = await call('read_output', { session, since: 0, strip: true, maxChars: 10_000_000 });
      assert.equal(whole.elidedChars, 0);
      assert.equal(whole.totalChars, whole.data.length);
      const cut = await call('read_output', { session, since: 0, strip: true, maxChars: 2000 });
      assert.ok(cut.data.length <= 2000, `within the budget: ${cut.data.length}`);
      assert.equal(cut.totalChars, whole.data.length);
      assert.equal(cut.cursor, whole.cursor, 'the cursor still reads on from the end');
      const parts = split(cut.data);
      assert.equal(cut.elidedChars, parts.chars);
      assert.ok(whole.data.startsWith(parts.head) && whole.data.endsWith(parts.tail));
      assert.match(parts.how, /read_output since=\d+ maxBytes=\d+ strip=true/);
      const rest = await call('read_output', {
        session,
        since: arg(parts.how, 'since'),
        maxBytes: arg(parts.how, 'maxBytes'),
        strip: true,
        maxChars: 10_000_000,
      });
      assert.equal(parts.head + rest.data + parts.tail, whole.data, 'head, what was left out and tail are the whole output');
      assert.equal(rest.data.split('\n').length - 1, parts.lines, 'the note counts the lines left out');
      // Without maxChars the default budget is 20000.
      const byDefault = await call('read_output', { session, since: 0, strip: true });
      assert.ok(byDefault.data.length <= 20000 && byDefault.elidedChars > 0, `${byDefault.data.length} chars, ${byDefault.elidedChars} left out`);
      // JSON-RPC keeps its result as it was: no counts, nothing left out.
      const rpc = await ctl.request<Record<string, unknown>>('pty/output', { session, since: 0, strip: true });
      assert.equal(rpc.data, whole.data);
      assert.equal('totalChars' in rpc, false);
    },
  );

  test('read_scrollback and read_screen: the line says which offset or rows hold the rest', { timeout: TEST_TIMEOUT }, async () => {
    const session = await openPlainBash(100);
    await ctl.request('pty/send', { session, text: 'seq 1 3000', timeout: 20_000 });
    const page = await call('read_scrollback', { session, lines: 3000, maxChars: 1000 });
    const full = await call('read_scrollback', { session, lines: 3000, maxChars: 10_000_000 });
    assert.equal(full.elidedChars, 0);
    assert.equal(page.totalChars, full.text.length);
    const sp = split(page.text);
    assert.ok(page.text.length <= 1000);
    assert.match(sp.how, /read_scrollback offset=\d+ lines=\d+/);
    const missing = await call('read_scrollback', { session, offset: arg(sp.how, 'offset'), lines: arg(sp.how, 'lines'), maxChars: 10_000_000 });
    assert.equal(sp.head + missing.text + '\n' + sp.tail, full.text);

    const screen = await call('read_screen', { session, maxChars: 200 });
    const wholeScreen = await call('read_screen', { session, maxChars: 10_000_000 });
    assert.equal(screen.totalChars, wholeScreen.screen.length);
    const ss = split(screen.screen);
    assert.match(ss.how, /read_screen start=\d+ end=\d+/);
    const rows = await call('read_screen', { session, start: arg(ss.how, 'start'), end: arg(ss.how, 'end') });
    assert.equal(ss.head + rows.screen + ss.tail, wholeScreen.screen);
    // The same for a slice of the screen (rows counted from its own first row).
    const bottom = await call('read_screen', { session, bottom: 60, maxChars: 200 });
    const sb = split(bottom.screen);
    const bottomRows = await call('read_screen', { session, start: arg(sb.how, 'start'), end: arg(sb.how, 'end') });
    assert.equal(sb.head + bottomRows.screen + sb.tail, (await call('read_screen', { session, bottom: 60 })).screen);
  });

  // Without a command log (sh), rows past the scrollback's bound are gone: the answer said they
  // were in read_scrollback, whose oldest row was the head's (found by an outside audit).
  test(
    'send without shell integration whose rows lost their start: the answer points at the output since the act, not the scrollback',
    { timeout: 120_000 },
    async () => {
      const info = await ctl.request<any>('session/create', { command: 'sh', args: [], env: { PS1: '$ ' }, cols: 80, rows: 24 });
      await until(async () => (await ctl.request<any>('pty/read', { session: info.id })).screen.includes('$'), 10_000, 'a prompt');
      const r = (await agent.callTool({ name: 'send', arguments: { session: info.id, text: 'seq 1 300000', maxChars: 1000, timeout: 60_000 } }, undefined, {
        timeout: 80_000,
      })) as any;
      assert.notEqual(r.isError, true, JSON.stringify(r.content));
      assert.equal(r.structuredContent.truncated, true, JSON.stringify({ ...r.structuredContent, output: r.structuredContent.output.slice(0, 200) }));
      const text = r.content[0].text as string;
      assert.doesNotMatch(text, /earlier lines are in read_scrollback/);
      assert.match(
        text,
        new RegExp(`output truncated, its start left out: read_output since=${r.structuredContent.since} has what the host still holds of it`),
      );
      const held = await call('read_output', { session: info.id, since: r.structuredContent.since, maxBytes: 64, strip: true });
      // 2 MB: the ring's 1 MiB holds the later half, and says how much of the start it dropped.
      assert.ok(held.dropped > 0 && /^\d+\n/m.test(held.data), JSON.stringify(held));
      await ctl.request('pty/kill', { session: info.id });
    },
  );

  test(
    "send with shell integration whose rows fit: they are returned as rendered, and totalChars counts the command's own output",
    { timeout: TEST_TIMEOUT },
    async () => {
      const session = await openShell('bash');
      const sent = await call('send', { session, text: 'seq 1 30' });
      assert.equal(sent.waitReason, 'command_done');
      assert.ok(sent.output.includes('seq 1 30') && sent.output.includes(numbers(30)), 'the rows: the command line, its output, the next prompt');
      assert.equal(sent.totalChars, numbers(30).length, 'the 30 numbers and their newlines, not the rows');
      assert.equal(sent.elidedChars, 0);
    },
  );

  test(
    "send with shell integration: the head is the start of the command's output, the tail its end, the counts its whole; the line points at the rest in its log and the ring",
    { timeout: TEST_TIMEOUT },
    async () => {
      const session = await openShell('bash');
      const expected = numbers(5000);

      const sent = await call('send', { session, text: 'seq 1 5000', maxChars: 3000 });
      assert.equal(sent.waitReason, 'command_done');
      assert.ok(sent.output.length <= 3000 && sent.elidedChars > 0, `${sent.output.length} chars`);
      assert.equal(sent.totalChars, expected.length, 'the whole command output, counted exactly');
      const parts = split(sent.output);
      assert.ok(parts.head.startsWith('1\n2\n3\n') && expected.startsWith(parts.head), 'the head: the first lines, whole');
      assert.ok(parts.tail.endsWith('4999\n5000\n') && expected.endsWith(parts.tail) && /^\d+\n/.test(parts.tail), 'the tail: the last lines, whole');
      assert.equal(parts.head.length + sent.elidedChars + parts.tail.length, sent.totalChars);
      assert.equal(parts.chars, sent.elidedChars);
      assert.match(parts.how, new RegExp(`read_command_output id=${sent.command.id} offset=\\d+ \\(they end at offset \\d+\\)`));
      const middle = await readLog(session, sent.command.id, arg(parts.how, 'offset'), Number(/they end at offset (\d+)/.exec(parts.how)![1]));
      assert.equal(parts.head + middle + parts.tail, expected, 'head, what the log holds between and tail are the whole output');
      assert.equal(middle.split('\n').length - 1, parts.lines, 'the note counts the lines left out');
      // While the ring holds them, read_output gives the same.
      assert.match(parts.how, /read_output since=\d+ maxBytes=\d+ strip=true/);
      const ring = await call('read_output', {
        session,
        since: arg(parts.how, 'since'),
        maxBytes: arg(parts.how, 'maxBytes'),
        strip: true,
        maxChars: 10_000_000,
      });
      assert.equal(ring.data, middle);

      // A budget smaller than the line between: still the first lines and the last, and the counts.
      for (const maxChars of [1, 100]) {
        const tiny = await call('send', { session, text: 'seq 1 300', maxChars });
        const few = split(tiny.output);
        assert.ok(few.head.startsWith('1\n') && numbers(300).startsWith(few.head), `maxChars ${maxChars}: the head: ${JSON.stringify(few.head)}`);
        assert.ok(few.tail.endsWith('300\n') && numbers(300).endsWith(few.tail), `maxChars ${maxChars}: the tail: ${JSON.stringify(few.tail)}`);
        assert.equal(tiny.totalChars, numbers(300).length);
        assert.equal(few.head.length + tiny.elidedChars + few.tail.length, tiny.totalChars);
      }

      // A first line longer than the room: part of it is shown, and the pointer says it reads from
      // that line's start, the part shown included (where in its bytes the cut fell is not known).
      const long = await call('send', { session, text: "head -c 50000 /dev/zero | tr '\\0' a; echo; echo END", maxChars: 500 });
      const cut = split(long.output);
      assert.ok(/^a+\n$/.test(cut.head), `part of the line: ${JSON.stringify(cut.head.slice(0, 40))}`);
      assert.match(cut.how, /offset=0 \(where their line starts, the part shown included; they end at offset \d+\)/);
      const again = await readLog(session, long.command.id, arg(cut.how, 'offset'), Number(/they end at offset (\d+)/.exec(cut.how)![1]));
      assert.ok(
        again.startsWith(cut.head.slice(0, -1)) && again.length >= cut.head.length - 1 + cut.chars,
        'the log from there holds the part shown and what was left out',
      );

      // The rows do not fit (the command line, the prompt) but the command's own output does: it
      // comes back whole, with no line saying what was left out (an outside audit saw 78 of 156 cut).
      // (seq 1 55 prints 156 characters, its rows with "my> seq 1 55" and the prompt 172; seq 1 30, 81 and 97.)
      for (const [n, maxChars] of [
        [55, 160],
        [30, 85],
      ]) {
        const fits = await call('send', { session, text: `seq 1 ${n}`, maxChars });
        assert.equal(fits.elidedChars, 0, `seq 1 ${n} in ${maxChars}: ${JSON.stringify(fits.output)}`);
        assert.equal(fits.output, numbers(n));
        assert.ok(fits.output.length <= maxChars);
      }
      // So too for two commands in one send.
      const both = await call('send', { session, text: 'seq 1 25\nseq 1 25', maxChars: 140 });
      assert.equal(both.elidedChars, 0, JSON.stringify(both.output));
      assert.equal(both.output, numbers(25) + numbers(25));

      // A short output is the rows as they were, nothing left out.
      const small = await call('send', { session, text: 'seq 1 3', maxChars: 3000 });
      assert.equal(small.elidedChars, 0);
      assert.match(small.output, /my> seq 1 3\n1\n2\n3\nmy>/);
    },
  );

  // 30 MB in bash (the ring holds 1 MiB, the scrollback 10,000 rows: neither is cut before the
  // budget), 3 MB in zsh and fish.
  for (const [shell, n] of [
    ['bash', 4_000_000],
    ['zsh', 400_000],
    ['fish', 400_000],
  ] as const) {
    test(`send of seq 1 ${n} in ${shell}: the head starts with 1, the tail ends with ${n}, totalChars is exact`, { timeout: 300_000 }, async () => {
      const session = await openShell(shell);
      const sent = await call('send', { session, text: `seq 1 ${n}`, maxChars: 2000, timeout: 280_000 });
      assert.equal(sent.waitReason, 'command_done');
      assert.equal(sent.exitCode, 0);
      assert.ok(sent.output.length <= 2000, `${sent.output.length} chars`);
      assert.equal(sent.truncated, false, 'nothing was cut before the budget');
      const total = numbersLength(n);
      assert.equal(sent.totalChars, total, 'every character of the whole output');
      const parts = split(sent.output);
      const headLines = parts.head.split('\n').slice(0, -1);
      assert.deepEqual(
        headLines,
        headLines.map((_, i) => String(i + 1)),
        'the head: 1, 2, 3, … whole lines',
      );
      const tailLines = parts.tail.split('\n').slice(0, -1);
      assert.equal(tailLines.at(-1), String(n), `the tail ends with ${n}`);
      const first = n - tailLines.length + 1;
      assert.deepEqual(
        tailLines,
        tailLines.map((_, i) => String(first + i)),
        'the tail: whole lines up to the last',
      );
      assert.equal(sent.elidedChars, total - parts.head.length - parts.tail.length);
      assert.equal(parts.chars, sent.elidedChars);
      assert.equal(parts.lines, first - 1 - headLines.length, 'the lines left out');
      // The line says where the rest starts: the log, just after the head.
      const page = await call('read_command_output', { session, id: sent.command.id, offset: arg(parts.how, 'offset'), maxBytes: 64 });
      assert.ok(page.data.startsWith(`${headLines.length + 1}\n`), page.data);
      await call('close_session', { session });
    });
  }

  test(
    'without shell integration, a send whose output the scrollback cannot hold is budgeted from the ring: its head is its start, its counts exact',
    { timeout: 120_000 },
    async () => {
      // 30,000 lines: more than the 10,000 rows of scrollback, less than the ring's 1 MiB.
      const n = 30_000;
      const session = await openPlainBash();
      const sent = await call('send', { session, text: `seq 1 ${n}`, maxChars: 2000, timeout: 60_000 });
      assert.equal(sent.command, undefined, 'no shell integration: no command record');
      assert.equal(sent.truncated, false, 'nothing was cut before the budget');
      const parts = split(sent.output);
      const headLines = parts.head.split('\n').slice(0, -1);
      assert.match(headLines[0], /seq 1 30000$/, 'the head starts where the send began: its own line');
      assert.deepEqual(
        headLines.slice(1),
        headLines.slice(1).map((_, i) => String(i + 1)),
        'then 1, 2, 3, … whole lines',
      );
      assert.match(parts.tail, new RegExp(`\\n${n}\\n\\$ ?$`), 'the tail ends with the last number and the prompt');
      // The whole: the send's line, every number, the prompt (`$ `); nothing counted twice or missed.
      assert.equal(sent.totalChars, headLines[0].length + 1 + numbersLength(n) + '$ '.length);
      assert.equal(sent.elidedChars, sent.totalChars - parts.head.length - parts.tail.length);
      // The line says where the rest is: read_output, which still holds it.
      const rest = await ctl.request<{ data: string; dropped: number }>('pty/output', {
        session,
        since: arg(parts.how, 'since'),
        maxBytes: arg(parts.how, 'maxBytes'),
        strip: true,
      });
      assert.equal(rest.dropped, 0);
      assert.equal(rest.data.replace(/\r\n/g, '\n').length, sent.totalChars, 'read_output of the pointer is the whole the send counted');
      await call('close_session', { session });
    },
  );

  test(
    'send_keys with wait keeps within maxChars as send does: the head is the start of the command output, totalChars its whole',
    { timeout: 120_000 },
    async () => {
      const session = await openShell('bash');
      const n = 20_000;
      const pressed = await call('send_keys', { session, keys: [...`seq 1 ${n}`, 'Enter'], wait: true, maxChars: 400, timeout: 60_000 });
      assert.equal(pressed.waitReason, 'command_done');
      assert.equal(pressed.exitCode, 0);
      assert.equal(pressed.totalChars, numbersLength(n), 'every character of the command output');
      const parts = split(pressed.output);
      assert.match(parts.head, /^1\n2\n/, 'the head: the first lines of the output, not rows the scrollback kept');
      assert.ok(parts.tail.endsWith(`${n}\n`), parts.tail);
      assert.match(parts.how, new RegExp(`read_command_output id=${pressed.command.id}`));
      // Without wait there is no output, and no count.
      const plain = await call('send_keys', { session, keys: ['x'] });
      assert.equal(plain.output, undefined);
      assert.equal(plain.totalChars, undefined);
      await call('close_session', { session });
    },
  );

  test('a send of several lines runs several commands: its output and counts are all of them, not only the last', { timeout: 120_000 }, async () => {
    const session = await openShell('bash');
    // Too long for the budget: the head is the first command's start, the tail the last one's end.
    const long = await call('send', { session, text: 'seq 1 5000\necho second', maxChars: 2000, timeout: 60_000 });
    assert.equal(long.waitReason, 'command_done');
    assert.equal(long.command.command, 'echo second', 'the record is the last command');
    const parts = split(long.output);
    // The commands' own output, from their logs (test/unit/transport/mcp/mcp-budget-commands.test.ts has more).
    assert.match(parts.head, /^1\n2\n3\n/, "the head: the first command's first lines");
    assert.match(parts.tail, /\n5000\nsecond\n$/, "the tail: the first command's end, then the second's output");
    assert.equal(long.totalChars, numbersLength(5000) + 'second\n'.length, "totalChars counts the first command's output too");
    assert.equal(long.elidedChars, long.totalChars - parts.head.length - parts.tail.length);
    // Short enough: the rows as rendered, counted as the commands' own output.
    const short = await call('send', { session, text: 'seq 1 20\necho third', timeout: 60_000 });
    assert.equal(short.elidedChars, 0);
    assert.match(short.output, /\n1\n2\n[\s\S]*\n20\n[\s\S]*\nthird\n/);
    assert.equal(short.totalChars, numbersLength(20) + 'third\n'.length, "totalChars counts both commands' output");
    await call('close_session', { session });
  });

  test('keys that end a command begun before them count what appeared after them, not the whole command', { timeout: 120_000 }, async () => {
    const session = await openShell('bash');
    // One command: 3,000 numbers, then cat waits for input (the send returns at stdin_read).
    const started = await call('send', { session, text: 'seq 1 3000; cat', timeout: 30_000 });
    assert.equal(started.waitReason, 'stdin_read');
    const ended = await call('send_keys', { session, keys: ['Ctrl+D'], wait: true, timeout: 30_000 });
    assert.equal(ended.waitReason, 'command_done');
    assert.equal(ended.command.command, 'seq 1 3000; cat', 'the outcome names the command the keys ended');
    assert.ok(!ended.output.includes('2999'), `the output is what appeared after the keys: ${JSON.stringify(ended.output)}`);
    assert.equal(ended.elidedChars, 0);
    assert.ok(ended.totalChars <= ended.output.length, `the counts are those of that output (${ended.totalChars}), not of the 3,000 numbers before`);
    await call('close_session', { session });
  });
});

// A send that answers a command's question (begun before it) counts what appeared after it up to
// that command's end: the shell's next prompt is not the command's (found by an outside audit:
// the tail ended with the prompt, and totalChars counted it).
describe('a send that answers a running command', () => {
  test("long output: the tail is the command's end and the counts stop there; short output: counted the same way", { timeout: 120_000 }, async () => {
    const session = await openShell('bash');
    const asked = await call('send', { session, text: 'read -p "Go? " x; seq 1 3000', timeout: 30_000 });
    assert.equal(asked.waitReason, 'stdin_read');
    const long = await call('send', { session, text: 'y', maxChars: 1000, timeout: 30_000 });
    assert.equal(long.waitReason, 'command_done');
    assert.match(long.output, /\n3000\n?$/, `the tail ends with the command's last line: ${JSON.stringify(long.output.slice(-40))}`);
    assert.equal(long.totalChars, 'y\n'.length + numbersLength(3000), 'the answer echoed, then the numbers: not the next prompt');
    const again = await call('send', { session, text: 'read -p "Name? " x; echo "got=$x"', timeout: 30_000 });
    assert.equal(again.waitReason, 'stdin_read');
    const short = await call('send', { session, text: 'Ada', timeout: 30_000 });
    assert.equal(short.waitReason, 'command_done');
    assert.match(short.output, /got=Ada/);
    assert.equal(short.totalChars, 'Ada\ngot=Ada\n'.length, JSON.stringify(short.output));
    await call('close_session', { session });
  });
});

/** `seq 1 n`'s output, and its length. */
function numbers(n: number): string {
  return Array.from({ length: n }, (_, i) => `${i + 1}\n`).join('');
}
function numbersLength(n: number): number {
  let total = 0;
  for (let digits = 1, low = 1; low <= n; digits++, low *= 10) total += (Math.min(n, low * 10 - 1) - low + 1) * (digits + 1);
  return total;
}

/** A shell with its integration and the prompt `my> `, opened by the agent, once it waits at its prompt. */
async function openShell(shell: TestShell): Promise<string> {
  const { home, ...how } = promptedShell(shell);
  homes.push(home);
  const opened = await call('open_session', how);
  await until(async () => (await ctl.request<{ screen: string }>('pty/read', { session: opened.id })).screen.includes('my>'), 20_000, `a ${shell} prompt`);
  const ready = await call('send', { session: opened.id, text: 'true', timeout: 30_000 });
  assert.equal(ready.waitReason, 'command_done', `${shell} reports its commands`);
  return opened.id;
}

/** A command's log from `offset` to `end`, escape sequences removed, page by page. */
async function readLog(session: string, id: number, offset: number, end: number): Promise<string> {
  let text = '';
  while (offset < end) {
    const page = await call('read_command_output', { session, id, offset, maxBytes: Math.min(1024 * 1024, end - offset) });
    text += page.data;
    offset = page.nextOffset;
  }
  return text;
}

describe("a command longer than the session's command log bound", () => {
  let small: HttpHost;
  let far: Client;
  before(async () => {
    small = await startHttpHost([], { commandLogBytes: 200_000 });
    far = new Client({ name: 'budget-bound-test', version: '0.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(`${small.http.url}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${small.token}` } },
    });
    await withTimeout(far.connect(transport), 20_000, 'MCP connect');
    await far.listTools();
  });
  after(async () => {
    await far?.close().catch(() => {});
    await small?.close();
  });

  test('send: the head is its start and the tail its end, counted whole; the line says what the log kept', { timeout: 120_000 }, async () => {
    const use = async (name: string, args: Record<string, unknown>) => {
      const r = (await far.callTool({ name, arguments: args }, undefined, { timeout: 100_000 })) as any;
      assert.notEqual(r.isError, true, `${name}: ${JSON.stringify(r.content)}`);
      return r.structuredContent;
    };
    const { home, ...how } = promptedShell('bash');
    homes.push(home);
    const session = (await use('open_session', how)).id;
    await until(async () => (await use('read_screen', { session })).screen.includes('my>'), 20_000, 'a bash prompt');
    const n = 300_000; // 2.3 MB of output against a bound of 200 KB
    const sent = await use('send', { session, text: `seq 1 ${n}`, maxChars: 2000, timeout: 90_000 });
    assert.equal(sent.waitReason, 'command_done');
    assert.equal(sent.totalChars, numbersLength(n), 'every character, past the bound too');
    const parts = split(sent.output);
    const headLines = parts.head.split('\n').slice(0, -1);
    assert.deepEqual(headLines.slice(0, 3), ['1', '2', '3']);
    const tailLines = parts.tail.split('\n').slice(0, -1);
    assert.ok(tailLines.length > 10, parts.tail);
    const first = n - tailLines.length + 1;
    assert.deepEqual(
      tailLines,
      tailLines.map((_, i) => String(first + i)),
      'the tail: whole lines up to the last',
    );
    assert.equal(parts.lines, first - 1 - headLines.length, 'the lines left out');
    assert.equal(sent.elidedChars, numbersLength(n) - parts.head.length - parts.tail.length);
    assert.match(parts.how, /the log holds its start: read_command_output id=\d+ offset=\d+ \(up to offset 200000\); the rest was not kept/);
    const page = await use('read_command_output', { session, id: sent.command.id, offset: arg(parts.how, 'offset'), maxBytes: 64 });
    assert.ok(page.data.startsWith(`${headLines.length + 1}\n`), page.data);
    assert.equal(page.truncated, true);
  });
});
