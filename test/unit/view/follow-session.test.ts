// How the terminal view of MCP Apps follows a session (src/view/follow-session.ts), through the
// same tool calls it makes in the chat, against a real host's /mcp: a picture first, then output
// from its cursor; output lost before it was read brings a fresh picture; the end is reported.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { followSession, ToolError, type CallTool } from '../../../src/view/follow-session';
import { startHttpServer, type HttpServer } from '../../../src/transport/http/http-server';
import { BASH, startHost, until, withTimeout } from '../../helpers/host';

/** A ring this small is outrun by a few KiB of output. */
const RING_BYTES = 4096;

type Event =
  | { kind: 'redraw'; data: string }
  | { kind: 'write'; data: string }
  | { kind: 'exited'; exitCode: number | null }
  | { kind: 'problem'; message: string; lasting: boolean };

describe('following a session through MCP tool calls', () => {
  let handle: Awaited<ReturnType<typeof startHost>>;
  let server: HttpServer;
  let client: Client;

  before(async () => {
    handle = await startHost({ ringBytes: RING_BYTES });
    server = await startHttpServer(handle.host, { hostId: handle.host.hostId });
    handle.host.attachHttp(server);
    client = new Client({ name: 'follow-test', version: '0' });
    await withTimeout(
      client.connect(
        new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${server.token}` } } }),
      ),
      20_000,
      'MCP connect',
    );
  });

  after(async () => {
    await client?.close();
    await handle?.close();
  });

  /** The view's tool call: its structured result, or a ToolError. */
  const call: CallTool = async (name, args) => {
    const r = (await client.callTool({ name, arguments: args })) as {
      isError?: boolean;
      structuredContent?: Record<string, unknown>;
      content: Array<{ text?: string }>;
    };
    if (r.isError) throw new ToolError(r.content.map((c) => c.text ?? '').join(''));
    return r.structuredContent ?? {};
  };

  test('a picture, then output; output lost to the ring means a new picture; then the exit', { timeout: 60_000 }, async () => {
    const s = (await call('open_session', { ...BASH })) as { id: string };
    await call('send', { session: s.id, text: 'echo ready' });
    // Reads wait at this gate until the test opens it: meanwhile the program outruns the ring.
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const gated: CallTool = async (name, args) => {
      if (name === 'read_output') await gate;
      return call(name, args);
    };
    const events: Event[] = [];
    const following = followSession(s.id, gated, {
      redraw: (data) => events.push({ kind: 'redraw', data }),
      write: (data) => events.push({ kind: 'write', data }),
      exited: (exitCode) => events.push({ kind: 'exited', exitCode }),
      problem: (message, lasting) => events.push({ kind: 'problem', message, lasting }),
    });
    try {
      await until(() => events.length === 1, 20_000, 'the first picture');
      const first = events[0];
      assert.ok(first.kind === 'redraw');
      assert.match(first.data, /ready/);

      await call('send', { session: s.id, text: 'seq -f "line %g" 1 2000' }); // ~20 KiB: five rings
      open();
      await until(() => events.filter((e) => e.kind === 'redraw').length === 2, 20_000, 'a second picture');
      assert.deepEqual(events.map((e) => e.kind).slice(0, 2), ['redraw', 'redraw'], 'lost output is never written as if it were whole');
      const second = events[1];
      assert.ok(second.kind === 'redraw');
      assert.match(second.data, /line 2000/);

      await call('send_keys', { session: s.id, keys: [...'echo after', 'Enter'] });
      await until(() => events.some((e) => e.kind === 'write' && /after/.test(e.data)), 20_000, 'new output written');
      await call('send_keys', { session: s.id, keys: [...'exit 7', 'Enter'] });
      await until(() => events.some((e) => e.kind === 'exited'), 20_000, 'the exit');
      assert.deepEqual(events.at(-1), { kind: 'exited', exitCode: 7 });
      assert.equal(events.filter((e) => e.kind === 'problem').length, 0);
    } finally {
      following.stop();
    }
  });

  test('an unknown session is a lasting problem, not a retry loop', { timeout: 30_000 }, async () => {
    const problems: Array<{ message: string; lasting: boolean }> = [];
    followSession('no-such-session', call, {
      redraw: () => assert.fail('no picture of an unknown session'),
      write: () => assert.fail('no output of an unknown session'),
      exited: () => assert.fail('no exit of an unknown session'),
      problem: (message, lasting) => problems.push({ message, lasting }),
    });
    await until(() => problems.length > 0, 20_000, 'the problem');
    assert.equal(problems[0].lasting, true);
    assert.match(problems[0].message, /Unknown session/);
  });
});
