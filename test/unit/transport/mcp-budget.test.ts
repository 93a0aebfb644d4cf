// The output budget of docs/guarantees.md#output-budget-for-agents, spoken by the official MCP SDK client over /mcp as an agent
// would: long output keeps its head and tail, one line between says what was left out and how to
// read it, and following that line gives exactly what was left out.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { BASH, connect, until, withTimeout } from '../../helpers/host';
import { startHttpHost, type HttpHost } from '../../helpers/http';
import type { RpcClient } from '../../../src/transport/client/rpc-client';

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

/** Calls a tool that must succeed. */
async function call(name: string, args: Record<string, unknown>): Promise<any> {
  const r = (await agent.callTool({ name, arguments: args })) as any;
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
  test('read_output: head and tail within maxChars, one line with the cursors of the rest; reading them gives exactly what was left out', { timeout: TEST_TIMEOUT }, async () => {
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
    const rest = await call('read_output', { session, since: arg(parts.how, 'since'), maxBytes: arg(parts.how, 'maxBytes'), strip: true, maxChars: 10_000_000 });
    assert.equal(parts.head + rest.data + parts.tail, whole.data, 'head, what was left out and tail are the whole output');
    assert.equal(rest.data.split('\n').length - 1, parts.lines, 'the note counts the lines left out');
    // Without maxChars the default budget is 20000.
    const byDefault = await call('read_output', { session, since: 0, strip: true });
    assert.ok(byDefault.data.length <= 20000 && byDefault.elidedChars > 0, `${byDefault.data.length} chars, ${byDefault.elidedChars} left out`);
    // JSON-RPC keeps its result as it was: no counts, nothing left out.
    const rpc = await ctl.request<Record<string, unknown>>('pty/output', { session, since: 0, strip: true });
    assert.equal(rpc.data, whole.data);
    assert.equal('totalChars' in rpc, false);
  });

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

  test('send with shell integration: the line points at the command\'s whole output, in the ring or, past it, in the command\'s log (read_command_output)', { timeout: TEST_TIMEOUT }, async () => {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'spt-budget-'));
    homes.push(home);
    fs.writeFileSync(path.join(home, '.bashrc'), "PS1='my> '\nHISTFILE=/dev/null\n");
    const opened = await call('open_session', { command: 'bash', cwd: home, env: { HOME: home } });
    const session = opened.id;
    await until(async () => (await ctl.request<{ screen: string }>('pty/read', { session })).screen.includes('my>'), 10_000, 'a prompt');
    const expected = Array.from({ length: 5000 }, (_, i) => `${i + 1}\n`).join('');

    const sent = await call('send', { session, text: 'seq 1 5000', maxChars: 3000 });
    assert.equal(sent.waitReason, 'command_done');
    assert.ok(sent.output.length <= 3000 && sent.elidedChars > 0);
    const parts = split(sent.output);
    assert.match(parts.how, /read_scrollback offset=\d+ lines=\d+/);
    assert.match(parts.how, /read_output since=\d+ maxBytes=\d+ strip=true/);
    const whole = await call('read_output', { session, since: arg(parts.how, 'since'), maxBytes: arg(parts.how, 'maxBytes'), strip: true, maxChars: 10_000_000 });
    assert.equal(whole.data, expected);
    const rows = await call('read_scrollback', { session, offset: arg(parts.how, 'offset'), lines: arg(parts.how, 'lines'), maxChars: 10_000_000 });
    assert.ok((parts.head + rows.text + '\n' + parts.tail).startsWith(`my> seq 1 5000\n${expected}`), 'head, the rows left out and tail are the whole output');

    // 2.3 MB of output: the ring (1 MiB) no longer holds the start; the command's log does.
    const big = await call('send', { session, text: 'seq 1 350000', maxChars: 3000, timeout: 30_000 });
    const bp = split(big.output);
    assert.match(bp.how, new RegExp(`read_command_output id=${big.command.id}`));
    let offset = 0;
    let text = '';
    for (let i = 0; i < 3; i++) {
      const page = await call('read_command_output', { session, id: big.command.id, offset, maxBytes: 4096 });
      text += page.data;
      offset = page.nextOffset;
    }
    const first = Array.from({ length: 5000 }, (_, i) => `${i + 1}\n`).join('');
    assert.equal(text, first.slice(0, text.length), 'the log pages are the command\'s output from its first line on');
    assert.ok(text.length > 8000, `three pages of 4096 bytes: ${text.length} characters`);
    assert.equal(big.command.log.startsWith(h.dir), true);
  });
});
