import * as http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import type { HostServices } from '../../core/methods/types';
import type { IDisposable } from '../../core/base/lifecycle';
import { AUTH_COOKIE, HttpGuard, newToken, type Access } from './http-security';
import { ScopedTokens } from './scoped-tokens';
import { decodeSegment, sendError, sendJson } from './http-util';
import { ConnectionCount, InFlightPerToken, tooManyHttpInFlight } from './http-limits';
import { MAX_HTTP_CONNECTIONS, MAX_IN_FLIGHT_REQUESTS } from '../../core/base/limits';
import type { RpcError } from '../../core/base/errors';
import { handleRest } from './rest-routes';
import { handleViewAsset, handleViewPage } from '../pages/view-page';
import { ReplayLinks } from '../pages/replay-links';
import { handleReplay, isReplayPath } from '../pages/replay-page';
import { serveRpcWebSocket } from '../ws/ws-rpc';
import { serveStream } from '../ws/ws-stream';

/** Limits of the HTTP server. */
export const enum HttpLimits {
  /**
   * Connections past the limit (MAX_HTTP_CONNECTIONS) kept just long enough to answer 429; past
   * these too, a connection is dropped at once (one that connects and sends nothing holds no more).
   */
  SpareConnections = 64,
  /** Largest WebSocket message accepted (a JSON-RPC line's limit). */
  MaxWsPayload = 1024 * 1024,
}

/** The close code of a WebSocket whose scoped token was revoked or expired (as HTTP 401: the credential is gone). */
export const TOKEN_ENDED_CLOSE = 4401;

export interface HttpServerOptions {
  hostId: string;
  port?: number;
  token?: string;
  /** Extra origins allowed for browsers (docs/protocol.md#access-checks; default none). */
  allowedOrigins?: string[];
  /** Connections open at once (default MAX_HTTP_CONNECTIONS). */
  maxConnections?: number;
  /** Requests in flight per token over HTTP, and per `/rpc` WebSocket (default MAX_IN_FLIGHT_REQUESTS). */
  maxInFlightRequests?: number;
}

/** A running HTTP server of a host. */
export interface HttpServer {
  url: string;
  port: number;
  token: string;
  /** A link that opens the read-only view of a session. */
  viewUrl(sessionId: string, readOnly?: boolean): string;
  streamUrl(sessionId: string): string;
  /** The scoped tokens of `shared-pty share` (docs/protocol.md#scoped-tokens). */
  tokens: ScopedTokens;
  /** The recordings it replays in the browser (`host/replay`). */
  replays: ReplayLinks;
  /** Stops at once: connections are cut; `close()` tells when they are gone. */
  dispose(): void;
  /** Stops, and resolves once every connection has closed and let go of what it held (its subscriptions). */
  close(): Promise<void>;
}

/** What a preflight allows: the methods and headers REST uses (docs/guarantees.md#cors). */
const CORS_ALLOW = {
  methods: 'GET, POST, DELETE, OPTIONS',
  headers: 'Authorization, Content-Type',
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

/** One HTTP server per host on 127.0.0.1: REST, the WebSocket stream and `/rpc`, `/mcp`, and the browser view. */
export async function startHttpServer(services: HostServices, options: HttpServerOptions): Promise<HttpServer> {
  const token = options.token ?? newToken();
  const server = http.createServer();
  const connections = new ConnectionCount(options.maxConnections ?? MAX_HTTP_CONNECTIONS, HttpLimits.SpareConnections);
  server.on('connection', (socket) => connections.add(socket));
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
  // Each replay link has a token of its own, which opens that recording and nothing else.
  const replays = new ReplayLinks((id, t) => `${url}/replay/${id}?token=${t}`);
  const guard = new HttpGuard(token, port, options.allowedOrigins, tokens, replays);
  const wss = new WebSocketServer({ noServer: true, maxPayload: HttpLimits.MaxWsPayload });

  server.on('request', (req, res) => {
    void handleRequest(req, res).catch((e) => sendError(res, 'INTERNAL', `Internal error: ${(e as Error).message}`));
  });

  async function handleRequest(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const overConnections = connections.isOver(req.socket);
    if (overConnections) res.setHeader('connection', 'close');
    const refusal = guard.checkSource(req);
    if (refusal) return sendError(res, refusal.code, refusal.message);
    const cors = guard.corsHeaders(req);
    for (const [name, value] of Object.entries(cors)) res.setHeader(name, value);
    if (guard.isPreflight(req)) return answerPreflight(res);
    const u = new URL(req.url ?? '/', url);
    const isReplay = isReplayPath(u.pathname);
    const isView = /^\/sessions\/[^/]+\/view$/.test(u.pathname) || u.pathname.startsWith('/view/') || isReplay;
    const access = guard.access(req, u, isView);
    // A replay link's token is no access at all outside its own paths (HttpGuard.access).
    if (!access || (access.viewOnly && !isView)) return sendError(res, 'UNAUTHORIZED', 'Unauthorized: send Authorization: Bearer <token>');
    if (overConnections) return refuseOverLimit(res, u, connections.error());
    const slot = inFlight.enter(access);
    if (!slot) return refuseOverLimit(res, u, tooManyHttpInFlight(maxInFlight));
    res.on('close', () => slot.dispose());
    // A request in flight (a long wait) with a token that is revoked meanwhile is cut.
    const tracked = endsWithToken(access, () => res.destroy());
    res.on('close', () => tracked?.dispose());
    if (u.pathname === '/health' && req.method === 'GET') {
      return sendJson(res, 200, { ok: true, data: { hostId: options.hostId, sessions: sessionsReached(access) } });
    }
    // The MCP SDK loads on the first /mcp request: a host nobody asks for MCP stays lighter.
    if (u.pathname === '/mcp') return (await import('../mcp/mcp-http')).handleMcp(services, req, res, access);
    if (isView) {
      const t = u.searchParams.get('token');
      if (t) {
        // The token came in the link: keep it in an HttpOnly cookie and drop it from the address bar and history.
        // A replay link's token is for its own pages: its cookie must not replace the one a live view types with.
        u.searchParams.delete('token');
        res.writeHead(303, {
          location: u.pathname + (u.search || ''),
          'set-cookie': `${AUTH_COOKIE}=${encodeURIComponent(t)}; HttpOnly; SameSite=Strict; Path=${access.replayId !== undefined ? `/replay/${access.replayId}` : '/'}`,
          'cache-control': 'no-store',
        });
        return void res.end();
      }
      if (isReplay) return handleReplay(replays, req, res, u, access);
      if (u.pathname.startsWith('/view/')) return handleViewAsset(req, res, u);
      return handleViewPage(services, req, res, u, access);
    }
    if (await handleRest(services, req, res, u, access)) return;
    sendError(res, 'NOT_FOUND', `No route for ${req.method} ${u.pathname}`);
  }

  server.on('upgrade', (req, socket, head) => {
    const reject = (status: number, text: string) => {
      socket.end(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
    };
    socket.on('error', () => socket.destroy());
    const refusal = guard.checkSource(req);
    if (refusal) return reject(403, 'Forbidden');
    const u = new URL(req.url ?? '/', url);
    const access = guard.access(req, u, true);
    const stream = /^\/sessions\/([^/]+)\/stream$/.exec(u.pathname);
    if (!access || (access.viewOnly && !stream)) return reject(401, 'Unauthorized');
    if (connections.isOver(socket as Socket)) return reject(429, 'Too Many Requests');
    /** Closes the socket when its scoped token is revoked or expires. */
    const closeWithToken = (ws: WebSocket) => {
      const tracked = endsWithToken(access, (why) => ws.close(TOKEN_ENDED_CLOSE, why));
      ws.once('close', () => tracked?.dispose());
    };
    if (u.pathname === '/rpc') {
      return wss.handleUpgrade(req, socket, head, (ws) => {
        closeWithToken(ws);
        serveRpcWebSocket(services, ws, access, maxInFlight);
      });
    }
    if (stream) {
      const selector = decodeSegment(stream[1]);
      // Thrown here, a malformed percent-encoding would end the whole host.
      if (selector === undefined) return reject(400, 'Bad Request');
      if (access.onlySession !== undefined && !reaches(access.onlySession, selector)) return reject(403, 'Forbidden');
      const scope = u.searchParams.get('readonly') === '1' ? 'view' : access.scope;
      return wss.handleUpgrade(req, socket, head, (ws) => {
        closeWithToken(ws);
        serveStream(services, ws, selector, { grant: { scope, onlySession: access.onlySession, holder: access.holder }, resync: u.searchParams.get('resync') === '1' });
      });
    }
    reject(404, 'Not Found');
  });

  /** 429 for a request over one of the limits: a JSON-RPC error on `/mcp`, the REST envelope elsewhere. */
  function refuseOverLimit(res: http.ServerResponse, u: URL, error: RpcError): void {
    if (u.pathname === '/mcp') return sendJson(res, 429, { jsonrpc: '2.0', error: error.toJSON(), id: null });
    sendError(res, 'TOO_MANY_REQUESTS', error.message);
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
    if (access.onlySession === undefined) return services.registry.size;
    return services.registry.get(access.onlySession) ? 1 : 0;
  }

  /** Whether `selector` names the session a scoped token is for (an unknown one does not). */
  function reaches(sessionId: string, selector: string): boolean {
    try {
      return services.registry.resolve(selector).id === sessionId;
    } catch {
      return false;
    }
  }

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> =>
    (closing ??= new Promise<void>((resolve) => {
      // A WebSocket's own close event (which ends its subscription) comes after the terminate.
      const webSocketsClosed = [...wss.clients].map((c) => new Promise<void>((r) => c.once('close', () => r())));
      const serverClosed = new Promise<void>((r) => server.close(() => r()));
      sessionGone.dispose();
      tokens.dispose();
      for (const c of wss.clients) c.terminate();
      wss.close();
      server.closeAllConnections?.();
      void Promise.all([serverClosed, ...webSocketsClosed]).then(() => resolve());
    }));
  return {
    url,
    port,
    token,
    viewUrl: (id, readOnly) => `${url}/sessions/${id}/view?token=${readOnly ? guard.viewToken : token}${readOnly ? '&readonly=1' : ''}`,
    streamUrl: (id) => `ws://127.0.0.1:${port}/sessions/${id}/stream`,
    tokens,
    replays,
    dispose: () => void close(),
    close,
  };
}
