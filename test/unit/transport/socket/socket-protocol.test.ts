// socket-pty compatibility, spoken the way a third-party client would: `shared-pty serve --socket`
// (and `--port`) as a child process, raw newline-delimited JSON over a plain socket, and every
// request/response example of socket-pty's protocol description (its packet format section) checked
// for its exact shape (docs/guarantees.md#compatibility-with-socket-pty).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import {
  bashEnv,
  CLI,
  buildCli,
  startServeOnFreePort,
  LineClient,
  parentOf,
  pidAlive,
  sleep,
  startServe,
  type Msg,
  type ServeProcess,
  type Target,
} from '../../../helpers/protocol';
import { withTimeout } from '../../../helpers/host';
import { ensureNoDisposablesAreLeakedBySuite } from '../../../helpers/leak-tracker';
import { MAX_COLS, MAX_ROWS, MIN_COLS } from '../../../../src/core/base/param-limits';

const BASH_CMD = 'bash --norc --noprofile';
/** Per-test bound: generous for a noisy machine, finite so a hang fails instead of blocking CI. */
const TEST_TIMEOUT = 60_000;

/** A private base directory: `run/` (0700) is SHARED_PTY_DIR, the compat socket sits beside it. */
function makeBase(): { base: string; runDir: string } {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'spt-proto-'));
  const runDir = path.join(base, 'run');
  fs.mkdirSync(runDir, { mode: 0o700 });
  fs.chmodSync(runDir, 0o700);
  return { base, runDir };
}

/** Polls `pty/read` until its screen satisfies `pred`; returns that read. */
async function readUntil(c: LineClient, pred: (r: Msg) => boolean, what: string, ms = 10_000): Promise<Msg> {
  const end = Date.now() + ms;
  let last: Msg | undefined;
  for (;;) {
    last = await c.result('pty/read', {});
    if (pred(last)) return last;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}; screen: ${JSON.stringify(last.screen)}`);
    await sleep(30);
  }
}

/** Clears the input line and the screen (readline's Ctrl+U, Ctrl+L) until only the prompt shows. */
async function freshPrompt(c: LineClient): Promise<void> {
  await c.result('pty/write', { action: [{ key: 'Ctrl+U' }, { key: 'Ctrl+L' }] });
  await readUntil(c, (r) => r.screen === '$\n' && r.cursor.row === 1 && r.cursor.col === 3, 'a fresh prompt');
}

async function until(fn: () => boolean, what: string, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!fn()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

/** Asserts an error response: exactly {jsonrpc, error:{code, message[, data]}, id}. */
function assertError(res: Msg, code: number, id: string | number | null): void {
  assert.deepEqual(Object.keys(res).sort(), ['error', 'id', 'jsonrpc'], JSON.stringify(res));
  assert.equal(res.jsonrpc, '2.0');
  assert.equal(res.id, id);
  assert.equal(res.error.code, code, JSON.stringify(res));
  assert.equal(typeof res.error.message, 'string');
  assert.ok(res.error.message.length > 0);
  for (const k of Object.keys(res.error)) assert.ok(['code', 'message', 'data'].includes(k), `unexpected error field ${k}`);
}

// Once the shared host is closed, nothing the suite made is left (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedBySuite();

before(() => buildCli(), { timeout: 180_000 });

describe('serve --socket: socket-pty compatible single-session server', () => {
  let dirs: { base: string; runDir: string };
  let sockPath: string;
  let serve: ServeProcess | undefined;
  let c: LineClient;
  let bashPid = 0;

  before(
    async () => {
      dirs = makeBase();
      sockPath = path.join(dirs.base, 'x.sock');
      serve = await startServe(['--cmd', BASH_CMD, '--socket', sockPath], bashEnv({ SHARED_PTY_DIR: dirs.runDir }), { path: sockPath });
      c = await LineClient.connect({ path: sockPath });
      // The first prompt: from here on screens are predictable.
      await readUntil(c, (r) => r.screen === '$\n', 'the first prompt', 15_000);
    },
    { timeout: 60_000 },
  );

  after(async () => {
    c?.close();
    await serve?.stop();
    if (bashPid && pidAlive(bashPid)) process.kill(bashPid, 'SIGKILL');
    if (dirs) fs.rmSync(dirs.base, { recursive: true, force: true });
  });

  test("the socket file is a Unix socket, mode 0600; the start-up lines are socket-pty's", async () => {
    // Printed once listening (a launcher connects on the address line): the port may answer just before.
    await until(() => serve!.output().split('\n').length > 2, 'the start-up lines');
    assert.deepEqual(serve!.output().split('\n').slice(0, 2), [`[socket-pty] 会话已启动，命令: ${BASH_CMD}`, `[socket-pty] 连接地址: ${sockPath}`]);
    const st = fs.lstatSync(sockPath);
    assert.ok(st.isSocket());
    assert.equal(st.mode & 0o777, 0o600);
  });

  test('pty/status: {running, exitCode, pid} — pid is the hosted bash', { timeout: TEST_TIMEOUT }, async () => {
    const res = await c.call('pty/status', {}, 1);
    assert.deepEqual(Object.keys(res).sort(), ['id', 'jsonrpc', 'result']);
    assert.equal(res.jsonrpc, '2.0');
    assert.equal(res.id, 1);
    assert.deepEqual(Object.keys(res.result).sort(), ['exitCode', 'pid', 'running']);
    assert.equal(res.result.running, true);
    assert.equal(res.result.exitCode, null);
    assert.ok(Number.isInteger(res.result.pid) && res.result.pid > 1);
    bashPid = res.result.pid;
    assert.equal(fs.readFileSync(`/proc/${bashPid}/comm`, 'utf8').trim(), 'bash');
    assert.equal(parentOf(bashPid), serve!.pid, 'bash is a child of the serve process');
  });

  test(
    'pty/read: the socket-pty example — rows ended by "\\n", trailing spaces and empty rows dropped, 1-based cursor, default size 100x30',
    { timeout: TEST_TIMEOUT },
    async () => {
      const res = await c.call('pty/read', {}, 2);
      // The prompt is "$ " (2 characters): the cursor sits after it, at column 3; the row's trailing space is trimmed.
      assert.deepEqual(res, {
        jsonrpc: '2.0',
        result: { screen: '$\n', cursor: { row: 1, col: 3 }, size: { cols: 100, rows: 30 } },
        id: 2,
      });
    },
  );

  test('pty/read: top / bottom / start+end slices of a full screen, out-of-range values clamp', { timeout: TEST_TIMEOUT }, async () => {
    await freshPrompt(c);
    await c.result('pty/write', { action: [{ text: 'seq 1 40' }, { key: 'Enter' }] });
    // Lines: "$ seq 1 40", 1..40, "$ " — 42 lines; the 30-row screen shows the last 30: 12..40 and the prompt.
    const full = await readUntil(c, (r) => r.screen.endsWith('40\n$\n'), 'seq output');
    const rows = [...Array.from({ length: 29 }, (_, i) => String(12 + i)), '$'];
    assert.equal(full.screen, rows.map((r) => r + '\n').join(''));
    assert.deepEqual(full.cursor, { row: 30, col: 3 });
    const join = (rs: string[]) => rs.map((r) => r + '\n').join('');

    assert.deepEqual(await c.call('pty/read', { top: 3 }, 3), {
      jsonrpc: '2.0',
      result: { screen: '12\n13\n14\n', cursor: { row: 30, col: 3 }, size: { cols: 100, rows: 30 } },
      id: 3,
    });
    assert.deepEqual(await c.call('pty/read', { bottom: 3 }, 4), {
      jsonrpc: '2.0',
      result: { screen: '39\n40\n$\n', cursor: { row: 30, col: 3 }, size: { cols: 100, rows: 30 } },
      id: 4,
    });
    assert.deepEqual(await c.call('pty/read', { start: 2, end: 5 }, 5), {
      jsonrpc: '2.0',
      result: { screen: '13\n14\n15\n16\n', cursor: { row: 30, col: 3 }, size: { cols: 100, rows: 30 } },
      id: 5,
    });
    // Inclusive 1-based range: start === end is one row.
    assert.equal((await c.result('pty/read', { start: 30, end: 30 })).screen, '$\n');
    // Out of range clamps to the screen.
    assert.equal((await c.result('pty/read', { top: 100 })).screen, join(rows));
    assert.equal((await c.result('pty/read', { bottom: 1000 })).screen, join(rows));
    assert.equal((await c.result('pty/read', { start: 28, end: 100 })).screen, '39\n40\n$\n');
    assert.equal((await c.result('pty/read', { start: 1, end: 1000 })).screen, join(rows));
    assert.equal((await c.result('pty/read', { start: 31, end: 40 })).screen, '');
    // Negative values are out of range too (socket-pty: 越界自动 clamp), not invalid.
    assert.equal((await c.result('pty/read', { top: -2 })).screen, '');
    assert.equal((await c.result('pty/read', { bottom: -2 })).screen, '');
    assert.equal((await c.result('pty/read', { start: -5, end: 2 })).screen, '12\n13\n');
    assert.equal((await c.result('pty/read', { start: -5, end: -1 })).screen, '');
  });

  test('pty/read: slices of a short screen drop trailing empty rows', { timeout: TEST_TIMEOUT }, async () => {
    await freshPrompt(c);
    await c.result('pty/write', { action: [{ text: "printf 'a  \\nb\\n\\nc\\n'" }, { key: 'Enter' }] });
    // "a  " keeps no trailing spaces; the empty row between b and c stays (it is not trailing).
    const r = await readUntil(c, (x) => x.screen.endsWith('c\n$\n'), 'printf output');
    assert.equal(r.screen, "$ printf 'a  \\nb\\n\\nc\\n'\na\nb\n\nc\n$\n");
    assert.deepEqual(r.cursor, { row: 6, col: 3 });
    assert.equal((await c.result('pty/read', { start: 3, end: 4 })).screen, 'b\n');
    assert.equal((await c.result('pty/read', { bottom: 3 })).screen, '');
    assert.equal((await c.result('pty/read', { top: 2 })).screen, "$ printf 'a  \\nb\\n\\nc\\n'\na\n");
  });

  test('pty/read: validation — top+bottom, start without end, mixing the groups → -32602', { timeout: TEST_TIMEOUT }, async () => {
    const bad: Array<Record<string, number>> = [
      { top: 3, bottom: 3 },
      { start: 2 },
      { end: 5 },
      { top: 3, start: 2, end: 5 },
      { bottom: 3, start: 2, end: 5 },
      { top: 1, end: 5 },
    ];
    let id = 100;
    for (const params of bad) {
      const res = await c.call('pty/read', params, ++id);
      assertError(res, -32602, id);
    }
    // Non-numbers are invalid params too.
    assertError(await c.call('pty/read', { top: 'x' }, 'r1'), -32602, 'r1');
  });

  test('pty/write: text, a key, an action array — written is the UTF-8 byte count', { timeout: TEST_TIMEOUT }, async () => {
    await freshPrompt(c);
    // socket-pty's documentation says 11 for "echo hello"; 10 bytes were written (docs/guarantees.md#bytes-written).
    assert.deepEqual(await c.call('pty/write', { action: { text: 'echo hello' } }, 6), { jsonrpc: '2.0', result: { written: 10 }, id: 6 });
    await readUntil(c, (r) => r.screen === '$ echo hello\n', 'the typed text');
    assert.deepEqual(await c.call('pty/write', { action: { key: 'Enter' } }, 7), { jsonrpc: '2.0', result: { written: 1 }, id: 7 });
    await readUntil(c, (r) => r.screen === '$ echo hello\nhello\n$\n', 'echo output');

    // socket-pty's documentation says 5 for ls + Enter; it is 2 + 1.
    assert.deepEqual(await c.call('pty/write', { action: [{ text: 'ls' }, { key: 'Enter' }] }, 8), { jsonrpc: '2.0', result: { written: 3 }, id: 8 });
    await readUntil(c, (r) => /\$ ls\n[\s\S]*\$\n$/.test(r.screen), 'ls to finish');

    // Multi-byte text counts UTF-8 bytes, not characters: é is 2 bytes, € 3, 😀 4.
    await freshPrompt(c);
    const text = 'écho €😀';
    assert.equal(Buffer.byteLength(text, 'utf8'), 13);
    assert.equal((await c.result('pty/write', { action: { text } })).written, 13);
    await readUntil(c, (r) => r.screen === `$ ${text}\n`, 'the multi-byte text on screen');
    // Several keys sum up: Ctrl+U is one byte, ArrowLeft three.
    assert.equal((await c.result('pty/write', { action: [{ key: 'Ctrl+U' }, { key: 'ArrowLeft' }] })).written, 4);
    await freshPrompt(c);
  });

  test('pty/write: validation — text+key, {} and [], unknown or mis-cased key → -32602, and nothing is written', { timeout: TEST_TIMEOUT }, async () => {
    await freshPrompt(c);
    assertError(await c.call('pty/write', { action: { text: 'x', key: 'Enter' } }, 14), -32602, 14);
    assertError(await c.call('pty/write', { action: {} }, 15), -32602, 15);
    assertError(await c.call('pty/write', { action: [] }, 16), -32602, 16);
    assertError(await c.call('pty/write', { action: { key: 'NoSuchKey' } }, 17), -32602, 17);
    assertError(await c.call('pty/write', { action: { key: 'enter' } }, 18), -32602, 18); // key names are case-sensitive
    assertError(await c.call('pty/write', {}, 19), -32602, 19);
    assertError(await c.call('pty/write', { action: [{ text: 'a' }, { text: 'b', key: 'Tab' }] }, 20), -32602, 20);
    // A bad action anywhere in the array rejects the whole array: "zzz" must not reach the terminal.
    assertError(await c.call('pty/write', { action: [{ text: 'zzz' }, { key: 'Bogus' }] }, 21), -32602, 21);
    await c.result('pty/write', { action: { text: 'ok' } });
    const r = await readUntil(c, (x) => x.screen === '$ ok\n', 'the valid write');
    assert.ok(!r.screen.includes('zzz'));
    await freshPrompt(c);
  });

  test('pty/wait: a match that appears → matched true with the screen; absent with timeout 100 → matched false', { timeout: TEST_TIMEOUT }, async () => {
    await freshPrompt(c);
    // $((40+2)) makes "hello-42" appear only as output, never as typed text.
    await c.result('pty/write', { action: [{ text: 'sleep 0.3; echo hello-$((40+2))' }, { key: 'Enter' }] });
    const res = await c.call('pty/wait', { match: 'hello-42', timeout: 6000 }, 9);
    assert.equal(res.id, 9);
    assert.equal(res.jsonrpc, '2.0');
    const r = res.result;
    for (const k of ['matched', 'screen', 'cursor', 'size', 'waitedMs']) assert.ok(k in r, `pty/wait result has ${k}`);
    assert.equal(r.matched, true);
    assert.ok(r.screen.includes('hello-42\n'), r.screen);
    assert.equal(typeof r.waitedMs, 'number');
    assert.ok(r.waitedMs >= 0);
    assert.deepEqual(Object.keys(r.cursor).sort(), ['col', 'row']);
    assert.deepEqual(r.size, { cols: 100, rows: 30 });

    const res2 = await c.call('pty/wait', { match: 'absent', timeout: 100 }, 10);
    assert.equal(res2.id, 10);
    assert.equal(res2.result.matched, false);
    assert.equal(typeof res2.result.screen, 'string');
    assert.ok(res2.result.screen.includes('hello-42'));
    assert.deepEqual(res2.result.size, { cols: 100, rows: 30 });
    assert.ok(res2.result.waitedMs >= 90, `waited the timeout (${res2.result.waitedMs} ms)`);
    // Milliseconds, not only whole ones: a client sends what is left of its deadline.
    const left = await c.call('pty/wait', { match: 'absent', timeout: 120.75 }, 11);
    assert.equal(left.error, undefined, JSON.stringify(left.error));
    assert.equal(left.result.matched, false);
    assert.ok(left.result.waitedMs >= 110, `waited the timeout (${left.result.waitedMs} ms)`);

    // Without match it simply waits the timeout.
    const t0 = Date.now();
    const res3 = await c.result('pty/wait', { timeout: 300 });
    assert.equal(res3.matched, false);
    assert.ok(Date.now() - t0 >= 280 && res3.waitedMs >= 280);

    // A wait that finds the text already on screen answers at once with matched true, however
    // short its timeout (a client asking "is it there now?" with 0).
    assert.equal((await c.result('pty/wait', { match: 'hello-42', timeout: 5000 })).matched, true);
    for (let i = 0; i < 10; i++) {
      for (const timeout of [0, 1]) {
        const now = await c.result('pty/wait', { match: 'hello-42', timeout });
        assert.deepEqual([now.matched, now.reason], [true, 'matched'], `timeout ${timeout}, try ${i}`);
        const re = await c.result('pty/wait', { regex: 'hello-\\d+', timeout });
        assert.equal(re.matched, true, `regex, timeout ${timeout}, try ${i}`);
      }
    }
    // socket-pty sets no most a wait may last: a week is a wait (of a day at most here), not an error.
    assert.equal((await c.result('pty/wait', { match: 'hello-42', timeout: 7 * 24 * 3600_000 })).matched, true);
  });

  test('a long pty/wait does not block other requests on the same connection', { timeout: TEST_TIMEOUT }, async () => {
    const slow = c.call('pty/wait', { match: 'never-shown-marker', timeout: 1500 }, 'slow');
    const status = await c.call('pty/status', {}, 'fast');
    assert.equal(status.result.running, true);
    const s = await slow;
    assert.equal(s.result.matched, false);
  });

  test(
    'pty/resize → {} and pty/read reports the new size; a size out of range is brought within it; bad sizes → -32602',
    { timeout: TEST_TIMEOUT },
    async () => {
      assert.deepEqual(await c.call('pty/resize', { cols: 120, rows: 40 }, 11), { jsonrpc: '2.0', result: {}, id: 11 });
      const r = await c.result('pty/read', {});
      assert.deepEqual(r.size, { cols: 120, rows: 40 });
      // The program sees it too.
      await freshPrompt(c);
      await c.result('pty/write', { action: [{ text: 'echo size=$(stty size)' }, { key: 'Enter' }] });
      await readUntil(c, (x) => x.screen.includes('size=40 120'), 'stty size');
      assertError(await c.call('pty/resize', { cols: 0, rows: 10 }, 'z1'), -32602, 'z1');
      assertError(await c.call('pty/resize', { cols: 80 }, 'z2'), -32602, 'z2');
      assertError(await c.call('pty/resize', { cols: 'wide', rows: 10 }, 'z3'), -32602, 'z3');
      assert.deepEqual((await c.result('pty/read', {})).size, { cols: 120, rows: 40 });
      // A positive size out of range is brought within it, as socket-pty clamps what is out of range.
      assert.deepEqual(await c.call('pty/resize', { cols: 1, rows: 100000 }, 'c1'), { jsonrpc: '2.0', result: {}, id: 'c1' });
      assert.deepEqual((await c.result('pty/read', {})).size, { cols: MIN_COLS, rows: MAX_ROWS });
      await c.result('pty/resize', { cols: 5000, rows: 40 });
      assert.deepEqual((await c.result('pty/read', {})).size, { cols: MAX_COLS, rows: 40 });
      await c.result('pty/resize', { cols: 120, rows: 40 });
    },
  );

  test('errors: unknown method -32601 echoing the id, exactly as socket-pty shows', { timeout: TEST_TIMEOUT }, async () => {
    assert.deepEqual(await c.call('pty/unknown', {}, 13), {
      jsonrpc: '2.0',
      error: { code: -32601, message: 'Method not found: pty/unknown' },
      id: 13,
    });
    // Host-only methods do not exist on a session socket.
    assertError(await c.call('session/list', {}, 'h1'), -32601, 'h1');
  });

  test('errors: an unparsable line → id null, -32700; the connection stays usable', { timeout: TEST_TIMEOUT }, async () => {
    const parseErr = c.next((m) => m.id === null && m.error?.code === -32700, 10_000, 'parse error');
    c.raw('{"jsonrpc":"2.0","method":"pty/status",\n');
    assertError(await parseErr, -32700, null);
    const notJson = c.next((m) => m.id === null && m.error?.code === -32700, 10_000, 'parse error');
    c.raw('hello there\n');
    assertError(await notJson, -32700, null);
    assert.equal((await c.result('pty/status')).running, true);
  });

  test('blank lines between messages are ignored: empty, CRLF, spaces and tabs alone (a keep-alive) get no answer', { timeout: TEST_TIMEOUT }, async () => {
    // An error for a blank line would be sent at once, before the request's answer: the first message is the answer.
    const first = c.next((m) => m.id === null || m.id === 'after-blank', 10_000, 'the first answer after the blank lines');
    c.raw('\n\r\n   \n\t \t\r\n' + JSON.stringify({ jsonrpc: '2.0', method: 'pty/status', id: 'after-blank' }) + '\n');
    const m = await first;
    assert.equal(m.id, 'after-blank', JSON.stringify(m));
    assert.equal(m.result.running, true);
  });

  test('errors: a request without id, a legacy {op} request, a wrong envelope → -32600', { timeout: TEST_TIMEOUT }, async () => {
    const noId = c.next((m) => m.id === null && m.error?.code === -32600, 10_000, 'missing-id error');
    c.sendJson({ jsonrpc: '2.0', method: 'pty/status', params: {} });
    assertError(await noId, -32600, null);

    const legacy = c.next((m) => m.id === null && m.error?.code === -32600, 10_000, 'legacy error');
    c.sendJson({ op: 'read' });
    assertError(await legacy, -32600, null);

    // A legacy request that carries an id gets it echoed.
    const legacyWithId = c.next((m) => m.id === 'legacy-1', 10_000, 'legacy error with id');
    c.sendJson({ op: 'write', data: 'x', id: 'legacy-1' });
    assertError(await legacyWithId, -32600, 'legacy-1');

    const noVersion = c.next((m) => m.id === 'nv', 10_000, 'no-jsonrpc error');
    c.sendJson({ method: 'pty/status', params: {}, id: 'nv' });
    assertError(await noVersion, -32600, 'nv');

    // An id too large for a double (JSON.parse makes it Infinity) cannot be echoed: refused, not answered with id null.
    const hugeId = c.next((m) => m.id === null && ('result' in m || m.error?.code === -32600), 10_000, 'the huge id error');
    c.raw('{"jsonrpc":"2.0","method":"pty/status","params":{},"id":1e400}\n');
    assertError(await hugeId, -32600, null);

    // The one notification a host takes, without what it needs: said so, not "notifications are not accepted".
    const badCancel = c.next((m) => m.id === null && m.error?.code === -32600, 10_000, 'the cancel error');
    c.sendJson({ jsonrpc: '2.0', method: '$/cancelRequest' });
    assert.match((await badCancel).error.message, /\$\/cancelRequest needs params\.id/);

    // Two ways to match at once: an invalid param, said as every other is.
    const both = await c.call('pty/wait', { match: 'a', regex: 'a', timeout: 100 }, 'both');
    assert.equal(both.error?.code, -32602, JSON.stringify(both));
    assert.match(both.error.message, /^Invalid params for pty\/wait: .*match and regex are mutually exclusive/);

    const notObject = c.next((m) => m.id === null && m.error?.code === -32600, 10_000, 'array error');
    c.sendJson([1, 2, 3]);
    assertError(await notObject, -32600, null);

    // params must be an object, as socket-pty requires.
    const badParams = await c.call('pty/status', [1], 'arr');
    assert.equal(badParams.id, 'arr');
    assert.ok([-32600, -32602].includes(badParams.error?.code), JSON.stringify(badParams));
    // null is no object either (JSON-RPC 2.0: a structured value, or none).
    const nullParams = c.next((m) => m.id === 'null-params', 10_000, 'the null params error');
    c.sendJson({ jsonrpc: '2.0', method: 'pty/status', params: null, id: 'null-params' });
    assertError(await nullParams, -32600, 'null-params');
    // A missing params is {}.
    const noParams = await c.call('pty/status', undefined, 'np');
    assert.equal(noParams.result.running, true);
  });

  test('a line over the 1 MiB limit → -32600 and that connection closes; the server and other clients carry on', { timeout: TEST_TIMEOUT }, async () => {
    const big = await LineClient.connect({ path: sockPath });
    const answer = big.next((m) => 'error' in m, 15_000, 'the oversized-line error');
    big.sendJson({ jsonrpc: '2.0', method: 'pty/write', params: { action: { text: 'x'.repeat(1024 * 1024 + 100) } }, id: 'big' });
    const res = await answer;
    assert.equal(res.error.code, -32600, JSON.stringify(res).slice(0, 300));
    assert.ok(res.id === null || res.id === 'big');
    await withTimeout(big.closed, 10_000, 'the server to close the connection');
    // Nothing was typed, and the session and other connections are unaffected.
    const r = await c.result('pty/read', {});
    assert.ok(!r.screen.includes('xxxxxxxxxx'));
    assert.equal((await c.result('pty/status')).running, true);
    // Explicit null ids and non-scalar ids are not requests.
    const nullId = c.next((m) => m.id === null && m.error?.code === -32600, 10_000, 'null-id error');
    c.sendJson({ jsonrpc: '2.0', method: 'pty/status', params: {}, id: null });
    assertError(await nullId, -32600, null);
    const objId = c.next((m) => m.id === null && m.error?.code === -32600, 10_000, 'object-id error');
    c.sendJson({ jsonrpc: '2.0', method: 'pty/status', params: {}, id: { x: 1 } });
    assertError(await objId, -32600, null);
  });

  test('a number id past 2^53 is echoed digit for digit (a 64-bit id), also beside an "id" inside params', { timeout: TEST_TIMEOUT }, async () => {
    const sock = net.connect(sockPath);
    await new Promise<void>((resolve) => sock.once('connect', () => resolve()));
    let text = '';
    sock.setEncoding('utf8');
    sock.on('data', (d: string) => (text += d));
    const ids = [
      '9007199254740993',
      '12345678901234567890',
      '-9223372036854775807',
      '18446744073709551615',
      '9007199254740993.0',
      '12345678901234567890e0',
      '1e-400',
    ];
    for (const id of ids) sock.write(`{"jsonrpc":"2.0","method":"pty/status","params":{"id":1},"id":${id}}\n`);
    sock.write('{"jsonrpc":"2.0","id":9007199254740995,"method":"pty/no-such-method"}\n');
    await until(() => text.split('\n').length > ids.length + 1, 'every answer');
    sock.destroy();
    const answers = text.trim().split('\n');
    ids.forEach((id, i) => assert.ok(answers[i].startsWith(`{"jsonrpc":"2.0","id":${id},"result":{`), answers[i]));
    assert.ok(answers[ids.length].startsWith('{"jsonrpc":"2.0","id":9007199254740995,"error":{"code":-32601'), answers[ids.length]);
  });

  test('string ids are echoed as strings; several requests in one chunk and one request split across chunks', { timeout: TEST_TIMEOUT }, async () => {
    const res = await c.call('pty/status', {}, 'abc-123');
    assert.equal(res.id, 'abc-123');
    assert.equal(res.result.running, true);
    const numericString = await c.call('pty/status', {}, '7');
    assert.equal(numericString.id, '7'); // not coerced to a number

    const a = c.next((m) => m.id === 'a1', 10_000, 'a1');
    const b = c.next((m) => m.id === 'b2', 10_000, 'b2');
    c.raw(
      JSON.stringify({ jsonrpc: '2.0', method: 'pty/status', params: {}, id: 'a1' }) +
        '\n' +
        JSON.stringify({ jsonrpc: '2.0', method: 'pty/read', params: { top: 1 }, id: 'b2' }) +
        '\n',
    );
    assert.equal((await a).result.running, true);
    assert.ok('screen' in (await b).result);

    const split = c.next((m) => m.id === 'split', 10_000, 'split request');
    const line = JSON.stringify({ jsonrpc: '2.0', method: 'pty/status', params: {}, id: 'split' }) + '\n';
    c.raw(line.slice(0, 10));
    await sleep(50);
    c.raw(line.slice(10, 30));
    await sleep(50);
    c.raw(line.slice(30));
    assert.equal((await split).result.running, true);
  });

  test('several clients share the session; a client that leaves does not stop it', { timeout: TEST_TIMEOUT }, async () => {
    const other = await LineClient.connect({ path: sockPath });
    try {
      await freshPrompt(c);
      await other.result('pty/write', { action: [{ text: 'echo shared-$((1+1))' }, { key: 'Enter' }] });
      const seen = await c.result('pty/wait', { match: 'shared-2', timeout: 6000 });
      assert.equal(seen.matched, true);
    } finally {
      other.close();
    }
    await other.closed;
    const again = await LineClient.connect({ path: sockPath });
    try {
      const r = await again.result('pty/read', {});
      assert.ok(r.screen.includes('shared-2'), 'a new connection reads the same current screen');
      assert.equal((await again.result('pty/status')).running, true);
    } finally {
      again.close();
    }
  });

  test('another session opened through the host beside it ends alone: the socket-pty server and its session go on', { timeout: TEST_TIMEOUT }, async () => {
    const record = JSON.parse(
      fs.readFileSync(
        path.join(
          dirs.runDir,
          fs.readdirSync(dirs.runDir).find((f) => f.endsWith('.json'))!,
        ),
        'utf8',
      ),
    );
    const control = await LineClient.connect({ path: String(record.control).replace(/^unix:/, '') });
    try {
      const other = (await control.call('session/create', { command: 'sh', args: [] }, 1)).result;
      assert.deepEqual((await control.call('pty/kill', { session: other.id }, 2)).result, {});
      const exited = await Promise.race([serve!.exited, new Promise((r) => setTimeout(() => r('running'), 1000))]);
      assert.equal(exited, 'running', serve!.output());
      assert.equal(((await c.result('pty/status')) as any).running, true);
    } finally {
      control.close();
    }
  });

  test(
    'pty/kill → {}; every request before it is answered and subscribers get pty/exit; then the connection is closed, the socket file removed, serve exits',
    { timeout: TEST_TIMEOUT },
    async () => {
      assert.ok(bashPid > 0);
      const bystander = await LineClient.connect({ path: sockPath });
      // Another client follows the session and waits on it: it is told of the end before its connection closes.
      await bystander.result('pty/subscribe', {});
      bystander.raw('{"jsonrpc":"2.0","method":"pty/wait","params":{"match":"NEVER-SHOWN","timeout":20000},"id":"w"}\n');
      await sleep(200);
      // A read answered after the kill it came before (the screen is read off the main thread) is still answered.
      c.raw('{"jsonrpc":"2.0","method":"pty/read","params":{"top":2},"id":"r"}\n');
      const res = await c.call('pty/kill', {}, 12);
      assert.deepEqual(res, { jsonrpc: '2.0', result: {}, id: 12 });
      const read = await c.next((m) => m.id === 'r', 10_000, 'the read sent before the kill');
      assert.equal(typeof read.result?.screen, 'string', JSON.stringify(read));
      const exit = await bystander.next((m) => m.method === 'pty/exit', 10_000, "the subscriber's pty/exit");
      assert.equal(exit.params.signal, 'SIGHUP');
      const waited = await bystander.next((m) => m.id === 'w', 10_000, 'the pending pty/wait');
      assert.equal(waited.result?.matched, false);
      assert.equal(waited.result?.reason, 'session_exit');
      // By the time the answer comes the endpoint is gone (socket-pty: it can no longer be connected).
      assert.equal(fs.existsSync(sockPath), false, 'the socket file is gone when the answer comes');
      await assert.rejects(LineClient.connect({ path: sockPath }, 3000));
      await withTimeout(c.closed, 10_000, 'the server to close the connection');
      await withTimeout(bystander.closed, 10_000, 'the server to close the other connection');
      await until(() => !fs.existsSync(sockPath), 'the socket file to disappear');
      const code = await withTimeout(serve!.exited, 15_000, 'serve to exit');
      assert.equal(code, 0, serve!.output());
      await until(() => !pidAlive(bashPid), 'bash to end');
      // The host removed its runtime files (record and socket folder).
      assert.deepEqual(fs.readdirSync(dirs.runDir), []);
      // And the endpoint no longer accepts connections.
      await assert.rejects(LineClient.connect({ path: sockPath }, 3000));
    },
  );
});

describe('serve --port: the same protocol over TCP on 127.0.0.1', () => {
  let dirs: { base: string; runDir: string };
  let serve: ServeProcess | undefined;
  let target: Target;
  let c: LineClient | undefined;

  before(
    async () => {
      dirs = makeBase();
      const started = await startServeOnFreePort((port) => ['--cmd', BASH_CMD, '--port', String(port)], bashEnv({ SHARED_PTY_DIR: dirs.runDir }));
      serve = started.serve;
      target = { port: started.port, host: '127.0.0.1' };
    },
    { timeout: 60_000 },
  );

  after(async () => {
    c?.close();
    await serve?.stop();
    if (dirs) fs.rmSync(dirs.base, { recursive: true, force: true });
  });

  test('status, write, wait, read, resize, errors and kill over TCP', { timeout: TEST_TIMEOUT }, async () => {
    // socket-pty's two start-up lines, word for word (a launcher waits for the address line).
    await until(() => serve!.output().split('\n').length > 2, 'the start-up lines');
    assert.deepEqual(serve!.output().split('\n').slice(0, 2), [
      `[socket-pty] 会话已启动，命令: ${BASH_CMD}`,
      `[socket-pty] 连接地址: 127.0.0.1:${(target as { port: number }).port}`,
    ]);
    c = await LineClient.connect(target);
    const status = await c.call('pty/status', {}, 1);
    assert.equal(status.result.running, true);
    assert.equal(status.result.exitCode, null);
    const bashPid: number = status.result.pid;
    assert.equal(parentOf(bashPid), serve!.pid);

    const first = await readUntil(c, (r) => r.screen === '$\n', 'the first prompt', 15_000);
    assert.deepEqual(first, { screen: '$\n', cursor: { row: 1, col: 3 }, size: { cols: 100, rows: 30 } });

    assert.deepEqual(await c.call('pty/write', { action: [{ text: 'echo tcp-$((20+3))' }, { key: 'Enter' }] }, 2), {
      jsonrpc: '2.0',
      result: { written: 19 },
      id: 2,
    });
    const w = await c.call('pty/wait', { match: 'tcp-23', timeout: 6000 }, 3);
    assert.equal(w.result.matched, true);
    const r = await c.result('pty/read', {});
    assert.equal(r.screen, '$ echo tcp-$((20+3))\ntcp-23\n$\n');
    assert.deepEqual(r.cursor, { row: 3, col: 3 });

    assert.deepEqual(await c.call('pty/resize', { cols: 80, rows: 24 }, 4), { jsonrpc: '2.0', result: {}, id: 4 });
    assert.deepEqual((await c.result('pty/read', { top: 1 })).size, { cols: 80, rows: 24 });

    assert.deepEqual(await c.call('pty/nope', {}, 'x'), { jsonrpc: '2.0', error: { code: -32601, message: 'Method not found: pty/nope' }, id: 'x' });
    const parseErr = c.next((m) => m.id === null && m.error?.code === -32700, 10_000, 'parse error');
    c.raw('}{\n');
    assertError(await parseErr, -32700, null);

    // The program ending by itself does not end the server: status reports it, the last screen stays readable.
    await c.result('pty/write', { action: [{ text: 'exit 4' }, { key: 'Enter' }] });
    const end = Date.now() + 10_000;
    let st: Msg;
    for (;;) {
      st = await c.result('pty/status');
      if (!st.running || Date.now() > end) break;
      await sleep(50);
    }
    assert.deepEqual(st, { running: false, exitCode: 4, pid: bashPid });
    assert.ok((await c.result('pty/read', {})).screen.includes('$ exit 4'));
    assert.ok(serve!.child.exitCode === null, 'serve still runs');

    assert.deepEqual(await c.call('pty/kill', {}, 5), { jsonrpc: '2.0', result: {}, id: 5 });
    await withTimeout(c.closed, 10_000, 'the server to close the connection');
    assert.equal(await withTimeout(serve!.exited, 15_000, 'serve to exit'), 0, serve!.output());
    await until(() => !pidAlive(bashPid), 'bash to end');
    await assert.rejects(LineClient.connect(target, 3000));
    assert.deepEqual(fs.readdirSync(dirs.runDir), []);
  });
});

test(
  'serve --cmd CMD ARGS…: the words after the command, up to the next flag of serve, are its arguments (as socket-pty users write them)',
  { timeout: TEST_TIMEOUT },
  async () => {
    const dirs = makeBase();
    const sockPath = path.join(dirs.base, 'args.sock');
    const serve = await startServe(
      ['--cmd', 'sh', '-c', 'echo "args:$0:$1:$2"; exec cat', 'zero', '--one', '--socket', sockPath, '--no-http', '--', 'two'],
      bashEnv({ SHARED_PTY_DIR: dirs.runDir }),
      { path: sockPath },
    );
    const c = await LineClient.connect({ path: sockPath });
    try {
      const w = await c.call('pty/wait', { match: 'args:', timeout: 10_000 }, 1);
      assert.equal(w.result.matched, true, JSON.stringify(w));
      assert.match((await c.result('pty/read', {})).screen, /^args:zero:--one:two$/m);
    } finally {
      c.close();
      await serve.stop();
      fs.rmSync(dirs.base, { recursive: true, force: true });
    }
  },
);

test('serve --socket on a path that holds a file (or a symlink) refuses with one line and leaves it as it was', { timeout: TEST_TIMEOUT }, () => {
  const dirs = makeBase();
  try {
    const file = path.join(dirs.base, 'notes.txt');
    fs.writeFileSync(file, 'keep me\n');
    const link = path.join(dirs.base, 'link.sock');
    fs.symlinkSync(file, link);
    for (const target of [file, link]) {
      const r = spawnSync(process.execPath, [CLI, 'serve', '--socket', target, '--cmd', 'sleep 30', '--no-http'], {
        env: bashEnv({ SHARED_PTY_DIR: dirs.runDir }),
        encoding: 'utf8',
        timeout: 30_000,
      });
      assert.equal(r.status, 1, r.stderr);
      assert.match(r.stderr, /exists and is not a socket/);
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    }
    assert.equal(fs.readFileSync(file, 'utf8'), 'keep me\n');
    assert.ok(fs.lstatSync(link).isSymbolicLink());
  } finally {
    fs.rmSync(dirs.base, { recursive: true, force: true });
  }
});
