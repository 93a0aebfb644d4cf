// The stream WebSocket's messages (src/core/methods/stream-frames.ts, docs/protocol.md's stream
// section) say what the host sends and takes; this holds the host to them. A real host, a real bash,
// a real WebSocket: every message the host sends (replay and live data, the error answers of a
// writable and of a read-only stream, the exit) must fit its schema exactly, and the messages the
// schemas describe (a write with and without submit, a resize) do what the reference says.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { STREAM_FRAMES } from '../../../../src/core/methods/stream-frames';
import { BASH, until } from '../../../helpers/host';
import { startHttpHost, wsOpen, type HttpHost, type WsClient } from '../../../helpers/http';
import { ensureNoDisposablesAreLeakedBySuite } from '../../../helpers/leak-tracker';

/** Whole-test bound: generous for 2 busy cores. */
const TEST_TIMEOUT = 60_000;

let h: HttpHost;

before(async () => {
  h = await startHttpHost();
});
after(async () => {
  await h.close();
});
// Once the shared host is closed, nothing the suite made is left (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedBySuite();

/** Every message received fits the schema its `type` names, with no field the schema does not have. */
function assertAllFit(ws: WsClient, where: string): void {
  const hostFrames = STREAM_FRAMES.filter((f) => f.from === 'host');
  for (const m of ws.received) {
    const spec = hostFrames.find((f) => f.type === m?.type);
    assert.ok(spec, `${where}: a message of no known type: ${JSON.stringify(m)}`);
    const r = (spec.schema as z.ZodObject).strict().safeParse(m);
    assert.ok(r.success, `${where}: ${JSON.stringify(m)} does not fit ${spec.type}: ${r.success ? '' : r.error.message}`);
  }
}

test("the stream's messages are those of its schemas", { timeout: TEST_TIMEOUT }, async () => {
  const session = await h.host.createSession({ ...BASH, cols: 80, rows: 24, name: 'frames' });
  const ws = await wsOpen(h.port, `/sessions/${session.id}/stream`, { queryToken: h.token });
  const view = await wsOpen(h.port, `/sessions/${session.id}/stream?readonly=1`, { queryToken: h.token });
  try {
    // A write with submit gets its newline; one without is written as is (Enter sent apart).
    ws.send({ type: 'write', data: 'echo SUB-$((1+1))', submit: true });
    await ws.streamUntil((t) => t.includes('SUB-2'), 'the submitted line');
    ws.send({ type: 'write', data: 'echo RAW-$((2+2))' });
    ws.send({ type: 'write', data: '\r' });
    await ws.streamUntil((t) => t.includes('RAW-4'), 'the line written without submit');

    ws.send({ type: 'resize', cols: 91, rows: 33 });
    await until(async () => session.cols === 91 && session.rows === 33, 10_000, 'the resize');

    ws.send({ type: 'bogus' });
    const unknown = await ws.next((m) => m.type === 'error', 'the answer to an unknown type');
    assert.equal(unknown.code, -32602);
    ws.send({ type: 'resize', cols: 'wide', rows: 33 });
    const badSize = await ws.next((m) => m.type === 'error', 'the answer to a bad size');
    assert.equal(badSize.code, -32602);

    view.send({ type: 'write', data: 'echo NO\r' });
    const readOnly = await view.next((m) => m.type === 'error', 'the read-only answer');
    assert.equal(readOnly.code, -32004);

    ws.send({ type: 'write', data: 'exit 3', submit: true });
    const exit = await ws.next((m) => m.type === 'exit', 'the exit message');
    assert.equal(exit.exitCode, 3);
    assert.equal((await ws.closed).code, 1000);

    assertAllFit(ws, 'writable stream');
    assertAllFit(view, 'read-only stream');
    assert.ok(ws.received.some((m) => m.type === 'data'));
    assert.ok(view.received.some((m) => m.type === 'exit'));
  } finally {
    await ws.close();
    await view.close();
  }
});
