import * as http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import type { HostServices } from '../../core/methods/types';
import type { IDisposable } from '../../core/base/lifecycle';
import type { Access } from '../base/access';
import { newToken } from '../base/tokens';
import { HttpGuard, pageCookieName, type PageTarget } from './http-security';

/** What an `open` route is handed: no grant (its own id is its credential). */
const NO_ACCESS: Access = { scope: 'view', viewOnly: true };
import { PageSessions } from './page-sessions';
import { refusalMessage, sendRefusal } from '../pages/refusal-page';
import { ScopedTokens } from './scoped-tokens';
import { MAX_BODY_BYTES, sendError, sendJson, sendJsonRpcError, sendRpcError } from '../base/http-util';
import { HttpConnections, InFlightPerToken, principalOf, tooManyHttpInFlight } from './http-limits';
import { HTTP_AUTHENTICATE_WITHIN_MS, MAX_HTTP_CONNECTIONS, MAX_IN_FLIGHT_REQUESTS, MAX_UNAUTHENTICATED_HTTP_CONNECTIONS } from '../../core/base/limits';
import { ErrorCode, REST_STATUS, toRpcError, type RpcError } from '../../core/base/errors';
import { FULL_GRANT } from '../../core/io/caller';
import { reachSession, sessionsInReach } from '../../core/methods/access';
import { STREAM_CLOSE } from '../../core/methods/stream-frames';
import { REST_ROUTES, serveRest } from './rest-routes';
import { matchRoute, type HttpRoute, type RouteParams } from './http-router';
import { handleViewAsset, handleViewPage } from '../pages/view-page';
import { ReplayLinks } from '../pages/replay-links';
import { handleReplay, replayTarget, type ReplayPart } from '../pages/replay-page';
import { SecretLinks } from '../pages/secret-links';
import { handleSecretPage } from '../pages/secret-page';
import { serveRpcWebSocket } from '../ws/ws-rpc';
import { serveStream } from '../ws/ws-stream';
import { splitProxyPrefix } from './proxy-path';
import { RunStore } from '../mcp/tool-run';
import { AppsDeclarations } from '../mcp/apps-declarations';
import { McpSessions } from '../mcp/mcp-sessions';
import type { McpSession } from '../mcp/mcp-http';
import { DEFAULT_MAX_LINE_BYTES } from '../base/line-reader';

/** Limits of the HTTP server. */
export const enum HttpLimits {
  /** Largest message the stream WebSocket accepts (docs/protocol.md: a longer one closes it with 1009). */
  MaxStreamPayload = 1024 * 1024,
}

/** The close code of a WebSocket (the stream, `/rpc`) whose scoped token was revoked or expired (as HTTP 401: the credential is gone). */
export const TOKEN_ENDED_CLOSE = STREAM_CLOSE.tokenEnded.code;

export interface HttpServerOptions {
  hostId: string;
  port?: number;
  token?: string;
  /** Extra origins allowed for browsers (docs/protocol.md#access-checks; default none). */
  allowedOrigins?: string[];
  /** Connections open at once with one credential (default MAX_HTTP_CONNECTIONS). */
  maxConnections?: number;
  /** Connections not authenticated yet, at once (default MAX_UNAUTHENTICATED_HTTP_CONNECTIONS). */
  maxUnauthenticatedConnections?: number;
  /** Requests in flight per token over HTTP, and per `/rpc` WebSocket (default MAX_IN_FLIGHT_REQUESTS). */
  maxInFlightRequests?: number;
  /** Longest `/rpc` message, the host's JSON-RPC line limit (default DEFAULT_MAX_LINE_BYTES, 1 MiB). */
  maxLineBytes?: number;
  /** How long a secret page's link works (default SECRET_PAGE_LIFETIME_MS, five minutes): for tests only, to see one expire. */
  secretPageLifetimeMs?: number;
}

/** A running HTTP server of a host. */
export interface HttpServer {
  url: string;
  port: number;
  token: string;
  streamUrl(sessionId: string): string;
  /** The scoped tokens of `shared-pty share` (docs/protocol.md#scoped-tokens). */
  tokens: ScopedTokens;
  /** The recordings it replays in the browser (`host/replay`). */
  replays: ReplayLinks;
  /** Its one-time pages where the person types a secret (`pty/secretPage`). */
  secretPages: SecretLinks;
  /** Stops at once: connections are cut; `close()` tells when they are gone. */
  dispose(): void;
  /** Stops, and resolves once every connection has closed and let go of what it held (its subscriptions). */
  close(): Promise<void>;
}

/**
 * What a preflight allows: the methods and headers REST uses (docs/guarantees.md#cors), and those of MCP's
 * Streamable HTTP transport, so a browser MCP client of an allowed origin can use `/mcp`: a 2025-11-25
 * client's session and resumption headers, and the `Mcp-Method`/`Mcp-Name` every 2026-07-28 request
 * carries (docs/protocol.md#protocol-revisions).
 */
const CORS_ALLOW = {
  methods: 'GET, POST, DELETE, OPTIONS',
  headers: 'Authorization, Content-Type, Accept, Mcp-Protocol-Version, Mcp-Session-Id, Last-Event-Id, Mcp-Method, Mcp-Name',
  /** Browsers cache the answer this long (seconds): the allow-list changes only with a restart. */
  maxAge: '600',
};

/** Answers a CORS preflight whose Origin passed the allow-list: 204, no body, no token needed. */
function answerPreflight(res: http.ServerResponse): void {
  res.writeHead(204, {
    'access-control-allow-methods': CORS_ALLOW.methods,
    'access-control-allow-headers': CORS_ALLOW.headers,
    'access-control-max-age': CORS_ALLOW.maxAge,
    'cache-control': 'no-store',
  });
  res.end();
}

/** What a request's route is handed once the checks have passed. */
interface Call {
  req: http.IncomingMessage;
  res: http.ServerResponse;
  url: URL;
  params: RouteParams;
  access: Access;
}
/** What a WebSocket upgrade's route is handed once the checks have passed. */
interface UpgradeCall {
  req: http.IncomingMessage;
  socket: Duplex;
  head: Buffer;
  url: URL;
  params: RouteParams;
  access: Access;
  reject: (status: number, text: string) => void;
}

/** One HTTP server per host on 127.0.0.1: REST, the WebSocket stream and `/rpc`, `/mcp`, and the browser view. */
export async function startHttpServer(services: HostServices, options: HttpServerOptions): Promise<HttpServer> {
  const token = options.token ?? newToken();
  // A request without Host is refused by the Host check (403, with the envelope), as one naming
  // another host is; Node's own refusal was a 400 with an empty body.
  const server = http.createServer({ requireHostHeader: false });
  // `Expect: 100-continue` (curl's, for a body over 1 KiB): a body over the limit is not asked
  // for, so the client reads its 413 rather than a connection closed under its upload.
  server.on('checkContinue', (req: http.IncomingMessage, res: http.ServerResponse) => {
    if (!(Number(req.headers['content-length']) > MAX_BODY_BYTES)) res.writeContinue();
    server.emit('request', req, res);
  });
  const connections = new HttpConnections({
    maxPerPrincipal: options.maxConnections ?? MAX_HTTP_CONNECTIONS,
    maxUnauthenticated: options.maxUnauthenticatedConnections ?? MAX_UNAUTHENTICATED_HTTP_CONNECTIONS,
    authenticateWithinMs: HTTP_AUTHENTICATE_WITHIN_MS,
  });
  server.on('connection', (socket: Socket) => connections.add(socket));
  const maxInFlight = options.maxInFlightRequests ?? MAX_IN_FLIGHT_REQUESTS;
  const inFlight = new InFlightPerToken(maxInFlight);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  server.on('error', () => {});
  const port = (server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${port}`;
  const tokens = new ScopedTokens((id, t) => `${url}/sessions/${encodeURIComponent(id)}/view?token=${t}`);
  const sessionGone = services.registry.onDidRemove((s) => tokens.dropSession(s.id));
  // Each replay link has a one-time token of its own, which opens that recording and nothing else.
  const replays = new ReplayLinks(
    (id, t) => `${url}/replay/${id}?token=${t}`,
    (id, recording, seconds) => tokens.shareReplay(id, recording, seconds),
  );
  const secretPages = new SecretLinks((id) => `${url}/secret/${id}`, options.secretPageLifetimeMs);
  // The MCP tasks and 2026-07-28 rounds of `/mcp` outlive each request; they end with this server.
  const mcpRuns = new RunStore();
  // A task started with a token ends with the token's uses (revoked, expired, its link opened): it would type later.
  const runsEnd = tokens.onDidEndUses(({ holder }) => mcpRuns.cancelOwnedBy(holder));
  // What the host token's 2025-11-25 client (the editor's chat) said it renders, from its initialize (each request is served on its own).
  const mcpApps = new AppsDeclarations();
  // The sessions of 2025-11-25 clients that declared elicitation (asked in the middle of a call); they end with this server.
  const mcpSessions = new McpSessions<McpSession>();
  const pages = new PageSessions(tokens, pageCookieName(port));
  const guard = new HttpGuard(token, port, options.allowedOrigins, tokens, pages);
  const streamWss = new WebSocketServer({ noServer: true, maxPayload: HttpLimits.MaxStreamPayload });
  // `/rpc` carries the sockets' JSON-RPC, so its limit is theirs: ws holds no more than that of a message.
  const maxLineBytes = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
  const rpcWss = new WebSocketServer({ noServer: true, maxPayload: maxLineBytes });

  /**
   * Every HTTP route of the host, as data (docs/protocol.md#5-http-and-websocket): what it answers, who may call it,
   * what serves it. The checks (Host, Origin, the credential where the route's access says, the
   * connection and in-flight limits) are applied to all of them in `handleRequest`, in one place.
   */
  const routes: ReadonlyArray<HttpRoute<(c: Call) => Promise<void> | void>> = [
    // A secret page's one-time id is its only credential: no token, no cookie, nothing else it opens.
    { verbs: '*', pattern: '/secret/:id', access: 'open', handle: (c) => handleSecretPage(services, secretPages, c.req, c.res, c.params.raw.id) },
    {
      verbs: ['GET'],
      pattern: '/health',
      access: 'api',
      handle: (c) => sendJson(c.res, 200, { ok: true, data: { hostId: options.hostId, sessions: sessionsReached(c.access) } }),
    },
    // The MCP SDK loads on the first /mcp request: a host nobody asks for MCP stays lighter.
    {
      verbs: '*',
      pattern: '/mcp',
      access: 'api',
      handle: async (c) => (await import('../mcp/mcp-http')).handleMcp(services, mcpRuns, mcpApps, mcpSessions, c.req, c.res, c.access),
    },
    {
      verbs: '*',
      pattern: '/sessions/:id/view',
      access: 'page',
      page: (p) => ({ target: { session: sessionIdOf(p.decoded.id) }, link: true }),
      // A malformed percent-encoding names no session: the raw segment is looked up, and found nowhere.
      handle: (c) => handleViewPage(services, c.req, c.res, c.url, c.access, c.params.decoded.id ?? c.params.raw.id),
    },
    // The view's assets under its own folder (where its page finds them, and a cookie scoped to that folder reaches them), and at `/view/…`.
    {
      verbs: '*',
      pattern: '/sessions/:id/view/:asset',
      access: 'page',
      page: (p) => ({ target: { session: sessionIdOf(p.decoded.id) }, link: false }),
      handle: (c) => handleViewAsset(c.req, c.res, `/view/${c.params.raw.asset}`),
    },
    {
      verbs: '*',
      pattern: '/view/*',
      access: 'page',
      page: () => ({ target: 'any', link: false }),
      handle: (c) => handleViewAsset(c.req, c.res, c.url.pathname),
    },
    replayRoute('/replay', () => ({ kind: 'picker' })),
    replayRoute('/replay/assets/:name', (p) => ({ kind: 'asset', name: p.raw.name })),
    replayRoute('/replay/:id', (p) => ({ kind: 'link', id: p.raw.id, what: 'page' })),
    replayRoute('/replay/:id/cast', (p) => ({ kind: 'link', id: p.raw.id, what: 'cast' })),
    replayRoute('/replay/:id/assets/:name', (p) => ({ kind: 'link', id: p.raw.id, what: { asset: p.raw.name } })),
    // The picker again under a session's folder, where the view links to it: a view opened through a
    // proxy holds a cookie scoped to that folder, and it opens this copy (it reads a file of the
    // person's in the browser; it serves nothing of the host's).
    sessionReplayRoute('/sessions/:id/replay', () => ({ kind: 'picker' })),
    sessionReplayRoute('/sessions/:id/replay/assets/:name', (p) => ({ kind: 'asset', name: p.raw.name })),
    ...REST_ROUTES.map((r): HttpRoute<(c: Call) => Promise<void>> => ({
      verbs: [r.rest.verb],
      pattern: r.rest.path,
      access: 'api',
      handle: (c) => serveRest(services, r, c.req, c.res, c.url, c.access, c.params.raw.id === undefined ? undefined : (c.params.decoded.id ?? '')),
    })),
  ];

  /** A page of the replayer: the part of it a path names, opened by its link's page cookie (or any, for the shared ones). */
  function replayRoute(pattern: string, part: (p: RouteParams) => ReplayPart): HttpRoute<(c: Call) => void> {
    return {
      verbs: '*',
      pattern,
      access: 'page',
      page: (p) => {
        const what = part(p);
        return what.kind === 'link' ? replayTarget(what.id, what.what === 'page') : { target: 'any', link: false };
      },
      handle: (c) => handleReplay(replays, c.req, c.res, c.url, c.access, part(c.params)),
    };
  }

  /** The replayer's picker under `/sessions/<id>/`, opened by that session's page cookie (or any). */
  function sessionReplayRoute(pattern: string, part: (p: RouteParams) => ReplayPart): HttpRoute<(c: Call) => void> {
    return {
      verbs: '*',
      pattern,
      access: 'page',
      page: (p) => ({ target: { session: sessionIdOf(p.decoded.id) }, link: false }),
      handle: (c) => handleReplay(replays, c.req, c.res, c.url, c.access, part(c.params)),
    };
  }

  /** The WebSocket routes: `/rpc`, and a session's stream (which the view page's cookie may open). */
  const upgrades: ReadonlyArray<HttpRoute<(c: UpgradeCall) => void>> = [
    {
      verbs: ['GET'],
      pattern: '/rpc',
      access: 'upgrade',
      handle: (c) =>
        rpcWss.handleUpgrade(c.req, c.socket, c.head, (ws) => {
          closeWithToken(ws, c.access);
          serveRpcWebSocket(services, ws, c.access, maxInFlight, maxLineBytes);
        }),
    },
    {
      verbs: ['GET'],
      pattern: '/sessions/:id/stream',
      access: 'upgrade',
      page: (p) => ({ target: { session: sessionIdOf(p.decoded.id) }, link: false }),
      handle: (c) => {
        const selector = c.params.decoded.id;
        // Thrown here, a malformed percent-encoding would end the whole host.
        if (selector === undefined) return c.reject(400, 'Bad Request');
        // The one reach rule (core/methods/access.ts): another session than a scoped token's, known or not, is 403.
        if (outOfReach(c.access, selector)) return c.reject(403, 'Forbidden');
        const scope = c.url.searchParams.get('readonly') === '1' ? 'view' : c.access.scope;
        streamWss.handleUpgrade(c.req, c.socket, c.head, (ws) => {
          closeWithToken(ws, c.access);
          serveStream(services, ws, selector, {
            grant: { ...c.access, scope },
            resync: c.url.searchParams.get('resync') === '1',
            maxMessageBytes: HttpLimits.MaxStreamPayload,
          });
        });
      },
    },
  ];

  /**
   * Answers whose response has not closed yet. A response's close comes a turn after its socket's,
   * and so after the server's own close: `close()` waits for each, so that what a request held (its
   * in-flight slot, its watch on a scoped token) is let go before the host counts as closed.
   */
  const answering = new Set<http.ServerResponse>();
  server.on('request', (req, res) => {
    answering.add(res);
    res.once('close', () => answering.delete(res));
    connections.answering(req.socket, res);
    void handleRequest(req, res).catch((e) => sendError(res, 'INTERNAL', `Internal error: ${(e as Error).message}`));
  });

  /** The checks every request passes, in this order, then its route (or "No route", 404). */
  async function handleRequest(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const { u, prefix } = requestUrl(req);
    const matched = matchRoute(routes, req.method ?? 'GET', u.pathname);
    const page = matched?.route.access === 'page' ? matched.route.page?.(matched.params) : undefined;
    // A link (`?token=` on a page) is traded for this browser's page cookie before anything else;
    // only by a GET, the browser's opening of it (a HEAD, a link preview's probe, must not spend it).
    const link = page?.link && req.method === 'GET' ? u.searchParams.get('token') : null;
    // Under a proxy's Host, only the browser's pages answer (docs/protocol.md#pages-behind-an-editors-proxy).
    const refusal = guard.checkSource(req, link ? 'link' : page ? 'cookie' : undefined);
    if (refusal) return sendError(res, refusal.code, refusal.message);
    const cors = guard.corsHeaders(req);
    for (const [name, value] of Object.entries(cors)) res.setHeader(name, value);
    if (guard.isPreflight(req)) return answerPreflight(res);
    if (matched?.route.access === 'open') return matched.route.handle({ req, res, url: u, params: matched.params, access: NO_ACCESS });
    if (page && link) return exchangeLink(req, res, u, link, page.target, prefix);
    const place = page ? 'page' : 'api';
    const access = guard.access(req, u, place, page?.target);
    // A page cookie's grant opens the host's pages only, never REST, /rpc or /mcp.
    if (!access || (access.viewOnly && !page)) {
      if (page) return sendRefusal(req, res, guard.refused(req, u, place, page.target), guard.isProxied(req));
      return sendError(res, 'UNAUTHORIZED', refusalMessage(guard.refused(req, u, place)));
    }
    // From here the connection is this credential's (until then it was on the clock, counted apart).
    if (!connections.claim(req.socket, principalOf(access))) {
      res.setHeader('connection', 'close');
      return refuseOverLimit(res, u, connections.error());
    }
    const slot = inFlight.enter(access);
    if (!slot) return refuseOverLimit(res, u, tooManyHttpInFlight(maxInFlight));
    res.on('close', () => slot.dispose());
    // A request in flight (a long wait) with a token that is revoked meanwhile is cut.
    const tracked = endsWithToken(access, () => res.destroy());
    res.on('close', () => tracked?.dispose());
    if (!matched) {
      // A WebSocket's path asked without the upgrade: said so, not "No route" (the route exists).
      if (matchRoute(upgrades, 'GET', u.pathname))
        return sendError(res, 'BAD_REQUEST', `${u.pathname} is a WebSocket endpoint: connect with a WebSocket (GET with Upgrade: websocket)`);
      return sendError(res, 'NOT_FOUND', `No route for ${req.method} ${u.pathname}`);
    }
    return matched.route.handle({ req, res, url: u, params: matched.params, access });
  }

  // CONNECT asks for a tunnel, as of a proxy: this server is none. Node drops such a connection
  // unanswered when nobody listens; it is told why instead (its target names another host, like an
  // absolute-form one: docs/protocol.md#access-checks).
  server.on('connect', (_req: http.IncomingMessage, socket: Socket) => {
    socket.on('error', () => socket.destroy());
    socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
  });

  server.on('upgrade', (req, socket, head) => {
    const reject = (status: number, text: string) => {
      socket.end(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
    };
    socket.on('error', () => socket.destroy());
    const { u } = requestUrl(req);
    const matched = matchRoute(upgrades, req.method ?? 'GET', u.pathname);
    const page = matched?.route.page?.(matched.params);
    // Through a proxy, only the view's stream (with its page cookie); never /rpc.
    const refusal = guard.checkSource(req, page ? 'cookie' : undefined);
    if (refusal) return refusal.status === 400 ? reject(400, 'Bad Request') : reject(403, 'Forbidden');
    // The view page's stream may use its page cookie (a browser's WebSocket sends no header); /rpc may not.
    const access = guard.access(req, u, 'upgrade', page?.target);
    if (!access || (access.viewOnly && !page)) return reject(401, 'Unauthorized');
    if (!connections.claim(socket as Socket, principalOf(access))) return reject(429, 'Too Many Requests');
    if (!matched) return reject(404, 'Not Found');
    matched.route.handle({ req, socket, head, url: u, params: matched.params, access, reject });
  });

  /** Closes the socket when its scoped token is revoked or expires. */
  function closeWithToken(ws: WebSocket, access: Access): void {
    const tracked = endsWithToken(access, (why) => ws.close(TOKEN_ENDED_CLOSE, why));
    ws.once('close', () => tracked?.dispose());
  }

  /** The request's URL without the prefix a proxy kept (`/absproxy/<port>`), and that prefix ('' when none). */
  function requestUrl(req: http.IncomingMessage): { u: URL; prefix: string } {
    const u = new URL(req.url ?? '/', url);
    const { prefix, path } = splitProxyPrefix(u.pathname, port);
    u.pathname = path;
    return { u, prefix };
  }

  /**
   * Trades a link's token for this browser's page cookie and sends the browser on to the same page
   * without the token (303: the link's entry leaves the history); a link that opens nothing gets a
   * page that says why. The cookie is named after the port and holds no token (PageSessions).
   * The redirect is relative, so it works under any proxy's prefix. The cookie's Path: `/` on the
   * host's own address; under a proxy, the prefix when the proxy kept it, else none, which makes it
   * the link's folder (`…/sessions/<id>`, `…/replay`): either way it is not sent to the other
   * ports the same proxy serves on that origin (docs/protocol.md#pages-behind-an-editors-proxy).
   */
  function exchangeLink(req: http.IncomingMessage, res: http.ServerResponse, u: URL, secret: string, target: PageTarget, prefix: string): void {
    const r = guard.exchange(req, secret, target);
    if ('refused' in r) return sendRefusal(req, res, r.refused, guard.isProxied(req));
    u.searchParams.delete('token');
    const { name, value, maxAgeSeconds } = r.cookie;
    const cookiePath = !guard.isProxied(req) ? '; Path=/' : prefix ? `; Path=${prefix}/` : '';
    res.writeHead(303, {
      location: (u.pathname.split('/').pop() ?? '') + (u.search || ''),
      'set-cookie': `${name}=${value}; HttpOnly; SameSite=Strict${cookiePath}; Max-Age=${maxAgeSeconds}`,
      'cache-control': 'no-store',
      'referrer-policy': 'no-referrer',
    });
    res.end();
  }

  /** The id of the session a selector names, or undefined (malformed, unknown, ambiguous): a page cookie's grant is for one id. */
  function sessionIdOf(selector: string | undefined): string | undefined {
    if (selector === undefined) return undefined;
    try {
      return reachSession(services.registry, FULL_GRANT, selector).id;
    } catch {
      return undefined;
    }
  }

  /** Whether a scoped token's reach leaves out the session `selector` names (an unknown one included). */
  function outOfReach(access: Access, selector: string): boolean {
    try {
      reachSession(services.registry, access, selector);
      return false;
    } catch (e) {
      return toRpcError(e).code === ErrorCode.Forbidden;
    }
  }

  /** 429 for a request over one of the limits: a JSON-RPC error on `/mcp`, the REST envelope elsewhere. */
  function refuseOverLimit(res: http.ServerResponse, u: URL, error: RpcError): void {
    if (u.pathname === '/mcp') return sendJsonRpcError(res, REST_STATUS.TOO_MANY_REQUESTS, error);
    sendRpcError(res, error);
  }

  /** Ties a connection to its scoped token (none for the host's token). */
  function endsWithToken(access: Access, end: Parameters<ScopedTokens['track']>[1]): IDisposable | undefined {
    return access.tokenId === undefined ? undefined : tokens.track(access.tokenId, end);
  }

  /**
   * `/health`'s session count: every session for the host's token; for a scoped token, the sessions
   * it reaches (its own, 1, or 0 once it ended), as `GET /sessions` lists them. A token for one
   * session learns nothing of the others (docs/guarantees.md#sharing-with-control), and a liveness probe with it still works.
   */
  function sessionsReached(access: Access): number {
    return sessionsInReach(services.registry, access);
  }

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> =>
    (closing ??= new Promise<void>((resolve) => {
      // A WebSocket's own close event (which ends its subscription) comes after the terminate.
      const webSockets = [...streamWss.clients, ...rpcWss.clients];
      const webSocketsClosed = webSockets.map((c) => new Promise<void>((r) => c.once('close', () => r())));
      const serverClosed = new Promise<void>((r) => server.close(() => r()));
      const answersClosed = [...answering].map((res) => new Promise<void>((r) => res.once('close', () => r())));
      sessionGone.dispose();
      runsEnd.dispose();
      mcpRuns.dispose();
      mcpSessions.dispose();
      tokens.dispose();
      connections.dispose();
      for (const c of webSockets) c.terminate();
      streamWss.close();
      rpcWss.close();
      server.closeAllConnections?.();
      void Promise.all([serverClosed, ...webSocketsClosed, ...answersClosed]).then(() => resolve());
    }));
  return {
    url,
    port,
    token,
    streamUrl: (id) => `ws://127.0.0.1:${port}/sessions/${id}/stream`,
    tokens,
    replays,
    secretPages,
    dispose: () => void close(),
    close,
  };
}
