// Helpers for tests of a host's HTTP server: an in-process host with its HTTP server attached,
// raw HTTP requests (so a test controls every header, Host included), and WebSocket clients that
// queue what they receive.
import * as http from 'node:http';
import WebSocket from 'ws';
import type { Host, HostOptions } from '../../src/host/host';
import { startHttpServer, type HttpServer } from '../../src/transport/http/http-server';
import { Inbox } from './inbox';
import { startHost, withTimeout } from './host';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

/** Bounds on how long the helpers wait; generous, because the test machine is noisy. */
export const enum HttpTimeouts {
  Request = 20_000,
  Message = 15_000,
}

/** An in-process host with its HTTP server. */
export interface HttpHost {
  host: Host;
  http: HttpServer;
  /** The runtime directory (records, sockets). */
  dir: string;
  port: number;
  token: string;
  close(): Promise<void>;
}

/** Starts an in-process host and attaches its HTTP server (127.0.0.1, a free port). */
export async function startHttpHost(allowedOrigins: string[] = [], hostOptions: Partial<HostOptions> = {}): Promise<HttpHost> {
  const { host, dir, close } = await startHost(hostOptions);
  const { maxHttpConnections, maxInFlightRequests, maxLineBytes } = hostOptions;
  const server = await startHttpServer(host, { hostId: host.hostId, allowedOrigins, maxConnections: maxHttpConnections, maxInFlightRequests, maxLineBytes });
  host.attachHttp(server);
  return { host, http: server, dir, port: server.port, token: server.token, close };
}

/** One HTTP answer: status, headers, the body as text and (when it parses) as JSON. */
export interface HttpAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  json: any;
}

export interface RequestOptions {
  /** Bearer token (omitted: no Authorization header). */
  token?: string;
  /** Host header (default 127.0.0.1:PORT). */
  host?: string;
  origin?: string;
  /** A JSON value, or a string or Buffer sent as is. */
  body?: unknown;
  headers?: Record<string, string>;
  timeoutMs?: number;
}

/** Sends one request to 127.0.0.1:port with exactly the headers asked for. */
export function request(port: number, method: string, path: string, opts: RequestOptions = {}): Promise<HttpAnswer> {
  const headers: Record<string, string> = { host: opts.host ?? `127.0.0.1:${port}`, ...opts.headers };
  if (opts.token !== undefined) headers.authorization = `Bearer ${opts.token}`;
  if (opts.origin !== undefined) headers.origin = opts.origin;
  let payload: string | Buffer | undefined;
  if (opts.body !== undefined) {
    payload = typeof opts.body === 'string' || Buffer.isBuffer(opts.body) ? opts.body : JSON.stringify(opts.body);
    headers['content-type'] ??= 'application/json';
    headers['content-length'] = String(Buffer.byteLength(payload));
  }
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path, headers, agent: false }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => {
        clearTimeout(timer);
        const text = Buffer.concat(parts).toString('utf8');
        let json: any;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
      });
      res.on('error', reject);
    });
    const timer = setTimeout(
      () => req.destroy(new Error(`${method} ${path}: no answer within ${opts.timeoutMs ?? HttpTimeouts.Request} ms`)),
      opts.timeoutMs ?? HttpTimeouts.Request,
    );
    req.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    req.end(payload);
  });
}

/** A raw JSON-RPC request to `/mcp` as a 2025-11-25 client sends one without the SDK: its token, both Accept types, the revision's header. */
export function mcpPost(port: number, token: string, body: unknown): Promise<HttpAnswer> {
  return request(port, 'POST', '/mcp', { token, headers: { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' }, body });
}

/** A WebSocket client that queues every message (JSON parsed when it parses) and records how it closed. */
export class WsClient {
  private readonly _inbox = new Inbox<any>();
  readonly received: any[] = this._inbox.received;
  /** Resolves with the close code and reason. */
  readonly closed: Promise<{ code: number; reason: string }>;

  constructor(readonly ws: WebSocket) {
    ws.on('message', (raw, isBinary) => {
      const text = isBinary ? Buffer.from(raw as Buffer).toString('utf8') : raw.toString();
      let msg: any = text;
      try {
        msg = JSON.parse(text);
      } catch {
        // kept as text
      }
      this._inbox.push(msg);
    });
    this.closed = new Promise((resolve) =>
      ws.once('close', (code, reason) => {
        this._inbox.close();
        resolve({ code, reason: reason.toString() });
      }),
    );
  }

  /** The next message satisfying `pred` (queued ones first). */
  next(pred: (m: any) => boolean, what = 'message', timeoutMs: number = HttpTimeouts.Message): Promise<any> {
    return this._inbox.next(pred, timeoutMs, what);
  }

  /** Concatenated `data` of every `{type:"data"}` message received so far. */
  streamText(): string {
    return this.received
      .filter((m) => m && typeof m === 'object' && m.type === 'data')
      .map((m) => m.data as string)
      .join('');
  }

  /** Waits until the concatenated stream output satisfies `pred`. */
  async streamUntil(pred: (text: string) => boolean, what: string, timeoutMs: number = HttpTimeouts.Message): Promise<string> {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const text = this.streamText();
      if (pred(text)) return text;
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}; stream tail: ${JSON.stringify(text.slice(-300))}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  send(value: unknown): void {
    this.ws.send(typeof value === 'string' ? value : JSON.stringify(value));
  }

  /** Closes (and, if it does not close cleanly, terminates) the connection. */
  async close(): Promise<void> {
    if (this.ws.readyState === WebSocket.CLOSED) return;
    this.ws.close();
    const t = setTimeout(() => this.ws.terminate(), 2000);
    await this.closed;
    clearTimeout(t);
  }
}

export interface WsOptions {
  /** Sent as `?token=` in the URL. */
  queryToken?: string;
  /** Sent as `Authorization: Bearer`. */
  token?: string;
  /** Sent as the `Cookie` header, as a browser sends its page cookie. */
  cookie?: string;
  origin?: string;
  host?: string;
}

/** How an upgrade ended: opened, or refused with an HTTP status. */
export type WsOutcome = { kind: 'open'; client: WsClient } | { kind: 'refused'; status: number };

/** Opens a WebSocket to ws://127.0.0.1:port/path; resolves with the client or the refusal status. */
export function wsConnect(port: number, path: string, opts: WsOptions = {}): Promise<WsOutcome> {
  const sep = path.includes('?') ? '&' : '?';
  const url = `ws://127.0.0.1:${port}${path}${opts.queryToken !== undefined ? `${sep}token=${encodeURIComponent(opts.queryToken)}` : ''}`;
  const headers: Record<string, string> = {};
  if (opts.token !== undefined) headers.authorization = `Bearer ${opts.token}`;
  if (opts.host !== undefined) headers.host = opts.host;
  if (opts.cookie !== undefined) headers.cookie = opts.cookie;
  const ws = new WebSocket(url, { headers, origin: opts.origin, handshakeTimeout: HttpTimeouts.Request });
  const client = new WsClient(ws);
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve({ kind: 'open', client }));
    ws.once('unexpected-response', (_req, res) => {
      res.resume();
      ws.on('error', () => {}); // terminating a refused handshake reports an error we expect
      resolve({ kind: 'refused', status: res.statusCode ?? 0 });
      ws.terminate();
    });
    ws.once('error', (e) => reject(e));
  });
}

/** Opens a WebSocket that must be accepted. */
export async function wsOpen(port: number, path: string, opts: WsOptions = {}): Promise<WsClient> {
  const r = await wsConnect(port, path, opts);
  if (r.kind !== 'open') throw new Error(`WebSocket ${path} refused with ${r.status}`);
  return r.client;
}

/** An agent: the official MCP SDK client, connected to the host's `/mcp` with its token. */
export async function mcpAgent(h: HttpHost, name: string): Promise<Client> {
  const agent = new Client({ name, version: '0.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${h.http.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${h.token}` } } });
  await withTimeout(agent.connect(transport), 20_000, 'MCP connect');
  return agent;
}
