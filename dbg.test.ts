import { test } from 'node:test';
import { startHttpHost } from './test/helpers/http';
test('dbg', async () => {
  const h = await startHttpHost();
  const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'c', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} };
  const body = { jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: meta } };
  const res = await fetch(`${h.http.url}/mcp`, { method: 'POST', headers: { authorization: `Bearer ${h.token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'server/discover' }, body: JSON.stringify(body) });
  console.log(res.status, await res.text());
  await h.close();
});
