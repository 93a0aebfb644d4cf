// Regex time that a hostile local client cannot exceed (issue 21 item 5): each test of a client's
// regex is capped, and so is the total, per connection, per scoped token and for the host's token
// over HTTP (its stateless /mcp requests and its WebSockets share one budget), so 40 costly
// `pty/wait`s from a view token no longer freeze the host for everyone; a user's own deny rule
// that backtracks refuses the line instead of hanging the host. A real host, bash, real sockets.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { RpcClient } from '../../../../src/transport/client/rpc-client';
import { BASH, connect, rejectsWith, until, clientsClosed } from '../../../helpers/host';
import { startHttpHost, wsOpen, type HttpHost, type WsClient } from '../../../helpers/http';
import { agentCalls } from '../../../helpers/agent-calls';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ensureNoDisposablesAreLeakedBySuite } from '../../../helpers/leak-tracker';

/** A pattern that backtracks for ever on a line of a's that ends in b. */
const CATASTROPHIC = '^(a+)+$';
/** Enough a's that one test runs into the per-test cap (2^40 steps). */
const A_LINE = 'a'.repeat(40) + 'b';

let nextId = 1;
function call(c: WsClient, method: string, params: Record<string, unknown>): Promise<{ result?: any; error?: { code: number; message: string; data?: any } }> {
  const id = nextId++;
  c.send({ jsonrpc: '2.0', id, method, params });
  return c.next((m) => m && m.id === id, `${method} answer`, 60_000);
}

// Once the shared host is closed, nothing the suite made is left (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedBySuite(clientsClosed);

describe('regex time per connection and per token', () => {
  let h: HttpHost;
  let ctl: RpcClient;
  let id: string;
  const sockets: WsClient[] = [];
  before(async () => {
    h = await startHttpHost();
    ctl = await connect(h.host.controlAddress);
    id = (await ctl.call('session/create', { ...BASH, cols: 80, rows: 24 })).id;
    await ctl.call('pty/write', { session: id, action: { text: `echo ${A_LINE}\r` } });
    await until(async () => (await ctl.call('pty/read', { session: id })).screen.includes(`${A_LINE}\n$`), 10_000, "the line of a's");
  });
  after(async () => {
    for (const s of sockets) await s.close();
    ctl?.close();
    await h?.close();
  });

  test('40 costly pty/waits over one /rpc connection of a view token: the budget runs out, later calls are refused at once', { timeout: 120_000 }, async () => {
    const { token } = (await ctl.call('session/share', { session: id, scope: 'view', reusable: true })) as { token: string };
    const rpc = await wsOpen(h.port, '/rpc', { token });
    sockets.push(rpc);
    const answers = await Promise.all(Array.from({ length: 40 }, () => call(rpc, 'pty/wait', { session: id, regex: CATASTROPHIC, timeout: 60_000 })));
    const costly = answers.filter((a) => a.error?.code === -32602);
    const spent = answers.filter((a) => a.error?.code === -32000 && a.error.data?.limit === 'regexTime' && a.error.data?.reason === 'limit_reached');
    assert.equal(
      costly.length + spent.length,
      40,
      JSON.stringify(answers.find((a) => !a.error || (a.error.code !== -32602 && a.error.data?.limit !== 'regexTime'))),
    );
    assert.ok(spent.length > 0, 'the connection ran out of regex time');
    assert.match(spent[0]!.error!.message, /Regex time spent/);
    assert.equal(typeof spent[0]!.error!.data.max, 'number', 'the limit names its capacity (ms)');

    // The budget is the token's too: a new connection with it does not start afresh.
    const again = await wsOpen(h.port, '/rpc', { token });
    sockets.push(again);
    const refused = await call(again, 'pty/wait', { session: id, regex: CATASTROPHIC, timeout: 60_000 });
    assert.equal(refused.error?.data?.limit, 'regexTime', JSON.stringify(refused));

    // Everyone else is served as before: another client's regex is its own.
    const bystander = await ctl.call('pty/wait', { session: id, regex: '^a+b$', timeout: 10_000 });
    assert.equal(bystander.reason, 'matched');
  });

  /** Costly `wait_for` calls over `/mcp` with `token`, one request each, until the answer says the regex time is spent (20 at most). */
  async function spendOverMcp(token: string): Promise<string> {
    const agent = new Client({ name: 'regex-budget-test', version: '0' });
    await agent.connect(new StreamableHTTPClientTransport(new URL(`${h.http.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
    try {
      let text = '';
      // Each costly call takes the per-test cap from the budget; within a few it is spent.
      for (let i = 0; i < 20 && !/Regex time spent/.test(text); i++) {
        const r = (await agent.callTool({ name: 'wait_for', arguments: { session: id, regex: CATASTROPHIC, timeout: 60_000 } })) as {
          isError?: boolean;
          content: Array<{ text?: string }>;
        };
        assert.equal(r.isError, true);
        text = r.content.map((c) => c.text ?? '').join('');
      }
      return text;
    } finally {
      await agent.close();
    }
  }

  test("MCP calls with a scoped token share the token's budget: wait_for says the time is spent", { timeout: 120_000 }, async () => {
    const { token } = (await ctl.call('session/share', { session: id, scope: 'view', reusable: true })) as { token: string };
    assert.match(await spendOverMcp(token), /Regex time spent/);
  });

  test(
    "MCP calls with the host's token share one budget too: each stateless request does not start afresh, nor a WebSocket with it",
    { timeout: 120_000 },
    async () => {
      assert.match(await spendOverMcp(h.token), /Regex time spent/);
      // The host token's connections (/rpc, the stream) count there too: a new one does not start afresh.
      const rpc = await wsOpen(h.port, '/rpc', { token: h.token });
      sockets.push(rpc);
      const refused = await call(rpc, 'pty/wait', { session: id, regex: CATASTROPHIC, timeout: 60_000 });
      assert.equal(refused.error?.data?.limit, 'regexTime', JSON.stringify(refused));
      // Everyone else is served as before: the control socket's regex time is its own.
      const bystander = await ctl.call('pty/wait', { session: id, regex: '^a+b$', timeout: 10_000 });
      assert.equal(bystander.reason, 'matched');
    },
  );
});

describe("the host's sockets share one regex budget beside each connection's", () => {
  let h: HttpHost;
  const clients: RpcClient[] = [];
  after(async () => {
    for (const c of clients) c.close();
    await h?.close();
  });

  test(
    'costly pty/waits from 30 socket connections run out together (more connections buy no more time); HTTP clients are served meanwhile',
    { timeout: 120_000 },
    async () => {
      h = await startHttpHost();
      const ctl = await connect(h.host.controlAddress);
      clients.push(ctl);
      const id = (await ctl.call('session/create', { ...BASH, cols: 80, rows: 24 })).id;
      await ctl.call('pty/write', { session: id, action: { text: `echo ${A_LINE}\r` } });
      await until(async () => (await ctl.call('pty/read', { session: id })).screen.includes(`${A_LINE}\n$`), 10_000, "the line of a's");
      for (let i = 0; i < 30; i++) clients.push(await connect(h.host.controlAddress));
      const answers = await Promise.all(
        clients.slice(1).flatMap((c) =>
          [1, 2].map(() =>
            c.call('pty/wait', { session: id, regex: CATASTROPHIC, timeout: 60_000 }).then(
              () => ({ code: 0, limit: undefined }),
              (e: { code?: number; data?: { limit?: string } }) => ({ code: e.code, limit: e.data?.limit }),
            ),
          ),
        ),
      );
      // Each connection alone could run two tests at the per-test cap (60 in all); together they
      // share a second, and what it regains meanwhile.
      const costly = answers.filter((a) => a.code === -32602).length;
      const spent = answers.filter((a) => a.limit === 'regexTime').length;
      assert.equal(costly + spent, answers.length, JSON.stringify(answers.find((a) => a.code !== -32602 && a.limit !== 'regexTime')));
      assert.ok(costly <= 12, `${costly} tests ran to the per-test cap; ${spent} were refused`);
      // A client over HTTP has its own token's budget: served as before.
      const health = await fetch(`${h.http.url}/health`, { headers: { authorization: `Bearer ${h.token}` } });
      assert.equal(health.status, 200);
    },
  );
});

describe('a deny rule that backtracks', () => {
  let h: HttpHost;
  let ctl: RpcClient;
  let agentCtl: RpcClient;
  before(async () => {
    h = await startHttpHost([], { agentApproval: 'allow', agentDenyCommands: [CATASTROPHIC] });
    ctl = await connect(h.host.controlAddress);
    agentCtl = await connect(h.host.controlAddress);
  });
  after(async () => {
    agentCtl?.close();
    ctl?.close();
    await h?.close();
  });

  test('refuses the line it cannot judge in time, and the host goes on serving', { timeout: 120_000 }, async () => {
    const calls = agentCalls(ctl, agentCtl);
    const id = await calls.open('agent');
    // 30 a's and a b: about 40 s of backtracking for that one rule.
    const err = await rejectsWith(calls.agentRpc('pty/send', { session: id, text: 'a'.repeat(30) + 'b', timeout: 5000 }), -32000);
    assert.equal((err.data as { reason: string }).reason, 'declined');
    assert.match(err.message, /deny rules took more than \d+ ms/);
    assert.match(err.message, /nothing was written/);
    assert.doesNotMatch((await ctl.call('pty/read', { session: id })).screen, /aaaab/);
    const ok = await calls.agentRpc('pty/send', { session: id, text: 'echo fine' });
    assert.match(ok.output, /fine/);
    await ctl.call('pty/kill', { session: id });
  });
});
