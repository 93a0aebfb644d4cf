// docs/protocol.md#events-ptyevents-and-ptywaitevent: events instead of polling. `pty/events` on a session's own socket, on the control
// socket (one session or all of them) and over `/rpc`; `pty/event` notifications numbered by the
// host (seq one more per event), replayed from `since`, stopped by `pty/unsubscribe {events:true}`;
// and the MCP tool `wait_event`. Real bash sessions in a real host.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startHttpHost, wsOpen, type HttpHost } from '../../../helpers/http';
import { BASH, connect, until, withTimeout, clientsClosed } from '../../../helpers/host';
import type { Notification, RpcClient } from '../../../../src/transport/client/rpc-client';
import { ensureNoDisposablesAreLeakedBySuite } from '../../../helpers/leak-tracker';
import { promptedShell } from '../../../helpers/shell-home';

const linux = process.platform === 'linux';

/** A control connection and the `pty/event` notifications it has received. */
interface Listener {
  client: RpcClient;
  events: any[];
}

// Once the shared host is closed, nothing the suite made is left (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedBySuite(clientsClosed);

describe('events', () => {
  let h: HttpHost;
  let ctl: RpcClient;
  const opened: RpcClient[] = [];

  before(async () => {
    h = await startHttpHost();
    ctl = await connect(h.host.controlAddress);
  });

  after(async () => {
    for (const c of opened) c.close();
    ctl?.close();
    await h?.close();
  });

  const rpc = (method: string, params: Record<string, unknown>) => ctl.request<any>(method, params);

  async function listener(address = h.host.controlAddress): Promise<Listener> {
    const client = await connect(address);
    opened.push(client);
    const events: any[] = [];
    client.onNotification((n: Notification) => {
      if (n.method === 'pty/event') events.push(n.params);
    });
    return { client, events };
  }

  async function openBash(): Promise<any> {
    const info = await rpc('session/create', { ...BASH, cols: 80, rows: 24 });
    await until(async () => (await rpc('pty/read', { session: info.id })).screen.includes('$'), 10_000, 'a prompt');
    return info;
  }

  const waitFor = (l: { events: any[] }, pred: (e: any) => boolean, what: string) => until(() => l.events.find(pred), 10_000, what);

  test("a session's socket: resize, bell, title, input_wait and exit, each numbered one more than the last", { timeout: 30_000 }, async () => {
    const info = await openBash();
    assert.equal(h.host.registry.size, 1, "the host's only session: every event of the host is its");
    const own = await listener(info.address);
    const { seq } = await own.client.request<any>('pty/events', {});
    assert.equal(typeof seq, 'number');

    await own.client.request('pty/resize', { cols: 90, rows: 20 });
    await own.client.request('pty/write', { action: { text: "printf '\\a\\033]0;events-title\\007'\r" } });
    await waitFor(own, (e) => e.type === 'title', 'the title event');
    if (linux) await waitFor(own, (e) => e.type === 'input_wait', 'input_wait at the prompt');
    await own.client.request('pty/write', { action: { text: 'exit 3\r' } });
    const exit = await waitFor(own, (e) => e.type === 'exit', 'the exit event');

    assert.deepEqual(exit, { session: info.id, seq: exit.seq, at: exit.at, type: 'exit', exitCode: 3, signal: null });
    const resize = own.events.find((e) => e.type === 'resize');
    assert.deepEqual({ cols: resize.cols, rows: resize.rows, session: resize.session }, { cols: 90, rows: 20, session: info.id });
    assert.ok(
      own.events.some((e) => e.type === 'bell'),
      'the bell',
    );
    assert.equal(own.events.find((e) => e.type === 'title').title, 'events-title');
    assert.equal(own.events[0].seq, seq + 1, 'the first live event follows the seq the call returned');
    own.events.forEach((e, i) => {
      assert.equal(e.seq, seq + 1 + i, `seq one more per event: ${JSON.stringify(own.events)}`);
      assert.ok(!Number.isNaN(Date.parse(e.at)), 'at is a time');
    });
  });

  test(
    'input_wait for a program that starts to read after a silent while, printing no prompt (sleep 0.6; cat)',
    { timeout: 30_000, skip: !linux },
    async () => {
      const info = await openBash();
      const own = await listener(info.address);
      await own.client.request('pty/events', {});
      await new Promise((r) => setTimeout(r, 300)); // the prompt's own input_wait is told before the command
      own.events.length = 0;
      await own.client.request('pty/write', { action: { text: 'sleep 0.6; cat\r' } });
      // Nothing is printed after the command line: only the job's state says cat reads.
      await waitFor(own, (e) => e.type === 'input_wait', 'input_wait while cat reads');
      assert.match((await rpc('pty/read', { session: info.id })).screen, /\$ sleep 0\.6; cat\n?$/, 'cat runs: no prompt came back');
      await own.client.request('pty/signal', { signal: 'SIGINT' });
    },
  );

  test('titles and bells printed in one burst: each title, in output order with the bells', { timeout: 30_000 }, async () => {
    const info = await openBash();
    const own = await listener(info.address);
    await own.client.request('pty/events', {});
    // One printf: the three signals reach the parser in one read.
    await own.client.request('pty/write', { action: { text: "printf '\\033]0;burst-one\\007\\a\\033]0;burst-two\\007'\r" } });
    await waitFor(own, (e) => e.type === 'title' && e.title === 'burst-two', 'the second title');
    const told = own.events.filter((e) => e.type === 'title' || e.type === 'bell').map((e) => (e.type === 'title' ? e.title : 'bell'));
    assert.deepEqual(told, ['burst-one', 'bell', 'burst-two']);
  });

  test(
    'the control socket: every session without `session`, one with it; since replays; unsubscribe {events:true} stops them',
    { timeout: 30_000 },
    async () => {
      const all = await listener();
      const one = await listener();
      const a = await openBash();
      const b = await openBash();
      const start = (await all.client.request<any>('pty/events', {})).seq;
      await one.client.request('pty/events', { session: b.name }); // a selector, as everywhere

      await rpc('pty/resize', { session: a.id, cols: 81, rows: 24 });
      await rpc('pty/resize', { session: b.id, cols: 82, rows: 24 });
      await waitFor(all, (e) => e.type === 'resize' && e.session === b.id, "b's resize on the all-sessions subscription");
      await waitFor(one, (e) => e.type === 'resize', "b's resize");
      assert.ok(all.events.some((e) => e.type === 'resize' && e.session === a.id && e.cols === 81));
      assert.ok(
        one.events.every((e) => e.session === b.id),
        "only b's events",
      );

      // A client that comes later catches up from where it was.
      const late = await listener();
      const r = await late.client.request<any>('pty/events', { since: start });
      await until(() => late.events.length >= r.seq - start, 10_000, 'the replay');
      await until(() => all.events.some((e) => e.seq === r.seq), 10_000, 'the live events up to there');
      assert.deepEqual(
        late.events.slice(0, r.seq - start),
        all.events.filter((e) => e.seq <= r.seq),
        'the replay is what the live subscriber got',
      );

      // Stopped: an event that happens during the next call would be sent before its answer.
      await one.client.request('pty/unsubscribe', { events: true });
      const before = one.events.length;
      await one.client.request('pty/resize', { session: b.id, cols: 83, rows: 24 });
      assert.equal(one.events.length, before, 'no event after pty/unsubscribe {events:true}');
      await waitFor(all, (e) => e.type === 'resize' && e.cols === 83, 'the resize still reaches others');
      // Output subscriptions are another matter: unsubscribe without events needs its session.
      await assert.rejects(one.client.request('pty/unsubscribe', {}), /needs a session/);
      await rpc('pty/kill', { session: a.id });
      await rpc('pty/kill', { session: b.id });
    },
  );

  test('/rpc (WebSocket): pty/events streams like the control socket', { timeout: 30_000 }, async () => {
    const info = await openBash();
    const ws = await wsOpen(h.port, '/rpc', { token: h.token });
    try {
      ws.send({ jsonrpc: '2.0', id: 1, method: 'pty/events', params: { session: info.id } });
      const answer = await ws.next((m) => m.id === 1, 'the answer');
      assert.equal(typeof answer.result.seq, 'number');
      await rpc('pty/resize', { session: info.id, cols: 70, rows: 22 });
      // input_wait comes whenever the input watch next looks at the idle shell: not part of this.
      const note = await ws.next((m) => m.method === 'pty/event' && m.params.type !== 'input_wait', 'a pty/event');
      // Sequence numbers are the host's: another session's event (an earlier test's session telling
      // its exit once its last output is parsed) may take the next one.
      assert.ok(note.params.seq > answer.result.seq, 'numbered after the answer');
      assert.deepEqual(
        { ...note.params, at: undefined, seq: undefined },
        { session: info.id, seq: undefined, at: undefined, type: 'resize', cols: 70, rows: 22 },
      );
    } finally {
      await ws.close();
      await rpc('pty/kill', { session: info.id });
    }
  });

  test('MCP wait_event: the first matching event after the call began, or event null on timeout', { timeout: 30_000 }, async () => {
    const agent = new Client({ name: 'events-test', version: '0.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(`${h.http.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${h.token}` } } });
    await withTimeout(agent.connect(transport), 20_000, 'MCP connect');
    const info = await openBash();
    try {
      await rpc('pty/resize', { session: info.id, cols: 60, rows: 20 }); // before the call: not it
      const waiting = agent.callTool({ name: 'wait_event', arguments: { session: info.id, types: ['resize', 'exit'], timeoutMs: 20_000 } }) as Promise<any>;
      // The call has begun once the host holds it; then the event it waits for.
      await until(() => h.host.registry.get(info.id)!.callsInProgress > 0, 10_000, 'the wait to begin');
      await rpc('pty/write', { session: info.id, action: { text: "printf '\\a'\r" } });
      await rpc('pty/resize', { session: info.id, cols: 61, rows: 20 });
      const got = await waiting;
      assert.notEqual(got.isError, true, JSON.stringify(got.content));
      assert.equal(got.structuredContent.reason, 'matched');
      assert.equal(got.structuredContent.event.type, 'resize');
      assert.equal(got.structuredContent.event.cols, 61);
      assert.match(got.content[0].text, /resize/);

      const none = (await agent.callTool({ name: 'wait_event', arguments: { session: info.id, types: ['secret_input'], timeoutMs: 0 } })) as any;
      assert.deepEqual(none.structuredContent, { event: null, reason: 'timeout' });
      const bad = (await agent.callTool({ name: 'wait_event', arguments: { session: info.id, types: ['nonsense'] } })) as any;
      assert.equal(bad.isError, true);
    } finally {
      await agent.close().catch(() => {});
      await rpc('pty/kill', { session: info.id });
    }
  });

  // A wait is seen by a probe some time after it began: the prompt a finished command left was
  // seen ~0.9 s later and matched a wait_event called after the send had returned (found by an
  // outside audit). Only a wait that begins after the call counts; one that does is still seen.
  test('wait_event input_wait: the prompt a finished send left does not count; a wait that begins after the call does', { timeout: 30_000 }, async () => {
    const { home, ...how } = promptedShell('bash');
    const info = await rpc('session/create', { ...how, args: [], cols: 80, rows: 24 });
    try {
      assert.equal(info.integration, true, 'an interactive bash is integrated');
      for (const round of [1, 2]) {
        const sent = await rpc('pty/send', { session: info.id, text: 'sleep 1.2; echo slept' });
        assert.equal(sent.waitReason, 'command_done', `round ${round}`);
        const stale = await rpc('pty/waitEvent', { session: info.id, types: ['input_wait'], timeoutMs: 2500 });
        assert.deepEqual(stale, { event: null, reason: 'timeout' }, `round ${round}: the prompt was there before the call`);
      }
      const waiting = rpc('pty/waitEvent', { session: info.id, types: ['input_wait'], timeoutMs: 10_000 });
      await until(() => h.host.registry.get(info.id)!.callsInProgress > 0, 10_000, 'the wait to begin');
      await rpc('pty/write', { session: info.id, action: { text: 'sleep 1.2; read -p "name? " x\r' } });
      const fresh = await waiting;
      assert.equal(fresh.reason, 'matched', JSON.stringify(fresh));
      assert.equal(fresh.event.type, 'input_wait');
    } finally {
      await rpc('pty/kill', { session: info.id });
      fs.rmSync(home, { recursive: true, force: true });
    }
  });

  test('with shell integration, each command a send runs is a command_started and a command_finished with its exit code', { timeout: 30_000 }, async () => {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'spt-events-home-'));
    fs.writeFileSync(path.join(home, '.bashrc'), "PS1='ev> '\nHISTFILE=/dev/null\n");
    const info = await rpc('session/create', { command: 'bash', args: [], cwd: home, env: { HOME: home }, cols: 80, rows: 24 });
    try {
      assert.equal(info.integration, true, 'an interactive bash is integrated');
      const own = await listener(info.address);
      await own.client.request('pty/events', {});
      const sent = await own.client.request<any>('pty/send', { text: 'false' });
      assert.equal(sent.waitReason, 'command_done');
      const started = await waitFor(own, (e) => e.type === 'command_started', 'command_started');
      const finished = await waitFor(own, (e) => e.type === 'command_finished', 'command_finished');
      assert.equal(started.command, 'false');
      assert.deepEqual({ command: finished.command, exitCode: finished.exitCode }, { command: 'false', exitCode: 1 });
      assert.equal(typeof finished.durationMs, 'number');
      assert.ok(finished.seq > started.seq);
    } finally {
      await rpc('pty/kill', { session: info.id });
      fs.rmSync(home, { recursive: true, force: true });
    }
  });

  test(
    'events come in output order: a bell or a title just before a command ends comes before its command_finished, a bell after it after',
    { timeout: 30_000 },
    async () => {
      const home = fs.mkdtempSync(path.join(os.tmpdir(), 'spt-events-home-'));
      fs.writeFileSync(path.join(home, '.bashrc'), "PS1='ev> '\nHISTFILE=/dev/null\n");
      const info = await rpc('session/create', { command: 'bash', args: [], cwd: home, env: { HOME: home }, cols: 80, rows: 24 });
      try {
        const own = await listener(info.address);
        await own.client.request('pty/events', {});
        const types = () => own.events.map((e) => e.type).filter((t) => t !== 'input_wait');
        // The bell and the title are found by the screen's parser, the command's end by its mark, as the output is read.
        const sent = await own.client.request<any>('pty/send', { text: "printf '\\a\\033]0;ordered\\007'; false" });
        assert.deepEqual([sent.waitReason, sent.exitCode], ['command_done', 1]);
        assert.deepEqual(types(), ['command_started', 'bell', 'title', 'command_finished'], 'told before the send answered, in output order');
        // A prompt that rings after the command ended (bells closer than 250 ms apart are one event).
        await new Promise((r) => setTimeout(r, 300));
        own.events.length = 0;
        await own.client.request<any>('pty/send', { text: "PS1='\\a> '" });
        await waitFor(own, (e) => e.type === 'bell', "the prompt's bell");
        assert.deepEqual(types(), ['command_started', 'command_finished', 'bell']);
      } finally {
        await rpc('pty/kill', { session: info.id });
        fs.rmSync(home, { recursive: true, force: true });
      }
    },
  );
});
