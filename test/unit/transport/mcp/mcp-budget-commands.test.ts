// The output budget of docs/protocol.md#output-budget on the commands' own output, beyond one
// command of one line (found by an outside audit): a send of several command lines, a signal whose
// program prints more than the ring holds after it, the note past the command log's bound.
// Spoken by the official MCP SDK client over /mcp, as an agent would.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { connect, until, clientsClosed } from '../../../helpers/host';
import { mcpAgent, startHttpHost, type HttpHost } from '../../../helpers/http';
import type { RpcClient } from '../../../../src/transport/client/rpc-client';
import { promptedShell } from '../../../helpers/shell-home';
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
  agent = await mcpClient(h);
});

after(async () => {
  await agent?.close().catch(() => {});
  ctl?.close();
  await h?.close();
  for (const home of homes) fs.rmSync(home, { recursive: true, force: true });
});
// Once the shared host is closed, nothing the suite made is left (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedBySuite(clientsClosed);

async function mcpClient(host: HttpHost): Promise<Client> {
  const client = await mcpAgent(host, 'budget-commands-test');
  await client.listTools(); // the client checks structured results against the output schemas from now on
  return client;
}

/** Calls a tool that must succeed: its structured result, and its text. */
async function call(name: string, args: Record<string, unknown>, client = agent): Promise<any> {
  const wait = typeof args.timeout === 'number' ? args.timeout + 20_000 : undefined;
  const r = (await client.callTool({ name, arguments: args }, undefined, wait ? { timeout: wait } : undefined)) as any;
  assert.notEqual(r.isError, true, `${name}: ${JSON.stringify(r.content)}`);
  return { ...r.structuredContent, text: r.content[0].text as string };
}

/** A budgeted text split at its one note line: head, the note's numbers and pointer, tail. */
function split(text: string) {
  const lines = text.split('\n');
  const at = lines.map((l, i) => (NOTE.test(l) ? i : -1)).filter((i) => i >= 0);
  assert.equal(at.length, 1, `exactly one note line in:\n${text.slice(0, 300)}…`);
  const m = NOTE.exec(lines[at[0]])!;
  return { head: lines.slice(0, at[0]).join('\n') + '\n', lines: Number(m[1]), chars: Number(m[2]), how: m[3], tail: lines.slice(at[0] + 1).join('\n') };
}

/** `seq from to`'s output. */
function numbers(from: number, to: number): string {
  return Array.from({ length: to - from + 1 }, (_, i) => `${from + i}\n`).join('');
}
/** The length of `seq 1 n`'s output. */
function numbersLength(n: number): number {
  let total = 0;
  for (let digits = 1, low = 1; low <= n; digits++, low *= 10) total += (Math.min(n, low * 10 - 1) - low + 1) * (digits + 1);
  return total;
}

/** A bash with its integration and the prompt `my> `, opened by the agent, once it waits at its prompt. */
async function openShell(client = agent): Promise<string> {
  const { home, ...how } = promptedShell('bash');
  homes.push(home);
  const opened = await call('open_session', how, client);
  await until(async () => (await call('read_screen', { session: opened.id }, client)).screen.includes('my>'), 20_000, 'a bash prompt');
  const ready = await call('send', { session: opened.id, text: 'true', timeout: 30_000 }, client);
  assert.equal(ready.waitReason, 'command_done', 'bash reports its commands');
  return opened.id;
}

/** What the pointer of a note says, part by part: each command's log range, read and stripped. */
async function followLogs(session: string, how: string): Promise<string> {
  let text = '';
  for (const m of how.matchAll(/id=(\d+)(?: offset=(\d+) \((?:they end at|up to) offset (\d+)| \(all of it\))/g)) {
    const id = Number(m[1]);
    let offset = m[2] === undefined ? 0 : Number(m[2]);
    const end = m[3] === undefined ? Infinity : Number(m[3]);
    for (;;) {
      const page = await call('read_command_output', { session, id, offset, maxBytes: Math.min(1024 * 1024, end - offset) });
      text += page.data;
      offset = page.nextOffset;
      if (offset >= end || page.eof || page.data === '') break;
    }
  }
  return text;
}

describe('a send of several command lines is budgeted on the commands’ own output', () => {
  test('more than the ring holds: the head is the first command’s output, the counts exact', { timeout: TEST_TIMEOUT }, async () => {
    const session = await openShell();
    const n = 200_000; // 1.3 MB: more than the ring's 1 MiB
    const sent = await call('send', { session, text: `cd /tmp\nseq 1 ${n}`, maxChars: 400, timeout: 40_000 });
    assert.equal(sent.waitReason, 'command_done');
    assert.equal(sent.command.command, `seq 1 ${n}`);
    assert.equal(sent.truncated, false, 'nothing was cut before the budget');
    assert.equal(sent.totalChars, numbersLength(n), 'every character of the commands’ output, exactly');
    const parts = split(sent.output);
    assert.match(parts.head, /^1\n2\n3\n/, `the head: the first lines of the output: ${JSON.stringify(parts.head.slice(0, 40))}`);
    assert.ok(parts.tail.endsWith(`${n - 1}\n${n}\n`), `the tail: the last lines: ${JSON.stringify(parts.tail.slice(-40))}`);
    assert.equal(sent.elidedChars, sent.totalChars - parts.head.length - parts.tail.length);
    assert.equal(parts.chars, sent.elidedChars);
    assert.match(parts.how, new RegExp(`read_command_output id=${sent.command.id} offset=\\d+`));
    assert.doesNotMatch(sent.text, /read_scrollback|output truncated/);
    await call('close_session', { session });
  });

  test(
    'below it: the head is the first command’s output, the tail the last one’s end; the note says where each part is',
    { timeout: TEST_TIMEOUT },
    async () => {
      const session = await openShell();
      const sent = await call('send', { session, text: 'seq 1 5000\nseq 5001 10000', maxChars: 2000, timeout: 30_000 });
      assert.equal(sent.waitReason, 'command_done');
      const whole = numbers(1, 10000);
      assert.equal(sent.totalChars, whole.length, 'the two commands’ output, not the typed lines and prompts');
      const parts = split(sent.output);
      assert.ok(sent.output.length <= 2000, `${sent.output.length} chars`);
      assert.ok(parts.head.startsWith('1\n2\n3\n') && whole.startsWith(parts.head), `the head: ${JSON.stringify(parts.head.slice(0, 40))}`);
      assert.ok(parts.tail.endsWith('9999\n10000\n') && whole.endsWith(parts.tail), `the tail: ${JSON.stringify(parts.tail.slice(-40))}`);
      assert.equal(parts.head.length + sent.elidedChars + parts.tail.length, sent.totalChars);
      const first = sent.command.id - 1;
      assert.match(parts.how, new RegExp(`read_command_output id=${first} offset=\\d+ .*id=${sent.command.id} offset=\\d+`));
      assert.equal(parts.head + (await followLogs(session, parts.how)) + parts.tail, whole, 'head, the parts the note names, tail: the whole');

      // A command between the first and the last left out whole: the line names it too.
      const three = await call('send', { session, text: 'seq 1 3000\necho middle\nseq 1 3000', maxChars: 600, timeout: 30_000 });
      const p3 = split(three.output);
      const whole3 = numbers(1, 3000) + 'middle\n' + numbers(1, 3000);
      assert.equal(three.totalChars, whole3.length);
      assert.match(p3.how, new RegExp(`id=${three.command.id - 1} \\(all of it\\)`));
      assert.equal(p3.head + (await followLogs(session, p3.how)) + p3.tail, whole3);
      assert.equal(p3.lines, whole3.split('\n').length - (p3.head + p3.tail).split('\n').length, 'the lines left out');
      assert.ok(three.output.length <= 600 && three.output.length > 450, `within the budget, and most of it used: ${three.output.length}`);

      // The first command whole in the head, the rest of the budget to the last one's.
      const two = await call('send', { session, text: 'echo first\nseq 1 5000', maxChars: 400, timeout: 30_000 });
      const p2 = split(two.output);
      assert.equal(two.totalChars, 'first\n'.length + numbersLength(5000));
      assert.match(p2.head, /^first\n1\n2\n/);
      assert.ok(p2.tail.endsWith('5000\n'));
      assert.equal(p2.head + (await followLogs(session, p2.how)) + p2.tail, 'first\n' + numbers(1, 5000));

      // The last command whole in the tail, after the line.
      const last = await call('send', { session, text: 'seq 1 5000\necho last', maxChars: 400, timeout: 30_000 });
      const p4 = split(last.output);
      assert.match(p4.head, /^1\n2\n/);
      assert.match(p4.tail, /\n5000\nlast\n$/, JSON.stringify(p4.tail.slice(-30)));
      assert.equal(last.totalChars, numbersLength(5000) + 'last\n'.length);

      // Short enough: the rows as rendered, counted as the commands' own output.
      const short = await call('send', { session, text: 'seq 1 20\necho third', timeout: 30_000 });
      assert.equal(short.elidedChars, 0);
      assert.match(short.output, /seq 1 20\n1\n2\n[\s\S]*\n20\n[\s\S]*echo third\nthird\n/);
      assert.equal(short.totalChars, numbersLength(20) + 'third\n'.length);
      await call('close_session', { session });
    },
  );
});

describe('signal whose program prints more than the ring holds after it', () => {
  test('the budget is the command’s own output after the signal: its head, its end, counted exactly', { timeout: TEST_TIMEOUT }, async () => {
    const session = await openShell();
    const n = 200_000;
    // Quiet until interrupted, then 1.3 MB.
    const started = await call('send', {
      session,
      text: `bash -c 'trap "seq 1 ${n}; exit 130" INT; echo ready; while :; do sleep 0.05; done'`,
      timeout: 1000,
    });
    assert.equal(started.waitReason, 'timeout');
    const sent = await call('signal', { session, signal: 'SIGINT', maxChars: 400, timeout: 40_000 });
    assert.equal(sent.waitReason, 'command_done');
    assert.equal(sent.exitCode, 130);
    assert.equal(sent.totalChars, numbersLength(n), 'what appeared after the signal, exactly');
    const parts = split(sent.output);
    assert.match(parts.head, /^1\n2\n3\n/, `the head: ${JSON.stringify(parts.head.slice(0, 40))}`);
    assert.ok(parts.tail.endsWith(`${n}\n`), `the tail: ${JSON.stringify(parts.tail.slice(-40))}`);
    assert.equal(parts.head.length + sent.elidedChars + parts.tail.length, sent.totalChars);
    assert.match(parts.how, new RegExp(`read_command_output id=${sent.command.id} offset=\\d+`));
    assert.equal(sent.truncated, false);
    await call('close_session', { session });
  });
});

describe("a command longer than the session's command log bound", () => {
  let small: HttpHost;
  let far: Client;
  before(async () => {
    small = await startHttpHost([], { commandLogBytes: 200_000 });
    far = await mcpClient(small);
  });
  after(async () => {
    await far?.close().catch(() => {});
    await small?.close();
  });

  test('the answer says what the log kept: its first bytes, not the whole; the start is shown, not left out', { timeout: TEST_TIMEOUT }, async () => {
    const session = await openShell(far);
    const n = 60_000; // 350 KB against a bound of 200 KB
    const sent = await call('send', { session, text: `seq 1 ${n}`, maxChars: 400, timeout: 30_000 }, far);
    assert.equal(sent.waitReason, 'command_done');
    assert.equal(sent.totalChars, numbersLength(n));
    assert.match(sent.output, /^1\n2\n/);
    assert.doesNotMatch(sent.text, /its start left out|the command's whole output/, sent.text.slice(-400));
    assert.match(
      sent.text,
      new RegExp(`the command's log holds the first 200000 bytes of its output \\(the session's command log bound\\); the rest was not kept`),
    );
    // The same command, then one that prints nothing: budgeted as several, said the same way.
    const two = await call('send', { session, text: `seq 1 ${n}\ntrue`, maxChars: 400, timeout: 30_000 }, far);
    assert.equal(two.totalChars, numbersLength(n));
    assert.match(two.output, /^1\n2\n[\s\S]*\n60000\n$/);
    assert.match(two.text, new RegExp(`the log of command ${two.command.id - 1} holds the first 200000 bytes of its output`));
    assert.doesNotMatch(two.text, /its start left out/);
  });
});

describe('a command without a log', () => {
  test('read_command_output says why it has none, and names the tool that may still read its end', { timeout: TEST_TIMEOUT }, async () => {
    const { home, ...how } = promptedShell('bash');
    homes.push(home);
    const session = (await ctl.request<{ id: string }>('session/create', how)).id;
    await until(async () => (await call('read_screen', { session })).screen.includes('my>'), 20_000, 'a bash prompt');
    // A link planted where the session's logs go, before its first command: never written through.
    const victim = fs.mkdtempSync(path.join(os.tmpdir(), 'spt-victim-'));
    homes.push(victim);
    fs.mkdirSync(path.join(h.host.hostDir, 'logs'), { recursive: true, mode: 0o700 });
    fs.symlinkSync(victim, path.join(h.host.hostDir, 'logs', session));
    const sent = await call('send', { session, text: 'echo no-log-here', timeout: 30_000 });
    assert.equal(sent.command?.log ?? null, null, 'the command has no log');
    const r = (await agent.callTool({ name: 'read_command_output', arguments: { session, id: sent.command.id } })) as any;
    assert.equal(r.isError, true);
    // Its own words (not those of a log dropped for the budget), and the tool an agent reads with: not a JSON-RPC method.
    assert.match(r.content[0].text, /Command \d+ has no log: its folder \S+ is a link or not the host user's/);
    assert.match(r.content[0].text, /read_output since=\d+ maxBytes=\d+ may still hold its end/);
    assert.doesNotMatch(r.content[0].text, /pty\/output/);
    await ctl.request('pty/kill', { session });
  });
});
