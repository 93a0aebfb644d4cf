// The method table over the in-memory linked pair (src/transport/rpc/linked-pair.ts): a host's
// TablePeer and a client peer connected in-process, no socket; the sessions are real (node-pty,
// bash, cat). And every wait of the table (whenFirst: pty/output waitMs, pty/wait, pty/waitEvent,
// pty/send, an agent's approval) leaves nothing behind, however it ends.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Session } from '../../../../src/core/session/session';
import type { SessionInfo } from '../../../../src/core/methods/types';
import { JsonRpcPeer } from '../../../../src/transport/rpc/json-rpc-peer';
import { linkedPair } from '../../../../src/transport/rpc/linked-pair';
import { TablePeer } from '../../../../src/transport/rpc/table-peer';
import type { Notification } from '../../../../src/transport/rpc/messages';
import { BASH, rejectsWith, startHost, TEST_WRITER, until } from '../../../helpers/host';
import { ensureNoDisposablesAreLeakedInTestSuite } from '../../../helpers/leak-tracker';

const TEST_TIMEOUT = 60_000;

let h: Awaited<ReturnType<typeof startHost>>;
let bash: Session;
let cat: Session;

before(async () => {
  h = await startHost();
  bash = await h.host.createSession({ ...BASH, name: 'bash' });
  cat = await h.host.createSession({ command: 'cat', name: 'cat' });
  await until(() => bash.ring.read(0).text.includes('$ '), 10_000, 'the prompt');
});

after(async () => {
  await h?.close();
});

/** A client connected to the host's table in memory (the control endpoint: params name the session). */
function connectInMemory() {
  return linkedPair(
    (w) => new TablePeer(w, { mode: { kind: 'control' }, services: h.host, link: { origin: 'script', transport: 'control' } }),
    (w) => new JsonRpcPeer(w),
  );
}

describe('the method table over an in-memory linked pair', () => {
  test('session/create, pty/write, pty/wait, pty/read, pty/kill on a real bash; errors keep their codes and data', { timeout: TEST_TIMEOUT }, async () => {
    const pair = connectInMemory();
    const c = pair.b;
    try {
      const info = await c.request<SessionInfo>('session/create', { ...BASH, cols: 80, rows: 24, name: 'made-in-memory' });
      assert.equal(info.name, 'made-in-memory');
      assert.deepEqual([info.cols, info.rows], [80, 24]);
      // The screen's rows end without their trailing spaces: the prompt is `$`.
      assert.equal((await c.request<{ matched: boolean }>('pty/wait', { session: info.id, match: '$', timeout: 10_000 })).matched, true);
      assert.deepEqual(await c.request('pty/write', { session: info.id, action: [{ text: 'echo in-$((6*7))' }, { key: 'Enter' }] }), { written: 17 });
      const w = await c.request<{ matched: boolean; reason: string }>('pty/wait', { session: info.id, match: 'in-42', timeout: 10_000 });
      assert.deepEqual([w.matched, w.reason], [true, 'matched']);
      const r = await c.request<{ screen: string }>('pty/read', { session: info.id });
      assert.match(r.screen, /^in-42$/m);
      await rejectsWith(c.request('no/such'), -32601);
      const unknown = await rejectsWith(c.request('pty/read', { session: 'no-such-session' }), -32001);
      assert.deepEqual(unknown.data, { session: 'no-such-session' });
      await rejectsWith(c.request('pty/resize', { session: info.id, cols: 'wide' }), -32602);
      assert.deepEqual(await c.request('pty/kill', { session: info.id }), {});
    } finally {
      pair.dispose();
    }
  });

  test('pty/subscribe: pty/output notifications with the session, and pty/exit', { timeout: TEST_TIMEOUT }, async () => {
    const pair = connectInMemory();
    const c = pair.b;
    const notes: Notification[] = [];
    c.onNotification((n) => notes.push(n));
    try {
      const s = await c.request<SessionInfo>('session/create', { command: 'sh', args: ['-c', 'read line; echo "got $line"'] });
      await c.request('pty/subscribe', { session: s.id, since: 0 });
      await c.request('pty/write', { session: s.id, action: { text: 'hello\n' } });
      await until(() => notes.some((n) => n.method === 'pty/exit'), 10_000, 'pty/exit');
      const output = notes.filter((n) => n.method === 'pty/output');
      assert.ok(output.every((n) => n.params.session === s.id));
      assert.match(output.map((n) => n.params.data).join(''), /got hello/);
      assert.equal(notes.at(-1)?.method, 'pty/exit');
    } finally {
      pair.dispose();
    }
  });
});

describe('the waits leave nothing behind (no listener, timer or subscription), however they end', () => {
  ensureNoDisposablesAreLeakedInTestSuite(async (tracker) => {
    // What a call held goes a turn or two after its answer (the session's hold on it, its link).
    await until(() => tracker.leakCount === 0, 10_000, 'everything released').catch(() => undefined);
  });

  test('pty/output waitMs, pty/wait, pty/waitEvent and pty/send: by output, by match, by event, by timeout', { timeout: TEST_TIMEOUT }, async () => {
    const pair = connectInMemory();
    const c = pair.b;
    try {
      // Ended by the time running out.
      const quiet = await c.request<{ data: string }>('pty/output', { session: cat.id, since: cat.cursor, waitMs: 1 });
      assert.equal(quiet.data, '');
      assert.equal((await c.request<{ reason: string }>('pty/wait', { session: cat.id, match: 'never-shown', timeout: 1 })).reason, 'timeout');
      assert.equal((await c.request<{ reason: string }>('pty/waitEvent', { session: cat.id, types: ['bell'], timeoutMs: 1 })).reason, 'timeout');
      // Ended by what they wait for.
      const since = cat.cursor;
      const output = c.request<{ data: string }>('pty/output', { session: cat.id, since, waitMs: 30_000 });
      const matched = c.request<{ reason: string }>('pty/wait', { session: cat.id, match: 'bell-now', since, timeout: 30_000 });
      const event = c.request<{ reason: string; event: { type: string } }>('pty/waitEvent', { session: cat.id, types: ['bell'], timeoutMs: 30_000 });
      // Every call has reached its wait once a later one on the same connection is answered.
      await c.request('pty/status', { session: cat.id });
      cat.write('bell-now\x07\n', TEST_WRITER);
      assert.match((await output).data, /bell-now/);
      assert.equal((await matched).reason, 'matched');
      const e = await event;
      assert.deepEqual([e.reason, e.event.type], ['matched', 'bell']);
      const sent = await c.request<{ waitReason: string; output: string }>('pty/send', { session: bash.id, text: 'echo sent-$((1+1))', timeout: 30_000 });
      assert.equal(sent.waitReason, 'stdin_read');
      assert.match(sent.output, /sent-2/);
    } finally {
      pair.dispose();
    }
  });

  test('calls waiting when the connection drops end at once and hold nothing', { timeout: TEST_TIMEOUT }, async () => {
    const pair = connectInMemory();
    const c = pair.b;
    const calls = [
      c.request('pty/output', { session: cat.id, since: cat.cursor, waitMs: 60_000 }),
      c.request('pty/wait', { session: cat.id, match: 'never-shown', timeout: 60_000 }),
      c.request('pty/waitEvent', { session: cat.id, types: ['bell'], timeoutMs: 60_000 }),
      c.request('pty/send', { session: bash.id, text: 'sleep 30', timeout: 60_000 }),
    ];
    await c.request('pty/status', { session: cat.id });
    pair.dispose();
    for (const call of calls) await assert.rejects(call, { code: 'CONNECTION_CLOSED' });
    // The send the drop cut short leaves the session free for the next one.
    await until(() => !bash.sendInProgress, 10_000, 'the send lock released');
    // Ctrl+C until the prompt is back: one that came before bash started the sleep reached bash,
    // and a job left running is looked at again and again (InputWatch), which is not a leak of the calls'.
    await until(
      async () => {
        bash.write('\x03', TEST_WRITER);
        await new Promise((r) => setTimeout(r, 100));
        return (
          (await bash.mirror.screen()).rows
            .filter((r) => r.trim() !== '')
            .at(-1)
            ?.trim() === '$'
        );
      },
      10_000,
      'the prompt back',
    );
  });

  test('an agent\'s write under "ask": answered by the watching window, or unanswered when its time runs out', { timeout: TEST_TIMEOUT }, async () => {
    const editor = connectInMemory();
    const agent = connectInMemory();
    const questions: Notification[] = [];
    editor.b.onNotification((n) => n.method === 'agent/approval' && questions.push(n));
    try {
      await editor.b.request('host/agentPolicy', { approval: 'ask' });
      await editor.b.request('host/watchAgents');
      // A session the user opened: an agent's writes into it ask first.
      const mine = await editor.b.request<SessionInfo>('session/create', { command: 'cat', origin: 'user' });
      const asAgent = { origin: 'agent', transport: 'mcp-stdio' };
      const write = agent.b.request<{ written: number }>('pty/write', { session: mine.id, action: { text: 'agent-typed\n' }, client: asAgent });
      await until(() => questions.length === 1, 10_000, 'the question');
      assert.deepEqual(await editor.b.request('host/approve', { id: questions[0].params.id, decision: 'once' }), { decided: true });
      assert.equal((await write).written, 12);
      // Nobody answers this one: the send's timeout ends the question, and a late answer does not count.
      const unanswered = agent.b.request('pty/send', { session: mine.id, text: 'never-typed', timeout: 1, client: asAgent });
      await assert.rejects(unanswered, { code: -32000, data: { session: mine.id, denied: true, approval: 'unanswered', reason: 'declined' } });
      await until(() => questions.length === 2, 10_000, 'the second question');
      assert.deepEqual(await editor.b.request('host/approve', { id: questions[1].params.id, decision: 'once' }), { decided: false });
      await editor.b.request('pty/kill', { session: mine.id });
    } finally {
      await editor.b.request('host/agentPolicy', { approval: 'allow' }).catch(() => undefined);
      agent.dispose();
      editor.dispose();
    }
  });
});
