// The notification table (src/core/methods/notifications.ts, docs/protocol.md#notifications) says
// what the host sends; this holds the host to it. A real host, a real bash with its shell
// integration, real sockets: every notification a session gives its clients (output, exit, a
// flow demotion, each type of event, an agent's approval asked of a window and of the agent's own
// client, agent typing), on a session's own socket and on the control socket, must fit its schema
// exactly: no field missing, none of another type, none the schema does not name.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { NOTIFICATION_INDEX, NOTIFICATIONS } from '../../../../src/core/methods/notifications';
import { EVENT_TYPES } from '../../../../src/core/session/events/session-events';
import type { Notification, RpcClient } from '../../../../src/transport/client/rpc-client';
import { connect, startHost, until, clientsClosed } from '../../../helpers/host';
import { AGENT, agentCalls } from '../../../helpers/agent-calls';
import { promptedShell } from '../../../helpers/shell-home';
import { ensureNoDisposablesAreLeakedBySuite } from '../../../helpers/leak-tracker';

/** Per-step bound: generous for 2 busy cores; the flow demotion alone takes 5 s. */
const STEP_MS = 30_000;

let h: Awaited<ReturnType<typeof startHost>>;
/** Every client this test opened, closed at the end. */
const clients: RpcClient[] = [];
/** Every notification any of them received, with where it came. */
const received: { where: string; n: Notification }[] = [];

async function listening(address: string, where: string): Promise<RpcClient> {
  const client = await connect(address);
  clients.push(client);
  client.onNotification((n) => received.push({ where, n }));
  return client;
}

const seen = (method: string, where?: string) => received.filter((r) => r.n.method === method && (where === undefined || r.where === where));
const eventSeen = (type: string) => received.some((r) => r.n.method === 'pty/event' && r.n.params.type === type);

before(async () => {
  h = await startHost({ agentApproval: 'ask' });
});
after(async () => {
  for (const c of clients) c.close();
  await h?.close();
});
// Once the shared host is closed, nothing the suite made is left (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedBySuite(clientsClosed);

test('every notification of a real session fits the notification table exactly', { timeout: 10 * STEP_MS }, async () => {
  const script = await listening(h.host.controlAddress, 'control');
  const shell = promptedShell('bash');
  try {
    // A user's integrated bash (agents' writes into it are asked about).
    const info = await script.request<{ id: string; address: string; integration: boolean }>('session/create', {
      command: shell.command,
      cwd: shell.cwd,
      env: shell.env,
      cols: 80,
      rows: 24,
      origin: 'user',
    });
    assert.equal(info.integration, true, 'an interactive bash is integrated: its commands are events too');
    await until(async () => (await script.request<{ screen: string }>('pty/read', { session: info.id })).screen.includes('my>'), STEP_MS, 'the prompt');

    // Output, exit and events on the session's own socket (no `session` field) and on the control socket (with it).
    const own = await listening(info.address, 'session socket');
    await own.request('pty/subscribe', { since: 0 });
    await own.request('pty/events', {});
    await script.request('pty/subscribe', { session: info.id, since: 0 });
    await script.request('pty/events', {});

    // A window that watches agents, answering every question with Allow once.
    const window = await listening(h.host.controlAddress, 'window');
    window.onNotification((n) => {
      if (n.method === 'agent/approval') void window.request('host/approve', { id: n.params.id, decision: 'once' }).catch(() => undefined);
    });
    await window.request('host/watchAgents', {});

    // Events: a command (started, finished), the bell and a title, a resize, a secret prompt, a wait for input.
    await script.request('pty/send', { session: info.id, text: "printf '\\a\\033]0;notif-title\\007'" });
    await script.request('pty/resize', { session: info.id, cols: 90, rows: 24 });
    await script.request('pty/send', { session: info.id, text: 'read -s -p "Password: " pw; echo' });
    const secret = await until(() => seen('pty/event', 'control').find((r) => r.n.params.type === 'secret_input'), STEP_MS, 'secret_input');
    await script.request('pty/write', { session: info.id, action: { text: 'hunter2\r' } });
    // Answered: the shell waits at its prompt again (an input_wait after the secret prompt).
    await until(
      () => seen('pty/event', 'control').some((r) => r.n.params.type === 'input_wait' && Number(r.n.params.seq) > Number(secret.n.params.seq)),
      STEP_MS,
      'the prompt back',
    );
    await until(() => eventSeen('bell') && eventSeen('title') && eventSeen('resize'), STEP_MS, 'the events');

    // An agent's write, asked of the window: agent/typing, agent/approval (an ApprovalRequest), agent/approvalEnded.
    const agent = await listening(h.host.controlAddress, 'agent');
    const { agentRpc } = agentCalls(script, agent);
    await agentRpc('pty/send', { session: info.id, text: 'echo approved-once' });
    await until(() => seen('agent/approvalEnded', 'window').length && seen('agent/typing', 'window').length >= 2, STEP_MS, 'the window told');

    // With no window, an agent whose own client asks: agent/approval (an ApprovalQuestion) and agent/approvalEnded to that connection.
    window.close();
    await until(async () => !(await script.request<{ canAsk: boolean }>('host/agentPolicy', {})).canAsk, STEP_MS, 'the window gone');
    const asker = await listening(h.host.controlAddress, 'asking agent');
    const asks = { ...AGENT, asks: true };
    asker.onNotification((n) => {
      if (n.method === 'agent/approval') void asker.request('host/approve', { id: n.params.id, decision: 'once', client: asks }).catch(() => undefined);
    });
    await asker.request('pty/send', { session: info.id, text: 'echo asked-its-own', client: asks });
    await until(() => seen('agent/approvalEnded', 'asking agent').length, STEP_MS, "the agent's own question over");

    // A flow-controlled subscriber that never acknowledges is demoted: pty/flow.
    const stuck = await listening(info.address, 'stuck subscriber');
    await stuck.request('pty/subscribe', { flow: true, window: 1024 });
    await script.request('pty/write', { session: info.id, action: { text: 'seq 1 100000\r' } });
    await until(() => seen('pty/flow').length, STEP_MS, 'pty/flow');

    // The end: pty/exit to both subscribers, the exit event.
    await script.request('pty/write', { session: info.id, action: { text: 'exit 3\r' } });
    await until(() => seen('pty/exit', 'session socket').length && seen('pty/exit', 'control').length && eventSeen('exit'), STEP_MS, 'the exit');
  } finally {
    fs.rmSync(shell.home, { recursive: true, force: true });
  }

  // Every notification the table names came, and each event type.
  for (const spec of NOTIFICATIONS) assert.ok(seen(spec.name).length > 0, `no ${spec.name} came`);
  for (const type of EVENT_TYPES) assert.ok(eventSeen(type), `no ${type} event came`);
  assert.ok(
    seen('pty/output', 'session socket').every((r) => !('session' in r.n.params)),
    "a session's own socket names no session",
  );
  assert.ok(
    seen('pty/output', 'control').every((r) => typeof r.n.params.session === 'string'),
    'the control socket names the session',
  );
  assert.ok(
    seen('agent/approval', 'window').every((r) => 'at' in r.n.params),
    'a window is told the whole request',
  );
  assert.ok(
    seen('agent/approval', 'asking agent').every((r) => !('at' in r.n.params)),
    "the agent's own client is asked the question alone",
  );

  // Each one fits its schema exactly: parsing keeps every field (a field the schema does not name is dropped by the parse).
  for (const { where, n } of received) {
    const spec = NOTIFICATION_INDEX.get(n.method);
    assert.ok(spec, `${where}: ${n.method} is not in the notification table`);
    const r = spec.params.safeParse(n.params);
    assert.ok(
      r.success,
      `${where}: ${n.method} ${JSON.stringify(n.params).slice(0, 200)} does not fit its schema: ${r.error?.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
    );
    assert.deepEqual(r.data, n.params, `${where}: ${n.method} carries fields its schema does not name`);
  }
});
