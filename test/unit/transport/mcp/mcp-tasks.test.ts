// MCP Tasks whose status is the program's, and the 2026-07-28 input_required rounds
// (docs/protocol.md#tasks-and-input-rounds), each spoken by the official clients: the SDK's v2 client
// pinned to 2026-07-28, and the Tasks extension's requester (@modelcontextprotocol/ext-tasks) driving
// tasks/get, tasks/update and tasks/cancel; over `/mcp` and over stdio (`shared-pty mcp`), against a
// real host and a real bash with its integration.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import type { ApplicationInputRequest, TaskEnabledSession, TaskView } from '@modelcontextprotocol/ext-tasks/client';
import { BASH, connect as connectRpc, until, withTimeout, clientsClosed } from '../../../helpers/host';
import { request, startHttpHost, type HttpHost } from '../../../helpers/http';
import { bashEnv, buildCli, CLI, REPO_ROOT } from '../../../helpers/protocol';
import { promptedShell } from '../../../helpers/shell-home';
import type { RpcClient } from '../../../../src/transport/client/rpc-client';
import { ensureNoDisposablesAreLeakedBySuite } from '../../../helpers/leak-tracker';
import { rawAnswer, stdioRawDispatch } from '../../../helpers/tasks-client';

const TEST_TIMEOUT = 90_000;
const REVISION = '2026-07-28';
type Via = 'http' | 'stdio';
type ToolResult = { content?: Array<{ type: string; text?: string }>; structuredContent?: any; isError?: boolean };
const textOf = (r: ToolResult) => (r.content ?? []).map((c) => c.text ?? '').join('');
/** What the clients declare: they can show forms and open URLs (the tasks client also speaks the Tasks extension). */
const ELICITATION = { elicitation: { form: {}, url: {} } };
const WITH_TASKS = { ...ELICITATION, extensions: { 'io.modelcontextprotocol/tasks': {} } };

/** What a test's client is asked through elicitation, and how it answers. */
interface Person {
  asked: any[];
  answer: (params: any) => Promise<{ action: 'accept' | 'decline' | 'cancel'; content?: Record<string, string> }>;
}

/** A connected v2 client pinned to 2026-07-28, its Tasks requester (when it speaks Tasks), and the person behind it. */
interface Agent {
  client: Client;
  tasks: TaskEnabledSession;
  person: Person;
  close(): Promise<void>;
}

let h: HttpHost;
let ctl: RpcClient;
const homes: string[] = [];
/** The Tasks extension's requester: an ES module only, so loaded as one. */
let extTasks: typeof import('@modelcontextprotocol/ext-tasks/client');

before(async () => {
  buildCli();
  extTasks = await import('@modelcontextprotocol/ext-tasks/client');
  h = await startHttpHost([], { agentApproval: 'ask' });
  ctl = await connectRpc(h.host.controlAddress);
});

after(async () => {
  ctl?.close();
  await h?.close();
  for (const home of homes) fs.rmSync(home, { recursive: true, force: true });
});
// Once the shared host is closed, nothing the suite made is left (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedBySuite(clientsClosed);

/**
 * The raw request path the Tasks requester needs beside the SDK client (the SDK refuses task
 * methods toward a 2026-07-28 server): over HTTP a POST to /mcp with the routing headers the
 * specification asks for; over stdio the client's own transport, its answers picked out by id.
 */
function rawDispatchOf(via: Via, transport: any, token = h.token): (req: any) => Promise<any> {
  if (via === 'http') {
    let n = 0;
    return async (req) => {
      const id = `raw-${++n}`;
      const name = req.params?.taskId ?? req.params?.name;
      const res = await fetch(`${h.http.url}/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': REVISION,
          'mcp-method': req.method,
          ...(name !== undefined ? { 'mcp-name': String(name) } : {}),
        },
        body: JSON.stringify({ jsonrpc: '2.0', ...req, id }),
      });
      const text = await res.text();
      if (process.env.DBG) console.error('RAW', JSON.stringify(req).slice(0, 600), '=>', text.slice(0, 600));
      // An event stream (progress before the answer): the answer is its message with the id.
      const bodies = res.headers.get('content-type')?.includes('text/event-stream')
        ? text
            .split('\n')
            .filter((l) => l.startsWith('data:'))
            .map((l) => JSON.parse(l.slice(5)))
        : [JSON.parse(text)];
      // The requester hands a request without id; its answer goes back as { kind, result | error }.
      return rawAnswer(bodies.find((b) => b.id === id));
    };
  }
  return stdioRawDispatch(transport);
}

async function agent(via: Via, name: string, speaksTasks: boolean): Promise<Agent> {
  const capabilities = speaksTasks ? WITH_TASKS : ELICITATION;
  const person: Person = { asked: [], answer: async () => ({ action: 'cancel' }) };
  const info = { name, version: '0.0.0' };
  const client = new Client(info, { capabilities, versionNegotiation: { mode: { pin: REVISION } } });
  // The 2026-07-28 rounds of a plain tools/call are answered here (the SDK retries with the answers).
  client.setRequestHandler('elicitation/create', async (req: any) => {
    person.asked.push(req.params);
    return person.answer(req.params);
  });
  const transport =
    via === 'http'
      ? new StreamableHTTPClientTransport(new URL(`${h.http.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${h.token}` } } })
      : new StdioClientTransport({
          command: process.execPath,
          args: [CLI, 'mcp'],
          env: bashEnv({ SHARED_PTY_DIR: h.dir }) as Record<string, string>,
          cwd: REPO_ROOT,
          stderr: 'pipe',
        });
  await withTimeout(client.connect(transport), 30_000, `${via}: connect`);
  assert.equal(client.getNegotiatedProtocolVersion(), REVISION);
  if (!speaksTasks) return { client, tasks: undefined as never, person, close: () => client.close().catch(() => {}) };
  const tasks = extTasks.createTaskSessionFromClient(client as never, {
    endpointId: `${name}-${via}`,
    rawDispatch: rawDispatchOf(via, transport) as never,
    v2RequestFraming: { protocolVersion: REVISION, clientInfo: info, clientCapabilities: WITH_TASKS },
    onInputRequest: async (req: ApplicationInputRequest) => {
      person.asked.push(req.params);
      return (await person.answer(req.params)) as never;
    },
  });
  return {
    client,
    tasks,
    person,
    close: async () => {
      await tasks.close().catch(() => {});
      await client.close().catch(() => {});
    },
  };
}

/**
 * A session of the test host with bash and its integration, at its prompt: one a script opened
 * (the agent's writes go through), or one the user opened (they are asked about under the policy
 * ask). Opened from here, so the stdio relay reaches it on this host too.
 */
async function shell(origin?: 'user'): Promise<string> {
  const { home, ...how } = promptedShell('bash');
  homes.push(home);
  const info = await ctl.request<any>('session/create', { ...how, cols: 80, rows: 24, ...(origin ? { origin } : {}) });
  await until(async () => (await ctl.request<{ screen: string }>('pty/read', { session: info.id })).screen.includes('my>'), 20_000, 'a bash prompt');
  return info.id;
}

/** Runs a tool as a task to its end; the statuses it went through, in order, and its outcome. */
async function asTask(a: Agent, name: string, args: Record<string, unknown>): Promise<{ kind: string; statuses: string[]; outcome: any; views: TaskView[] }> {
  const execution = await a.tasks.callTool(name, args as never, { task: { preference: 'require' } });
  const views: TaskView[] = [];
  const { outcome } = await execution.settle({ onEvent: (e) => void (e.type === 'task' && views.push(e.task)) });
  // The last status comes with the outcome (its task view, when the requester kept one).
  const statuses = [...views.map((v) => v.status), outcome.status].filter((s, i, all) => s !== all[i - 1]);
  if (process.env.DBG) console.error('OUTCOME', JSON.stringify(outcome).slice(0, 1500));
  return { kind: execution.kind, statuses, outcome, views };
}

for (const via of ['http', 'stdio'] as const) {
  describe(`2026-07-28 over ${via}`, () => {
    let a: Agent;
    let plain: Agent;
    before(async () => {
      a = await agent(via, 'tasks-test', true);
      plain = await agent(via, 'rounds-test', false);
    });
    after(async () => {
      await a?.close();
      await plain?.close();
    });

    test(
      "a long send as a task: working, input_required at read's prompt, answered by tasks/update, completed with the exit code",
      { timeout: TEST_TIMEOUT },
      async () => {
        const session = await shell();
        a.person.asked.length = 0;
        // The person takes a while to answer: the task's waitedMs counts that too.
        const THINKS_MS = 1200;
        a.person.answer = async () => {
          await new Promise((r) => setTimeout(r, THINKS_MS));
          return { action: 'accept', content: { input: 'Ada' } };
        };
        const run = await asTask(a, 'send', { session, text: 'read -p "Name? " n; echo "hello-$n"; (exit 3)', timeout: 30_000 });
        assert.equal(run.kind, 'task', 'the send became a task');
        assert.deepEqual(
          [run.statuses[0], run.statuses.includes('input_required'), run.statuses.at(-1)],
          ['working', true, 'completed'],
          run.statuses.join(' → '),
        );
        assert.equal(a.person.asked.length, 1, 'asked once, for the line');
        assert.match(a.person.asked[0].message, /Name\?/, 'the question says what the program asks');
        assert.equal(run.outcome.status, 'completed');
        const result = run.outcome.result as ToolResult;
        assert.notEqual(result.isError, true, textOf(result));
        assert.equal(result.structuredContent.waitReason, 'command_done');
        assert.equal(result.structuredContent.exitCode, 3, "the command's exit code");
        assert.match(result.structuredContent.output, /^hello-Ada$/m, 'the answer was typed into the program');
        assert.equal(typeof result.structuredContent.command?.id, 'number', 'the command record');
        assert.ok(result.structuredContent.waitedMs >= THINKS_MS, `waitedMs ${result.structuredContent.waitedMs} counts the wait for the person`);
      },
    );

    test("a prompt that comes after the send's own timeout is asked too: the task waits on, then asks, then completes", { timeout: TEST_TIMEOUT }, async () => {
      const session = await shell();
      a.person.asked.length = 0;
      a.person.answer = async () => ({ action: 'accept', content: { input: 'Bo' } });
      const run = await asTask(a, 'send', { session, text: 'sleep 1.5; read -p "Later? " n; echo "late-$n"; (exit 6)', timeout: 300 });
      assert.equal(a.person.asked.length, 1, 'asked once, for the line');
      assert.match(a.person.asked[0].message, /Later\?/);
      assert.equal(run.outcome.status, 'completed', run.statuses.join(' → '));
      const result = run.outcome.result as ToolResult;
      assert.equal(result.structuredContent.exitCode, 6, textOf(result));
      assert.match(result.structuredContent.output, /^late-Bo$/m);
    });

    test(
      'after the secret page, a later prompt of the same command is asked too; the task completes with its exit code',
      { timeout: TEST_TIMEOUT },
      async () => {
        const session = await shell();
        a.person.asked.length = 0;
        a.person.answer = async (params) => {
          if (params.mode !== 'url') return { action: 'accept', content: { input: 'Cy' } };
          const typed = await request(h.http.port, 'POST', new URL(params.url).pathname, {
            origin: h.http.url,
            body: 'secret=pw42',
            headers: { 'content-type': 'application/x-www-form-urlencoded' },
          });
          assert.ok(typed.status < 400, typed.text);
          return { action: 'accept' };
        };
        const run = await asTask(a, 'send', {
          session,
          text: 'read -s -p "Password: " p; echo; echo "len-${#p}"; read -p "Name? " n; echo "hi-$n"; (exit 2)',
          timeout: 30_000,
        });
        assert.deepEqual(
          a.person.asked.map((q) => q.mode),
          ['url', 'form'],
          'the page, then the line',
        );
        assert.match(a.person.asked[1].message, /Name\?/);
        const result = run.outcome.result as ToolResult;
        assert.equal(result.structuredContent.exitCode, 2, textOf(result));
        assert.match(result.structuredContent.output, /len-4[\s\S]*hi-Cy/);
      },
    );

    test(
      'tasks/cancel: the task ends cancelled, the program is left running, and the session takes the next send at once',
      { timeout: TEST_TIMEOUT },
      async () => {
        const session = await shell();
        const execution = await a.tasks.callTool('send', { session, text: 'sleep 600', timeout: 60_000 } as never, { task: { preference: 'require' } });
        assert.equal(execution.kind, 'task');
        const id = execution.handle!.taskId;
        assert.equal((await a.tasks.task(id).snapshot()).status, 'working');
        // Cancelled once the command runs (a cancel before the text is typed types nothing).
        const commands = async () => textOf((await plain.client.callTool({ name: 'list_commands', arguments: { session } })) as ToolResult);
        await until(async () => /sleep 600/.test(await commands()), 20_000, 'the command to start');
        await execution.cancel();
        await until(async () => (await a.tasks.task(id).snapshot()).status === 'cancelled', 20_000, 'the task cancelled');
        assert.match(await commands(), /sleep 600/, 'the command still runs');
        assert.equal((await a.tasks.task(id).snapshot()).status, 'cancelled');
        // The host no longer waits for the cancelled send (its timeout is a minute): the session's
        // one send is free, and Ctrl+C as a waiting send stops the command.
        const keys = (await plain.client.callTool({ name: 'send_keys', arguments: { session, keys: ['Ctrl+C'], wait: true, timeout: 30_000 } })) as ToolResult;
        assert.notEqual(keys.isError, true, textOf(keys));
        assert.equal(keys.structuredContent.waitReason, 'command_done', textOf(keys));
        assert.equal(keys.structuredContent.exitCode, 130, 'the interrupted sleep');
      },
    );

    test('a send the client gives up on (it cancels the request) stops: the session takes the next send at once', { timeout: TEST_TIMEOUT }, async () => {
      const session = await shell();
      const ac = new AbortController();
      const call = plain.client.callTool({ name: 'send', arguments: { session, text: 'sleep 600', timeout: 60_000 } }, { signal: ac.signal }).catch((e) => e);
      const commands = async () => textOf((await plain.client.callTool({ name: 'list_commands', arguments: { session } })) as ToolResult);
      await until(async () => /sleep 600/.test(await commands()), 20_000, 'the command to start');
      ac.abort();
      await call;
      // The call's timeout is a minute: a send still waiting would refuse the next one as busy until then.
      const tries: string[] = [];
      await until(
        async () => {
          const r = (await plain.client.callTool({ name: 'send', arguments: { session, text: '', submit: false, timeout: 100 } })) as ToolResult;
          tries.push(textOf(r).slice(0, 80));
          return r.isError !== true;
        },
        10_000,
        'the session free for the next send',
      );
      assert.ok(!tries.some((t) => /gone|exited/.test(t)), tries.join(' | '));
      const keys = (await plain.client.callTool({ name: 'send_keys', arguments: { session, keys: ['Ctrl+C'], wait: true, timeout: 30_000 } })) as ToolResult;
      assert.equal(keys.structuredContent?.exitCode, 130, textOf(keys));
    });

    test(
      "a password prompt in a task: input_required with the secret page's URL; the person types it there, the task completes",
      { timeout: TEST_TIMEOUT },
      async () => {
        const session = await shell();
        a.person.asked.length = 0;
        a.person.answer = async (params) => {
          // The person opens the page and types the secret into the terminal: the model never sees it.
          const path = new URL(params.url).pathname;
          const typed = await request(h.http.port, 'POST', path, {
            origin: h.http.url,
            body: 'secret=hunter2',
            headers: { 'content-type': 'application/x-www-form-urlencoded' },
          });
          assert.ok(typed.status < 400, typed.text);
          return { action: 'accept' };
        };
        const run = await asTask(a, 'send', { session, text: 'read -s -p "Password: " pw; echo; echo "got-${#pw}-chars"', timeout: 30_000 });
        assert.equal(a.person.asked.length, 1);
        assert.equal(a.person.asked[0].mode, 'url', 'a URL-mode question');
        assert.match(a.person.asked[0].url, /\/secret\/[^/]+$/, 'the one-time secret page');
        assert.match(a.person.asked[0].message, /It asks: "Password:"/, 'the question says what the program asks');
        assert.ok(run.statuses.includes('input_required'), run.statuses.join(' → '));
        const result = run.outcome.result as ToolResult;
        assert.equal(run.outcome.status, 'completed');
        assert.match(result.structuredContent.output, /^got-7-chars$/m, 'the secret reached the program');
        assert.ok(!JSON.stringify(run.views.map((v) => v.raw)).includes('hunter2'), 'the secret is in no task state');
        assert.ok(!textOf(result).includes('hunter2'), 'nor in the result');
      },
    );

    // docs/protocol.md#tasks-and-input-rounds: a task is input_required while the program waits for input or asks
    // for a secret; wait_for and wait_event tasks stayed working throughout (an outside audit).
    test(
      'a wait_for task is input_required while the command asks for a secret, then for a line; working again once answered; its result is the wait’s',
      { timeout: TEST_TIMEOUT },
      async () => {
        const session = await shell();
        // The command is typed first: its password prompt is up before the task starts.
        const command = 'read -s -p "Password: " pw; echo; read -p "Name? " n; sleep 3; echo "DONE-$((40+2))-$n"';
        await ctl.request('pty/write', { session, action: { text: `${command}\r` } });
        await until(async () => (await ctl.request<any>('pty/info', { session })).secretInput, 20_000, 'the password prompt');
        const execution = await a.tasks.callTool('wait_for', { session, match: 'DONE-42', timeout: 60_000 } as never, { task: { preference: 'require' } });
        assert.equal(execution.kind, 'task');
        const id = execution.handle!.taskId;
        const when = (what: string, ok: (t: TaskView) => boolean) =>
          until(
            async () => {
              const t = await a.tasks.task(id).snapshot();
              return ok(t) && t;
            },
            20_000,
            what,
          );
        const secret = await when('input_required at the password prompt', (t) => t.status === 'input_required');
        assert.match(secret.statusMessage ?? '', /secret: Password:/);
        await ctl.request('pty/write', { session, action: { text: 'hunter2\r' }, client: { origin: 'user' } });
        const line = await when('input_required at the read prompt', (t) => t.status === 'input_required' && /Name\?/.test(t.statusMessage ?? ''));
        assert.match(line.statusMessage ?? '', new RegExp(`session ${session}.*send`), 'how the answer is typed');
        // The task holds no send: the agent's keys go in, and the program is busy again (sleep 3).
        const keys = (await plain.client.callTool({ name: 'send_keys', arguments: { session, keys: ['A', 'd', 'a', 'Enter'] } })) as ToolResult;
        assert.notEqual(keys.isError, true, textOf(keys));
        await when('working again once the output moved on', (t) => t.status === 'working');
        const { outcome } = await execution.settle();
        assert.equal(outcome.status, 'completed');
        const result = (outcome as { result: ToolResult }).result;
        assert.equal(result.structuredContent.matched, true, textOf(result));
        assert.equal(result.structuredContent.reason, 'matched', textOf(result));
        assert.match(result.structuredContent.screen, /DONE-42-Ada/);
        assert.doesNotMatch(JSON.stringify(result), /hunter2/);
      },
    );

    test('approvals through input_required rounds: Allow once, Allow for this session, Deny', { timeout: TEST_TIMEOUT }, async () => {
      const session = await shell('user');
      const send = (text: string) => plain.client.callTool({ name: 'send', arguments: { session, text, timeout: 20_000 } }) as Promise<ToolResult>;
      const screen = async () => (await ctl.request<{ screen: string }>('pty/read', { session })).screen;
      plain.person.asked.length = 0;
      plain.person.answer = async () => ({ action: 'accept', content: { answer: 'deny' } });
      const denied = await send('echo never-written');
      assert.equal(denied.isError, true);
      assert.match(textOf(denied), /The user declined/);
      assert.equal(plain.person.asked.length, 1);
      assert.deepEqual(
        plain.person.asked[0].requestedSchema.properties.answer.oneOf.map((o: any) => o.title),
        ['Allow once', 'Allow for this session', 'Deny'],
      );
      assert.match(plain.person.asked[0].message, /echo never-written/, 'the person sees what the agent wants to type');
      plain.person.answer = async () => ({ action: 'accept', content: { answer: 'once' } });
      const once = await send('echo once-$((1+1))');
      assert.notEqual(once.isError, true, textOf(once));
      assert.match(await screen(), /^once-2$/m);
      assert.equal((await ctl.request<any>('pty/info', { session })).lastInput.approval, 'allowed_once');
      plain.person.answer = async () => ({ action: 'accept', content: { answer: 'session' } });
      assert.notEqual((await send('echo first')).isError, true);
      const asked = plain.person.asked.length;
      const later = await send('echo later-$((2+2))');
      assert.notEqual(later.isError, true, textOf(later));
      assert.equal(plain.person.asked.length, asked, 'not asked again in this session');
      assert.ok(!(await screen()).includes('never-written'));
    });

    test('a send that meets a password prompt, and a refused write there, offer the page as a URL round', { timeout: TEST_TIMEOUT }, async () => {
      const session = await shell();
      plain.person.asked.length = 0;
      plain.person.answer = async () => ({ action: 'decline' });
      const met = (await plain.client.callTool({
        name: 'send',
        arguments: { session, text: 'read -s -p "Passphrase: " pw; echo; echo "len-${#pw}"', timeout: 10_000 },
      })) as ToolResult;
      assert.equal((met as any).structuredContent?.waitReason, 'secret_input', textOf(met));
      assert.deepEqual(
        plain.person.asked.map((q) => q.mode),
        ['url'],
        'the page offered as the send met the prompt',
      );
      assert.match(textOf(met), /did not open it/);
      plain.person.asked.length = 0;
      const refused = (await plain.client.callTool({ name: 'send', arguments: { session, text: 'not-the-secret' } })) as ToolResult;
      assert.equal(refused.isError, true);
      assert.equal(plain.person.asked.length, 1);
      assert.equal(plain.person.asked[0].mode, 'url');
      assert.match(plain.person.asked[0].url, /\/secret\//);
      assert.match(textOf(refused), /did not open it/);
      await plain.client.callTool({ name: 'signal', arguments: { session, signal: 'SIGINT' } });
    });
  });
}

test("over /mcp a task is its token's: another token's tasks/get, tasks/update and tasks/cancel find no such task", { timeout: TEST_TIMEOUT }, async () => {
  const session = await shell();
  const meta = {
    'io.modelcontextprotocol/protocolVersion': REVISION,
    'io.modelcontextprotocol/clientInfo': { name: 'owner', version: '0' },
    'io.modelcontextprotocol/clientCapabilities': WITH_TASKS,
  };
  const mine = rawDispatchOf('http', undefined);
  const created = await mine({ method: 'tools/call', params: { name: 'send', arguments: { session, text: 'sleep 600', timeout: 60_000 }, _meta: meta } });
  assert.equal(created.result?.resultType, 'task', JSON.stringify(created));
  const taskId = created.result.taskId as string;
  const { token } = await ctl.request<{ token: string }>('session/share', { session, scope: 'control', reusable: true });
  const other = rawDispatchOf('http', undefined, token);
  for (const [method, extra] of [
    ['tasks/get', {}],
    ['tasks/update', { inputResponses: {} }],
    ['tasks/cancel', {}],
  ] as const) {
    const r = await other({ method, params: { taskId, ...extra, _meta: meta } });
    assert.equal(r.error?.code, -32602, `${method}: ${JSON.stringify(r)}`);
  }
  assert.equal((await mine({ method: 'tasks/get', params: { taskId, _meta: meta } })).result?.status, 'working', "still the owner's, still running");
  await mine({ method: 'tasks/cancel', params: { taskId, _meta: meta } });
  await ctl.request('pty/signal', { session, signal: 'SIGINT' });
});

/** A 2026-07-28 client over /mcp that speaks the Tasks extension but declared no elicitation: nothing can be asked of it. */
function unaskable(name: string) {
  const meta = (capabilities: object) => ({
    'io.modelcontextprotocol/protocolVersion': REVISION,
    'io.modelcontextprotocol/clientInfo': { name, version: '0' },
    'io.modelcontextprotocol/clientCapabilities': capabilities,
  });
  const raw = rawDispatchOf('http', undefined);
  const tasksOnly = meta({ extensions: { 'io.modelcontextprotocol/tasks': {} } });
  const getTask = async (taskId: string) => (await raw({ method: 'tasks/get', params: { taskId, _meta: tasksOnly } })).result;
  return {
    start: async (args: Record<string, unknown>) => {
      const created = await raw({ method: 'tools/call', params: { name: 'send', arguments: args, _meta: tasksOnly } });
      assert.equal(created.result?.resultType, 'task', JSON.stringify(created));
      return created.result.taskId as string;
    },
    get: getTask,
    /** Polls the task until it waits for input or is over; the task then (`seen`: every status on the way). */
    waiting: (taskId: string, seen: string[]) => untilStatus(() => getTask(taskId), ['input_required', ...OVER], seen),
    /** Polls the task until it is over; it then must be completed, and its result is returned. */
    completed: async (taskId: string, seen: string[]) => {
      const done = await untilStatus(() => getTask(taskId), OVER, seen);
      assert.equal(done.status, 'completed', seen.join(' → '));
      return done.result.structuredContent;
    },
    /** A plain call (no task): the agent's next call. */
    call: async (tool: string, args: Record<string, unknown>) =>
      (await raw({ method: 'tools/call', params: { name: tool, arguments: args, _meta: meta({}) } })).result,
  };
}

/** The statuses of a task that is over. */
const OVER = ['completed', 'failed', 'cancelled'];

/** Polls tasks/get until the status is one of `wanted`; the task then, and every status seen. */
async function untilStatus(get: () => Promise<any>, wanted: string[], seen: string[]): Promise<any> {
  let task: any;
  await until(
    async () => {
      task = await get();
      if (seen.at(-1) !== task.status) seen.push(task.status);
      return wanted.includes(task.status);
    },
    40_000,
    `task status ${wanted.join(' or ')}`,
  );
  return task;
}

test(
  "a task whose client cannot be asked: input_required at read's prompt with no question, saying how to answer; the agent's send answers, the task completes",
  { timeout: TEST_TIMEOUT },
  async () => {
    const session = await shell();
    const agentOf = unaskable('no-elicitation');
    const taskId = await agentOf.start({ session, text: 'read -p "Name? " n; echo "hello-$n"; (exit 3)', timeout: 30_000 });
    const seen: string[] = [];
    const waiting = await agentOf.waiting(taskId, seen);
    assert.deepEqual([seen[0], seen.at(-1)], ['working', 'input_required'], seen.join(' → '));
    assert.deepEqual(waiting.inputRequests, {}, 'no question the client could not answer');
    assert.match(waiting.statusMessage, /Name\?/, 'the status says what the program asks');
    assert.match(waiting.statusMessage, new RegExp(`session ${session}.*send`), 'and how the answer is typed');
    // The task holds no send while it waits: the agent's own send of the answer is taken.
    const answered = await agentOf.call('send', { session, text: 'Ada', timeout: 30_000 });
    assert.notEqual(answered?.isError, true, JSON.stringify(answered));
    assert.equal(answered.structuredContent.exitCode, 3, JSON.stringify(answered));
    const result = await agentOf.completed(taskId, seen);
    assert.equal(result.waitReason, 'command_done');
    assert.equal(result.exitCode, 3, "the command's exit code");
    assert.match(result.output, /^hello-Ada$/m);
  },
);

test(
  "a task whose client cannot be asked, at read's prompt: the person answers in the terminal, key by key, and the task completes",
  { timeout: TEST_TIMEOUT },
  async () => {
    const session = await shell();
    const agentOf = unaskable('person-answers');
    const taskId = await agentOf.start({ session, text: 'read -p "Colour? " c; echo "picked-$c"; (exit 5)', timeout: 30_000 });
    const seen: string[] = [];
    await agentOf.waiting(taskId, seen);
    assert.equal(seen.at(-1), 'input_required', seen.join(' → '));
    // Each key's echo wakes the task; it waits on while the program still reads.
    for (const key of ['b', 'l', 'u', 'e']) {
      await ctl.request('pty/write', { session, action: { text: key }, client: { origin: 'user' } });
      await new Promise((r) => setTimeout(r, 150));
    }
    await until(async () => (await agentOf.get(taskId)).status === 'input_required', 10_000, 'still waiting while the person types');
    await ctl.request('pty/write', { session, action: { text: '\r' }, client: { origin: 'user' } });
    const result = await agentOf.completed(taskId, seen);
    assert.equal(result.exitCode, 5, JSON.stringify(result));
    assert.match(result.output, /^picked-blue$/m);
  },
);

test(
  'a task whose client cannot be asked, at two prompts: the agent answers each with send and is never refused as busy; a session that ends is the result',
  { timeout: TEST_TIMEOUT },
  async () => {
    const session = await shell();
    const agentOf = unaskable('two-prompts');
    const taskId = await agentOf.start({ session, text: 'read -p "A? " a; read -p "B? " b; echo "got-$a-$b"; (exit 7)', timeout: 30_000 });
    const seen: string[] = [];
    await agentOf.waiting(taskId, seen);
    const first = await agentOf.call('send', { session, text: 'one', timeout: 30_000 });
    assert.equal(first?.structuredContent?.waitReason, 'stdin_read', JSON.stringify(first));
    // The agent answers the next prompt at once, and a moment later (the task follows the program
    // by its events: it never takes the session's one send from the agent).
    await new Promise((r) => setTimeout(r, 230));
    const second = await agentOf.call('send', { session, text: 'two', timeout: 30_000 });
    assert.notEqual(second?.isError, true, JSON.stringify(second));
    assert.equal(second.structuredContent.exitCode, 7, JSON.stringify(second));
    const result = await agentOf.completed(taskId, seen);
    assert.equal(result.exitCode, 7, JSON.stringify(result));
    assert.match(result.output, /A\? one\nB\? two\ngot-one-two/, 'the whole output, from the log');
    // A session that ends while a task waits for input is the task's result, not an error.
    const other = await shell();
    const ending = await agentOf.start({ session: other, text: 'read -p "Last? " l', timeout: 30_000 });
    const seenEnding: string[] = [];
    assert.equal((await agentOf.waiting(ending, seenEnding)).status, 'input_required', seenEnding.join(' → '));
    await ctl.request('pty/signal', { session: other, signal: 'SIGKILL' });
    const last = await agentOf.completed(ending, seenEnding);
    assert.deepEqual(last.status, { kind: 'exited', exitCode: 137, signal: 'SIGKILL' }, JSON.stringify(last));
    assert.equal(last.exitCode, 137, 'the command ended with its session');
    // A session closed (close_session, pty/kill) while a task waits for input: gone, but how it ended is the result.
    const closing = await shell();
    const closed = await agentOf.start({ session: closing, text: 'read -p "Never? " n', timeout: 30_000 });
    const seenClosed: string[] = [];
    assert.equal((await agentOf.waiting(closed, seenClosed)).status, 'input_required', seenClosed.join(' → '));
    await ctl.request('pty/kill', { session: closing });
    const gone = await agentOf.completed(closed, seenClosed);
    assert.equal(gone.waitReason, 'session_exit', JSON.stringify(gone));
    assert.deepEqual(gone.status, { kind: 'exited', exitCode: 129, signal: 'SIGHUP' }, JSON.stringify(gone));
    // A command that ends the shell: the result says the session has exited, not that it runs.
    const ending2 = await shell();
    const quits = await agentOf.start({ session: ending2, text: 'read -p "Bye? " b; exit 7', timeout: 30_000 });
    const seenQuits: string[] = [];
    await agentOf.waiting(quits, seenQuits);
    await agentOf.call('send', { session: ending2, text: 'bye', timeout: 30_000 });
    const quit = await agentOf.completed(quits, seenQuits);
    assert.equal(quit.status.kind, 'exited', JSON.stringify(quit));
    assert.equal(quit.status.exitCode, 7, JSON.stringify(quit));
  },
);

test(
  'a signal task whose client cannot be asked: input_required when the interrupted program asks, completed once answered',
  { timeout: TEST_TIMEOUT },
  async () => {
    const session = await shell();
    const agentOf = unaskable('signal');
    const started = await agentOf.call('send', {
      session,
      text: 'bash -c \'trap "read -p \\"Sure? \\" s; echo sure-\\$s; exit 4" INT; sleep 30\'',
      timeout: 500,
    });
    assert.equal(started?.structuredContent?.waitReason, 'timeout', JSON.stringify(started));
    const raw = rawDispatchOf('http', undefined);
    const created = await raw({
      method: 'tools/call',
      params: {
        name: 'signal',
        arguments: { session, signal: 'SIGINT', timeout: 30_000 },
        _meta: {
          'io.modelcontextprotocol/protocolVersion': REVISION,
          'io.modelcontextprotocol/clientInfo': { name: 'signal', version: '0' },
          'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } },
        },
      },
    });
    const taskId = created.result?.taskId as string;
    assert.equal(typeof taskId, 'string', JSON.stringify(created));
    const seen: string[] = [];
    const waiting = await agentOf.waiting(taskId, seen);
    assert.equal(waiting.status, 'input_required', seen.join(' → '));
    assert.match(waiting.statusMessage, /Sure\?/);
    await agentOf.call('send_keys', { session, keys: ['y', 'Enter'] });
    const result = await agentOf.completed(taskId, seen);
    assert.equal(result.exitCode, 4, JSON.stringify(result));
  },
);

test(
  'a task whose client cannot open the secret page: input_required at a password prompt until the person types it in the terminal, then completed',
  { timeout: TEST_TIMEOUT },
  async () => {
    const session = await shell();
    const agentOf = unaskable('no-url');
    const taskId = await agentOf.start({ session, text: 'read -s -p "Password: " pw; echo; echo "got-${#pw}-chars"; (exit 4)', timeout: 30_000 });
    const seen: string[] = [];
    const waiting = await agentOf.waiting(taskId, seen);
    assert.equal(waiting.status, 'input_required', seen.join(' → '));
    assert.deepEqual(waiting.inputRequests, {});
    assert.match(waiting.statusMessage, /secret: Password:/);
    assert.match(waiting.statusMessage, /Only the person types it, in the terminal/);
    // The agent cannot type it: its write is refused while the program asks for a secret.
    const refused = await agentOf.call('send_keys', { session, keys: ['h', 'i', 'Enter'] });
    assert.equal(refused?.isError, true, JSON.stringify(refused));
    assert.equal((await agentOf.get(taskId)).status, 'input_required', 'still waiting for the person');
    // The person types it in the terminal.
    await ctl.request('pty/write', { session, action: { text: 'hunter2\r' }, client: { origin: 'user' } });
    const result = await agentOf.completed(taskId, seen);
    assert.equal(result.exitCode, 4, JSON.stringify(result));
    assert.match(result.output, /got-7-chars/);
    assert.doesNotMatch(JSON.stringify(result), /hunter2/, 'the secret is in no result');
  },
);

test(
  "a round's requestState answers only the call it came from: not a read-only tool, not the same tool with other arguments",
  { timeout: TEST_TIMEOUT },
  async () => {
    const session = await shell('user'); // the user's: an agent's write asks the person (policy ask)
    const meta = {
      'io.modelcontextprotocol/protocolVersion': REVISION,
      'io.modelcontextprotocol/clientInfo': { name: 'rounds', version: '0' },
      'io.modelcontextprotocol/clientCapabilities': ELICITATION,
    };
    const raw = rawDispatchOf('http', undefined);
    const args = { session, text: 'echo FOR-$((6*7))', timeout: 20_000 };
    const asked = await raw({ method: 'tools/call', params: { name: 'send', arguments: args, _meta: meta } });
    assert.equal(asked.result?.resultType, 'input_required', JSON.stringify(asked));
    const requestState = asked.result.requestState as string;
    const [key] = Object.keys(asked.result.inputRequests);
    const allow = { [key]: { action: 'accept', content: { answer: 'once' } } };
    const retry = (name: string, a: Record<string, unknown>) =>
      raw({ method: 'tools/call', params: { name, arguments: a, requestState, inputResponses: allow, _meta: meta } });
    for (const [name, a] of [
      ['read_screen', { session }],
      ['send', { ...args, text: 'echo OTHER-$((6*7))' }],
    ] as const) {
      const r = await retry(name, a);
      assert.equal(r.result?.isError, true, `${name}: ${JSON.stringify(r)}`);
      assert.match(JSON.stringify(r.result.content), /issued for another call/);
    }
    const screen = async () => (await ctl.request<{ screen: string }>('pty/read', { session })).screen;
    assert.doesNotMatch(await screen(), /FOR-42|OTHER-42/, 'nothing was typed');
    // The call it came from, retried as it was, is answered.
    const done = await retry('send', args);
    assert.notEqual(done.result?.isError, true, JSON.stringify(done));
    await until(async () => /^FOR-42$/m.test(await screen()), 10_000, 'the allowed write');
    assert.doesNotMatch(await screen(), /OTHER-42/);
  },
);

test(
  'a wait_event task: working while the shell waits at its prompt (integration), input_required while a command reads; without integration any wait of the shell counts',
  { timeout: TEST_TIMEOUT },
  async () => {
    const meta = {
      'io.modelcontextprotocol/protocolVersion': REVISION,
      'io.modelcontextprotocol/clientInfo': { name: 'waits', version: '0' },
      'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } },
    };
    const raw = rawDispatchOf('http', undefined);
    const start = async (name: string, args: Record<string, unknown>) => {
      const created = await raw({ method: 'tools/call', params: { name, arguments: args, _meta: meta } });
      assert.equal(created.result?.resultType, 'task', JSON.stringify(created));
      return created.result.taskId as string;
    };
    const get = async (taskId: string) => (await raw({ method: 'tasks/get', params: { taskId, _meta: meta } })).result;
    const session = await shell();
    const taskId = await start('wait_event', { session, types: ['command_finished'], timeoutMs: 60_000 });
    // The shell idle at its prompt waits for input, but no command does.
    for (let look = 0; look < 6; look++) {
      assert.equal((await get(taskId)).status, 'working', 'the shell at its prompt is no command waiting');
      await new Promise((r) => setTimeout(r, 250));
    }
    await ctl.request('pty/write', { session, action: { text: 'read -p "Again? " x\r' } });
    const seen: string[] = [];
    const waiting = await untilStatus(() => get(taskId), ['input_required', ...OVER], seen);
    assert.equal(waiting.status, 'input_required', seen.join(' → '));
    assert.match(waiting.statusMessage, /Again\?/);
    assert.deepEqual(waiting.inputRequests, {});
    await ctl.request('pty/write', { session, action: { text: 'yes\r' }, client: { origin: 'user' } });
    const done = await untilStatus(() => get(taskId), OVER, seen);
    assert.equal(done.status, 'completed', seen.join(' → '));
    assert.equal(done.result.structuredContent.event?.type, 'command_finished', JSON.stringify(done.result));
    // Without shell integration every wait of the program counts: the shell's own prompt too.
    const bare = await ctl.request<any>('session/create', { ...BASH, cols: 80, rows: 24 });
    await until(async () => (await ctl.request<{ screen: string }>('pty/read', { session: bare.id })).screen.includes('$'), 20_000, 'a prompt');
    const other = await start('wait_for', { session: bare.id, match: 'NEVER-SHOWN', timeout: 60_000 });
    const seenBare: string[] = [];
    assert.equal((await untilStatus(() => get(other), ['input_required', ...OVER], seenBare)).status, 'input_required', seenBare.join(' → '));
    await raw({ method: 'tasks/cancel', params: { taskId: other, _meta: meta } });
    await ctl.request('pty/kill', { session: bare.id });
  },
);
