// An MCP request whose params do not fit its method (tool arguments that are not an object) is
// answered -32602 Invalid params with a one-line message; the SDK alone answered -32603 Internal
// error with its whole validation report (found by the MCP fuzzer).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { request, startHttpHost, type HttpHost } from '../../../helpers/http';
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
});
