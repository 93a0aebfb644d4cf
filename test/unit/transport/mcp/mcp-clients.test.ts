// Every official MCP client era against both transports (docs/protocol.md#6-mcp): the SDK's v1 client
// (2025-11-25), its v2 client speaking 2025-11-25, and its v2 client pinned to 2026-07-28 (no
// initialize, no Mcp-Session-Id, version and capabilities in each request's `_meta`), each over
// `/mcp` and over stdio (`shared-pty mcp`), each calling every tool, one long call with progress.
// The stdio runs go at once, beside the /mcp runs one after another.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as HttpV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioClientTransport as StdioV1 } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Client as ClientV2, StreamableHTTPClientTransport as HttpV2 } from '@modelcontextprotocol/client';
import { StdioClientTransport as StdioV2 } from '@modelcontextprotocol/client/stdio';
import { TOOL_NAMES } from '../../../../src/transport/mcp/mcp-tools';
import { bashEnv, buildCli, CLI, pidAlive, REPO_ROOT } from '../../../helpers/protocol';
import { startHttpHost, type HttpHost } from '../../../helpers/http';
import { withTimeout } from '../../../helpers/host';
import { ensureNoDisposablesAreLeakedBySuite } from '../../../helpers/leak-tracker';

/** The plain bash of every run: no rc files, a fixed prompt. */
/** A bare bash: no rc files, no shell integration (test/helpers/host.ts's BASH). */
const BASH = { command: 'bash', args: ['--norc', '--noprofile'], env: { PS1: '$ ', HISTFILE: '/dev/null', SHARED_PTY_SHELL_INTEGRATION: '0' } };
/** Bound on the whole matrix: generous for a loaded machine, finite so a hang fails. */
const MATRIX_TIMEOUT_MS = 180_000;
/** A call long enough to outlast one progress interval (3 s, docs/protocol.md#6-mcp). */
const LONG_COMMAND = 'sleep 4; echo slept-$((2*3))';

type Era = 'v1' | 'v2-2025' | 'v2-2026';
type Via = 'http' | 'stdio';
type ToolResult = { content?: Array<{ type: string; text?: string }>; structuredContent?: any; isError?: boolean };

/** Options of a call that waits long: progress, and a timeout that progress resets. */
type LongCall = { onprogress: (p: unknown) => void; resetTimeoutOnProgress: boolean; timeout: number };

/** What every run needs of a client, whichever SDK it is from. */
interface AnyClient {
  listTools(): Promise<{ tools: Array<{ name: string }> }>;
  callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<unknown>;
  readResource(params: { uri: string }): Promise<unknown>;
  /** A call with options: v1 takes them third (after a result schema), v2 second. */
  callLong(params: { name: string; arguments: Record<string, unknown> }, options: LongCall): Promise<unknown>;
  close(): Promise<void>;
}

/** Every HTTP exchange of a run, to check what went over the wire. */
interface Wire {
  bodies: any[];
  sessionHeaders: string[];
}

let h: HttpHost;
let base: string;
let runDir: string;

before(async () => {
  buildCli();
  h = await startHttpHost();
  base = fs.mkdtempSync(path.join(os.tmpdir(), 'spt-mcp-clients-'));
  runDir = path.join(base, 'run');
  fs.mkdirSync(runDir, { mode: 0o700 });
});

after(async () => {
  // The per-user host `shared-pty mcp` started for the stdio runs.
  for (const n of fs.existsSync(runDir) ? fs.readdirSync(runDir) : []) {
    if (!n.endsWith('.json')) continue;
    try {
      const r = JSON.parse(fs.readFileSync(path.join(runDir, n), 'utf8'));
      if (r.kind === 'daemon' && pidAlive(r.pid)) process.kill(r.pid, 'SIGKILL');
    } catch {
      // being written, or gone
    }
  }
  await h?.close();
  if (base) fs.rmSync(base, { recursive: true, force: true });
});
// Once the shared host is closed, nothing the suite made is left (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedBySuite();

/** A fetch that records what was sent and whether the server handed out a session. */
function recordingFetch(wire: Wire): typeof fetch {
  return async (input, init) => {
    if (typeof init?.body === 'string') wire.bodies.push(JSON.parse(init.body));
    const res = await fetch(input, init);
    const sid = res.headers.get('mcp-session-id');
    if (sid) wire.sessionHeaders.push(sid);
    return res;
  };
}

/** A connected client of one era over one transport, and the revision it speaks. */
async function connect(era: Era, via: Via, wire: Wire): Promise<{ client: AnyClient; version: string | undefined }> {
  const info = { name: `matrix-${era}-${via}`, version: '0.0.0' };
  const url = new URL(`${h.http.url}/mcp`);
  const requestInit = { headers: { Authorization: `Bearer ${h.token}` } };
  const stdio = {
    command: process.execPath,
    args: [CLI, 'mcp'],
    env: bashEnv({ SHARED_PTY_DIR: runDir }) as Record<string, string>,
    cwd: REPO_ROOT,
    stderr: 'pipe' as const,
  };
  if (era === 'v1') {
    const client = new ClientV1(info);
    const transport = via === 'http' ? new HttpV1(url, { requestInit, fetch: recordingFetch(wire) }) : new StdioV1(stdio);
    await withTimeout(client.connect(transport), 30_000, `${era} over ${via}: connect`);
    // The v1 client speaks its newest revision, as its initialize answer confirms.
    const any = Object.assign(client, { callLong: (p: { name: string; arguments: Record<string, unknown> }, o: LongCall) => client.callTool(p, undefined, o) });
    return { client: any as unknown as AnyClient, version: via === 'http' ? (transport as HttpV1).protocolVersion : '2025-11-25' };
  }
  const versionNegotiation = era === 'v2-2026' ? { mode: { pin: '2026-07-28' as const } } : undefined;
  const client = new ClientV2(info, { versionNegotiation });
  const transport = via === 'http' ? new HttpV2(url, { requestInit, fetch: recordingFetch(wire) }) : new StdioV2(stdio);
  await withTimeout(client.connect(transport), 30_000, `${era} over ${via}: connect`);
  const any = Object.assign(client, { callLong: (p: { name: string; arguments: Record<string, unknown> }, o: LongCall) => client.callTool(p, o) });
  return { client: any as unknown as AnyClient, version: client.getNegotiatedProtocolVersion() };
}

/** Calls a tool that must succeed; its structured result and text. */
async function call(client: AnyClient, name: string, args: Record<string, unknown>, where: string): Promise<{ data: any; text: string }> {
  const r = (await client.callTool({ name, arguments: args })) as ToolResult;
  const text = (r.content ?? []).map((c) => c.text ?? '').join('');
  assert.notEqual(r.isError, true, `${where}: ${name} failed: ${text}`);
  assert.ok(r.structuredContent, `${where}: ${name} returns structuredContent`);
  return { data: r.structuredContent, text };
}

/** One run: every tool once (in an order where each has something to act on), plus a long call with progress. */
async function everyTool(era: Era, via: Via): Promise<Set<string>> {
  const where = `${era} over ${via}`;
  const wire: Wire = { bodies: [], sessionHeaders: [] };
  const { client, version } = await connect(era, via, wire);
  const called = new Set<string>();
  const use = async (name: string, args: Record<string, unknown>) => {
    called.add(name);
    return call(client, name, args, where);
  };
  try {
    assert.equal(version, era === 'v2-2026' ? '2026-07-28' : '2025-11-25', `${where}: the revision spoken`);
    const listed = (await client.listTools()).tools.map((t) => t.name).sort();
    assert.deepEqual(listed, [...TOOL_NAMES].sort(), `${where}: tools/list`);

    const opened = await use('open_session', { ...BASH, cols: 90, rows: 25, name: `matrix-${era}-${via}-${process.pid}` });
    // The session is named by an argument of each call, never by the transport.
    const session: string = opened.data.id;
    await use('list_sessions', {}).then((r) =>
      assert.ok(
        r.data.sessions.some((s: any) => s.id === session),
        `${where}: listed`,
      ),
    );
    const sent = await use('send', { session, text: 'echo matrix-$((6*7))' });
    assert.match(sent.data.output, /^matrix-42$/m, `${where}: send`);
    assert.match((await use('read_screen', { session })).data.screen, /matrix-42/, `${where}: read_screen`);
    await use('wait_for', { session, match: 'matrix-42', timeout: 10_000 }).then((r) => assert.equal(r.data.matched, true, `${where}: wait_for`));
    assert.match((await use('read_scrollback', { session })).data.text, /matrix-42/, `${where}: read_scrollback`);
    assert.match((await use('read_output', { session, since: 0, strip: true })).data.data, /matrix-42/, `${where}: read_output`);
    assert.ok(typeof (await use('terminal_snapshot', { session })).data.data === 'string', `${where}: terminal_snapshot`);
    await use('resize', { session, cols: 91, rows: 26 }).then((r) => assert.deepEqual([r.data.cols, r.data.rows], [91, 26], `${where}: resize`));
    await use('wait_event', { session, types: ['exit'], timeoutMs: 0 }).then((r) => assert.equal(r.data.event, null, `${where}: wait_event`));
    await use('send_keys', { session, keys: ['Ctrl+C'] }).then((r) => assert.ok(r.data.written > 0, `${where}: send_keys`));
    await use('signal', { session, signal: 'SIGCONT', timeout: 2000 });
    // app_input is the terminal view's: without the key of a view this server served it writes
    // nothing, on every transport and revision (with it, these clients, which declare no MCP
    // Apps, would type as themselves: mcp-approval.test.ts).
    called.add('app_input');
    const keys = (await client.callTool({ name: 'app_input', arguments: { session, data: '\r' } })) as ToolResult;
    const keysText = (keys.content ?? []).map((c) => c.text).join('');
    assert.match(keysText, /^Error -32004: .*does not carry the key of a terminal view/, `${where}: app_input without the view's key`);
    const commands = await use('list_commands', { session });
    assert.equal(typeof commands.data.integration, 'boolean', `${where}: list_commands`);
    // read_command_output needs a command the shell reported: this bash has no integration, so the
    // tool must answer the missing command as a tool error, which is an answer too.
    called.add('read_command_output');
    const missing = (await client.callTool({ name: 'read_command_output', arguments: { session, id: 1 } })) as ToolResult;
    assert.equal(missing.isError, true, `${where}: read_command_output of a command never run is a tool error`);
    assert.match((missing.content ?? []).map((c) => c.text).join(''), /^Error -\d+: /, `${where}: its text names the code`);

    // A long call: progress reaches the client while it runs, then the result.
    const progress: unknown[] = [];
    const long = (await client.callLong(
      { name: 'send', arguments: { session, text: LONG_COMMAND, timeout: 30_000 } },
      {
        onprogress: (p) => progress.push(p),
        resetTimeoutOnProgress: true,
        timeout: 60_000,
      },
    )) as ToolResult;
    assert.match(long.structuredContent?.output ?? '', /^slept-6$/m, `${where}: the long send's output`);
    assert.ok(progress.length >= 1, `${where}: progress reached the client during the long send`);

    await use('close_session', { session });
  } finally {
    await client.close().catch(() => {});
  }
  if (via === 'http') {
    assert.deepEqual(wire.sessionHeaders, [], `${where}: no Mcp-Session-Id is handed out`);
    const methods = wire.bodies.map((b) => b.method);
    if (era === 'v2-2026') {
      assert.ok(!methods.includes('initialize'), `${where}: no initialize (${methods.join(', ')})`);
      for (const b of wire.bodies.filter((m) => m.id !== undefined)) {
        assert.equal(b.params?._meta?.['io.modelcontextprotocol/protocolVersion'], '2026-07-28', `${where}: ${b.method} carries its revision in _meta`);
      }
    } else assert.equal(methods[0], 'initialize', `${where}: opens with initialize`);
  }
  return called;
}

test(
  'the SDK v1 client, the v2 client on 2025-11-25 and on 2026-07-28, over /mcp and stdio: every tool, progress on a long call',
  { timeout: MATRIX_TIMEOUT_MS },
  async () => {
    const runs: Array<[Era, Via]> = [];
    for (const era of ['v1', 'v2-2025', 'v2-2026'] as const) for (const via of ['http', 'stdio'] as const) runs.push([era, via]);
    // The stdio runs go at once (their work is in child processes); the /mcp runs one after another
    // beside them, so the in-process host is never starved past its 5 s for a new connection's
    // first request (docs/guarantees.md) on a loaded machine.
    const settle = (era: Era, via: Via) =>
      everyTool(era, via).then(
        (value) => ({ status: 'fulfilled' as const, value }),
        (reason: unknown) => ({ status: 'rejected' as const, reason }),
      );
    const byRun = new Map<string, Awaited<ReturnType<typeof settle>>>();
    const key = (era: Era, via: Via) => `${era} ${via}`;
    await Promise.all([
      ...runs.filter(([, via]) => via === 'stdio').map(async ([era, via]) => byRun.set(key(era, via), await settle(era, via))),
      (async () => {
        for (const [era, via] of runs.filter(([, v]) => v === 'http')) byRun.set(key(era, via), await settle(era, via));
      })(),
    ]);
    const outcomes = runs.map(([era, via]) => byRun.get(key(era, via))!);
    const failures = outcomes.flatMap((o, i) => (o.status === 'rejected' ? [`${runs[i].join(' over ')}: ${(o.reason as Error)?.message ?? o.reason}`] : []));
    assert.deepEqual(failures, [], failures.join('\n\n'));
    for (const [i, o] of outcomes.entries()) {
      if (o.status === 'fulfilled') assert.deepEqual([...o.value].sort(), [...TOOL_NAMES].sort(), `${runs[i].join(' over ')} called every tool`);
    }
  },
);
