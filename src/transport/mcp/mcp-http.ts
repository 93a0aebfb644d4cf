import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import {
  createMcpHandler,
  isLegacyRequest,
  PROTOCOL_VERSION_META_KEY,
  WebStandardStreamableHTTPServerTransport,
  type McpServer,
} from '@modelcontextprotocol/server';
import { invoke } from '../../core/methods/dispatch';
import { CALLER_GONE } from '../../core/base/call-end';
import { FULL_GRANT, oneShotCaller, type Caller, type Grant, type PersonAsker } from '../../core/io/caller';
import type { HostServices } from '../../core/methods/types';
import { invalidParams, REST_STATUS, RpcError, serverError } from '../../core/base/errors';
import { MAX_NESTING, nestsDeeperThan } from '../../core/base/nesting';
import { BodyTooLargeError, readJsonBody, sendJson, sendJsonRpcError } from '../base/http-util';
import { personKeysTrusted, type AppsDeclarations } from './apps-declarations';
import { createMcpServer, misfitParams, unsupportedRevision, type ToolBackend } from './mcp-tools';
import { askPersonToApprove } from './approval-question';
import type { PersonPrompt } from './mcp-elicit';
import type { RunStore } from './tool-run';
import type { McpSessions } from './mcp-sessions';

/** A 2025-11-25 client's session of `/mcp` (mcp-sessions.ts): its transport answers each of its requests. */
export interface McpSession {
  handle(request: Request, body: unknown): Promise<Response>;
  close(): Promise<void>;
}

/**
 * The refusal of a request of the revisions agreed at `initialize` whose `MCP-Protocol-Version`
 * header names one this server does not speak (400, as the transport says). Undefined for a
 * header it speaks, or none.
 */
function unsupportedHeader(req: IncomingMessage): RpcError | undefined {
  return unsupportedRevision(req.headers['mcp-protocol-version']);
}

/** Whether a request names its revision in its `_meta`, as a 2026-07-28 request does. */
function carriesRevision(body: unknown): boolean {
  const meta = (body as { params?: { _meta?: Record<string, unknown> } } | null)?.params?._meta;
  return typeof meta === 'object' && meta !== null && meta[PROTOCOL_VERSION_META_KEY] !== undefined;
}

/** Whether `body` is a 2025-11-25 `initialize` whose client declared elicitation (the one kind of client given a session). */
function initializeWithElicitation(body: unknown): boolean {
  const m = body as { method?: unknown; params?: { capabilities?: { elicitation?: unknown } } } | null;
  return m?.method === 'initialize' && typeof m.params?.capabilities?.elicitation === 'object' && m.params.capabilities.elicitation !== null;
}

/**
 * The tools of an in-process host call its method table directly, each call an agent's over
 * `/mcp` (one request at a time), with what its token allows.
 */
export function localBackend(services: HostServices, signal?: AbortSignal, grant: Grant = FULL_GRANT): ToolBackend {
  const caller = oneShotCaller('agent', 'mcp-http', grant);
  return {
    // A call with a prompt (a 2026-07-28 round, a task) is asked about through it; one apart from
    // its request waits on its own signal, not the request's.
    call: (method, params, via) =>
      invoke(method, params, {
        mode: { kind: 'control' },
        services,
        caller: withAsker(caller, via?.prompt),
        signal: via?.signal ?? signal ?? new AbortController().signal,
      }),
  };
}

/** The caller, able to ask the person through `prompt` when it can put a question (form mode). */
function withAsker(caller: Caller, prompt: PersonPrompt | undefined): Caller {
  if (!prompt?.choose) return caller;
  const personAsker: PersonAsker = { ask: (q, over) => askPersonToApprove(prompt, q, over) };
  // The caller's getters (origin, agentToken) follow its token: kept by delegating, not copying.
  return Object.create(caller, { personAsker: { value: personAsker } }) as Caller;
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

/** Headers that describe the Node request's own framing, not the message handed on. */
const FRAMING_HEADERS = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade']);

/** The Node request as the web-standard Request the SDK's serving entries take (its body already read). */
function webRequest(req: IncomingMessage, body: unknown, signal: AbortSignal): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || FRAMING_HEADERS.has(name)) continue;
    headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  return new Request(`http://${req.headers.host ?? '127.0.0.1'}${req.url ?? '/mcp'}`, { method: 'POST', headers, body: JSON.stringify(body), signal });
}

/** Writes the SDK's answer (one JSON body, or an event stream that ends with the result). */
async function writeResponse(res: ServerResponse, response: Response): Promise<void> {
  if (res.writableEnded || res.destroyed) {
    // Answered already (a cancelled request: with nothing) or gone: what came after is dropped.
    await response.body?.cancel().catch(() => undefined);
    return;
  }
  const headers: Record<string, string> = {};
  // The connection is this server's to manage: Node says how long it keeps an idle one
  // (Keep-Alive: timeout=…), so a client never reuses one just as it closes.
  response.headers.forEach((value, name) => void (FRAMING_HEADERS.has(name) ? undefined : (headers[name] = value)));
  res.writeHead(response.status, headers);
  if (!response.body) {
    res.end();
    return;
  }
  const stream = Readable.fromWeb(response.body as import('node:stream/web').ReadableStream);
  piped.set(res, stream);
  res.on('close', () => stream.destroy());
  stream.on('error', () => res.destroy());
  stream.pipe(res);
}

/** The body each response is being written from (writeResponse), so that a cancelled request can end it. */
const piped = new WeakMap<ServerResponse, Readable>();

/**
 * Answers a request its client cancelled with nothing, as the specification asks: an event stream
 * with no message, or the end of the one that was under way (never a dropped connection, which a
 * client reads as a failure of the transport).
 */
function endWithoutAnswer(res: ServerResponse): void {
  if (res.writableEnded || res.destroyed) return;
  const stream = piped.get(res);
  if (stream) {
    stream.unpipe(res);
    stream.destroy();
  }
  if (!res.headersSent) res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  res.end();
}

/**
 * `/mcp`: MCP over Streamable HTTP for both protocol revisions, with no per-client state to leak
 * (docs/protocol.md#6-mcp). A 2026-07-28 request (version and capabilities in its `_meta`) is
 * served by the SDK's per-request entry: one JSON body, upgraded to an event stream when progress
 * comes before the result. A 2025-11-25 request gets a fresh server and transport, stateless
 * (no Mcp-Session-Id), answered as plain JSON unless one of its requests gave a progressToken:
 * then as an event stream, so its progress notifications reach the client
 * (docs/guarantees.md#events-instead-of-polling). GET (server-initiated stream) is not offered: 405.
 * `runs` keeps the tasks and 2026-07-28 rounds: every request gets a fresh server, the runs stay
 * (the HTTP server owns them and ends them when it closes).
 */
export async function handleMcp(
  services: HostServices,
  runs: RunStore,
  apps: AppsDeclarations,
  sessions: McpSessions<McpSession>,
  req: IncomingMessage,
  res: ServerResponse,
  grant: Grant = FULL_GRANT,
): Promise<void> {
  const owner: object = grant.holder ?? grant;
  const sessionId = req.headers['mcp-session-id'];
  const session = typeof sessionId === 'string' ? sessions.get(sessionId, owner) : undefined;
  if (typeof sessionId === 'string' && !session) {
    // Ended (a limit, the host restarted) or never this credential's: the client starts a new one.
    sendJsonRpcError(res, 404, serverError('Session not found: initialize again'), null);
    return;
  }
  if (session && req.method === 'DELETE') {
    sessions.end(sessionId as string);
    res.writeHead(200).end();
    return;
  }
  if (req.method !== 'POST') {
    sendJsonRpcError(res, 405, serverError('Method not allowed: use POST'), null, { allow: session ? 'POST, DELETE' : 'POST' });
    return;
  }
  let body: unknown;
  try {
    body = await readJsonBody(req, { emptyIsJson: false });
  } catch (e) {
    // A body over the limit is 413 with an Invalid Request error; one that is not JSON, a parse error.
    if (e instanceof BodyTooLargeError) sendJsonRpcError(res, REST_STATUS.PAYLOAD_TOO_LARGE, e, null, { connection: 'close' });
    else sendJsonRpcError(res, REST_STATUS.BAD_REQUEST, e);
    return;
  }
  // Whoever calls here is an agent: a scoped token used here is an agent's from now on, on every
  // surface (REST, the stream WebSocket, /rpc), so what MCP refuses it cannot write elsewhere.
  grant.holder?.markAgent();
  if (nestsDeeperThan(body)) {
    const id = (body as { id?: unknown }).id;
    const message = `Invalid params: the request nests deeper than ${MAX_NESTING} levels`;
    sendJsonRpcError(res, 200, invalidParams(message), typeof id === 'string' || typeof id === 'number' ? id : null);
    return;
  }
  const misfit = misfitParams(body);
  if (misfit) {
    sendJson(res, 200, misfit);
    return;
  }
  const ac = new AbortController();
  res.on('close', () => ac.abort(CALLER_GONE));
  if (!session) {
    // With no session, a client's cancellation comes in a POST of its own: the call it names
    // stops, and its request is answered with nothing (the client no longer waits for it).
    const cancelled = cancelledRequest(body);
    if (cancelled !== undefined) sessions.stateless.cancel(owner, cancelled);
    const id = requestId(body);
    if (id !== undefined)
      res.on(
        'close',
        sessions.stateless.add(owner, id, () => {
          ac.abort();
          endWithoutAnswer(res);
        }),
      );
  }
  // A session's scoped token's app_input is never the person's (mcp-tools.ts): only the editor's chat's is asked about.
  const editorChat = personKeysTrusted(grant);
  const appsDeclared = editorChat ? () => apps.declared(owner) : undefined;
  // A server whose tool calls stop with `signal` (this request's), or each with its own request (a session's).
  const serverFor = (signal?: AbortSignal) => createMcpServer(localBackend(services, signal, grant), grant, { runs, appsDeclared });
  const factory = () => serverFor(ac.signal);
  const request = webRequest(req, body, ac.signal);
  const legacy = session !== undefined || (await isLegacyRequest(request, body));
  // A request without the 2026-07-28 envelope is of the revisions agreed at initialize, whatever its header says.
  const unsupported = legacy || !carriesRevision(body) ? unsupportedHeader(req) : undefined;
  if (unsupported) {
    sendJsonRpcError(res, REST_STATUS.BAD_REQUEST, unsupported, (requestId(body) as string | number | undefined) ?? null);
    return;
  }
  if (session) {
    await writeResponse(res, await session.handle(request, body));
    return;
  }
  if (legacy) {
    if (editorChat) apps.noteInitialize(owner, body);
    if (initializeWithElicitation(body)) {
      await writeResponse(res, await openSession(serverFor(), sessions, owner, request, body));
      return;
    }
    const server = factory();
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: !wantsProgress(body) });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await writeResponse(res, await transport.handleRequest(request, { parsedBody: body }));
    return;
  }
  const handler = createMcpHandler(factory, { legacy: 'reject' });
  res.on('close', () => void handler.close());
  await writeResponse(res, await handler.fetch(request, { parsedBody: body }));
}

/**
 * Opens a session for a 2025-11-25 client that declared elicitation (mcp-sessions.ts) and answers
 * its `initialize` (with the `Mcp-Session-Id` it then sends on every request). Its server knows
 * the client's capabilities, so a tool call can ask the person through it; its answers come as
 * event streams, which carry those questions. `server` is made without this request's signal: its
 * calls stop with their own requests, not with this one.
 */
async function openSession(server: McpServer, sessions: McpSessions<McpSession>, owner: object, request: Request, body: unknown): Promise<Response> {
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    onsessioninitialized: (id) => sessions.add(id, owner, session),
    onsessionclosed: (id) => sessions.forget(id),
  });
  const session: McpSession = {
    handle: (r, b) => transport.handleRequest(r, { parsedBody: b }),
    close: async () => {
      await transport.close();
      await server.close();
    },
  };
  await server.connect(transport);
  return transport.handleRequest(request, { parsedBody: body });
}

/** The id of a JSON-RPC request (undefined for a notification or anything else). */
function requestId(body: unknown): unknown {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return undefined;
  const m = body as { id?: unknown; method?: unknown };
  return typeof m.method === 'string' && (typeof m.id === 'string' || typeof m.id === 'number') ? m.id : undefined;
}

/** The request a `notifications/cancelled` names (undefined for any other message). */
function cancelledRequest(body: unknown): unknown {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return undefined;
  const m = body as { method?: unknown; id?: unknown; params?: { requestId?: unknown } };
  if (m.method !== 'notifications/cancelled' || m.id !== undefined) return undefined;
  const id = m.params?.requestId;
  return typeof id === 'string' || typeof id === 'number' ? id : undefined;
}
