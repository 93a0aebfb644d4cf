// The 2025-11-25 revision's tasks (docs/protocol.md#tasks-and-input-rounds): a tools/call with
// `params.task` answers with a task; tasks/get, tasks/result (which puts the task's questions to the
// client as elicitation), tasks/list and tasks/cancel; the status is the program's. Spoken by the
// official clients on 2025-11-25 (the SDK's v1 client through its task stream, its v2 client through
// plain requests), over stdio (`shared-pty mcp`) and `/mcp`, against a real host and a real bash.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { z } from 'zod';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as HttpV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioClientTransport as StdioV1 } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CallToolResultSchema, ElicitRequestSchema, TaskStatusNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { Client as ClientV2, StreamableHTTPClientTransport as HttpV2 } from '@modelcontextprotocol/client';
import { StdioClientTransport as StdioV2 } from '@modelcontextprotocol/client/stdio';
import { connect as connectRpc, until, withTimeout, clientsClosed } from '../../../helpers/host';
import { startHttpHost, type HttpHost } from '../../../helpers/http';
import { bashEnv, buildCli, CLI, REPO_ROOT } from '../../../helpers/protocol';
import { promptedShell } from '../../../helpers/shell-home';
import type { RpcClient } from '../../../../src/transport/client/rpc-client';
import { ensureNoDisposablesAreLeakedBySuite } from '../../../helpers/leak-tracker';

const TEST_TIMEOUT = 90_000;
type Via = 'http' | 'stdio';
type Sdk = 'v1' | 'v2';
type ToolResult = { content?: Array<{ type: string; text?: string }>; structuredContent?: any; isError?: boolean; _meta?: any };
const textOf = (r: ToolResult) => (r.content ?? []).map((c) => c.text ?? '').join('');
/** Any answer, as the test reads it (the v2 client checks what it knows of a result itself). */
const ANY = z.object({}).passthrough();
/** Where a 2025-11-25 message names its task. */
const RELATED_TASK = 'io.modelcontextprotocol/related-task';

/** A client of one SDK on 2025-11-25 that can show forms, and what its person is asked. */
interface Agent {
  sdk: Sdk;
  request(method: string, params: Record<string, unknown>): Promise<any>;
  callTool(name: string, args: Record<string, unknown>): Promise<ToolResult>;
  asked: any[];
  /** The notifications/tasks/status received, their params. */
  statuses: any[];
  answer: (params: any) => { action: 'accept' | 'decline' | 'cancel'; content?: Record<string, string> };
  v1?: ClientV1;
  close(): Promise<void>;
}

let h: HttpHost;
let ctl: RpcClient;
const homes: string[] = [];

before(async () => {
  buildCli();
  h = await startHttpHost();
  ctl = await connectRpc(h.host.controlAddress);
});

after(async () => {
  ctl?.close();
  await h?.close();
  for (const home of homes) fs.rmSync(home, { recursive: true, force: true });
});
// Once the shared host is closed, nothing the suite made is left (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedBySuite(clientsClosed);

/** `elicitation`: the modes the client declares (true: form only; false: none). */
async function agent(sdk: Sdk, via: Via, elicitation: boolean | { form?: Record<string, never>; url?: Record<string, never> } = true): Promise<Agent> {
  const info = { name: `tasks-2025-${sdk}-${via}`, version: '0.0.0' };
  const capabilities = elicitation === true ? { elicitation: { form: {} } } : elicitation ? { elicitation } : {};
  const url = new URL(`${h.http.url}/mcp`);
  const requestInit = { headers: { Authorization: `Bearer ${h.token}` } };
  const stdio = {
    command: process.execPath,
    args: [CLI, 'mcp'],
    env: bashEnv({ SHARED_PTY_DIR: h.dir }) as Record<string, string>,
    cwd: REPO_ROOT,
    stderr: 'pipe' as const,
  };
  const a: Agent = { sdk, asked: [], statuses: [], answer: () => ({ action: 'cancel' }) } as unknown as Agent;
  const elicited = (params: any) => {
    a.asked.push(params);
    return a.answer(params);
  };
  if (sdk === 'v1') {
    const client = new ClientV1(info, { capabilities });
    if (elicitation) client.setRequestHandler(ElicitRequestSchema, async (req) => elicited(req.params) as never);
    client.setNotificationHandler(TaskStatusNotificationSchema, (n) => void a.statuses.push(n.params));
    await withTimeout(client.connect(via === 'http' ? new HttpV1(url, { requestInit }) : new StdioV1(stdio)), 30_000, `${sdk} ${via}: connect`);
    return Object.assign(a, {
      v1: client,
      request: (method: string, params: Record<string, unknown>) => client.request({ method, params } as never, ANY as never),
      callTool: async (name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })) as ToolResult,
      close: () => client.close().catch(() => {}),
    });
  }
  const client = new ClientV2(info, { capabilities });
  if (elicitation) client.setRequestHandler('elicitation/create', async (req: any) => elicited(req.params) as never);
  // Typed for 2026-07-28's methods only; the 2025-11-25 codec knows this notification.
  (client.setNotificationHandler as (m: string, h: (n: any) => void) => void)('notifications/tasks/status', (n) => void a.statuses.push(n.params));
  await withTimeout(client.connect(via === 'http' ? new HttpV2(url, { requestInit }) : new StdioV2(stdio)), 30_000, `${sdk} ${via}: connect`);
  assert.equal(client.getNegotiatedProtocolVersion(), '2025-11-25');
  return Object.assign(a, {
    request: (method: string, params: Record<string, unknown>) => client.request({ method, params } as never, ANY as never, { timeout: 60_000 }),
    callTool: async (name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })) as ToolResult,
    close: () => client.close().catch(() => {}),
  });
}

/** A session of the test host with bash and its integration, at its prompt. */
async function shell(): Promise<string> {
  const { home, ...how } = promptedShell('bash');
  homes.push(home);
  const info = await ctl.request<any>('session/create', { ...how, cols: 80, rows: 24 });
  await until(async () => (await ctl.request<{ screen: string }>('pty/read', { session: info.id })).screen.includes('my>'), 20_000, 'a bash prompt');
  return info.id;
}

/** Starts a task of `name`; its id. */
async function startTask(a: Agent, name: string, args: Record<string, unknown>): Promise<string> {
  const created = await a.request('tools/call', { name, arguments: args, task: { ttl: 60_000 } });
  assert.equal(typeof created.task?.taskId, 'string', `a CreateTaskResult: ${JSON.stringify(created)}`);
  assert.equal(created.task.status, 'working');
  return created.task.taskId;
}

/** Polls tasks/get until the status is one of `wanted`; every status seen, in order. */
async function statusesUntil(a: Agent, taskId: string, wanted: string[], seen: string[] = []): Promise<string[]> {
  await until(
    async () => {
      const { status } = await a.request('tasks/get', { taskId });
      if (seen.at(-1) !== status) seen.push(status);
      return wanted.includes(status);
    },
    40_000,
    `task status ${wanted.join(' or ')}`,
  );
  return seen;
}

/** Every task tasks/list has for the agent, page after page. */
async function allTasks(a: Agent): Promise<any[]> {
  const tasks: any[] = [];
  let cursor: string | undefined;
  do {
    const page = await a.request('tasks/list', cursor === undefined ? {} : { cursor });
    tasks.push(...page.tasks);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return tasks;
}

const READ = 'read -p "Name? " n; echo "hello-$n"; (exit 3)';

for (const via of ['stdio', 'http'] as const) {
  for (const sdk of ['v1', 'v2'] as const) {
    describe(`2025-11-25, SDK ${sdk} client over ${via}`, () => {
      let a: Agent;
      before(async () => {
        a = await agent(sdk, via);
      });
      after(async () => a?.close());

      test('tools/list: the tools that wait for the program may run as tasks', { timeout: TEST_TIMEOUT }, async () => {
        const { tools } = await a.request('tools/list', {});
        const send = tools.find((t: any) => t.name === 'send');
        assert.deepEqual(send.execution, { taskSupport: 'optional' });
        assert.equal(tools.find((t: any) => t.name === 'list_sessions').execution, undefined);
      });

      // Over /mcp too: a client that declared elicitation has a session (Mcp-Session-Id) the server asks through.
      {
        test(
          "a send as a task: working, input_required at read's prompt, asked through tasks/result, completed with the exit code",
          { timeout: TEST_TIMEOUT },
          async () => {
            const session = await shell();
            a.asked.length = 0;
            a.answer = () => ({ action: 'accept', content: { input: 'Ada' } });
            const taskId = await startTask(a, 'send', { session, text: READ, timeout: 30_000 });
            const seen = await statusesUntil(a, taskId, ['input_required']);
            assert.equal(seen[0], 'working', seen.join(' → '));
            const statusMessage = (await a.request('tasks/get', { taskId })).statusMessage;
            assert.match(statusMessage, /Name\?/, 'the status says what the program asks');
            // tasks/result waits for the end, asking the question on its way (answered above).
            const result = (await a.request('tasks/result', { taskId })) as ToolResult;
            assert.equal(a.asked.length, 1, 'asked once, for the line');
            assert.match(a.asked[0].message, /Name\?/);
            assert.deepEqual(a.asked[0]._meta?.[RELATED_TASK], { taskId }, 'the question names its task');
            assert.notEqual(result.isError, true, textOf(result));
            assert.deepEqual(result._meta?.[RELATED_TASK], { taskId }, 'the result names its task');
            assert.equal(result.structuredContent.waitReason, 'command_done');
            assert.equal(result.structuredContent.exitCode, 3, "the command's exit code");
            assert.match(result.structuredContent.output, /^hello-Ada$/m, 'the answer was typed into the program');
            assert.equal(typeof result.structuredContent.command?.id, 'number', 'the command record');
            assert.equal((await a.request('tasks/get', { taskId })).status, 'completed');
            const told = a.statuses.filter((t) => t.taskId === taskId).map((t) => t.status);
            assert.ok(told.includes('working') && told.at(-1) === 'completed', `notifications/tasks/status: ${told.join(' → ')}`);
            assert.ok(told.includes('input_required'), `the wait for input is told too: ${told.join(' → ')}`);
          },
        );
      }
      test(
        `a send as a task from a client without elicitation (${via === 'http' ? 'stateless /mcp' : 'stdio'}): input_required at read's prompt, saying how to answer; the agent answers with send, the task completes`,
        { timeout: TEST_TIMEOUT },
        async () => {
          // Nothing can be asked of this client: the task says it waits for input, and the answer is typed by the agent's next call.
          const plain = await agent(sdk, via, false);
          try {
            const session = await shell();
            const taskId = await startTask(plain, 'send', { session, text: READ, timeout: 30_000 });
            const seen = await statusesUntil(plain, taskId, ['input_required', 'completed', 'failed', 'cancelled']);
            assert.deepEqual([seen[0], seen.at(-1)], ['working', 'input_required'], seen.join(' → '));
            const waiting = await plain.request('tasks/get', { taskId });
            assert.match(waiting.statusMessage, /Name\?/, 'the status says what the program asks');
            assert.match(waiting.statusMessage, new RegExp(`session ${session}.*send`), 'and how the answer is typed');
            // The task holds no send while it waits: the agent's own send of the answer is taken.
            const answered = await plain.callTool('send', { session, text: 'Ada', timeout: 30_000 });
            assert.notEqual(answered.isError, true, textOf(answered));
            assert.equal(answered.structuredContent.exitCode, 3, textOf(answered));
            assert.match(answered.structuredContent.output, /hello-Ada/);
            await statusesUntil(plain, taskId, ['completed', 'failed', 'cancelled'], seen);
            assert.equal(seen.at(-1), 'completed', seen.join(' → '));
            const result = (await plain.request('tasks/result', { taskId })) as ToolResult;
            assert.equal(result.structuredContent.waitReason, 'command_done', textOf(result));
            assert.equal(result.structuredContent.exitCode, 3, "the command's exit code");
            assert.match(result.structuredContent.output, /^hello-Ada$/m, 'its output, from its log');
          } finally {
            await plain.close();
          }
        },
      );

      test('tasks/cancel: cancelled, the program is left running; a second cancel is refused; tasks/list lists it', { timeout: TEST_TIMEOUT }, async () => {
        const session = await shell();
        const taskId = await startTask(a, 'send', { session, text: 'sleep 600', timeout: 60_000 });
        assert.equal((await a.request('tasks/get', { taskId })).status, 'working');
        // Cancelled once the command runs (a cancel before the task typed it leaves nothing to run).
        const runs = async () => /sleep 600/.test(textOf(await a.callTool('list_commands', { session })));
        await until(runs, 20_000, 'the command running');
        const cancelled = await a.request('tasks/cancel', { taskId });
        assert.equal(cancelled.status, 'cancelled');
        assert.equal(cancelled.taskId, taskId);
        assert.equal((await a.request('tasks/get', { taskId })).status, 'cancelled');
        await assert.rejects(a.request('tasks/cancel', { taskId }), (e: any) => e.code === -32602, 'a task over cannot be cancelled');
        await assert.rejects(a.request('tasks/result', { taskId }), (e: any) => e.code === -32602, 'a cancelled task has no result');
        const tasks = await allTasks(a);
        assert.ok(
          tasks.some((t: any) => t.taskId === taskId && t.status === 'cancelled'),
          'tasks/list has it',
        );
        assert.ok(await runs(), 'the command still runs');
        await a.callTool('signal', { session, signal: 'SIGINT' });
        await assert.rejects(a.request('tasks/get', { taskId: 'no-such-task' }), (e: any) => e.code === -32602, 'an unknown task');
      });

      test('a task whose tool call fails is failed (this revision), and tasks/result answers the tool error', { timeout: TEST_TIMEOUT }, async () => {
        const taskId = await startTask(a, 'send', { session: 'nosuch', text: 'x' });
        const seen = await statusesUntil(a, taskId, ['completed', 'failed', 'cancelled']);
        assert.equal(seen.at(-1), 'failed', seen.join(' → '));
        assert.match((await a.request('tasks/get', { taskId })).statusMessage, /Unknown session: nosuch/);
        const result = (await a.request('tasks/result', { taskId })) as ToolResult;
        assert.equal(result.isError, true);
        assert.match(textOf(result), /Unknown session: nosuch/);
        // tasks/result says the task's status as it begins, a task already over too.
        await until(async () => a.statuses.some((t) => t.taskId === taskId && t.status === 'failed'), 5000, 'notifications/tasks/status: failed');
      });

      test('tasks/list pages: every task once, nextCursor while there are more; a cursor it did not give is -32602', { timeout: TEST_TIMEOUT }, async () => {
        const session = await shell();
        // More tasks than a page holds (50), each over at once: the prompt is on the screen already.
        const made: string[] = [];
        for (let i = 0; i < 60; i++) made.push(await startTask(a, 'wait_for', { session, match: 'my>', timeout: 5000 }));
        // The v1 client pages through its own helper; the v2 client sends the request.
        const list = (cursor?: string) => (a.v1 ? a.v1.experimental.tasks.listTasks(cursor) : a.request('tasks/list', cursor === undefined ? {} : { cursor }));
        const seen: string[] = [];
        const cursors: string[] = [];
        let cursor: string | undefined;
        do {
          const page: any = await list(cursor);
          seen.push(...page.tasks.map((t: any) => t.taskId));
          cursor = page.nextCursor;
          if (cursor !== undefined) cursors.push(cursor);
        } while (cursor !== undefined);
        assert.ok(cursors.length >= 1, `more than one page (${seen.length} tasks)`);
        assert.equal(new Set(seen).size, seen.length, 'no task twice');
        for (const id of made) assert.ok(seen.includes(id), `task ${id} listed`);
        // Oldest first: the tasks made here in the order they were made.
        assert.deepEqual(
          seen.filter((id) => made.includes(id)),
          made,
        );
        for (const bad of ['not-a-cursor', `${cursors[0]}x`, cursors[0].slice(0, -2), '']) {
          await assert.rejects(
            a.request('tasks/list', { cursor: bad }),
            (e: any) => e.code === -32602 && /cursor/i.test(e.message),
            `cursor ${JSON.stringify(bad)}`,
          );
        }
      });

      test('params.task.ttl: the ttl asked for is granted and said; out of bounds it is brought within them', { timeout: TEST_TIMEOUT }, async () => {
        const session = await shell();
        const create = (task: Record<string, unknown>) =>
          a.request('tools/call', { name: 'wait_for', arguments: { session, match: 'my>', timeout: 5000 }, task }).then((r) => r.task);
        const granted = async (task: Record<string, unknown>) => (await create(task)).ttl;
        const asked = await create({ ttl: 45_000 });
        assert.equal(asked.ttl, 45_000, 'as asked');
        assert.equal((await a.request('tasks/get', { taskId: asked.taskId })).ttl, 45_000, 'tasks/get says it too');
        // (Not asked about again: a task granted a second may be gone by then.)
        assert.equal(await granted({ ttl: 1 }), 1000, 'at least a second');
        assert.equal(await granted({ ttl: 1e12 }), 24 * 3600_000, 'at most a day');
        assert.equal(await granted({}), 30 * 60_000, 'none asked: 30 minutes');
      });

      test(
        'a task expires after its ttl: tasks/get, tasks/result, tasks/cancel answer -32602, tasks/list leaves it out, its wait ends',
        { timeout: TEST_TIMEOUT },
        async () => {
          const session = await shell();
          const over = (await a.request('tools/call', { name: 'wait_for', arguments: { session, match: 'my>', timeout: 5000 }, task: { ttl: 1000 } })).task
            .taskId;
          const running = (await a.request('tools/call', { name: 'send', arguments: { session, text: 'sleep 600', timeout: 60_000 }, task: { ttl: 1000 } }))
            .task.taskId;
          // Waiting for the result of a task that expires meanwhile (or already has) answers -32602.
          const result = a.request('tasks/result', { taskId: running });
          await assert.rejects(result, (e: any) => e.code === -32602 && /expired/i.test(e.message), 'tasks/result');
          const expired = (e: any) => e.code === -32602 && /expired/i.test(e.message);
          for (const taskId of [over, running]) {
            await until(
              () =>
                a.request('tasks/get', { taskId }).then(
                  () => false,
                  (e) => expired(e),
                ),
              20_000,
              `task ${taskId} expired`,
            );
            await assert.rejects(a.request('tasks/result', { taskId }), expired, 'tasks/result');
            await assert.rejects(a.request('tasks/cancel', { taskId }), expired, 'tasks/cancel');
          }
          const listed = (await allTasks(a)).map((t) => t.taskId);
          assert.ok(!listed.includes(over) && !listed.includes(running), 'tasks/list leaves them out');
          // The expired task no longer waits for its program: the session takes the next send.
          await a.callTool('signal', { session, signal: 'SIGINT' });
          const next = await a.callTool('send', { session, text: 'echo after-$((6*7))', timeout: 30_000 });
          assert.notEqual(next.isError, true, textOf(next));
          assert.match(next.structuredContent.output, /after-42/);
        },
      );

      if (sdk === 'v1') {
        test("the v1 client's task stream: taskCreated, statuses, the result with the exit code", { timeout: TEST_TIMEOUT }, async () => {
          const session = await shell();
          await a.request('tools/list', {}); // the client learns which tools may run as tasks
          const kinds: string[] = [];
          let result: ToolResult | undefined;
          const stream = a.v1!.experimental.tasks.callToolStream(
            { name: 'send', arguments: { session, text: 'sleep 1; (exit 4)', timeout: 30_000 } },
            CallToolResultSchema,
            {
              task: { ttl: 60_000 },
            },
          );
          for await (const m of stream) {
            kinds.push(m.type);
            if (m.type === 'result') result = m.result as ToolResult;
            if (m.type === 'error') assert.fail(String(m.error));
          }
          assert.equal(kinds[0], 'taskCreated');
          assert.equal(kinds.at(-1), 'result');
          assert.equal(result?.structuredContent.exitCode, 4, textOf(result!));
        });
      }
    });
  }
}

// MCP 2025-11-25: a URL elicitation's elicitationId "must be unique within the context of the
// server". A task's questions were keyed within the task alone, so the secret pages of two tasks
// went out as "secret-1" both (an outside audit); the call that is no task used a UUID already.
test('the URL elicitations of two tasks at password prompts carry elicitationIds of their own (random UUIDs)', { timeout: TEST_TIMEOUT }, async () => {
  const a = await agent('v2', 'stdio', { form: {}, url: {} });
  const sessions = [await shell(), await shell()];
  try {
    a.answer = () => ({ action: 'decline' });
    const tasks: string[] = [];
    for (const session of sessions) tasks.push(await startTask(a, 'send', { session, text: 'read -s -p "Password: " pw; echo "len-${#pw}"', timeout: 30_000 }));
    const results = (await Promise.all(tasks.map((taskId) => a.request('tasks/result', { taskId })))) as ToolResult[];
    for (const r of results) assert.equal(r.structuredContent?.waitReason, 'secret_input', textOf(r));
    const pages = a.asked.filter((q) => q.mode === 'url');
    assert.equal(pages.length, 2, JSON.stringify(a.asked));
    assert.notEqual(pages[0].url, pages[1].url, 'a page for each prompt');
    assert.notEqual(pages[0].elicitationId, pages[1].elicitationId, 'unique within the server');
    for (const q of pages) assert.match(q.elicitationId, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  } finally {
    await a.close();
    for (const session of sessions) await ctl.request('pty/signal', { session, signal: 'SIGINT' });
  }
});
