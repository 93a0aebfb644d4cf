// An MCP request whose params do not fit its method (tool arguments that are not an object) is
// answered -32602 Invalid params with a one-line message; the SDK alone answered -32603 Internal
// error with its whole validation report (found by the MCP fuzzer).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CLI } from '../../../helpers/protocol';
import { request, startHttpHost, type HttpHost } from '../../../helpers/http';
import { BASH, until } from '../../../helpers/host';
import { ensureNoDisposablesAreLeakedBySuite } from '../../../helpers/leak-tracker';

let h: HttpHost;

before(async () => {
  h = await startHttpHost();
});

after(async () => {
  await h?.close();
});
// Once the shared host is closed, nothing the suite made is left (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedBySuite();

function mcp(body: unknown) {
  return request(h.port, 'POST', '/mcp', { token: h.token, body, headers: { accept: 'application/json, text/event-stream' } });
}

test('tools/call with arguments that are not an object, or params of the wrong shape: -32602 with a one-line message', { timeout: 30_000 }, async () => {
  const cases: unknown[] = [
    { name: 'list_sessions', arguments: 0 },
    { name: 'read_screen', arguments: 'session' },
    { name: 'send', arguments: [1, 2] },
    { name: 42 },
  ];
  for (const [i, params] of cases.entries()) {
    const r = await mcp({ jsonrpc: '2.0', id: i + 1, method: 'tools/call', params });
    assert.equal(r.json?.id, i + 1, r.text);
    assert.equal(r.json.error?.code, -32602, `${JSON.stringify(params)}: ${r.text}`);
    assert.match(r.json.error.message, /^Invalid params for tools\/call: params\.(arguments|name): /);
    assert.doesNotMatch(r.json.error.message, /\n/);
  }
  // Well-formed calls are served as before.
  const ok = await mcp({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'list_sessions', arguments: {} } });
  assert.equal(ok.json?.result?.structuredContent?.sessions?.length, 0, ok.text);
});

// The MCP specification (tools, "Error Handling"): an unknown tool is a protocol error; arguments
// that do not fit a tool are a tool execution error the model can read and correct (SEP-1303).
test('a tool that does not exist is the JSON-RPC error -32602; arguments that do not fit are a tool error', { timeout: 30_000 }, async () => {
  const unknown = await mcp({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'no_such_tool', arguments: {} } });
  assert.equal(unknown.json?.id, 1, unknown.text);
  assert.equal(unknown.json.result, undefined, unknown.text);
  assert.equal(unknown.json.error?.code, -32602, unknown.text);
  assert.equal(unknown.json.error.message, 'Unknown tool "no_such_tool"');
  const misfit = await mcp({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'read_screen', arguments: { session: 7 } } });
  assert.equal(misfit.json?.error, undefined, misfit.text);
  assert.equal(misfit.json.result?.isError, true, misfit.text);
  assert.match(misfit.json.result.content[0].text, /^Error -32602: Invalid arguments for read_screen: session: /);
  // Found by the method behind the tool (a key name): still told about the tool, never the method.
  const opened = await mcp({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'open_session', arguments: { command: 'cat' } } });
  const session = opened.json?.result?.structuredContent?.id as string;
  assert.ok(session, opened.text);
  const badKey = await mcp({ jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'send_keys', arguments: { session, keys: ['Bogus'] } } });
  assert.equal(badKey.json.result?.isError, true, badKey.text);
  assert.match(badKey.json.result.content[0].text, /^Error -32602: Invalid arguments for send_keys: .*Unknown key name: "Bogus"/);
  assert.doesNotMatch(badKey.json.result.content[0].text, /pty\/write/);
  await mcp({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'close_session', arguments: { session } } });
});

// An argument a tool does not take (a misspelt or invented name) is refused, naming what the tool
// takes: it was dropped unseen, so `wait_for { text }` waited its whole timeout for nothing. The
// method's own params that the tool sets itself are still accepted (and still set by the tool).
test('an argument a tool does not take is a tool error naming the ones it does; the params a tool sets itself are ignored', { timeout: 30_000 }, async () => {
  const opened = await mcp({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'open_session', arguments: { command: 'cat', origin: 'user' } } });
  const session = opened.json?.result?.structuredContent?.id as string;
  assert.ok(session, opened.text);
  assert.equal(opened.json.result.structuredContent.origin, 'agent', opened.text);
  const started = Date.now();
  const text = await mcp({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'wait_for', arguments: { session, text: 'ready', timeout: 20_000 } } });
  assert.ok(Date.now() - started < 15_000, 'refused at once, not after the wait');
  assert.equal(text.json?.result?.isError, true, text.text);
  assert.equal(
    text.json.result.content[0].text,
    'Error -32602: Invalid arguments for wait_for: unknown argument "text"; it takes session, match, regex, since, timeout, idleMs',
  );
  const keys = await mcp({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'send_keys', arguments: { session, key: 'Enter' } } });
  assert.match(
    keys.json?.result?.content?.[0]?.text,
    /^Error -32602: Invalid arguments for send_keys: unknown argument "key"; it takes session, keys, wait, timeout/,
  );
  // send is sized by maxChars: the method's maxBytes is not one of its arguments (it was dropped unseen).
  const sized = await mcp({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'send', arguments: { session, text: 'x', maxBytes: 100 } } });
  assert.match(sized.json?.result?.content?.[0]?.text, /^Error -32602: Invalid arguments for send: unknown argument "maxBytes"; it takes .*maxChars/);
  // A param of the method that the tool leaves out and does not set is no argument of it either:
  // open_session's uid was dropped unseen, and the agent's shell ran as the host's user (an audit).
  const asUser = await mcp({
    jsonrpc: '2.0',
    id: 9,
    method: 'tools/call',
    params: { name: 'open_session', arguments: { command: 'cat', uid: 1000, gid: 1000 } },
  });
  assert.match(asUser.json?.result?.content?.[0]?.text, /^Error -32602: Invalid arguments for open_session: unknown argument "uid"; it takes /);
  const none = await mcp({ jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 'list_sessions', arguments: { foo: 1 } } });
  assert.equal(none.json?.result?.content?.[0]?.text, 'Error -32602: Invalid arguments for list_sessions: unknown argument "foo"; it takes no arguments');
  // Nothing was typed by the refused calls: the cat's screen is still empty.
  const screen = await mcp({ jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'read_screen', arguments: { session } } });
  assert.equal(screen.json?.result?.structuredContent?.screen?.trim(), '', screen.text);
  const fine = await mcp({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'wait_for', arguments: { session, idleMs: 50, timeout: 5000 } } });
  assert.equal(fine.json?.result?.isError, undefined, fine.text);
  await mcp({ jsonrpc: '2.0', id: 6, method: 'tools/call', params: { name: 'close_session', arguments: { session } } });
});

// Over stdio (`shared-pty mcp`) a line that is not JSON, or JSON that is not a JSON-RPC message,
// is answered as /mcp answers it; the SDK's stdio transport left both unanswered, so the client
// waited for ever. Valid messages after them are served as before.
test('shared-pty mcp over stdio answers a line that is not JSON -32700 and one that is not JSON-RPC -32600, then goes on', { timeout: 30_000 }, async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spt-mcp-stdio-'));
  fs.chmodSync(dir, 0o700);
  const child = spawn(process.execPath, [CLI, 'mcp'], { env: { ...process.env, SHARED_PTY_DIR: dir }, stdio: ['pipe', 'pipe', 'pipe'] });
  try {
    const lines: any[] = [];
    let buffered = '';
    child.stdout.on('data', (d: Buffer) => {
      buffered += d.toString('utf8');
      for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
        lines.push(JSON.parse(buffered.slice(0, nl)));
        buffered = buffered.slice(nl + 1);
      }
    });
    const next = async (what: string) => {
      const deadline = Date.now() + 10_000;
      while (lines.length === 0) {
        if (Date.now() > deadline) throw new Error(`no answer to ${what}`);
        await new Promise((r) => setTimeout(r, 20));
      }
      return lines.shift();
    };
    const initialize = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      // A _meta naming its revision too: initialize agrees on it by its params, as /mcp takes it.
      params: {
        protocolVersion: '2025-11-25',
        capabilities: {},
        clientInfo: { name: 't', version: '1' },
        _meta: { 'io.modelcontextprotocol/protocolVersion': '2025-11-25' },
      },
    };
    child.stdin.write(JSON.stringify(initialize) + '\n');
    assert.equal((await next('initialize')).result?.protocolVersion, '2025-11-25');
    child.stdin.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
    child.stdin.write('not json\n');
    assert.deepEqual(await next('not json'), { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error: invalid JSON' } });
    child.stdin.write('\n{"id":8,"method":"ping"}\r\n');
    const noVersion = await next('a request without jsonrpc');
    assert.deepEqual([noVersion.id, noVersion.error?.code], [8, -32600], JSON.stringify(noVersion));
    child.stdin.write('[{"jsonrpc":"2.0","id":9,"method":"ping"}]\n');
    const batch = await next('a batch');
    assert.deepEqual([batch.id, batch.error?.code], [null, -32600], JSON.stringify(batch));
    // Bytes that are not UTF-8 are a parse error, as on the sockets (they were read as U+FFFD, an id the client never sent).
    child.stdin.write(Buffer.concat([Buffer.from('{"jsonrpc":"2.0","id":"'), Buffer.from([0xff, 0xfe]), Buffer.from('","method":"ping"}\n')]));
    assert.deepEqual(await next('invalid UTF-8'), { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error: invalid UTF-8' } });
    // Params nesting thousands of levels deep: -32602, the protocol error /mcp and the sockets answer (it was a tool's error here).
    const deep = '{"a":'.repeat(10_000) + '1' + '}'.repeat(10_000);
    child.stdin.write(`{"jsonrpc":"2.0","id":"deep","method":"tools/call","params":{"name":"read_screen","arguments":{"session":${deep}}}}\n`);
    assert.deepEqual(await next('deep params'), {
      jsonrpc: '2.0',
      id: 'deep',
      error: { code: -32602, message: 'Invalid params: the request nests deeper than 256 levels' },
    });
    child.stdin.write('{"jsonrpc":"2.0","id":10,"method":"ping"}\n');
    assert.deepEqual(await next('ping'), { jsonrpc: '2.0', id: 10, result: {} });
    child.stdin.end();
    const code = await new Promise((resolve) => child.once('exit', resolve));
    assert.equal(code, 0);
  } finally {
    child.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

// A body that is JSON but not one object (a batch, a string) is a request of the wrong shape (-32600), not a parse error.
test('/mcp: a batch or a JSON string is -32600; a body that is not JSON, or empty, is -32700', { timeout: 30_000 }, async () => {
  const batch = await mcp([{ jsonrpc: '2.0', id: 1, method: 'ping' }]);
  assert.equal(batch.json?.error?.code, -32600, batch.text);
  const text = await mcp('"ping"');
  assert.equal(text.json?.error?.code, -32600, text.text);
  const broken = await mcp('{"jsonrpc":"2.0",');
  assert.equal(broken.json?.error?.code, -32700, broken.text);
  // An empty body is no JSON either (REST reads one as `{}`: no params).
  const empty = await mcp('');
  assert.equal(empty.json?.error?.code, -32700, empty.text);
  assert.match(empty.json.error.message, /body is empty/);
});

test(
  '/mcp with no session: a notifications/cancelled posted apart stops the call it names, whose request is answered with no message (an empty event stream, not a dropped connection)',
  { timeout: 60_000 },
  async () => {
    const s = await h.host.createSession({ ...BASH, cols: 80, rows: 24 });
    try {
      await until(() => s.mirror.screen().then((x) => x.rows.join('\n').includes('$')), 10_000, 'a prompt');
      const call = (id: string, text: string, timeout: number) =>
        mcp({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'send', arguments: { session: s.id, text, timeout } } });
      const long = call('long-1', 'sleep 30', 60_000);
      long.catch(() => undefined); // asserted below
      await until(() => s.mirror.screen().then((x) => x.rows.join('\n').includes('sleep 30')), 10_000, 'the command typed');
      const cancel = await mcp({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'long-1', reason: 'the user pressed Esc' } });
      assert.equal(cancel.status, 202, cancel.text);
      // The session's one send is free again: the next one is not refused as busy.
      const next = await call('next-1', '', 300);
      assert.notEqual(next.json?.result?.isError, true, next.text);
      // An HTTP answer all the same (the transport requires one for a request): an event stream that carries no message.
      const answered = await long;
      assert.equal(answered.status, 200, answered.text);
      assert.match(String(answered.headers['content-type']), /^text\/event-stream/);
      assert.equal(answered.text, '', 'no JSON-RPC response to a cancelled request');
    } finally {
      h.host.registry.remove(s.id);
    }
  },
);

test('tools/list and resources/list have one page: a cursor the server never gave is -32602', { timeout: 30_000 }, async () => {
  for (const method of ['tools/list', 'resources/list']) {
    const r = await mcp({ jsonrpc: '2.0', id: 7, method, params: { cursor: 'bogus' } });
    assert.equal(r.json?.error?.code, -32602, r.text);
    assert.match(r.json.error.message, /cursor/);
    const whole = await mcp({ jsonrpc: '2.0', id: 8, method, params: {} });
    assert.equal(whole.json?.error, undefined, whole.text);
  }
});

/** A request of the 2026-07-28 revision: no initialize, its revision, client and capabilities in `_meta`. */
/** The answers `shared-pty mcp` writes on its stdout, by id, as they come. */
function answersOf(child: ChildProcessWithoutNullStreams): Map<number, any> {
  const answers = new Map<number, any>();
  let buffered = '';
  child.stdout.on('data', (d: Buffer) => {
    buffered += d.toString('utf8');
    for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
      const m = JSON.parse(buffered.slice(0, nl));
      buffered = buffered.slice(nl + 1);
      if (typeof m.id === 'number') answers.set(m.id, m);
    }
  });
  return answers;
}

// Every 2026-07-28 request names its revision; over stdio the SDK looked at the first one only,
// and served a later request naming a revision this server does not speak (an outside audit).
test('shared-pty mcp over stdio: each 2026-07-28 request naming a revision it does not speak is -32022, not only the first', { timeout: 30_000 }, async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spt-mcp-stdio-'));
  fs.chmodSync(dir, 0o700);
  const child = spawn(process.execPath, [CLI, 'mcp'], { env: { ...process.env, SHARED_PTY_DIR: dir }, stdio: ['pipe', 'pipe', 'pipe'] });
  try {
    const answers = answersOf(child);
    const ask = async (id: number, version: string) => {
      const _meta = {
        'io.modelcontextprotocol/protocolVersion': version,
        'io.modelcontextprotocol/clientInfo': { name: 'stdio-revisions', version: '1' },
        'io.modelcontextprotocol/clientCapabilities': {},
      };
      child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/list', params: { _meta } }) + '\n');
      const deadline = Date.now() + 10_000;
      while (!answers.has(id)) {
        if (Date.now() > deadline) throw new Error(`no answer to ${id}`);
        await new Promise((r) => setTimeout(r, 20));
      }
      return answers.get(id);
    };
    assert.ok(Array.isArray((await ask(1, '2026-07-28')).result?.tools), 'the first request, of a revision it speaks, is served');
    for (const [id, version] of [
      [2, '2099-01-01'],
      [3, 'garbage'],
      [5, '2025-11-25'],
    ] as const) {
      const refused = await ask(id, version);
      assert.equal(refused.error?.code, -32022, JSON.stringify(refused));
      assert.equal(refused.error.data?.requested, version);
      assert.deepEqual(refused.error.data?.supported, ['2026-07-28'], 'as /mcp answers a 2026-07-28 request');
    }
    assert.ok(Array.isArray((await ask(4, '2026-07-28')).result?.tools), 'and the connection goes on');
    child.stdin.end();
    assert.equal(await new Promise((resolve) => child.once('exit', resolve)), 0);
  } finally {
    child.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

function mcp2026(id: number, method: string, params: Record<string, unknown>, capabilities: Record<string, unknown> = {}) {
  const _meta = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientInfo': { name: 'malformed-test', version: '1' },
    'io.modelcontextprotocol/clientCapabilities': capabilities,
  };
  return request(h.port, 'POST', '/mcp', {
    token: h.token,
    body: { jsonrpc: '2.0', id, method, params: { ...params, _meta } },
    headers: {
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': method,
      ...(typeof (params.name ?? params.taskId) === 'string' ? { 'mcp-name': String(params.name ?? params.taskId) } : {}),
    },
  });
}

test('on the 2026-07-28 revision too, params of the wrong type and cursors the server never gave are -32602 in one line', { timeout: 30_000 }, async () => {
  // The SDK alone answered these -32603 Internal error with its whole validation report, and took
  // a made-up cursor (found by an outside audit).
  const cases: Array<[string, Record<string, unknown>, RegExp]> = [
    ['tools/list', { cursor: 5 }, /^Invalid params for tools\/list: /],
    ['resources/list', { cursor: 5 }, /^Invalid params for resources\/list: /],
    ['resources/read', { uri: 5 }, /^Invalid params for resources\/read: params\.uri: /],
    ['tools/call', { name: 'list_sessions', arguments: 0 }, /^Invalid params for tools\/call: params\.arguments: /],
    ['tools/list', { cursor: 'x' }, /cursor: no such cursor/],
  ];
  for (const [i, [method, params, message]] of cases.entries()) {
    const r = await mcp2026(i + 1, method, params);
    assert.equal(r.json?.id, i + 1, r.text);
    assert.equal(r.json?.error?.code, -32602, `${method} ${JSON.stringify(params)}: ${r.text}`);
    assert.match(r.json.error.message, message);
    assert.doesNotMatch(r.json.error.message, /\n/);
  }
  // Well-formed requests of that revision are served as before.
  const ok = await mcp2026(9, 'tools/call', { name: 'list_sessions', arguments: {} });
  assert.equal(ok.json?.error, undefined, ok.text);
  assert.ok(Array.isArray(ok.json?.result?.structuredContent?.sessions), ok.text);
  const listed = await mcp2026(10, 'tools/list', {});
  assert.ok(Array.isArray(listed.json?.result?.tools), listed.text);
});

// The transport answers a protocol revision it does not speak with 400; the refusal names every
// revision this server speaks (the SDK's own left out 2026-07-28 and said -32000).
test('/mcp: an MCP-Protocol-Version the server does not speak is 400 -32022, naming every revision it speaks', { timeout: 30_000 }, async () => {
  const asked = (version: string) =>
    request(h.port, 'POST', '/mcp', {
      token: h.token,
      body: { jsonrpc: '2.0', id: 5, method: 'tools/list', params: {} },
      headers: { accept: 'application/json, text/event-stream', 'mcp-protocol-version': version },
    });
  // Whatever the header says, a request without the 2026-07-28 envelope is refused the same way.
  for (const version of ['2099-01-01', 'garbage']) {
    const other = await asked(version);
    assert.equal(other.status, 400, other.text);
    assert.equal(other.json?.error?.code, -32022, `${version}: ${other.text}`);
  }
  const refused = await asked('1999-01-01');
  assert.equal(refused.status, 400, refused.text);
  assert.equal(refused.json?.id, 5, refused.text);
  assert.equal(refused.json.error?.code, -32022, refused.text);
  assert.match(refused.json.error.message, /^Unsupported protocol version: 1999-01-01 \(this server speaks 2026-07-28, and after initialize 2025-11-25, /);
  assert.deepEqual(refused.json.error.data?.requested, '1999-01-01');
  assert.deepEqual(refused.json.error.data?.supported.slice(0, 2), ['2026-07-28', '2025-11-25']);
  // A revision it speaks is served.
  const served = await asked('2025-11-25');
  assert.equal(served.status, 200, served.text);
  assert.ok(Array.isArray(served.json?.result?.tools), served.text);
});

// A tool error repeats the session selector or key name it was given: a made-up one of 500 000
// characters came back whole into the model's context (an outside audit). It is quoted short.
test('an unknown session or key name far too long is quoted short in the tool error, saying how long it was', { timeout: 30_000 }, async () => {
  const selector = 'x'.repeat(500_000);
  const unknown = await mcp({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'read_screen', arguments: { session: selector } } });
  const text = unknown.json?.result?.content?.[0]?.text as string;
  assert.equal(unknown.json?.result?.isError, true, unknown.text.slice(0, 300));
  assert.match(text, /^Error -32001: Unknown session: "x{80}…" \(500000 characters\)$/);
  const opened = await mcp({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'open_session', arguments: { command: 'cat' } } });
  const session = opened.json?.result?.structuredContent?.id as string;
  assert.ok(session, opened.text);
  try {
    const key = 'K'.repeat(200_000);
    const badKey = await mcp({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'send_keys', arguments: { session, keys: [key] } } });
    const keyText = badKey.json?.result?.content?.[0]?.text as string;
    assert.equal(badKey.json?.result?.isError, true, badKey.text.slice(0, 300));
    assert.match(keyText, /^Error -32602: Invalid arguments for send_keys: .*Unknown key name: "K{80}…" \(200000 characters\)/);
    assert.ok(keyText.length < 400, `${keyText.length} characters`);
    // Short ones are quoted whole, as before.
    const short = await mcp({ jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'read_screen', arguments: { session: 'nosuch' } } });
    assert.equal(short.json?.result?.content?.[0]?.text, 'Error -32001: Unknown session: nosuch');
  } finally {
    await mcp({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'close_session', arguments: { session } } });
  }
});

// The Tasks extension's tasks/update takes inputResponses, a record of answers: anything else was
// answered with success and ignored (an outside audit).
test('2026-07-28 tasks/update with inputResponses missing or not a record of objects is -32602 in one line', { timeout: 30_000 }, async () => {
  const s = await h.host.createSession({ ...BASH, cols: 80, rows: 24 });
  try {
    const post = (id: number, method: string, params: Record<string, unknown>) =>
      mcp2026(id, method, params, { extensions: { 'io.modelcontextprotocol/tasks': {} } });
    const created = await post(1, 'tools/call', { name: 'wait_for', arguments: { session: s.id, match: 'NEVER-SHOWN', timeout: 20_000 } });
    const taskId = created.json?.result?.taskId as string;
    assert.equal(typeof taskId, 'string', created.text);
    const cases: Array<[unknown, RegExp]> = [
      [5, /^Invalid params for tasks\/update: params\.inputResponses: /],
      ['x', /^Invalid params for tasks\/update: params\.inputResponses: /],
      [[1], /^Invalid params for tasks\/update: params\.inputResponses: /],
      [undefined, /^Invalid params for tasks\/update: params\.inputResponses: /],
      [{ k: 5 }, /^Invalid params for tasks\/update: params\.inputResponses\.k: /],
    ];
    for (const [i, [inputResponses, message]] of cases.entries()) {
      const r = await post(10 + i, 'tasks/update', { taskId, ...(inputResponses === undefined ? {} : { inputResponses }) });
      assert.equal(r.json?.id, 10 + i, r.text);
      assert.equal(r.json?.error?.code, -32602, `${JSON.stringify(inputResponses)}: ${r.text}`);
      assert.match(r.json.error.message, message);
      assert.doesNotMatch(r.json.error.message, /\n/);
    }
    // A record of answers (none here) is taken.
    const ok = await post(20, 'tasks/update', { taskId, inputResponses: {} });
    assert.equal(ok.json?.error, undefined, ok.text);
    await post(21, 'tasks/cancel', { taskId });
  } finally {
    h.host.registry.remove(s.id);
  }
});

// Over stdio a line may be 10 MiB, but the relay sends each call to a host as one line of at most
// 1 MiB: a longer one made the host close the relay's connection, and the call (with every other
// on it) ended "the connection to the Shared PTY host closed" (an outside audit).
test('shared-pty mcp: a call too large for the host is a tool error naming the limit, and the connection to the host stays', { timeout: 60_000 }, async () => {
  const s = await h.host.createSession({ ...BASH, cols: 80, rows: 24 });
  const child = spawn(process.execPath, [CLI, 'mcp'], { env: { ...process.env, SHARED_PTY_DIR: h.dir }, stdio: ['pipe', 'pipe', 'pipe'] });
  try {
    await until(() => s.mirror.screen().then((x) => x.rows.join('\n').includes('$')), 10_000, 'a prompt');
    const answers = answersOf(child);
    const send = (m: unknown) => child.stdin.write(JSON.stringify(m) + '\n');
    const answer = (id: number) => until(() => answers.get(id), 30_000, `the answer to ${id}`);
    const call = (id: number, name: string, args: Record<string, unknown>) =>
      send({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });
    send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } });
    await answer(1);
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    // A call that waits on the relay's connection to the host meanwhile.
    call(2, 'wait_for', { session: s.id, match: 'AFTER-42', timeout: 30_000 });
    await new Promise((r) => setTimeout(r, 300));
    call(3, 'send', { session: s.id, text: 'y'.repeat(1_200_000), submit: false });
    const big = await answer(3);
    assert.equal(big.result?.isError, true, JSON.stringify(big).slice(0, 300));
    assert.match(big.result.content[0].text, /^Error -32600: Invalid Request: the call is too large: \d+ bytes .*at most 1048576 bytes/);
    assert.doesNotMatch((await s.mirror.screen()).rows.join('\n'), /yyyy/, 'nothing was typed');
    call(4, 'send', { session: s.id, text: 'echo AFTER-$((6*7))', timeout: 20_000 });
    assert.notEqual((await answer(4)).result?.isError, true, JSON.stringify(answers.get(4)).slice(0, 300));
    const waited = await answer(2);
    assert.notEqual(waited.result?.isError, true, JSON.stringify(waited).slice(0, 300));
    assert.equal(waited.result.structuredContent.matched, true, 'the wait on the same connection was not cut');
    child.stdin.end();
    assert.equal(await new Promise((resolve) => child.once('exit', resolve)), 0);
  } finally {
    child.kill('SIGKILL');
    h.host.registry.remove(s.id);
  }
});

// A script may pipe its requests in and close its end (`printf … | shared-pty mcp`): the SDK's
// stdio transport closed at that end and dropped the calls still running, so only `initialize`
// was answered (an outside audit). Each call is answered before the relay exits; one the client
// cancelled is owed no answer and does not hold the exit for its whole wait.
test('shared-pty mcp: requests piped in before the input closes are all answered, then it exits', { timeout: 60_000 }, async () => {
  const s = await h.host.createSession({ ...BASH, cols: 80, rows: 24 });
  const child = spawn(process.execPath, [CLI, 'mcp'], { env: { ...process.env, SHARED_PTY_DIR: h.dir }, stdio: ['pipe', 'pipe', 'pipe'] });
  try {
    await until(() => s.mirror.screen().then((x) => x.rows.join('\n').includes('$')), 10_000, 'a prompt');
    const answers = answersOf(child);
    const call = (id: number, name: string, args: Record<string, unknown>) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });
    const piped = [
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      call(2, 'list_sessions', {}),
      call(3, 'send', { session: s.id, text: 'sleep 1; echo PIPED-$((6*7))', timeout: 20_000 }),
      call(4, 'wait_for', { session: s.id, match: 'never-printed', timeout: 1500 }),
      call(5, 'wait_for', { session: s.id, match: 'never-printed-either', timeout: 600_000 }),
      { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 5 } },
    ];
    // The last without its newline, as `printf` leaves it: read at the end, as the sockets read one.
    child.stdin.end(piped.map((m) => JSON.stringify(m) + '\n').join('') + JSON.stringify({ jsonrpc: '2.0', id: 6, method: 'ping' }));
    assert.equal(await new Promise((resolve) => child.once('exit', resolve)), 0);
    assert.deepEqual([...answers.keys()].sort(), [1, 2, 3, 4, 6], 'every call but the cancelled one answered');
    assert.match(
      answers
        .get(2)
        .result?.structuredContent?.sessions?.map((x: { id: string }) => x.id)
        .join(' '),
      new RegExp(s.id),
    );
    assert.match(answers.get(3).result?.structuredContent?.output ?? '', /^PIPED-42$/m, JSON.stringify(answers.get(3)).slice(0, 300));
    assert.equal(answers.get(4).result?.structuredContent?.matched, false, JSON.stringify(answers.get(4)).slice(0, 300));
  } finally {
    child.kill('SIGKILL');
    h.host.registry.remove(s.id);
  }
});
