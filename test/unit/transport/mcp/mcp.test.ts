// MCP (docs/protocol.md#6-mcp, docs/guarantees.md#mcp-details), spoken by the official SDK client as an agent would: over Streamable HTTP
// at a host's `/mcp` (with a bearer token), and over stdio through `shared-pty mcp`, which finds
// hosts by discovery, starts the per-user host on demand and routes `open_session` by workspace.
// Every structured result is checked against the tool's own outputSchema.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js';
import { bashEnv, buildCli, CLI, pidAlive, REPO_ROOT, sleep, startServeOnFreePort, type ServeProcess } from '../../../helpers/protocol';
import { request, startHttpHost, type HttpHost } from '../../../helpers/http';
import { withTimeout } from '../../../helpers/host';
import { ensureNoDisposablesAreLeakedBySuite } from '../../../helpers/leak-tracker';

/** The MCP tools of docs/protocol.md#6-mcp: the eleven first ones, list_commands, wait_event, read_command_output and the terminal view's terminal_snapshot. */
const TOOL_NAMES = [
  'app_input',
  'close_session',
  'list_commands',
  'list_sessions',
  'open_session',
  'read_command_output',
  'read_output',
  'read_screen',
  'read_scrollback',
  'resize',
  'send',
  'send_keys',
  'signal',
  'terminal_snapshot',
  'wait_event',
  'wait_for',
];
/** The plain bash of every test: no rc files, a fixed prompt. */
/** A bare bash: no rc files, no shell integration (test/helpers/host.ts's BASH). */
const BASH = { command: 'bash', args: ['--norc', '--noprofile'], env: { PS1: '$ ', HISTFILE: '/dev/null', SHARED_PTY_SHELL_INTEGRATION: '0' } };
/** Per-test bound: generous for a noisy machine, finite so a hang fails instead of blocking CI. */
const TEST_TIMEOUT = 60_000;

type ToolResult = { content: Array<{ type: string; text?: string }>; structuredContent?: any; isError?: boolean };

/**
 * An SDK client plus an independent check of each structured result against the tool's
 * outputSchema (the SDK checks too, once listTools has run; this makes the check explicit).
 */
class Agent {
  private readonly _validators = new Map<string, (v: unknown) => { valid: boolean; errorMessage?: string }>();
  tools: Array<{ name: string; inputSchema: any; outputSchema?: any }> = [];

  constructor(readonly client: Client) {}

  async listTools(): Promise<void> {
    const r = await this.client.listTools();
    this.tools = r.tools as any;
    const ajv = new AjvJsonSchemaValidator();
    for (const t of this.tools) if (t.outputSchema) this._validators.set(t.name, ajv.getValidator(t.outputSchema) as any);
  }

  /** Calls a tool that must succeed; returns its structured content and text. */
  async call(name: string, args: Record<string, unknown> = {}): Promise<{ data: any; text: string }> {
    const r = (await this.client.callTool({ name, arguments: args })) as ToolResult;
    const text = r.content.map((c) => c.text ?? '').join('');
    assert.notEqual(r.isError, true, `${name} failed: ${text}`);
    assert.ok(r.structuredContent, `${name} returns structuredContent`);
    const v = this._validators.get(name);
    assert.ok(v, `${name} has an outputSchema`);
    const res = v(r.structuredContent);
    assert.ok(res.valid, `${name}: structuredContent does not match its outputSchema: ${res.errorMessage}\n${JSON.stringify(r.structuredContent)}`);
    return { data: r.structuredContent, text };
  }

  /** Calls a tool that must fail as a tool error (isError), not a protocol error. */
  async callFailing(name: string, args: Record<string, unknown>): Promise<string> {
    const r = (await this.client.callTool({ name, arguments: args })) as ToolResult;
    assert.equal(r.isError, true, `${name} should fail: ${JSON.stringify(r)}`);
    return r.content.map((c) => c.text ?? '').join('');
  }
}

/** Lines of rendered output, for exact-line checks. */
function lines(text: string): string[] {
  return text.split('\n').map((l) => l.trimEnd());
}

/** The checks every MCP transport must pass, given a connected agent. */
async function exerciseTools(agent: Agent, openArgs: Record<string, unknown> = {}): Promise<void> {
  const opened = await agent.call('open_session', { ...BASH, cols: 100, rows: 30, name: `mcp-${process.pid}-${Date.now()}`, ...openArgs });
  const id: string = opened.data.id;
  assert.equal(opened.data.origin, 'agent');
  assert.equal(opened.data.cols, 100);
  assert.equal(opened.data.rows, 30);
  assert.equal(opened.data.running, true);
  assert.ok(opened.text.includes(id), 'the text names the session');
  try {
    // send: the command's output as rendered, and why it returned.
    const sent = await agent.call('send', { session: id, text: 'echo hello-mcp', timeout: 20_000 });
    assert.ok(lines(sent.data.output).includes('hello-mcp'), `output: ${JSON.stringify(sent.data.output)}`);
    assert.ok(sent.text.includes('hello-mcp'));
    assert.equal(sent.data.waitReason, 'stdin_read');
    assert.deepEqual(sent.data.status, { kind: 'running' });
    assert.equal(sent.data.truncated, false);
    assert.ok(sent.text.includes('stdin_read'), 'the text says the wait reason');

    const listed = await agent.call('list_sessions');
    assert.ok(listed.data.sessions.some((s: any) => s.id === id));
    assert.ok(listed.text.includes(id));

    // read_screen: the whole screen, or a slice.
    const screen = await agent.call('read_screen', { session: id });
    assert.ok(lines(screen.data.screen).includes('hello-mcp'));
    assert.deepEqual(screen.data.size, { cols: 100, rows: 30 });
    assert.equal(screen.data.cursor.col, 3, 'after the "$ " prompt');
    // The screen's first rows hold the prompt and the command. (A send right after open_session can
    // reach bash before its line editor starts; the tty then echoes the text once more above the prompt.)
    const top = await agent.call('read_screen', { session: id, top: 2 });
    assert.ok(lines(top.data.screen).includes('$ echo hello-mcp'), `top rows: ${JSON.stringify(top.data.screen)}`);

    // read_scrollback: a page of history with its line numbers.
    const page = await agent.call('read_scrollback', { session: id, lines: 50 });
    assert.ok(lines(page.data.text).includes('hello-mcp'));
    assert.ok(page.data.firstLine >= 1 && page.data.lastLine >= page.data.firstLine && page.data.totalLines >= page.data.lastLine);

    // read_output: raw bytes after a cursor; passing the cursor back reads only what is new.
    const all = await agent.call('read_output', { session: id, since: 0, strip: true });
    assert.ok(all.data.data.includes('hello-mcp'));
    assert.equal(all.data.dropped, 0);
    assert.equal(all.data.running, true);
    assert.equal(all.data.exitCode, null);
    const none = await agent.call('read_output', { session: id, since: all.data.cursor });
    assert.equal(none.data.data, '');
    assert.equal(none.data.cursor, all.data.cursor);
    await agent.call('send', { session: id, text: 'echo second-$((6*7))', timeout: 20_000 });
    const next = await agent.call('read_output', { session: id, since: all.data.cursor, strip: true, waitMs: 5000 });
    assert.ok(next.data.cursor > all.data.cursor);
    assert.ok(next.data.data.includes('second-42'));
    assert.ok(!next.data.data.includes('hello-mcp'), 'only output after the cursor');
    // maxBytes smaller than the character at the cursor: that character whole, the cursor past it.
    await agent.call('send', { session: id, text: "printf '\\342\\202\\254\\n'", timeout: 20_000 });
    const raw = (await agent.call('read_output', { session: id, since: next.data.cursor })).data.data as string;
    const euro = next.data.cursor + Buffer.byteLength(raw.slice(0, raw.lastIndexOf('€')));
    const one = await agent.call('read_output', { session: id, since: euro, maxBytes: 1 });
    assert.deepEqual([one.data.data, one.data.cursor], ['€', euro + 3]);

    // wait_for: text that appears later; and a timeout.
    const mark = next.data.cursor;
    await agent.call('send', { session: id, text: '(sleep 1; echo late-$((3*3))) &', timeout: 20_000 });
    const waited = await agent.call('wait_for', { session: id, match: 'late-9', since: mark, timeout: 20_000 });
    assert.equal(waited.data.reason, 'matched');
    assert.equal(waited.data.matched, true);
    const regex = await agent.call('wait_for', { session: id, regex: 'late-\\d+', timeout: 10_000 });
    assert.equal(regex.data.reason, 'matched');
    const timedOut = await agent.call('wait_for', { session: id, match: 'never-printed-xyz', timeout: 300 });
    assert.equal(timedOut.data.reason, 'timeout');
    assert.equal(timedOut.data.matched, false);

    // send_keys: Ctrl+C interrupts a running command.
    const busy = await agent.call('send', { session: id, text: 'sleep 30', timeout: 500 });
    assert.equal(busy.data.waitReason, 'timeout');
    const cur = (await agent.call('read_output', { session: id, since: 0, maxBytes: 1048576 })).data.cursor;
    const keys = await agent.call('send_keys', { session: id, keys: ['Ctrl+C'] });
    assert.deepEqual(keys.data, { written: 1 });
    const back = await agent.call('wait_for', { session: id, match: '^C', since: cur, timeout: 10_000 });
    assert.equal(back.data.reason, 'matched');
    const alive = await agent.call('send', { session: id, text: 'echo alive-$((1+1))', timeout: 20_000 });
    assert.ok(lines(alive.data.output).includes('alive-2'));
    assert.equal(alive.data.waitReason, 'stdin_read');

    // resize
    const resized = await agent.call('resize', { session: id, cols: 120, rows: 40 });
    assert.deepEqual(resized.data, { cols: 120, rows: 40 });
    assert.deepEqual((await agent.call('read_screen', { session: id })).data.size, { cols: 120, rows: 40 });
    const stty = await agent.call('send', { session: id, text: 'stty size', timeout: 20_000 });
    assert.ok(lines(stty.data.output).includes('40 120'), stty.data.output);

    // signal: SIGINT to the foreground process group, not to the shell.
    const busy2 = await agent.call('send', { session: id, text: 'sleep 30', timeout: 500 });
    assert.equal(busy2.data.waitReason, 'timeout');
    const sig = await agent.call('signal', { session: id, signal: 'SIGINT' });
    assert.equal(sig.data.signal, 'SIGINT');
    assert.ok(Number.isInteger(sig.data.pgid));
    assert.notEqual(sig.data.pgid, opened.data.pid, 'the sleep, not bash');
    const after = await agent.call('send', { session: id, text: 'echo after-signal', timeout: 20_000 });
    assert.ok(lines(after.data.output).includes('after-signal'));
    assert.equal(after.data.waitReason, 'stdin_read');

    // An unknown session is a tool error the agent can read, not a protocol error.
    for (const [name, args] of [
      ['read_screen', { session: 'nosuch-session' }],
      ['send', { session: 'nosuch-session', text: 'x' }],
      ['send_keys', { session: 'nosuch-session', keys: ['Enter'] }],
      ['close_session', { session: 'nosuch-session' }],
    ] as const) {
      const msg = await agent.callFailing(name, args);
      assert.match(msg, /nosuch-session|unknown|not found/i, `${name}: ${msg}`);
    }
  } finally {
    // close_session ends it and it is gone.
    const closed = await agent.call('close_session', { session: id });
    assert.equal(closed.data.closed, id);
  }
  // Gone from the very next listing: the hosts are asked, not their records (rewritten a moment later).
  const listed = (await agent.call('list_sessions')).data.sessions;
  assert.ok(!listed.some((s: any) => s.id === id), 'the closed session is not listed any more');
}

function checkToolList(agent: Agent): void {
  assert.deepEqual(agent.tools.map((t) => t.name).sort(), TOOL_NAMES);
  for (const t of agent.tools) {
    assert.equal(t.inputSchema?.type, 'object', `${t.name} has an inputSchema`);
    assert.equal(t.outputSchema?.type, 'object', `${t.name} has an outputSchema`);
    if (t.name !== 'list_sessions' && t.name !== 'open_session') {
      assert.ok(t.inputSchema.properties?.session, `${t.name} takes session`);
      assert.ok(t.inputSchema.required?.includes('session'), `${t.name} requires session`);
    }
  }
  const sendKeys = agent.tools.find((t) => t.name === 'send_keys')!;
  assert.equal(sendKeys.inputSchema.properties.keys.type, 'array', 'send_keys takes keys: string[]');
}

// Once the shared host is closed, nothing the suite made is left (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedBySuite();

describe('MCP over Streamable HTTP (/mcp)', () => {
  let h: HttpHost;
  let agent: Agent;

  before(async () => {
    h = await startHttpHost();
    const client = new Client({ name: 'shared-pty-test', version: '0.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(`${h.http.url}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${h.token}` } },
    });
    await withTimeout(client.connect(transport), 20_000, 'MCP connect');
    agent = new Agent(client);
    await agent.listTools();
  });

  after(async () => {
    await agent?.client.close();
    await h?.close();
  });

  test('listTools: exactly the documented tools, each with inputSchema and outputSchema', { timeout: TEST_TIMEOUT }, () => {
    checkToolList(agent);
  });

  test(
    'send and signal are sized by maxChars alone (their budget): their inputs list no maxBytes, which nothing would apply; signal, which always waits, says no "with wait"',
    { timeout: TEST_TIMEOUT },
    () => {
      for (const name of ['send', 'signal']) {
        const properties = agent.tools.find((t) => t.name === name)?.inputSchema?.properties ?? {};
        assert.equal(properties.maxBytes, undefined, `${name}: ${JSON.stringify(properties.maxBytes)}`);
        assert.match(properties.maxChars?.description as string, /\(default 20000\)/, name);
      }
      // signal always waits (it takes no wait): nothing of its input is said to hold only "with wait".
      const signal = agent.tools.find((t) => t.name === 'signal')?.inputSchema?.properties ?? {};
      assert.equal(signal.wait, undefined);
      for (const [key, field] of Object.entries(signal)) assert.doesNotMatch(String((field as any).description), /with wait/i, `signal.${key}`);
      assert.match(String((signal.timeout as any)?.description), /^Milliseconds to wait at most/);
    },
  );

  test('with shell integration, send has the exit code in its structured result and list_commands lists the commands', { timeout: TEST_TIMEOUT }, async () => {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'spt-mcp-home-'));
    try {
      fs.writeFileSync(path.join(home, '.bashrc'), "PS1='my> '\nHISTFILE=/dev/null\n");
      const opened = await agent.call('open_session', { command: 'bash', cwd: home, env: { HOME: home } });
      const session = opened.data.id;
      assert.equal(opened.data.integration, true);
      const failed = await agent.call('send', { session, text: 'false' });
      assert.equal(failed.data.waitReason, 'command_done');
      assert.equal(failed.data.exitCode, 1);
      assert.match(failed.text, /exit code 1/);
      const fine = await agent.call('send', { session, text: 'echo listed' });
      assert.equal(fine.data.exitCode, 0);
      const listed = await agent.call('list_commands', { session });
      assert.equal(listed.data.integration, true);
      assert.deepEqual(
        listed.data.commands.map((c: any) => [c.command, c.exitCode]),
        [
          ['false', 1],
          ['echo listed', 0],
        ],
      );
      assert.match(listed.text, /#1 \[exit 1 \d+ms\] .*\$ false/);
      const out = await agent.call('read_output', {
        session,
        since: fine.data.command.startCursor,
        maxBytes: fine.data.command.endCursor - fine.data.command.startCursor,
        strip: true,
      });
      assert.equal(out.data.data, 'listed\n');
      await agent.call('close_session', { session });
    } finally {
      fs.rmSync(home, { recursive: true, force: true });
    }
  });

  test(
    'every tool works against a bash session; structured results match their schemas; an unknown session is a tool error',
    { timeout: 180_000 },
    async () => {
      await exerciseTools(agent);
      assert.equal(h.host.registry.size, 0);
    },
  );

  test('without the token → 401, and the SDK client cannot connect', { timeout: TEST_TIMEOUT }, async () => {
    const init = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '0' } },
    };
    const headers = { accept: 'application/json, text/event-stream' };
    const none = await request(h.port, 'POST', '/mcp', { body: init, headers });
    assert.equal(none.status, 401, none.text);
    const wrong = await request(h.port, 'POST', '/mcp', { body: init, headers, token: 'wrong' });
    assert.equal(wrong.status, 401, wrong.text);
    const ok = await request(h.port, 'POST', '/mcp', { body: init, headers, token: h.token });
    assert.equal(ok.status, 200, ok.text);

    const client = new Client({ name: 'no-token', version: '0.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(`${h.http.url}/mcp`));
    await assert.rejects(withTimeout(client.connect(transport), 20_000, 'connect without a token'));
    await client.close().catch(() => {});
  });
});

describe('MCP over stdio (shared-pty mcp)', () => {
  let base: string;
  let runDir: string;
  let agent: Agent | undefined;
  let transport: StdioClientTransport | undefined;
  let serve: ServeProcess | undefined;
  let stderr = '';

  /** Live host records in the runtime directory. */
  function records(): any[] {
    const out: any[] = [];
    for (const n of fs.readdirSync(runDir)) {
      if (!n.endsWith('.json')) continue;
      try {
        const r = JSON.parse(fs.readFileSync(path.join(runDir, n), 'utf8'));
        if (pidAlive(r.pid)) out.push(r);
      } catch {
        // being written
      }
    }
    return out;
  }

  async function recordWhere(pred: (r: any) => boolean, what: string, ms = 15_000): Promise<any> {
    const end = Date.now() + ms;
    for (;;) {
      const r = records().find(pred);
      if (r) return r;
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}; records: ${JSON.stringify(records()).slice(0, 800)}`);
      await sleep(50);
    }
  }

  function killDaemons(): void {
    if (!runDir || !fs.existsSync(runDir)) return;
    for (const r of records()) {
      if (r.kind === 'daemon' && pidAlive(r.pid)) {
        try {
          process.kill(r.pid, 'SIGKILL');
        } catch {
          // gone
        }
      }
    }
  }

  before(
    async () => {
      buildCli();
      base = fs.mkdtempSync(path.join(os.tmpdir(), 'spt-mcp-'));
      runDir = path.join(base, 'run');
      fs.mkdirSync(runDir, { mode: 0o700 });
      fs.chmodSync(runDir, 0o700);
      fs.mkdirSync(path.join(base, 'ws', 'sub'), { recursive: true });
      fs.mkdirSync(path.join(base, 'elsewhere'));
      const env = bashEnv({ SHARED_PTY_DIR: runDir }) as Record<string, string>;
      transport = new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp'], env, cwd: REPO_ROOT, stderr: 'pipe' });
      transport.stderr?.on('data', (d) => (stderr += d));
      const client = new Client({ name: 'shared-pty-test', version: '0.0.0' });
      await withTimeout(client.connect(transport), 30_000, 'MCP stdio connect');
      agent = new Agent(client);
      await agent.listTools();
    },
    { timeout: 180_000 },
  );

  after(async () => {
    await agent?.client.close().catch(() => {});
    await serve?.stop();
    killDaemons(); // only if a test failed before stopping it
    if (base) fs.rmSync(base, { recursive: true, force: true });
  });

  test('listTools: the same tools, with schemas', { timeout: TEST_TIMEOUT }, () => {
    checkToolList(agent!);
  });

  test('no host running: open_session starts the per-user host (kind "daemon"); send and list_sessions work through it', { timeout: 120_000 }, async () => {
    assert.deepEqual(records(), [], 'no host runs yet');
    const list0 = await agent!.call('list_sessions');
    assert.deepEqual(list0.data.sessions, []);
    // A host that hosts.json does not name (here there is none) is refused, not opened on this machine.
    const refused = await agent!.callFailing('open_session', { ...BASH, host: 'nowhere' });
    assert.match(refused, /no host named "nowhere"/);
    assert.deepEqual(records(), [], 'no host was started for it');
    const opened = await agent!.call('open_session', { ...BASH, cwd: path.join(base, 'elsewhere'), name: 'stdio-daemon' });
    const daemon = await recordWhere((r) => r.kind === 'daemon', 'the daemon record');
    assert.notEqual(daemon.pid, process.pid);
    const daemonRec = await recordWhere((r) => r.kind === 'daemon' && r.sessions.some((s: any) => s.id === opened.data.id), 'the session in the daemon record');
    assert.equal(daemonRec.hostId, daemon.hostId);
    assert.equal(fs.statSync(path.join(runDir, `${daemon.hostId}.json`)).mode & 0o777, 0o600);

    const sent = await agent!.call('send', { session: opened.data.id, text: 'echo via-daemon-$((2*21))', timeout: 20_000 });
    assert.ok(lines(sent.data.output).includes('via-daemon-42'), sent.data.output);
    assert.equal(sent.data.waitReason, 'stdin_read');
    // By name too (a selector).
    const screen = await agent!.call('read_screen', { session: 'stdio-daemon' });
    assert.ok(lines(screen.data.screen).includes('via-daemon-42'));
    const list = await agent!.call('list_sessions');
    const mine = list.data.sessions.find((s: any) => s.id === opened.data.id);
    assert.ok(mine, 'list_sessions lists it');
    assert.equal(mine.origin, 'agent');
    assert.equal(mine.cwd, path.join(base, 'elsewhere'));

    // A second session goes to the same daemon, not a new one.
    const second = await agent!.call('open_session', { ...BASH });
    assert.equal(records().filter((r) => r.kind === 'daemon').length, 1);
    await agent!.call('close_session', { session: second.data.id });
    // The unknown-session error of the stdio backend is a tool error as well.
    const msg = await agent!.callFailing('read_screen', { session: 'nosuch-session' });
    assert.match(msg, /nosuch-session|unknown|not found/i);
  });

  test("open_session with a cwd inside a serve host's workspace goes to that host", { timeout: 120_000 }, async () => {
    const ws = path.join(base, 'ws');
    serve = (
      await startServeOnFreePort((port) => ['--cmd', 'bash --norc --noprofile', '--cwd', ws, '--http-port', String(port)], bashEnv({ SHARED_PTY_DIR: runDir }))
    ).serve;
    const serveRec = await recordWhere((r) => r.kind === 'serve' && r.pid === serve!.pid && r.http, 'the serve record');
    assert.equal(serveRec.workspace, ws);

    const opened = await agent!.call('open_session', { ...BASH, cwd: path.join(ws, 'sub'), name: 'in-workspace' });
    assert.equal(opened.data.cwd, path.join(ws, 'sub'));
    await recordWhere((r) => r.hostId === serveRec.hostId && r.sessions.some((s: any) => s.id === opened.data.id), 'the session in the serve host');
    const daemon = records().find((r) => r.kind === 'daemon');
    assert.ok(!daemon?.sessions.some((s: any) => s.id === opened.data.id), 'not in the daemon');
    const sent = await agent!.call('send', { session: opened.data.id, text: 'pwd', timeout: 20_000 });
    assert.ok(lines(sent.data.output).includes(path.join(ws, 'sub')), sent.data.output);
    // list_sessions spans every host.
    const list = await agent!.call('list_sessions');
    const ids = list.data.sessions.map((s: any) => s.id);
    assert.ok(ids.includes(opened.data.id));
    assert.ok(
      daemon!.sessions.every((s: any) => ids.includes(s.id)),
      "the daemon's sessions are listed too",
    );
    // A cwd outside the workspace still goes to the daemon.
    const outside = await agent!.call('open_session', { ...BASH, cwd: path.join(base, 'elsewhere') });
    await recordWhere((r) => r.kind === 'daemon' && r.sessions.some((s: any) => s.id === outside.data.id), 'the outside session in the daemon');
    await agent!.call('close_session', { session: outside.data.id });
    await agent!.call('close_session', { session: opened.data.id });

    // An agent started in the workspace opens its sessions there without naming a cwd.
    const inWs = new StdioClientTransport({
      command: process.execPath,
      args: [CLI, 'mcp'],
      env: bashEnv({ SHARED_PTY_DIR: runDir }) as Record<string, string>,
      cwd: path.join(ws, 'sub'),
      stderr: 'pipe',
    });
    const wsClient = new Client({ name: 'shared-pty-test-ws', version: '0.0.0' });
    await withTimeout(wsClient.connect(inWs), 30_000, 'MCP stdio connect (in the workspace)');
    try {
      const wsAgent = new Agent(wsClient);
      await wsAgent.listTools();
      const here = await wsAgent.call('open_session', { ...BASH });
      assert.equal(here.data.cwd, path.join(ws, 'sub'), "the agent's own folder");
      await recordWhere((r) => r.hostId === serveRec.hostId && r.sessions.some((s: any) => s.id === here.data.id), 'the session in the serve host');
      await agent!.call('close_session', { session: here.data.id });
    } finally {
      await wsClient.close().catch(() => {});
    }
    await serve.stop();
    serve = undefined;
  });

  test('nested workspaces: open_session goes to the host of the innermost workspace holding cwd, whichever host is older', { timeout: 120_000 }, async () => {
    const ws = path.join(base, 'ws');
    const inner = path.join(ws, 'sub');
    // The outer host starts first: hosts are read oldest first, so the first match would be the outer one.
    const outer = (
      await startServeOnFreePort((port) => ['--cmd', 'bash --norc --noprofile', '--cwd', ws, '--http-port', String(port)], bashEnv({ SHARED_PTY_DIR: runDir }))
    ).serve;
    let nested: ServeProcess | undefined;
    try {
      const outerRec = await recordWhere((r) => r.pid === outer.pid && r.http, 'the outer serve record');
      nested = (
        await startServeOnFreePort(
          (port) => ['--cmd', 'bash --norc --noprofile', '--cwd', inner, '--http-port', String(port)],
          bashEnv({ SHARED_PTY_DIR: runDir }),
        )
      ).serve;
      const innerRec = await recordWhere((r) => r.pid === nested!.pid && r.http, 'the inner serve record');
      assert.equal(innerRec.workspace, inner);

      const inInner = await agent!.call('open_session', { ...BASH, cwd: inner, name: 'in-inner' });
      await recordWhere((r) => r.hostId === innerRec.hostId && r.sessions.some((s: any) => s.id === inInner.data.id), 'the session in the inner host');
      const inOuter = await agent!.call('open_session', { ...BASH, cwd: ws, name: 'in-outer' });
      await recordWhere((r) => r.hostId === outerRec.hostId && r.sessions.some((s: any) => s.id === inOuter.data.id), 'the session in the outer host');
      await agent!.call('close_session', { session: inInner.data.id });
      await agent!.call('close_session', { session: inOuter.data.id });
    } finally {
      await nested?.stop();
      await outer.stop();
    }
  });

  test('the tools work end to end over stdio (through the daemon)', { timeout: 180_000 }, async () => {
    await exerciseTools(agent!, { cwd: path.join(base, 'elsewhere') });
  });

  test('the daemon stops on SIGTERM and removes its record and sockets', { timeout: TEST_TIMEOUT }, async () => {
    const daemon = records().find((r) => r.kind === 'daemon');
    assert.ok(daemon, 'the daemon still runs');
    assert.ok(fs.existsSync(path.join(runDir, daemon.hostId, 'control.sock')));
    process.kill(daemon.pid, 'SIGTERM');
    const end = Date.now() + 15_000;
    while (pidAlive(daemon.pid)) {
      if (Date.now() > end) throw new Error('the daemon did not exit on SIGTERM');
      await sleep(50);
    }
    assert.ok(!fs.existsSync(path.join(runDir, `${daemon.hostId}.json`)), 'record removed');
    assert.ok(!fs.existsSync(path.join(runDir, daemon.hostId)), 'socket directory removed');
    assert.deepEqual(fs.readdirSync(runDir), [], `nothing left in the runtime directory; mcp stderr: ${stderr}`);
  });
});
