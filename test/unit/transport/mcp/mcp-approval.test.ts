// Approvals wherever the agent runs (docs/protocol.md#agent-write-approval): with agent approval
// `ask` and no editor window watching the host, an agent's write into a session the user opened is
// put to the person by the agent's own MCP client (form elicitation: Allow once / Allow for this
// session / Deny); a client without elicitation gets today's headless policy. The official SDK
// client over `shared-pty mcp` (stdio), a real host, real bash.
import { strict as assert } from 'node:assert';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { answerElicitations, type Elicitations } from '../../../helpers/elicitations';
import { BASH, connect, startHost, until, withTimeout, clientsClosed } from '../../../helpers/host';
import { bashEnv, buildCli, CLI, REPO_ROOT } from '../../../helpers/protocol';
import { AGENT } from '../../../helpers/agent-calls';
import type { Host } from '../../../../src/host/host';
import type { Notification, RpcClient } from '../../../../src/transport/client/rpc-client';
import { ensureNoDisposablesAreLeakedBySuite } from '../../../helpers/leak-tracker';

type ToolResult = { content: Array<{ type: string; text?: string }>; isError?: boolean };
const textOf = (r: ToolResult) => r.content.map((c) => c.text ?? '').join('');
const TEST_TIMEOUT = 60_000;

/** An agent over `shared-pty mcp` whose client answers each question as `answer` says, and keeps them. */
async function agentClient(dir: string, elicitation: boolean, apps = false): Promise<{ client: Client; questions: any[]; answer: Elicitations['answer'] }> {
  const capabilities = {
    ...(elicitation ? { elicitation: { form: {} } } : {}),
    ...(apps ? { extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] } } } : {}),
  };
  const client = new Client({ name: 'approval-test', version: '0' }, { capabilities });
  const { questions, answer }: Elicitations = elicitation ? answerElicitations(client) : { questions: [], answer: { next: { action: 'cancel' } } };
  const env = bashEnv({ SHARED_PTY_DIR: dir }) as Record<string, string>;
  await withTimeout(
    client.connect(new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp'], env, cwd: REPO_ROOT, stderr: 'pipe' })),
    30_000,
    'MCP stdio connect',
  );
  return { client, questions, answer };
}

// Once the shared host is closed, nothing the suite made is left (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedBySuite(clientsClosed);

describe("approvals through the agent's own client (agent approval ask, no editor window)", () => {
  let h: { host: Host; dir: string; close(): Promise<void> };
  let ctl: RpcClient;
  let asking: Awaited<ReturnType<typeof agentClient>>;
  let plain: Awaited<ReturnType<typeof agentClient>>;

  const rpc = (method: string, params: Record<string, unknown>) => ctl.request<any>(method, params);
  async function userSession(): Promise<string> {
    const info = await rpc('session/create', { ...BASH, cols: 80, rows: 24, origin: 'user' });
    await until(async () => (await rpc('pty/read', { session: info.id })).screen.includes('$'), 10_000, 'a prompt');
    return info.id;
  }
  const send = (a: typeof asking, session: string, text: string) =>
    a.client.callTool({ name: 'send', arguments: { session, text, timeout: 20_000 } }) as Promise<ToolResult>;
  const screen = async (session: string) => (await rpc('pty/read', { session })).screen as string;

  before(async () => {
    buildCli();
    h = await startHost({ agentApproval: 'ask' });
    ctl = await connect(h.host.controlAddress);
    asking = await agentClient(h.dir, true);
    plain = await agentClient(h.dir, false);
  });

  after(async () => {
    await asking?.client.close().catch(() => {});
    await plain?.client.close().catch(() => {});
    ctl?.close();
    await h?.close();
  });

  test('Allow once: the write goes through, and the next one is asked again', { timeout: TEST_TIMEOUT }, async () => {
    const session = await userSession();
    asking.questions.length = 0;
    asking.answer.next = { action: 'accept', content: { answer: 'once' } };
    const r = await send(asking, session, 'echo once-$((1+1))');
    assert.notEqual(r.isError, true, textOf(r));
    assert.match(await screen(session), /^once-2$/m);
    assert.equal(asking.questions.length, 1);
    const q = asking.questions[0];
    assert.equal(q.mode ?? 'form', 'form');
    assert.match(q.message, /echo once-\$\(\(1\+1\)\)/, 'the person sees what the agent wants to type');
    assert.deepEqual(
      q.requestedSchema.properties.answer.oneOf.map((o: any) => o.title),
      ['Allow once', 'Allow for this session', 'Deny'],
    );
    assert.equal((await rpc('pty/info', { session })).lastInput.approval, 'allowed_once');
    await send(asking, session, 'true');
    assert.equal(asking.questions.length, 2, 'asked again');
  });

  test('Allow for this session: the write goes through and later ones are not asked', { timeout: TEST_TIMEOUT }, async () => {
    const session = await userSession();
    asking.questions.length = 0;
    asking.answer.next = { action: 'accept', content: { answer: 'session' } };
    assert.notEqual((await send(asking, session, 'echo first')).isError, true);
    asking.answer.next = { action: 'accept', content: { answer: 'deny' } }; // would refuse, were it asked
    const second = await send(asking, session, 'echo second-$((2+2))');
    assert.notEqual(second.isError, true, textOf(second));
    assert.match(await screen(session), /^second-4$/m);
    assert.equal(asking.questions.length, 1, 'asked once for the session');
    assert.equal((await rpc('pty/info', { session })).lastInput.approval, 'allowed_for_session');
  });

  test('Deny, a declined or a dismissed question: refused, nothing written', { timeout: TEST_TIMEOUT }, async () => {
    const session = await userSession();
    for (const next of [{ action: 'accept', content: { answer: 'deny' } }, { action: 'decline' }, { action: 'cancel' }] as ElicitResult[]) {
      asking.answer.next = next;
      const r = await send(asking, session, 'echo never-written');
      assert.equal(r.isError, true, JSON.stringify(next));
      assert.match(textOf(r), /The user declined/);
    }
    assert.ok(!(await screen(session)).includes('never-written'));
    // Nobody answers: the agent is pointed at the question its own client showed, there being no editor.
    asking.answer.next = 'never';
    const r = (await asking.client.callTool({ name: 'send', arguments: { session, text: 'echo never-answered', timeout: 1500 } })) as ToolResult;
    asking.answer.next = { action: 'cancel' };
    assert.equal(r.isError, true);
    assert.match(textOf(r), /within the call's timeout; nothing was written\. Ask the user to answer the question your MCP client showed them/);
    assert.doesNotMatch(textOf(r), /editor/);
    assert.ok(!(await screen(session)).includes('never-answered'));
  });

  test('a client without elicitation gets the headless policy, as before (ask acts as allow)', { timeout: TEST_TIMEOUT }, async () => {
    const session = await userSession();
    const r = await send(plain, session, 'echo headless-$((3+3))');
    assert.notEqual(r.isError, true, textOf(r));
    assert.match(await screen(session), /^headless-6$/m);
    // The policy decided, and says so as every decision is said.
    assert.equal((await rpc('pty/info', { session })).lastInput.approval, 'policy_allow');
  });

  test(
    "app_input is the person's only from a client that declared MCP Apps; from any other it is that client's own write (its model may see the tool)",
    { timeout: TEST_TIMEOUT },
    async () => {
      const session = await userSession();
      // The view sends the key its page was served with; a call without it writes nothing.
      const keyless = (await plain.client.callTool({ name: 'app_input', arguments: { session, data: 'echo keyless\r' } })) as ToolResult;
      assert.equal(keyless.isError, true);
      assert.match(textOf(keyless), /does not carry the key of a terminal view/);
      const page = (await plain.client.readResource({ uri: 'ui://shared-pty/terminal' })).contents[0] as { text?: string };
      const appKey = /<meta name="shared-pty-app-key" content="([^"]+)">/.exec(page.text ?? '')?.[1];
      assert.ok(appKey, "the view's page carries its key");
      // A client that declared no MCP Apps: the keys are its own (ask acts as allow for it: no elicitation).
      const own = (await plain.client.callTool({ name: 'app_input', arguments: { session, data: 'echo not-the-person\r', appKey } })) as ToolResult;
      assert.notEqual(own.isError, true, textOf(own));
      assert.match(textOf(own), /own write \(it has not declared MCP Apps\)/);
      await until(async () => /^not-the-person$/m.test(await screen(session)), 10_000, "the client's line ran");
      const agent = (await rpc('pty/info', { session })).lastInput;
      assert.deepEqual([agent.origin, agent.transport], ['agent', 'mcp-stdio'], 'credited to the agent, never to the user');
      const apps = await agentClient(h.dir, false, true);
      try {
        // Each serving process has a key of its own: this client's view has its server's page.
        const its = (await apps.client.readResource({ uri: 'ui://shared-pty/terminal' })).contents[0] as { text?: string };
        const itsKey = /<meta name="shared-pty-app-key" content="([^"]+)">/.exec(its.text ?? '')?.[1];
        const typed = (await apps.client.callTool({ name: 'app_input', arguments: { session, data: 'echo the-person\r', appKey: itsKey } })) as ToolResult;
        assert.notEqual(typed.isError, true, textOf(typed));
        await until(async () => /^the-person$/m.test(await screen(session)), 10_000, "the person's line ran");
        const last = (await rpc('pty/info', { session })).lastInput;
        assert.deepEqual([last.origin, last.transport], ['user', 'mcp-app']);
      } finally {
        await apps.client.close();
      }
    },
  );

  test('an agent answers only the questions its own client was asked', { timeout: TEST_TIMEOUT }, async () => {
    const session = await userSession();
    // Two relays as `shared-pty mcp` speaks to the host: A's client can ask, so it is asked.
    const a = await connect(h.host.controlAddress);
    const b = await connect(h.host.controlAddress);
    const notes: Notification[] = [];
    a.onNotification((n) => notes.push(n));
    const declared = { ...AGENT, asks: true };
    const write = a.request<any>('pty/send', { session, text: 'echo by-a', timeout: 20_000, client: declared });
    const question = await until(() => notes.find((n) => n.method === 'agent/approval'), 10_000, 'the question to A');
    await assert.rejects(b.request('host/approve', { id: question.params.id, decision: 'session', client: declared }), /answers only the questions it put/);
    await assert.rejects(b.request('host/approve', { id: question.params.id, decision: 'session', client: AGENT }), /an agent cannot answer/);
    assert.deepEqual(await a.request('host/approve', { id: question.params.id, decision: 'once', client: declared }), { decided: true });
    assert.equal((await write).waitReason !== undefined, true);
    await until(() => notes.some((n) => n.method === 'agent/approvalEnded' && n.params.id === question.params.id), 10_000, 'the question ended');
    a.close();
    b.close();
  });
});
