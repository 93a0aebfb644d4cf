// docs/protocol.md#secret-input: while a program reads a secret from the terminal (echo off, waiting for a line),
// the session says so (SessionInfo.secretInput, the secret_input event), a send returns at once
// with waitReason secret_input, an agent's MCP writes are refused with nothing written, a script's
// JSON-RPC writes go through, and what is typed appears in no result. Real bash and python in a
// real host, driven over its control socket and `/mcp` with the official SDK client.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startHttpHost, type HttpHost, mcpAgent } from '../../../helpers/http';
import { BASH, connect, rejectsWith, until, clientsClosed } from '../../../helpers/host';
import type { Notification, RpcClient } from '../../../../src/transport/client/rpc-client';
import { ensureNoDisposablesAreLeakedBySuite } from '../../../helpers/leak-tracker';

const linux = process.platform === 'linux';
/** What the user types; the programs print only its length, so it must appear nowhere. */
const SECRET = 'hunter2-Zq9';
const AGENT_TEXT = 'agent-typed';

/** Two programs that read a password: each prints `len=N` of what it read. */
const PROGRAMS = [
  { name: 'bash read -s', line: 'read -s x; echo "len=${#x}"' },
  { name: 'python getpass', line: `python3 -c 'import getpass; print("len=%d" % len(getpass.getpass()))'` },
];

const notLinux = !linux && 'needs Linux /proc';
// Once the shared host is closed, nothing the suite made is left (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedBySuite(clientsClosed);

describe('secret input', () => {
  let h: HttpHost;
  let ctl: RpcClient;
  let agent: Client;
  const notes: Notification[] = [];

  before(async () => {
    if (notLinux) return;
    h = await startHttpHost();
    ctl = await connect(h.host.controlAddress);
    ctl.onNotification((n) => notes.push(n));
    agent = await mcpAgent(h, 'secret-test');
  });

  after(async () => {
    await agent?.close().catch(() => {});
    ctl?.close();
    await h?.close();
  });

  const rpc = (method: string, params: Record<string, unknown>) => ctl.request<any>(method, params);
  const toolText = (r: any) => (r.content as Array<{ text?: string }>).map((c) => c.text ?? '').join('');

  for (const program of PROGRAMS) {
    test(
      `${program.name}: secretInput, send → secret_input, agent writes refused, the user's typing ends it and shows nowhere`,
      { skip: notLinux, timeout: 60_000 },
      async () => {
        const info = await rpc('session/create', { ...BASH, cols: 80, rows: 24 });
        const session: string = info.id;
        await until(async () => (await rpc('pty/read', { session })).screen.includes('$'), 10_000, 'a prompt');
        await rpc('pty/events', { session });
        const results: unknown[] = [];

        const asked = await rpc('pty/send', { session, text: program.line, timeout: 20_000 });
        results.push(asked);
        assert.equal(asked.waitReason, 'secret_input', JSON.stringify(asked));
        assert.equal((await rpc('pty/info', { session })).secretInput, true);
        assert.ok((await rpc('session/list', {})).sessions.find((s: any) => s.id === session).secretInput);
        await until(
          () => notes.some((n) => n.method === 'pty/event' && n.params.session === session && n.params.type === 'secret_input'),
          5000,
          'the secret_input event',
        );

        // An agent may not type: MCP send and send_keys fail as tool errors, and so does a write
        // relayed by `shared-pty mcp` (it declares itself on the control socket).
        const sent = (await agent.callTool({ name: 'send', arguments: { session, text: AGENT_TEXT } })) as any;
        assert.equal(sent.isError, true, toolText(sent));
        assert.match(toolText(sent), /asks for a secret/);
        assert.match(toolText(sent), /user must type/);
        // What to do next holds whether the user answers before or after the agent reads this.
        assert.match(toolText(sent), /call send or send_keys again/);
        assert.doesNotMatch(toolText(sent), /wait_event/, 'a wait begun after the refusal misses an answer given meanwhile');
        const listed = toolText(await agent.callTool({ name: 'list_sessions', arguments: {} }));
        assert.ok(
          listed.split('\n').some((l) => l.startsWith(`${session}  `) && l.includes(' running secret-input ')),
          listed,
        );
        const keys = (await agent.callTool({ name: 'send_keys', arguments: { session, keys: ['x', 'Enter'] } })) as any;
        assert.equal(keys.isError, true, toolText(keys));
        assert.match(toolText(keys), /asks for a secret/);
        // A send that types nothing only waits (a task waiting for the person to type the secret):
        // it is not refused, and says the program still asks.
        const waits = (await agent.callTool({ name: 'send', arguments: { session, text: '', submit: false, timeout: 20_000 } })) as any;
        assert.notEqual(waits.isError, true, toolText(waits));
        assert.equal(waits.structuredContent.waitReason, 'secret_input', toolText(waits));
        const relay = await connect(h.host.controlAddress);
        try {
          await rejectsWith(
            relay.request('pty/write', { session, action: { text: `${AGENT_TEXT}\r` }, client: { origin: 'agent', transport: 'mcp-stdio' } }),
            -32000,
          );
        } finally {
          relay.close();
        }
        assert.equal((await rpc('pty/info', { session })).secretInput, true, 'the program still waits: nothing reached it');

        // The user (here a script over JSON-RPC) types the secret: it goes through and ends the wait.
        const typed = await rpc('pty/send', { session, text: SECRET, timeout: 20_000 });
        results.push(typed);
        assert.equal(typed.waitReason, 'stdin_read');
        assert.equal((await rpc('pty/info', { session })).secretInput, false);
        const screen = await rpc('pty/read', { session });
        assert.ok(screen.screen.split('\n').includes(`len=${SECRET.length}`), `only the secret was read, none of the agent's text: ${screen.screen}`);
        await until(
          () =>
            notes.some(
              (n) =>
                n.method === 'pty/event' &&
                n.params.session === session &&
                n.params.type === 'input_wait' &&
                (n.params.seq as number) > eventSeq('secret_input'),
            ),
          5000,
          'an input_wait after it',
        );

        // Nowhere to be read: the results, the raw output, the screen, the scrollback, the events, the info.
        results.push(screen, await rpc('pty/output', { session }), await rpc('pty/scrollback', { session }), await rpc('pty/info', { session }), notes);
        for (const r of results) assert.ok(!JSON.stringify(r).includes(SECRET), `the secret shows in ${JSON.stringify(r).slice(0, 300)}`);
        // The user answered before the agent came back: calling send again, as the refusal says, goes through.
        const again = (await agent.callTool({ name: 'send', arguments: { session, text: 'echo again-$((1+1))' } })) as any;
        assert.notEqual(again.isError, true, toolText(again));
        assert.ok(again.structuredContent.output.split('\n').includes('again-2'), again.structuredContent.output);
        await rpc('pty/kill', { session });

        function eventSeq(type: string): number {
          return notes.find((n) => n.method === 'pty/event' && n.params.session === session && n.params.type === type)?.params.seq as number;
        }
      },
    );
  }

  test('outside secret input an agent types as before', { timeout: 30_000 }, async () => {
    const info = await rpc('session/create', { ...BASH, cols: 80, rows: 24 });
    await until(async () => (await rpc('pty/read', { session: info.id })).screen.includes('$'), 10_000, 'a prompt');
    const sent = (await agent.callTool({ name: 'send', arguments: { session: info.id, text: 'echo ok-$((2+2))' } })) as any;
    assert.notEqual(sent.isError, true, toolText(sent));
    assert.equal(sent.structuredContent.waitReason, 'stdin_read');
    assert.equal((await rpc('pty/info', { session: info.id })).secretInput, false);
    await rpc('pty/kill', { session: info.id });
  });
});
