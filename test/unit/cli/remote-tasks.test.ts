// docs/protocol.md#tasks-and-input-rounds across hosts (docs/hosts.md#remote-hosts): a wait_for or
// wait_event task on a session of a remote host is `input_required` while the program there waits
// for input, as on a session of this machine. The remote host is reached by a plain `sh -c` command
// standing in for `docker exec` (its own runtime directory and per-user host, started by
// `shared-pty bridge`); `shared-pty mcp` is driven by the SDK's v2 client and the Tasks requester.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import type { TaskEnabledSession } from '@modelcontextprotocol/ext-tasks/client';
import { readLiveRecords } from '../../../src/host/discovery';
import { stopPid } from '../../helpers/cli';
import { tempRuntimeDir, until, withTimeout } from '../../helpers/host';
import { bashEnv, buildCli, CLI, mcpStdio } from '../../helpers/protocol';
import { stdioRawDispatch } from '../../helpers/tasks-client';

const TEST_TIMEOUT = 90_000;
const REVISION = '2026-07-28';
const ELICITATION = { elicitation: { form: {}, url: {} } };
const WITH_TASKS = { ...ELICITATION, extensions: { 'io.modelcontextprotocol/tasks': {} } };
type ToolResult = { content?: Array<{ text?: string }>; structuredContent?: any; isError?: boolean };
const textOf = (r: ToolResult) => (r.content ?? []).map((c) => c.text ?? '').join('');

const dirs: string[] = [];
let farSide: string;
let nearSide: string;
/** Plain tool calls (no tasks), and the Tasks requester beside a client that declares them. */
let plain: Client;
let tasksClient: Client;
let tasks: TaskEnabledSession;

async function mcpClient(env: NodeJS.ProcessEnv, name: string, capabilities: object): Promise<{ client: Client; transport: StdioClientTransport }> {
  const client = new Client({ name, version: '0.0.0' }, { capabilities, versionNegotiation: { mode: { pin: REVISION } } });
  const transport = new StdioClientTransport(mcpStdio(env));
  await withTimeout(client.connect(transport), 30_000, `${name}: connect`);
  return { client, transport };
}

before(async () => {
  buildCli();
  const dir = () => {
    const d = tempRuntimeDir();
    dirs.push(d);
    return d;
  };
  [farSide, nearSide] = [dir(), dir()];
  const [home, config] = [dir(), dir()];
  fs.writeFileSync(path.join(home, '.bashrc'), "PS1='far> '\nHISTFILE=/dev/null\n");
  fs.mkdirSync(path.join(config, 'shared-pty'));
  const bridge = `SHARED_PTY_DIR=${farSide} HOME=${home} SHELL=/bin/bash LANG=C.UTF-8 exec ${process.execPath} ${CLI} bridge`;
  fs.writeFileSync(path.join(config, 'shared-pty', 'hosts.json'), JSON.stringify({ hosts: { web: `sh -c '${bridge}'` } }));
  const env = bashEnv({ SHARED_PTY_DIR: nearSide, XDG_CONFIG_HOME: config });
  plain = (await mcpClient(env, 'remote-tasks-plain', ELICITATION)).client;
  const withTasks = await mcpClient(env, 'remote-tasks', WITH_TASKS);
  tasksClient = withTasks.client;
  const extTasks = await import('@modelcontextprotocol/ext-tasks/client');
  tasks = extTasks.createTaskSessionFromClient(tasksClient as never, {
    endpointId: 'remote-tasks',
    rawDispatch: stdioRawDispatch(withTasks.transport as never) as never,
    v2RequestFraming: { protocolVersion: REVISION, clientInfo: { name: 'remote-tasks', version: '0.0.0' }, clientCapabilities: WITH_TASKS },
    onInputRequest: async () => ({ action: 'cancel' }) as never,
  });
});

after(async () => {
  await tasks?.close().catch(() => {});
  await tasksClient?.close().catch(() => {});
  await plain?.close().catch(() => {});
  // The per-user hosts `shared-pty mcp` and the bridge started, by their pids.
  for (const d of [farSide, nearSide]) if (d) for (const r of readLiveRecords(d)) await stopPid(r.pid);
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

async function call(name: string, args: Record<string, unknown>): Promise<ToolResult> {
  const r = (await plain.callTool({ name, arguments: args })) as ToolResult;
  assert.notEqual(r.isError, true, `${name}: ${textOf(r)}`);
  return r;
}

for (const [tool, args] of [
  ['wait_for', { match: 'DONE-far', timeout: 60_000 }],
  ['wait_event', { types: ['exit'], timeoutMs: 60_000 }],
] as const) {
  test(
    `a ${tool} task on a remote host's session is input_required while the program there waits for a line, then completes`,
    { timeout: TEST_TIMEOUT },
    async () => {
      const opened = await call('open_session', { host: 'web', command: 'bash', args: ['--norc', '--noprofile', '-i'], name: `far-${tool}` });
      const session = `web:${opened.structuredContent.id}`;
      // Typed without a wait: the program asks for its line as the task starts.
      await call('send_keys', { session, keys: [...'read -p "Name? " n; sleep 1; echo "DONE-$n"; exit 3'], wait: false });
      await call('send_keys', { session, keys: ['Enter'] });
      const execution = await tasks.callTool(tool, { session, ...args } as never, { task: { preference: 'require' } });
      assert.equal(execution.kind, 'task');
      const id = execution.handle!.taskId;
      const seen: string[] = [];
      await until(
        async () => {
          const t = await tasks.task(id).snapshot();
          seen.push(t.status);
          return t.status === 'input_required' && new RegExp(`Name\\?[\\s\\S]*session ${session}`).test(t.statusMessage ?? '') && t;
        },
        30_000,
        'input_required at the far prompt',
      ).catch((e: Error) => assert.fail(`${e.message} (statuses seen: ${[...new Set(seen)].join(', ')})`));
      await call('send_keys', { session, keys: [...'far', 'Enter'] });
      const { outcome } = await execution.settle();
      assert.equal(outcome.status, 'completed', JSON.stringify(outcome).slice(0, 400));
      const result = (outcome as { result: ToolResult }).result;
      assert.notEqual(result.isError, true, textOf(result));
    },
  );
}
