// docs/protocol.md#typing-arbitration, typing arbitration: while the user types in a session (a key from their views in
// the last 1.5 s, or a line started and not submitted), an agent's MCP write waits for them to
// pause, up to the call's timeout, then fails saying the user is typing, with nothing written;
// the user typing during an agent's send ends it with waitReason user_input. Scripts are never
// held. A real bash in a real host; the user types over the control socket as the editor does
// (`client: { origin: "user" }`), the agent calls over `/mcp` with the official SDK client.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { request, startHttpHost, type HttpHost, mcpAgent } from '../../../helpers/http';
import { BASH, connect, until, clientsClosed } from '../../../helpers/host';
import type { RpcClient } from '../../../../src/transport/client/rpc-client';
import { loadNodePty } from '../../../../src/core/session/pty-loader';
import { buildCli, CLI } from '../../../helpers/protocol';
import { ensureNoDisposablesAreLeakedBySuite } from '../../../helpers/leak-tracker';

// Once the shared host is closed, nothing the suite made is left (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedBySuite(clientsClosed);

describe('typing arbitration', () => {
  let h: HttpHost;
  let ctl: RpcClient;
  let agent: Client;

  before(async () => {
    buildCli();
    h = await startHttpHost();
    ctl = await connect(h.host.controlAddress);
    agent = await mcpAgent(h, 'arbitration-test');
  });

  after(async () => {
    await agent?.close().catch(() => {});
    ctl?.close();
    await h?.close();
  });

  const rpc = (method: string, params: Record<string, unknown>) => ctl.request<any>(method, params);
  const userTypes = (session: string, text: string) => rpc('pty/write', { session, action: { text }, client: { origin: 'user' } });
  const toolText = (r: any) => (r.content as Array<{ text?: string }>).map((c) => c.text ?? '').join('');
  const screen = async (session: string) => (await rpc('pty/read', { session })).screen as string;

  async function openBash(): Promise<string> {
    const info = await rpc('session/create', { ...BASH, cols: 80, rows: 24 });
    await until(async () => (await screen(info.id)).includes('$'), 10_000, 'a prompt');
    return info.id;
  }

  test(
    'a line the user started holds the agent: its send fails saying so, nothing is written; once submitted and paused, the agent goes on',
    { timeout: 60_000 },
    async () => {
      const id = await openBash();
      await userTypes(id, 'echo user-line');
      const held = (await agent.callTool({ name: 'send', arguments: { session: id, text: 'echo agent-ran', timeout: 1000 } })) as any;
      assert.equal(held.isError, true, toolText(held));
      assert.match(toolText(held), /user is typing/);
      // send_keys waits for the line up to the timeout it is given (15 s without one): this one is
      // refused too, as a tool error that says why (a thrown error, a lost connection or a timeout,
      // is not that refusal). It waited 15 s whatever its timeout (found by an outside audit): the
      // client's own bound, ten times the call's, would have ended it first.
      const keys = (await agent.callTool({ name: 'send_keys', arguments: { session: id, keys: ['x'], timeout: 1000 } }, undefined, { timeout: 10_000 })) as any;
      assert.equal(keys.isError, true, toolText(keys));
      assert.match(toolText(keys), /user is typing/);
      assert.doesNotMatch(await screen(id), /agent-ran|user-linex/, 'nothing the agent sent was written');
      // A send that types nothing only waits on (a task waiting for the person's answer): it types over no one, and is not held.
      const waitOnly = (await agent.callTool({ name: 'send', arguments: { session: id, text: '', submit: false, timeout: 1000 } })) as any;
      assert.notEqual(waitOnly.isError, true, toolText(waitOnly));
      assert.equal(waitOnly.structuredContent.waitReason, 'stdin_read', toolText(waitOnly));
      assert.match(await screen(id), /\$ echo user-line$/m, "the user's line as they left it");
      // A script is never held.
      await rpc('pty/write', { session: id, action: { text: '-and-script' } });
      await userTypes(id, '\r');
      await until(async () => (await screen(id)).includes('\nuser-line-and-script'), 10_000, "the user's line to run");
      // The user has submitted and pauses: the agent's send waits out the pause and runs.
      const ran = (await agent.callTool({ name: 'send', arguments: { session: id, text: 'echo agent-ran', timeout: 10_000 } })) as any;
      assert.notEqual(ran.isError, true, toolText(ran));
      assert.match(ran.structuredContent.output, /agent-ran/);
      await rpc('pty/kill', { session: id });
    },
  );

  test('a line the user typed and erased again (Backspace) holds the agent no longer, nor do cursor keys on the empty line', { timeout: 60_000 }, async () => {
    const id = await openBash();
    await userTypes(id, 'xy');
    await userTypes(id, '\x7f\x7f');
    await userTypes(id, '\x1b[D');
    // The user's pause still counts; then the agent's send goes through.
    const ran = (await agent.callTool({ name: 'send', arguments: { session: id, text: 'echo agent-after-erase', timeout: 10_000 } })) as any;
    assert.notEqual(ran.isError, true, toolText(ran));
    assert.match(ran.structuredContent.output, /^agent-after-erase$/m);
    await rpc('pty/kill', { session: id });
  });

  test('a line the user started and a script cleared (Ctrl+U) holds the agent no longer', { timeout: 60_000 }, async () => {
    const id = await openBash();
    await userTypes(id, 'echo half-typed');
    // A script clears it over REST, with a token of its own (the host's is the agent's here: it used /mcp with it).
    const { token } = await rpc('session/share', { session: id, scope: 'input', reusable: true });
    const cleared = await request(h.port, 'POST', `/sessions/${id}/write`, { token, body: { data: '\x15', submit: false } });
    assert.equal(cleared.status, 200, cleared.text);
    await until(async () => !(await screen(id)).includes('half-typed'), 10_000, 'the line cleared');
    // The user's pause still counts; then the agent's send goes through.
    const ran = (await agent.callTool({ name: 'send', arguments: { session: id, text: 'echo agent-after-clear', timeout: 10_000 } })) as any;
    assert.notEqual(ran.isError, true, toolText(ran));
    assert.match(ran.structuredContent.output, /agent-after-clear/);
    await rpc('pty/kill', { session: id });
  });

  test(
    "through `shared-pty attach` in a real terminal: the user's started line holds the agent, and Ctrl+C there ends its send",
    { timeout: 60_000 },
    async () => {
      const id = await openBash();
      // attach runs in a PTY of its own, as in the user's terminal emulator; this test types into that.
      const outer = loadNodePty().spawn(process.execPath, [CLI, 'attach', id], { cols: 80, rows: 24, env: { ...process.env, SHARED_PTY_DIR: h.dir } });
      try {
        await until(async () => (await rpc('session/list', {})).sessions.find((s: { id: string }) => s.id === id).clients > 0, 15_000, 'attach to subscribe');
        outer.write('echo typed-in-attach');
        await until(async () => (await screen(id)).includes('echo typed-in-attach'), 10_000, "the user's line in the shell");
        const held = (await agent.callTool({ name: 'send', arguments: { session: id, text: 'echo agent-ran', timeout: 1000 } })) as any;
        assert.equal(held.isError, true, toolText(held));
        assert.match(toolText(held), /user is typing/);
        assert.doesNotMatch(await screen(id), /agent-ran/);
        outer.write('\r');
        await until(async () => (await screen(id)).includes('\ntyped-in-attach'), 10_000, "the user's line to run");
        const sending = agent.callTool({ name: 'send', arguments: { session: id, text: 'sleep 5; echo slept', timeout: 20_000 } }) as Promise<any>;
        await until(async () => (await screen(id)).includes('sleep 5; echo slept'), 10_000, "the agent's command to run");
        outer.write('\x03');
        const r = await sending;
        assert.equal(r.structuredContent.waitReason, 'user_input', toolText(r));
        const who = await rpc('pty/info', { session: id });
        assert.equal(who.lastInput.origin, 'user', 'attach types as the user');
      } finally {
        outer.kill();
        await rpc('pty/kill', { session: id });
      }
    },
  );

  // The send waits for the shell's first prompt before it types, and the user may start a line
  // meanwhile: their keys wait in the terminal, and the agent's text would have followed them and
  // its Enter run both as one command (found by an outside audit: "echo HUMAN_HALFecho AGENT").
  test('a line the user starts while the send waits for the first prompt holds the agent too: nothing is typed into it', { timeout: 60_000 }, async () => {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'spt-arb-'));
    try {
      fs.writeFileSync(path.join(home, 'slow-rc'), 'sleep 2\n');
      const info = await rpc('session/create', { ...BASH, args: ['--rcfile', path.join(home, 'slow-rc'), '--noprofile', '-i'], cols: 80, rows: 24 });
      const sending = agent.callTool({ name: 'send', arguments: { session: info.id, text: 'echo agent-ran', timeout: 5000 } }) as Promise<any>;
      await new Promise((r) => setTimeout(r, 500));
      await userTypes(info.id, 'echo user-half');
      const held = await sending;
      assert.equal(held.isError, true, toolText(held));
      assert.match(toolText(held), /user is typing/);
      await until(async () => /[$#] echo user-half/.test(await screen(info.id)), 10_000, "the user's line at the prompt").catch(async (e) => {
        throw new Error(`${e.message}: ${JSON.stringify(await screen(info.id))}`);
      });
      assert.doesNotMatch(await screen(info.id), /agent-ran/, 'nothing the agent sent was written');
      await rpc('pty/kill', { session: info.id });
    } finally {
      fs.rmSync(home, { recursive: true, force: true });
    }
  });

  // A line recalled from history is a line on the prompt as much as one typed (found by an outside
  // audit: ArrowUp, then the agent's send, and bash ran "echo firstecho agent-ran").
  test('a line the user recalls from history (ArrowUp, Ctrl+R) holds the agent; a refused write is not credited to it', { timeout: 60_000 }, async () => {
    const info = await rpc('session/create', { ...BASH, cols: 80, rows: 24, origin: 'user' });
    const id = info.id;
    await until(async () => (await screen(id)).includes('$'), 10_000, 'a prompt');
    await userTypes(id, 'echo first\r');
    await until(async () => (await screen(id)).includes('\nfirst'), 10_000, 'the first line to run');
    for (const recall of ['\x1b[A', '\x12first']) {
      await userTypes(id, recall);
      await new Promise((r) => setTimeout(r, 1600)); // past the pause: only the line holds the agent
      const held = (await agent.callTool({ name: 'send', arguments: { session: id, text: 'echo agent-ran', timeout: 1000 } })) as any;
      assert.equal(held.isError, true, `${JSON.stringify(recall)}: ${toolText(held)}`);
      assert.match(toolText(held), /user is typing/);
      assert.doesNotMatch(await screen(id), /agent-ran/, 'nothing the agent sent was written');
      // Nothing was written: the last input is still the user's, not a decision about the agent's.
      const last = (await rpc('pty/info', { session: id })).lastInput;
      assert.equal(last.origin, 'user', JSON.stringify(last));
      await userTypes(id, '\x03'); // Ctrl+C: the line is abandoned
      await until(async () => !/first\s*$/.test(await screen(id)), 10_000, 'the recalled line abandoned');
    }
    await rpc('pty/kill', { session: id });
  });

  test('a session that ends while the agent waits for the user is told as its end, not as the user typing', { timeout: 60_000 }, async () => {
    const id = await openBash();
    await userTypes(id, 'echo user-line');
    const held = agent.callTool({ name: 'send_keys', arguments: { session: id, keys: ['x'] } }) as Promise<any>;
    await new Promise((r) => setTimeout(r, 300));
    await rpc('pty/kill', { session: id, signal: 'SIGKILL' });
    const r = await held;
    assert.equal(r.isError, true, toolText(r));
    assert.match(toolText(r), /^Error -32000: Session .* ended while the user was typing; nothing was written/);
  });

  test("the user typing during an agent's send ends it with waitReason user_input", { timeout: 60_000 }, async () => {
    const id = await openBash();
    const sending = agent.callTool({ name: 'send', arguments: { session: id, text: 'sleep 5; echo slept', timeout: 20_000 } }) as Promise<any>;
    await until(async () => (await screen(id)).includes('sleep 5'), 10_000, "the agent's command to run");
    await userTypes(id, '\x03'); // the user presses Ctrl+C
    const r = await sending;
    assert.equal(r.structuredContent.waitReason, 'user_input', toolText(r));
    assert.match(toolText(r), /user typed/);
    await rpc('pty/kill', { session: id });
  });
});
