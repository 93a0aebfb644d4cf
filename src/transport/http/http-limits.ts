import type { Socket } from 'node:net';
import { limitReached, type RpcError } from '../../core/base/errors';
import { toDisposable, type IDisposable } from '../../core/base/lifecycle';
import type { Access } from './http-security';

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
    const key = access.tokenId ?? (access.viewOnly ? 'view-link' : 'host');
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
 * Open HTTP connections, counted so that the ones over the limit get a clear answer (429) instead
 * of a reset: a connection past `max` is marked, its request is answered 429 and the connection
 * closed. Past `max + spare` connections are dropped at once, as Node's `maxConnections` does, so
 * clients that connect and send nothing cannot hold the host's file descriptors either.
 */
export class ConnectionCount {
  private _open = 0;
  private readonly _over = new WeakSet<Socket>();

  constructor(
    readonly max: number,
    private readonly _spare: number,
  ) {}

  get open(): number {
    return this._open;
  }

  /** Counts a new connection (the server's 'connection' event). */
  add(socket: Socket): void {
    if (this._open >= this.max + this._spare) return void socket.destroy();
    if (this._open >= this.max) this._over.add(socket);
    this._open++;
    socket.once('close', () => this._open--);
  }

  /** Whether `socket` came past the limit (its requests get 429). */
  isOver(socket: Socket): boolean {
    return this._over.has(socket);
  }

  /** The answer for a connection past the limit. */
  error(): RpcError {
    return limitReached(`Too many connections: ${this.max} open to this host's HTTP server, the limit is ${this.max}; closing this one`, 'connections', this.max);
  }
}
