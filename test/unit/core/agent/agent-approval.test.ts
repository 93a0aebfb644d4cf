// docs/protocol.md#agent-write-approval, agent write approval with `ask`: an agent's (MCP) write into a session the user
// opened waits for the user's answer in a connected window (here: a control-socket client that
// calls host/watchAgents, as the editor does), which sees the text and the session; Allow once,
// Allow for this session and Deny do what they say; no answer within the call's timeout declines;
// with no window to ask, `ask` acts as the headless policy (allow). While an agent's call writes
// or waits, the window is told "agent typing". Every decision is in pty/info.lastInput and in a
// recording. A real host, bash, the official MCP SDK client over /mcp.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { connect, rejectsWith, until, clientsClosed } from '../../../helpers/host';
import { agentCalls } from '../../../helpers/agent-calls';
import { mcpAgent, startHttpHost, type HttpHost } from '../../../helpers/http';
import type { Notification, RpcClient } from '../../../../src/transport/client/rpc-client';
import { ensureNoDisposablesAreLeakedBySuite } from '../../../helpers/leak-tracker';

/** The user declined an agent's write: socket-pty's server error, `data.reason: "declined"` (docs/protocol.md#4-error-codes). */
const DECLINED = -32000;

/** A window that answers: it records what it is told, and answers each request with `answer`. */
class Window {
  readonly told: Notification[] = [];
  answer: 'once' | 'session' | 'deny' | 'none' = 'none';
  constructor(readonly client: RpcClient) {
    client.onNotification((n) => {
      this.told.push(n);
      if (n.method === 'agent/approval' && this.answer !== 'none') void client.request('host/approve', { id: n.params.id, decision: this.answer });
    });
  }
  requests(session: string): Record<string, any>[] {
    return this.told.filter((n) => n.method === 'agent/approval' && n.params.session === session).map((n) => n.params);
  }
}

// Once the shared host is closed, nothing the suite made is left (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedBySuite(clientsClosed);

describe('agent write approval: ask', () => {
  let h: HttpHost;
  let ctl: RpcClient;
  let agentCtl: RpcClient;
  let win: Window;
  before(async () => {
    h = await startHttpHost([], { agentApproval: 'ask' });
    ctl = await connect(h.host.controlAddress);
    agentCtl = await connect(h.host.controlAddress);
    win = new Window(await connect(h.host.controlAddress));
    const watching = await win.client.request<any>('host/watchAgents', {});
    assert.deepEqual(watching, { pending: [], typing: [] });
  });
  after(async () => {
    win?.client.close();
    agentCtl?.close();
    ctl?.close();
    await h?.close();
  });

  const rpc = (method: string, params: Record<string, unknown>) => calls().rpc(method, params);
  const agentRpc = (method: string, params: Record<string, unknown>) => calls().agentRpc(method, params);
  const open = (origin: 'user' | 'agent') => calls().open(origin);
  const calls = () => agentCalls(ctl, agentCtl);
  const lastApproval = async (id: string) => (await rpc('pty/info', { session: id })).lastInput?.approval;

  test('Deny: nothing is written, the agent is told the user declined, and the window saw the text and "agent typing"', { timeout: 30_000 }, async () => {
    const id = await open('user');
    win.answer = 'deny';
    const err = await rejectsWith(agentRpc('pty/send', { session: id, text: 'echo denied-ran' }), DECLINED);
    assert.match(err.message, /user declined/);
    const [asked] = win.requests(id);
    assert.equal(asked.text, 'echo denied-ran\r', 'what would be typed, Enter included');
    assert.equal(asked.origin, 'agent');
    assert.match(asked.name, /^bash/);
    assert.ok(win.told.some((n) => n.method === 'agent/approvalEnded' && n.params.id === asked.id && n.params.decision === 'deny'));
    const typing = win.told.filter((n) => n.method === 'agent/typing' && n.params.session === id).map((n) => n.params.typing);
    assert.deepEqual(typing, [true, false], 'agent typing shown while the call waited, then cleared');
    assert.doesNotMatch((await rpc('pty/read', { session: id })).screen, /denied-ran/);
    assert.equal(await lastApproval(id), 'denied');
    // Raw writes (send_keys) ask too.
    await rejectsWith(agentRpc('pty/write', { session: id, action: { text: 'x' } }), DECLINED);
    assert.equal(win.requests(id).length, 2);
    await rpc('pty/kill', { session: id });
  });

  test("Allow once asks again next time; Allow for this session does not; the agent's own session never asks", { timeout: 30_000 }, async () => {
    const id = await open('user');
    win.answer = 'once';
    assert.match((await agentRpc('pty/send', { session: id, text: 'echo once-ran' })).output, /once-ran/);
    assert.equal(await lastApproval(id), 'allowed_once');
    win.answer = 'session';
    assert.match((await agentRpc('pty/send', { session: id, text: 'echo session-ran' })).output, /session-ran/);
    win.answer = 'deny'; // not asked any more: a deny here would show as a refusal
    assert.match((await agentRpc('pty/send', { session: id, text: 'echo again-ran' })).output, /again-ran/);
    assert.equal(win.requests(id).length, 2);
    assert.equal(await lastApproval(id), 'allowed_for_session');
    const own = await open('agent');
    assert.match((await agentRpc('pty/send', { session: own, text: 'echo own-ran' })).output, /own-ran/);
    assert.equal(win.requests(own).length, 0);
    // Scripts and the user's views are never asked.
    assert.match((await rpc('pty/send', { session: id, text: 'echo script-ran' })).output, /script-ran/);
    await rpc('pty/kill', { session: id });
    await rpc('pty/kill', { session: own });
  });

  test("no answer within the call's timeout declines; a request outlives neither its caller nor an answer from elsewhere", { timeout: 30_000 }, async () => {
    const id = await open('user');
    win.answer = 'none';
    const err = await rejectsWith(agentRpc('pty/send', { session: id, text: 'echo late-ran', timeout: 1500 }), DECLINED);
    assert.match(err.message, /declined.*within the call's timeout/);
    assert.equal(await lastApproval(id), 'unanswered');
    const [req] = win.requests(id);
    assert.deepEqual((await win.client.request<any>('host/approve', { id: req.id, decision: 'once' })).decided, false, 'too late: nothing is written');
    // Ordering fence: a write the late answer had let through would be typed before this one.
    assert.match((await rpc('pty/send', { session: id, text: 'echo fence-$((6*7))' })).output, /fence-42/);
    assert.doesNotMatch((await rpc('pty/read', { session: id })).screen, /late-ran/);
    // An agent may not answer approval requests (its own or another's).
    const asking = agentRpc('pty/send', { session: id, text: 'echo self-ran', timeout: 5000 });
    const pending = await until(() => win.requests(id)[1], 5000, 'the second request');
    // One question per session at a time: another write while it waits is refused, not asked.
    const stacked = await rejectsWith(agentRpc('pty/write', { session: id, action: { text: 'x' } }), -32000);
    assert.match(stacked.message, /still waits for the user's answer/);
    assert.equal(win.requests(id).length, 2, "no second question on the user's screen");
    await rejectsWith(agentRpc('host/approve', { id: pending.id, decision: 'once' }), -32004);
    await rejectsWith(agentRpc('host/watchAgents', {}), -32004);
    // A window that connects later is told what is waiting.
    const late = await connect(h.host.controlAddress);
    const seen = await late.request<any>('host/watchAgents', {});
    assert.deepEqual(
      seen.pending.map((p: { id: string }) => p.id),
      [pending.id],
    );
    assert.deepEqual(seen.typing, [id]);
    assert.equal((await late.request<any>('host/approve', { id: pending.id, decision: 'deny' })).decided, true);
    await rejectsWith(asking, DECLINED);
    assert.ok(
      win.told.some((n) => n.method === 'agent/approvalEnded' && n.params.id === pending.id),
      'the other window is told it is over',
    );
    late.close();
    await rpc('pty/kill', { session: id });
  });

  test('over /mcp: the tool waits for the answer and a denial is an isError result; a recording marks each decision', { timeout: 30_000 }, async () => {
    const id = await open('user');
    const cast = path.join(h.dir, 'approval.cast');
    await rpc('pty/record', { session: id, path: cast, input: true });
    const agent = await mcpAgent(h, 'approval-test');
    try {
      win.answer = 'deny';
      const denied = (await agent.callTool({ name: 'send', arguments: { session: id, text: 'echo mcp-denied' } })) as any;
      assert.equal(denied.isError, true);
      assert.match(denied.content[0].text, /user declined/);
      win.answer = 'once';
      const allowed = (await agent.callTool({ name: 'send', arguments: { session: id, text: 'echo mcp-allowed' } })) as any;
      assert.ok(!allowed.isError, allowed.content[0].text);
      assert.match(allowed.content[0].text, /mcp-allowed/);
      assert.deepEqual(
        win.requests(id).map((r) => [r.text, r.transport]),
        [
          ['echo mcp-denied\r', 'mcp-http'],
          ['echo mcp-allowed\r', 'mcp-http'],
        ],
      );
    } finally {
      await agent.close();
    }
    await rpc('pty/record', { session: id, stop: true });
    const markers = fs
      .readFileSync(cast, 'utf8')
      .split('\n')
      .slice(1)
      .filter(Boolean)
      .map((l) => JSON.parse(l))
      .filter((e) => e[1] === 'm')
      .map((e) => e[2]);
    assert.ok(
      markers.some((m: string) => /agent write denied \(mcp-http\): "echo mcp-denied\\r"/.test(m)),
      JSON.stringify(markers),
    );
    assert.ok(
      markers.some((m: string) => /agent write allowed once \(mcp-http\): "echo mcp-allowed\\r"/.test(m)),
      JSON.stringify(markers),
    );
    await rpc('pty/kill', { session: id });
  });

  test(
    'over /mcp, a question the user takes long to answer keeps the client alive with progress (a 4 s request timeout, answered once the host reports more than 4 s waited)',
    { timeout: 30_000 },
    async () => {
      const id = await open('user');
      const agent = await mcpAgent(h, 'approval-progress');
      try {
        win.answer = 'none';
        const progress: number[] = [];
        const call = agent.callTool({ name: 'send', arguments: { session: id, text: 'echo slow-answer', timeout: 20_000 } }, undefined, {
          timeout: 4000,
          resetTimeoutOnProgress: true,
          onprogress: (p) => progress.push(p.progress),
        });
        const asked = await until(() => win.requests(id)[0], 5000, 'the question');
        // The user answers once the host's progress says the call has waited longer than the
        // client's 4 s request timeout (progress counts the seconds waited): whatever this
        // machine's speed, the call outlived its timeout only because progress reset it.
        await until(() => (progress.at(-1) ?? 0) > 4, 20_000, "the host to report more than the client's 4 s request timeout waited");
        assert.ok(progress.length >= 2, `the client was kept alive by progress (${progress.length} notifications)`);
        await win.client.request('host/approve', { id: asked.id, decision: 'once' });
        const r = (await call) as any;
        assert.ok(!r.isError, JSON.stringify(r.content));
        assert.match(r.structuredContent.output, /slow-answer/);
      } finally {
        await agent.close();
      }
      await rpc('pty/kill', { session: id });
    },
  );

  test('with no window to ask, ask acts as allow', { timeout: 30_000 }, async () => {
    win.client.close();
    await until(() => win.client.closed, 2000, 'the window to close');
    const id = await open('user');
    // The host has seen the window go: it says there is nobody to ask.
    await until(async () => (await rpc('host/agentPolicy', {})).canAsk === false, 5000, 'the host to see the window close');
    assert.match((await agentRpc('pty/send', { session: id, text: 'echo unasked-ran' })).output, /unasked-ran/);
    assert.equal(await lastApproval(id), 'policy_allow', 'the policy decided, and pty/info says so');
    await rpc('pty/kill', { session: id });
    // A session the agent opened itself is not the user's to decide about: no decision.
    const own = await open('agent');
    assert.match((await agentRpc('pty/send', { session: own, text: 'echo own-ran' })).output, /own-ran/);
    assert.equal(await lastApproval(own), undefined);
    await rpc('pty/kill', { session: own });
  });
});
