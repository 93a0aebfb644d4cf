// The stream WebSocket's opt-in resync (`?resync=1`, docs/protocol.md): where output was lost the
// host sends one `{type:"snapshot"}` and goes on; without the opt-in nothing changes. In-process
// host, real bash, real WebSocket.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Terminal } from '@xterm/headless';
import { BASH, TEST_WRITER, until } from '../../../helpers/host';
import { startHttpHost, wsOpen, type HttpHost } from '../../../helpers/http';
import { screenText } from '../../../../src/core/mirror/screen-text';
import { snapshotFrame } from '../../../../src/core/methods/stream-frames';
import type { Session } from '../../../../src/core/session/session';
import { screenTextOf, writeAll } from '../../../helpers/xterm-screen';
import { ensureNoDisposablesAreLeakedBySuite } from '../../../helpers/leak-tracker';

/** Per-test bound: generous for a noisy machine, finite so a hang fails instead of blocking. */
const TEST_TIMEOUT = 60_000;

let h: HttpHost;
let session: Session;

before(async () => {
  h = await startHttpHost();
  session = await h.host.createSession({ ...BASH, cols: 80, rows: 24, name: 'resync' });
  // More than the 1 MiB ring, so a replay from the first byte is cut: every new stream starts after a gap.
  session.write(`seq 1 300000; printf '\\e[42mDONE-%d\\e[0m\\n' $((6*7))\r`, TEST_WRITER);
  await until(async () => (await session.mirror.screen()).rows.some((r) => r.startsWith('DONE-42')), 30_000, 'the output');
  assert.ok(session.ring.start > 0, 'the ring has moved on');
});
after(async () => {
  await h.close();
});
// Once the shared host is closed, nothing the suite made is left (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedBySuite();

describe('stream WebSocket ?resync=1', () => {
  test('a stream that asks gets a snapshot instead of a cut replay, and it redraws the screen', { timeout: TEST_TIMEOUT }, async () => {
    const ws = await wsOpen(h.port, `/sessions/${session.id}/stream?resync=1`, { queryToken: h.token });
    try {
      const first = await ws.next(() => true, 'the first message');
      assert.equal(first.type, 'snapshot');
      // Exactly the stream's snapshot message (src/core/methods/stream-frames.ts): no field missing or added.
      assert.deepEqual(snapshotFrame.schema.strict().parse(first), first);
      assert.deepEqual([first.cols, first.rows], [80, 24]);
      const term = new Terminal({ cols: first.cols, rows: first.rows, allowProposedApi: true });
      await writeAll(term, first.data);
      assert.equal(screenTextOf(term), screenText(await session.mirror.screen()));
      // Live output follows the picture.
      session.write('echo LIVE-$((2+3))\r', TEST_WRITER);
      await ws.next((m) => m.type === 'data' && m.data.includes('LIVE-5'), 'live output after the snapshot');
      term.dispose();
    } finally {
      await ws.close();
    }
  });

  test('a stream that does not ask never gets a snapshot: the cut replay comes as data, as before', { timeout: TEST_TIMEOUT }, async () => {
    const ws = await wsOpen(h.port, `/sessions/${session.id}/stream`, { queryToken: h.token });
    try {
      const first = await ws.next(() => true, 'the first message');
      assert.equal(first.type, 'data');
      session.write('echo PLAIN-$((3+4))\r', TEST_WRITER);
      await ws.next((m) => m.type === 'data' && m.data.includes('PLAIN-7'), 'live output');
      assert.ok(!ws.received.some((m: { type?: string }) => m.type === 'snapshot'));
    } finally {
      await ws.close();
    }
  });
});
