// docs/protocol.md#flow-control-ptyack-and-ptyflow: flow-controlled subscribers (`flow`, `pty/ack`, `pty/flow`) and the lossy resync
// (`snapshot: true`), against an in-process host with real node-pty, bash and Unix sockets.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Terminal } from '@xterm/headless';
import type { SessionInfo } from '../../../../src/core/methods/types';
import type { Notification, RpcClient } from '../../../../src/transport/client/rpc-client';
import { DEFAULT_RING_BYTES } from '../../../../src/core/session/ring-buffer';
import { BASH, connect, startHost, until, clientsClosed } from '../../../helpers/host';
import { FloodCheck, makeFlood, type Flood } from '../../../helpers/flood';
import { screenTextOf, writeAll } from '../../../helpers/xterm-screen';
import { ensureNoDisposablesAreLeakedBySuite } from '../../../helpers/leak-tracker';

/** Per-test bound: generous for 2 busy cores, finite so a hang fails instead of blocking. */
const TEST_TIMEOUT = 180_000;
/** The flood the issue asks for: 64 MiB of base64 text. */
const FLOOD_BYTES = 64 * 1024 * 1024;

type Host = Awaited<ReturnType<typeof startHost>>;

/** A client's view of one session: on the control socket every call names it, on its own socket none does. */
interface Target {
  client: RpcClient;
  /** Params every call carries (`{ session }` on the control socket). */
  extra: Record<string, unknown>;
  close(): void;
}

let host: Host;
let flood: Flood;

before(async () => {
  host = await startHost();
  flood = makeFlood(host.dir, FLOOD_BYTES);
});
after(async () => {
  await host.close();
});
// Once the shared host is closed, nothing the suite made is left (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedBySuite(clientsClosed);

async function newSession(): Promise<{ info: SessionInfo; control: RpcClient }> {
  const control = await connect(host.host.controlAddress);
  const info = (await control.request('session/create', { ...BASH, cols: 100, rows: 30 })) as SessionInfo;
  await control.request('pty/wait', { session: info.id, match: '$', timeout: 15_000 });
  return { info, control };
}

/** What a test gets: a new session, a control connection, and a way to open the session's own socket. */
interface Fixture {
  info: SessionInfo;
  control: RpcClient;
  onSessionSocket(): Promise<Target>;
}

/** Runs `fn` on a new session; kills it and closes every connection afterwards, whatever happened. */
async function withSession(fn: (f: Fixture) => Promise<void>): Promise<void> {
  const { info, control } = await newSession();
  const opened: RpcClient[] = [];
  const onSessionSocket = async (): Promise<Target> => {
    const client = await connect(info.address);
    opened.push(client);
    return { client, extra: {}, close: () => client.close() };
  };
  try {
    await fn({ info, control, onSessionSocket });
  } finally {
    for (const c of opened) c.close();
    await control.request('pty/kill', { session: info.id }).catch(() => undefined);
    control.close();
  }
}

/**
 * Subscribes flow-controlled and acknowledges like a slow client: each ack comes a few ms after
 * output arrived, covering what had arrived by then, and now and then the client stops reading
 * its socket for a while (so the PTY must wait). Resolves with the check once the flood's end marker came.
 */
async function followFloodSlowly(t: Target, window: number): Promise<{ check: FloodCheck; seen: Notification[]; mostUnacked: number }> {
  const check = new FloodCheck();
  const seen: Notification[] = [];
  let lastCursor = 0;
  /** The last cursor acknowledged (the host's count is never ahead of it), and the most ever sent past it. */
  let acked = 0;
  let mostUnacked = 0;
  let ackTimer: NodeJS.Timeout | undefined;
  let sinceLongPause = 0;
  const socket = (t.client as unknown as { _stream: { input: import('node:net').Socket } })._stream.input;
  const ack = () => {
    ackTimer = undefined;
    acked = lastCursor;
    void t.client.request('pty/ack', { ...t.extra, cursor: lastCursor }).catch(() => undefined);
  };
  const listener = t.client.onNotification((n) => {
    if (n.method !== 'pty/output') {
      seen.push(n);
      return;
    }
    if (n.params.dropped) seen.push(n);
    const data = n.params.data as string;
    check.push(data);
    lastCursor = n.params.cursor as number;
    mostUnacked = Math.max(mostUnacked, lastCursor - acked);
    sinceLongPause += data.length;
    // Every 8 MiB the client stops reading for 300 ms: far longer than the program needs to fill the
    // window, or a lossy subscriber to lose more than the 1 MiB ring.
    if (sinceLongPause > 8 * 1024 * 1024) {
      sinceLongPause = 0;
      socket.pause();
      setTimeout(() => socket.resume(), 300);
    }
    ackTimer ??= setTimeout(ack, 3);
  });
  const { cursor } = (await t.client.request('pty/subscribe', { ...t.extra, flow: true, window })) as { cursor: number };
  acked = cursor;
  await t.client.request('pty/write', { ...t.extra, action: { text: flood.command } });
  await until(() => check.done, TEST_TIMEOUT - 10_000, 'the end of the flood');
  listener.dispose();
  clearTimeout(ackTimer);
  return { check, seen, mostUnacked };
}

// Each test has a session of its own, and most of each is waiting (a slow client's pauses, five
// seconds to a demotion): all at once.
describe('flow-controlled subscribers', { concurrency: true }, () => {
  test('on a session socket: every byte of a 64 MiB flood, acknowledged slowly, never dropped', { timeout: TEST_TIMEOUT }, () =>
    withSession(async ({ onSessionSocket }) => {
      const { check, seen, mostUnacked } = await followFloodSlowly(await onSessionSocket(), 256 * 1024);
      assert.deepEqual(seen, [], 'no dropped count, no demotion');
      assert.ok(mostUnacked <= 256 * 1024, `never more than the window unacknowledged: ${mostUnacked} bytes`);
      assert.equal(check.received, flood.terminalBytes, 'every byte (each \\n became \\r\\n)');
      assert.equal(check.digest(), flood.sha256);
    }),
  );

  test('on the control socket (with session): every byte of a 64 MiB flood, never dropped', { timeout: TEST_TIMEOUT }, () =>
    withSession(async ({ info, control }) => {
      // A small window: the PTY waits on this client all the time.
      const { check, seen, mostUnacked } = await followFloodSlowly({ client: control, extra: { session: info.id }, close: () => {} }, 64 * 1024);
      assert.deepEqual(seen, [], 'no dropped count, no demotion');
      assert.ok(mostUnacked <= 64 * 1024, `never more than the window unacknowledged: ${mostUnacked} bytes`);
      assert.equal(check.digest(), flood.sha256);
    }),
  );

  test('a subscriber that never acknowledges is demoted (pty/flow) and the program goes on', { timeout: TEST_TIMEOUT }, () =>
    withSession(async ({ info, control, onSessionSocket }) => {
      const t = await onSessionSocket();
      const seen: Notification[] = [];
      t.client.onNotification((n) => seen.push(n));
      await t.client.request('pty/subscribe', { flow: true, window: 4096 });
      await control.request('pty/write', { session: info.id, action: { text: `seq 1 200000; echo DONE-$((6*7))\r` } });
      const flow = await until(() => seen.find((n) => n.method === 'pty/flow'), 30_000, 'pty/flow');
      assert.deepEqual(flow.params, { demoted: true });
      // Lossy from now on: the program runs to its end although the client still acknowledges nothing.
      const done = (await control.request('pty/wait', { session: info.id, match: 'DONE-42', timeout: 60_000 })) as { matched: boolean };
      assert.equal(done.matched, true);
      // Before the demotion nothing past the window had been sent (the program was held a read later).
      const before = seen.slice(0, seen.indexOf(flow)).filter((n) => n.method === 'pty/output');
      const sent = before.reduce((sum, n) => sum + Buffer.byteLength(n.params.data as string), 0);
      assert.ok(sent <= 4096, `held at the window: ${sent} bytes before the demotion`);
    }),
  );

  // Found by an outside audit: the session's socket closed with the session, and a subscriber that
  // had stopped acknowledging was cut off with the window's bytes only, and no pty/exit.
  test('a subscriber that stopped acknowledging on the session socket gets the rest and pty/exit when the session is killed', { timeout: TEST_TIMEOUT }, () =>
    withSession(async ({ info, control, onSessionSocket }) => {
      const t = await onSessionSocket();
      const seen: Notification[] = [];
      t.client.onNotification((n) => seen.push(n));
      const closed = new Promise<void>((resolve) => t.client.onClose(() => resolve()));
      await t.client.request('pty/subscribe', { flow: true, window: 16384 });
      await control.request('pty/write', { session: info.id, action: { text: `seq 1 100000; echo DONE-$((6*7))\r` } });
      // Held at the window: the program waits for an acknowledgement that does not come.
      await until(() => seen.some((n) => n.method === 'pty/output'), 30_000, 'the first output');
      await new Promise((r) => setTimeout(r, 300));
      assert.ok(!seen.some((n) => n.method === 'pty/flow'), 'not demoted yet');
      await control.request('pty/kill', { session: info.id });
      await closed;
      const exit = seen.find((n) => n.method === 'pty/exit');
      assert.ok(exit, `pty/exit before the close; got ${seen.map((n) => n.method).join(' ')}`);
      // Everything the session had, in order, before its pty/exit.
      const output = seen.filter((n) => n.method === 'pty/output');
      const last = output.at(-1)!.params as { cursor: number; data: string };
      const total = output.reduce((sum, n) => sum + Buffer.byteLength(n.params.data as string), 0);
      assert.ok(seen.indexOf(exit) > seen.indexOf(output.at(-1)!));
      assert.ok(total > 16384, `more than the window: ${total} bytes`);
      assert.equal(
        last.cursor,
        total + (output[0].params as { cursor: number }).cursor - Buffer.byteLength((output[0].params as { data: string }).data),
        'no gap',
      );
    }),
  );

  test('a window larger than the ring is the ring: taken, not refused, and the program is held within the ring', { timeout: TEST_TIMEOUT }, () =>
    withSession(async ({ info, control, onSessionSocket }) => {
      const t = await onSessionSocket();
      const seen: Notification[] = [];
      t.client.onNotification((n) => seen.push(n));
      // socket-pty clamps what is out of range: a client asking for more than the ring holds is not refused.
      const sub = (await t.client.request('pty/subscribe', { flow: true, window: 64 * 1024 * 1024 })) as { flow?: boolean };
      assert.equal(sub.flow, true);
      await control.request('pty/write', { session: info.id, action: { text: `seq 1 1000000; echo DONE-$((6*7))\r` } });
      // Nothing acknowledged: the program is held once the ring's worth is out, until the demotion.
      const flow = await until(() => seen.find((n) => n.method === 'pty/flow'), 30_000, 'pty/flow');
      const before = seen.slice(0, seen.indexOf(flow)).filter((n) => n.method === 'pty/output');
      const sent = before.reduce((sum, n) => sum + Buffer.byteLength(n.params.data as string), 0);
      assert.ok(sent <= DEFAULT_RING_BYTES, `held within the ring: ${sent} bytes before the demotion`);
      const done = (await control.request('pty/wait', { session: info.id, match: 'DONE-42', timeout: 60_000 })) as { matched: boolean };
      assert.equal(done.matched, true);
    }),
  );

  test(
    'unacknowledged output never exceeds the window: the rest waits in the ring, and each ack lets the next part come, in order',
    { timeout: TEST_TIMEOUT },
    () =>
      withSession(async ({ info, control, onSessionSocket }) => {
        const WINDOW = 4096;
        const t = await onSessionSocket();
        let text = '';
        let cursor = 0;
        let mostUnacked = 0;
        const others: Notification[] = [];
        t.client.onNotification((n) => {
          if (n.method !== 'pty/output' || n.params.dropped) return void others.push(n);
          text += n.params.data as string;
          cursor = n.params.cursor as number;
          mostUnacked = Math.max(mostUnacked, cursor - acked);
        });
        let acked = ((await t.client.request('pty/subscribe', { flow: true, window: WINDOW })) as { cursor: number }).cursor;
        await control.request('pty/write', { session: info.id, action: { text: `seq 1 20000; echo DONE-$((6*7))\r` } });
        // Nothing acknowledged: exactly a window comes (ASCII, so no character is cut), and then nothing.
        await until(() => cursor - acked >= WINDOW, 30_000, 'a full window');
        await new Promise((r) => setTimeout(r, 300));
        assert.equal(cursor - acked, WINDOW, 'no more than the window before an acknowledgement');
        // Acknowledging as it comes brings the rest, never more than a window past the last ack.
        while (!text.includes('DONE-42')) {
          const upTo = cursor;
          acked = upTo;
          await t.client.request('pty/ack', { cursor: upTo });
          await until(() => cursor > upTo || text.includes('DONE-42'), 30_000, `output after the ack of ${upTo}`);
        }
        assert.deepEqual(others, [], 'no dropped count, no demotion');
        assert.ok(mostUnacked <= WINDOW, `never more than the window unacknowledged: ${mostUnacked}`);
        // Each line as it shows (bash ends bracketed paste with `ESC [?2004l CR` before the first).
        const shown = (line: string) => line.split('\r').pop()!;
        const numbers = text
          .split('\r\n')
          .map(shown)
          .filter((l) => /^\d+$/.test(l));
        assert.deepEqual(
          numbers.map(Number),
          Array.from({ length: 20000 }, (_, i) => i + 1),
          'every line, in order',
        );
      }),
  );

  test('with two flow-controlled subscribers the slower one holds the program', { timeout: TEST_TIMEOUT }, () =>
    withSession(async ({ info, control, onSessionSocket }) => {
      // The quick one acknowledges everything at once; the stuck one nothing, with a small window.
      const quick = await onSessionSocket();
      const stuck = await onSessionSocket();
      let quickBytes = 0;
      let quickAtDemotion: number | undefined;
      quick.client.onNotification((n) => {
        if (n.method !== 'pty/output') return;
        quickBytes += Buffer.byteLength(n.params.data as string);
        void quick.client.request('pty/ack', { cursor: n.params.cursor }).catch(() => undefined);
      });
      stuck.client.onNotification((n) => {
        if (n.method === 'pty/flow') quickAtDemotion = quickBytes;
      });
      await quick.client.request('pty/subscribe', { flow: true });
      await stuck.client.request('pty/subscribe', { flow: true, window: 4096 });
      await control.request('pty/write', { session: info.id, action: { text: `seq 1 200000; echo DONE-$((6*7))\r` } });
      await until(() => quickAtDemotion !== undefined, 30_000, 'the stuck subscriber demoted');
      // Until then the quick subscriber got no more than the stuck one's window (plus one read, and the echo).
      assert.ok(quickAtDemotion! < 4096 + 64 * 1024 + 1024, `the program was held: ${quickAtDemotion} bytes before the demotion`);
      const done = (await control.request('pty/wait', { session: info.id, match: 'DONE-42', timeout: 60_000 })) as { matched: boolean };
      assert.equal(done.matched, true);
    }),
  );

  test('on the control socket, pty/flow names the session', { timeout: TEST_TIMEOUT }, () =>
    withSession(async ({ info, control }) => {
      const seen: Notification[] = [];
      control.onNotification((n) => seen.push(n));
      await control.request('pty/subscribe', { session: info.id, flow: true, window: 1024 });
      await control.request('pty/write', { session: info.id, action: { text: 'seq 1 100000\r' } });
      const flow = await until(() => seen.find((n) => n.method === 'pty/flow'), 30_000, 'pty/flow');
      assert.deepEqual(flow.params, { session: info.id, demoted: true });
    }),
  );
});

describe('lossy subscribers resync with snapshot: true', () => {
  test("a subscriber that fell behind gets dropped, and the snapshot it resubscribes with redraws pty/read's screen", { timeout: TEST_TIMEOUT }, () =>
    withSession(async ({ info, control, onSessionSocket }) => {
      const t = await onSessionSocket();
      const seen: Notification[] = [];
      t.client.onNotification((n) => seen.push(n));
      // Subscribed, then the client stops reading (its socket fills) while 3 MiB of coloured output pass.
      await t.client.request('pty/subscribe', {});
      const sock = (t.client as unknown as { _stream: { input: import('node:net').Socket } })._stream.input;
      sock.pause();
      await control.request('pty/write', {
        session: info.id,
        action: {
          text: `for i in $(seq 1 30000); do printf '\\e[3%dmline %d \\e[1mbold\\e[0m %s\\n' $((i%8)) $i xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx; done; printf '\\e[44mEND-%d\\e[0m' $((6*7))\r`,
        },
      });
      await control.request('pty/wait', { session: info.id, match: 'END-42', timeout: 60_000 });
      sock.resume();
      const dropped = await until(() => seen.find((n) => n.method === 'pty/output' && (n.params.dropped as number) > 0), 30_000, 'dropped');
      assert.ok((dropped.params.dropped as number) > 0);

      const r = (await t.client.request('pty/subscribe', { snapshot: true, scrollback: 0 })) as { cursor: number; snapshot: string };
      assert.equal(typeof r.snapshot, 'string');
      assert.equal(typeof r.cursor, 'number');
      const term = new Terminal({ cols: 100, rows: 30, allowProposedApi: true });
      await writeAll(term, r.snapshot);
      const screen = (await t.client.request('pty/read', {})) as { screen: string; cursor: { row: number; col: number } };
      assert.equal(screenTextOf(term), screen.screen);
      assert.deepEqual({ row: term.buffer.active.cursorY + 1, col: term.buffer.active.cursorX + 1 }, screen.cursor);
      // Colours and modes too: the last row's END is blue-backed; bash's prompt turned bracketed paste on.
      const cell = term.buffer.active.getLine(term.buffer.active.baseY + term.buffer.active.cursorY)!.getCell(0)!;
      assert.equal(cell.getChars(), 'E');
      assert.equal(cell.getBgColor(), 4);
      assert.equal(term.modes.bracketedPasteMode, true);
      // The notifications continue from the snapshot's cursor.
      seen.length = 0;
      await control.request('pty/write', { session: info.id, action: { text: 'echo AFTER-$((1+1))\r' } });
      const next = await until(() => seen.find((n) => n.method === 'pty/output'), 10_000, 'output after the resync');
      assert.equal(next.params.dropped, undefined);
      assert.equal((next.params.cursor as number) - Buffer.byteLength(next.params.data as string), r.cursor);
      term.dispose();
    }),
  );
});
