import type { IncomingMessage, ServerResponse } from 'node:http';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { invoke } from '../../core/methods/dispatch';
import { FULL_GRANT, oneShotCaller, type Grant } from '../../core/io/caller';
import type { HostServices } from '../../core/methods/types';
import { BodyTooLargeError, readJsonBody, sendJson } from '../http/http-util';
import { connectMcp, createMcpServer, type ToolBackend } from './mcp-tools';

/**
 * The tools of an in-process host call its method table directly, each call an agent's over
 * `/mcp` (one request at a time), with what its token allows.
 */
export function localBackend(services: HostServices, signal?: AbortSignal, grant: Grant = FULL_GRANT): ToolBackend {
  const caller = oneShotCaller('agent', 'mcp-http', grant);
  return {
    call: (method, params) => invoke(method, params, { mode: { kind: 'control' }, services, caller, signal: signal ?? new AbortController().signal }),
  };
}

/**
 * Whether a POST asks for progress (a request whose `_meta` has a `progressToken`): its answer is
 * then an event stream, which can carry `notifications/progress` before the result.
 */
export function wantsProgress(body: unknown): boolean {
  const messages = Array.isArray(body) ? body : [body];
  return messages.some((m) => {
    const meta = (m as { params?: { _meta?: { progressToken?: unknown } } } | null)?.params?._meta;
    return typeof meta === 'object' && meta !== null && meta.progressToken !== undefined;
  });
}

/**
 * `/mcp`: MCP over Streamable HTTP, stateless: each POST gets a fresh server and transport, so
 * there is no per-client state to leak. A POST is answered as plain JSON, unless one of its
 * requests gave a progressToken: then as an event stream (text/event-stream), as the Streamable
 * HTTP transport allows, so its progress notifications reach the client (docs/guarantees.md#events-instead-of-polling).
 * GET (server-initiated stream) is not offered: 405.
 */
export async function handleMcp(services: HostServices, req: IncomingMessage, res: ServerResponse, grant: Grant = FULL_GRANT): Promise<void> {
  if (req.method !== 'POST') {
    sendJson(res, 405, { jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed: use POST' }, id: null }, { allow: 'POST' });
    return;
  }
  let body: unknown;
  try {
    body = await readJsonBody(req);
  } catch (e) {
    // A body over the limit is 413 with an Invalid Request error; one that is not JSON, a parse error.
    if (e instanceof BodyTooLargeError) {
      sendJson(res, 413, { jsonrpc: '2.0', error: { code: e.code, message: e.message }, id: null }, { connection: 'close' });
    } else sendJson(res, 400, { jsonrpc: '2.0', error: { code: -32700, message: (e as Error).message }, id: null });
    return;
  }
  // Whoever calls here is an agent: a scoped token used here is an agent's from now on, on every
  // surface (REST, the stream WebSocket, /rpc), so what MCP refuses it cannot write elsewhere.
  grant.holder?.markAgent();
  const ac = new AbortController();
  res.on('close', () => ac.abort());
  const server = createMcpServer(localBackend(services, ac.signal, grant), grant);
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: !wantsProgress(body) });
  res.on('close', () => {
    void transport.close();
    void server.close();
  });
  await connectMcp(server, transport, grant);
  await transport.handleRequest(req, res, body);
}
