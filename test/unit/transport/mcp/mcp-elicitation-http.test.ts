// Elicitation over `/mcp` on the 2025-11-25 revision (docs/protocol.md#6-mcp): a client that
// declared elicitation gets a session of its own (Mcp-Session-Id), so the server can ask it in the
// middle of a call: the approval of an agent's write (agent approval `ask`, no editor window) as
// a form, and the one-time secret page as a URL. A client without elicitation is served as before,
// with no session. The official SDK client over Streamable HTTP, a real host, real bash.
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { answerElicitations, type Elicitations } from '../../../helpers/elicitations';
import { BASH, connect, until, withTimeout, clientsClosed } from '../../../helpers/host';
import { request, startHttpHost, type HttpHost } from '../../../helpers/http';
import { promptedShell } from '../../../helpers/shell-home';
import type { RpcClient } from '../../../../src/transport/client/rpc-client';
import { ensureNoDisposablesAreLeakedBySuite } from '../../../helpers/leak-tracker';

type ToolResult = { content: Array<{ type: string; text?: string }>; isError?: boolean; structuredContent?: any };
const textOf = (r: ToolResult) => r.content.map((c) => c.text ?? '').join('');
const TEST_TIMEOUT = 60_000;

/** An agent over `/mcp` with the host's token, whose client answers each question as `answer` says, and keeps them. */
async function httpAgent(h: HttpHost, elicitation: boolean, clients: Client[]) {
  const client = new Client({ name: 'elicit-http-test', version: '0' }, { capabilities: elicitation ? { elicitation: { form: {}, url: {} } } : {} });
  clients.push(client);
  const { questions, answer }: Elicitations = elicitation ? answerElicitations(client) : { questions: [], answer: { next: { action: 'cancel' } } };
  const transport = new StreamableHTTPClientTransport(new URL(`${h.http.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${h.token}` } } });
  await withTimeout(client.connect(transport), 20_000, 'MCP connect');
  return { client, transport, questions, answer };
}

// Once the shared host is closed, nothing the suite made is left (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedBySuite(clientsClosed);

describe('elicitation over /mcp (2025-11-25): a session for a client that declared it', () => {
  let h: HttpHost;
  let ctl: RpcClient;
  const clients: Client[] = [];
  const rpc = (method: string, params: Record<string, unknown>) => ctl.request<any>(method, params);
  const screen = async (session: string) => (await rpc('pty/read', { session })).screen as string;
  async function userSession(): Promise<string> {
    const info = await rpc('session/create', { ...BASH, cols: 80, rows: 24, origin: 'user' });
    await until(async () => (await screen(info.id)).includes('$'), 10_000, 'a prompt');
    return info.id;
  }
  const send = (client: Client, session: string, text: string) =>
    client.callTool({ name: 'send', arguments: { session, text, timeout: 20_000 } }) as Promise<ToolResult>;

  before(async () => {
    h = await startHttpHost([], { agentApproval: 'ask' });
    ctl = await connect(h.host.controlAddress);
  });
  after(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    ctl?.close();
    await h?.close();
  });

  test(
    "an agent's write into the user's session is put to the person through the agent's client: Allow once writes, Deny refuses",
    { timeout: TEST_TIMEOUT },
    async () => {
      const asking = await httpAgent(h, true, clients);
      assert.ok(asking.transport.sessionId, 'the client was given a session');
      const session = await userSession();
      asking.answer.next = { action: 'accept', content: { answer: 'once' } };
      const r = await send(asking.client, session, 'echo http-once-$((1+1))');
      assert.notEqual(r.isError, true, textOf(r));
      assert.match(await screen(session), /^http-once-2$/m);
      assert.equal(asking.questions.length, 1);
      assert.match(asking.questions[0].message, /echo http-once/, 'the person sees what the agent wants to type');
      assert.deepEqual(
        asking.questions[0].requestedSchema.properties.answer.oneOf.map((o: any) => o.title),
        ['Allow once', 'Allow for this session', 'Deny'],
      );
      assert.equal((await rpc('pty/info', { session })).lastInput.approval, 'allowed_once');
      asking.answer.next = { action: 'accept', content: { answer: 'deny' } };
      const denied = await send(asking.client, session, 'echo never-written');
      assert.equal(denied.isError, true);
      assert.match(textOf(denied), /The user declined/);
      assert.ok(!(await screen(session)).includes('never-written'));
    },
  );

  test('at a password prompt the refusal offers the one-time secret page as a URL elicitation', { timeout: TEST_TIMEOUT }, async () => {
    const asking = await httpAgent(h, true, clients);
    const session = await userSession();
    asking.answer.next = { action: 'accept', content: { answer: 'session' } };
    await send(asking.client, session, 'true');
    await rpc('pty/write', { session, action: { text: "read -s -p 'Password: ' pw\r" } });
    await until(async () => (await rpc('pty/info', { session })).secretInput === true, 10_000, 'secret input');
    asking.questions.length = 0;
    asking.answer.next = { action: 'decline' };
    const r = await send(asking.client, session, 'hunter2');
    assert.equal(r.isError, true);
    const url = asking.questions.find((q) => q.mode === 'url');
    assert.ok(url, `a URL elicitation: ${JSON.stringify(asking.questions)}`);
    assert.match(url.url, new RegExp(`^${h.http.url}/secret/[\\w-]+$`));
    // Whoever holds the link types one secret and its Enter, never a line after it: a secret with
    // Enter and a command in it is refused, nothing typed, and the page still works.
    const post = (secret: string) =>
      request(h.port, 'POST', new URL(url.url).pathname, {
        origin: h.http.url,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: `secret=${encodeURIComponent(secret)}`,
      });
    const injected = await post('guess\recho injected-$((2*3))');
    assert.equal(injected.status, 400, injected.text);
    await new Promise((r) => setTimeout(r, 300));
    assert.doesNotMatch(await screen(session), /injected-6/);
    assert.equal((await rpc('pty/info', { session })).secretInput, true, 'still asking');
    const typed = await post('hunter2');
    assert.equal(typed.status, 200, typed.text);
    await until(async () => (await rpc('pty/info', { session })).secretInput === false, 10_000, 'the prompt answered');
    await rpc('pty/write', { session, action: { text: 'echo "len=${#pw}"\r' } });
    await until(async () => /^len=7$/m.test(await screen(session)), 10_000, 'the secret typed, one line');
    assert.doesNotMatch(await screen(session), /injected-6/);
  });

  test(
    "an agent's send that meets a password prompt offers the secret page at once; once the person typed there, it goes on to the command's end",
    { timeout: TEST_TIMEOUT },
    async () => {
      const asking = await httpAgent(h, true, clients);
      const { home, ...how } = promptedShell('bash');
      try {
        const info = await rpc('session/create', { ...how, cols: 80, rows: 24, origin: 'user' });
        await until(async () => (await screen(info.id)).includes('my>'), 10_000, 'a prompt');
        asking.answer.next = { action: 'accept', content: { answer: 'session' } };
        await send(asking.client, info.id, 'true');
        asking.questions.length = 0;
        asking.answer.next = { action: 'accept' };
        // The person: opens the page the client was asked to open, and types the secret there.
        const person = (async () => {
          const url = await until(() => asking.questions.find((q) => q.mode === 'url'), 15_000, 'a URL elicitation during the send');
          const typed = await request(h.port, 'POST', new URL(url.url).pathname, {
            origin: h.http.url,
            headers: { 'content-type': 'application/x-www-form-urlencoded' },
            body: 'secret=hunter2',
          });
          assert.equal(typed.status, 200, typed.text);
        })();
        const r = await send(asking.client, info.id, `read -s -p 'Password: ' pw; echo; echo "got=\${#pw}"; seq 1 3`);
        await person;
        assert.notEqual(r.isError, true, textOf(r));
        const data = r.structuredContent;
        assert.equal(data.waitReason, 'command_done', textOf(r));
        assert.equal(data.exitCode, 0);
        assert.match(data.output, /^got=7\n1\n2\n3$/m);
        assert.doesNotMatch(JSON.stringify(r), /hunter2/, 'the secret is in no result');
        // The counts and cursors are the command's own output's, as send gives them.
        const log = await rpc('pty/commandOutput', { session: info.id, id: data.command.id, strip: true });
        assert.equal(data.totalChars, log.data.length);
        assert.equal(data.elidedChars, 0);
        assert.deepEqual([data.since, data.cursor], [data.command.startCursor, data.command.endCursor]);
      } finally {
        fs.rmSync(home, { recursive: true, force: true });
      }
    },
  );

  test(
    'a client without elicitation gets no session and the headless policy (ask acts as allow); an unknown session id is 404; DELETE ends one',
    { timeout: TEST_TIMEOUT },
    async () => {
      const plain = await httpAgent(h, false, clients);
      assert.equal(plain.transport.sessionId, undefined, 'served on its own, as before');
      const session = await userSession();
      const r = await send(plain.client, session, 'echo plain-$((3+3))');
      assert.notEqual(r.isError, true, textOf(r));
      assert.match(await screen(session), /^plain-6$/m);

      const mcp = (headers: Record<string, string>, method = 'POST') =>
        request(h.port, method, '/mcp', {
          token: h.token,
          headers: { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25', ...headers },
          body: method === 'POST' ? { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} } : undefined,
        });
      assert.equal((await mcp({ 'mcp-session-id': 'no-such-session' })).status, 404);
      const asking = await httpAgent(h, true, clients);
      const id = asking.transport.sessionId!;
      assert.equal((await mcp({ 'mcp-session-id': id })).status, 200, 'its requests are served in its session');
      assert.equal((await mcp({ 'mcp-session-id': id }, 'DELETE')).status, 200);
      assert.equal((await mcp({ 'mcp-session-id': id })).status, 404, 'ended');
    },
  );
});
