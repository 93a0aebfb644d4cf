import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { limitReached, type RpcError } from '../../core/base/errors';
import { toDisposable, type IDisposable } from '../../core/base/lifecycle';
import type { Access } from '../base/access';

/**
 * Requests in flight per credential over HTTP (REST, `/mcp`, the view): the HTTP counterpart of
 * the per-connection limit of the sockets and `/rpc`. HTTP has no lasting connection to count on
 * (a client may pipeline requests on one, or open one per request, as `fetch` does), and `/mcp`
 * is stateless (no MCP session), so the count is per token: the host's own, each scoped token,
 * the derived view link. Each `/mcp` request holds an MCP server of its own while it runs.
 */
export class InFlightPerToken {
  private readonly _counts = new Map<string, number>();

  constructor(readonly max: number) {}

  /** Takes a slot for a request made with `access`, released by the result; undefined when none is free. */
  enter(access: Access): IDisposable | undefined {
    const key = principalOf(access);
    const n = this._counts.get(key) ?? 0;
    if (n >= this.max) return undefined;
    this._counts.set(key, n + 1);
    let released = false;
    return toDisposable(() => {
      if (released) return;
      released = true;
      const left = (this._counts.get(key) ?? 1) - 1;
      if (left > 0) this._counts.set(key, left);
      else this._counts.delete(key);
    });
  }
}

/** The answer to an HTTP request past InFlightPerToken's limit (REST 429, `/mcp` 429 with this JSON-RPC error). */
export function tooManyHttpInFlight(max: number): RpcError {
  return limitReached(`Too many requests in flight with this token: the limit is ${max}; wait for some answers`, 'inFlightRequests', max);
}

/**
 * Who a connection or a request counts against: the host's own token, each scoped token, the
 * derived view link, each replay link. One holder's connections and requests never use up
 * another's room (a guest cannot crowd out the owner).
 */
export function principalOf(access: Access): string {
  if (access.tokenId !== undefined) return `token:${access.tokenId}`;
  if (access.replayId !== undefined) return `replay:${access.replayId}`;
  return access.viewOnly ? 'view-link' : 'host';
}

export interface HttpConnectionLimits {
  /** Connections one credential may hold open at once (see principalOf). */
  maxPerPrincipal: number;
  /** Connections that have not authenticated yet, at once; a newer one pushes out the oldest. */
  maxUnauthenticated: number;
  /** How long a connection may go without authenticating before it is closed. */
  authenticateWithinMs: number;
}

/**
 * Open HTTP connections, by whom they belong to. A connection belongs to nobody until a request on
 * it authenticates (a valid token: REST, `/mcp`, the view, a WebSocket upgrade); then it counts
 * against that credential (principalOf) until it closes, and past the credential's limit its
 * request is answered 429 and the connection closed. A connection that has not authenticated
 * within `authenticateWithinMs` is closed, and such connections are bounded on their own: the
 * oldest goes when a new one comes past `maxUnauthenticated`. So clients without a token — idle
 * sockets, a port scan, a web page — never count against those with one, and the file descriptors
 * they hold stay bounded. A request that came in time on such a connection (an open page: the
 * secret page, a refusal) is answered all the same: its connection is closed after the answer, never
 * under it (a browser resends a POST whose connection was cut, and a secret page takes one POST).
 */
export class HttpConnections {
  /** Connections not authenticated yet, oldest first (a Map keeps insertion order), with their deadline. */
  private readonly _unauthenticated = new Map<Socket, NodeJS.Timeout>();
  private readonly _byPrincipal = new Map<string, number>();
  private readonly _owner = new WeakMap<Socket, string>();
  private readonly _over = new WeakSet<Socket>();
  /** Answers being made on connections still on the clock, per connection. */
  private readonly _answering = new Map<Socket, number>();
  /** Connections past their deadline that close once their answers are made. */
  private readonly _closeWhenAnswered = new WeakSet<Socket>();

  constructor(readonly limits: HttpConnectionLimits) {}

  /** Connections open now that have not authenticated. */
  get unauthenticated(): number {
    return this._unauthenticated.size;
  }

  /** Connections open now that count against `principal`. */
  heldBy(principal: string): number {
    return this._byPrincipal.get(principal) ?? 0;
  }

  /** A new connection (the server's 'connection' event): nobody's yet, on the clock. */
  add(socket: Socket): void {
    if (this._unauthenticated.size >= this.limits.maxUnauthenticated) {
      const [oldest] = this._unauthenticated.keys();
      this._forget(oldest);
      oldest.destroy();
    }
    const deadline = setTimeout(() => {
      // Timers run before the loop reads sockets: on a busy host the request may have come in time
      // and wait unread. setImmediate runs after that read, so such a request is served first.
      setImmediate(() => {
        if (!this._unauthenticated.has(socket)) return;
        this._forget(socket);
        if (this._answering.has(socket)) this._closeWhenAnswered.add(socket);
        else socket.destroy();
      });
    }, this.limits.authenticateWithinMs);
    deadline.unref();
    this._unauthenticated.set(socket, deadline);
    socket.once('close', () => this._release(socket));
  }

  /**
   * A request came on `socket` (the server's 'request' event) and `res` answers it. If the
   * connection's deadline passes before the answer is made, it closes after it: once written
   * (flushed, then ended), or at once if the answer is abandoned.
   */
  answering(socket: Socket, res: ServerResponse): void {
    if (!this._unauthenticated.has(socket)) return;
    this._answering.set(socket, (this._answering.get(socket) ?? 0) + 1);
    let done = false;
    const answered = (written: boolean) => {
      if (done) return;
      done = true;
      const left = (this._answering.get(socket) ?? 1) - 1;
      if (left > 0) return void this._answering.set(socket, left);
      this._answering.delete(socket);
      if (!this._closeWhenAnswered.has(socket)) return;
      if (written) socket.end();
      else socket.destroy();
    };
    res.once('finish', () => answered(true));
    res.once('close', () => answered(false));
  }

  /**
   * A request on `socket` authenticated as `principal`: the connection is that credential's from
   * now on (the first credential to authenticate on it keeps it). False when the credential already
   * holds its limit: the caller answers 429 and closes the connection, which then counts for no one.
   */
  claim(socket: Socket, principal: string): boolean {
    if (this._over.has(socket)) return false;
    if (this._owner.has(socket)) return true;
    if (!this._unauthenticated.has(socket)) return true; // closed meanwhile: nothing to count
    this._forget(socket);
    const held = this.heldBy(principal);
    if (held >= this.limits.maxPerPrincipal) {
      this._over.add(socket);
      return false;
    }
    this._owner.set(socket, principal);
    this._byPrincipal.set(principal, held + 1);
    return true;
  }

  /** The answer for a connection past its credential's limit. */
  error(): RpcError {
    const max = this.limits.maxPerPrincipal;
    return limitReached(
      `Too many connections: ${max} open to this host's HTTP server with this token, the limit is ${max}; closing this one`,
      'connections',
      max,
    );
  }

  /** Drops every deadline (the server is closing). */
  dispose(): void {
    for (const timer of this._unauthenticated.values()) clearTimeout(timer);
    this._unauthenticated.clear();
  }

  /** No longer waiting to authenticate. */
  private _forget(socket: Socket): void {
    clearTimeout(this._unauthenticated.get(socket));
    this._unauthenticated.delete(socket);
  }

  private _release(socket: Socket): void {
    this._forget(socket);
    this._answering.delete(socket);
    const principal = this._owner.get(socket);
    if (principal === undefined) return;
    this._owner.delete(socket);
    const left = this.heldBy(principal) - 1;
    if (left > 0) this._byPrincipal.set(principal, left);
    else this._byPrincipal.delete(principal);
  }
}
