import { decodeSegment } from '../base/http-util';
import type { IncomingMessage } from 'node:http';
import type { Access, PageTarget, Refused } from '../base/access';

export type { PageTarget } from '../base/access';
import { safeEqual } from '../base/tokens';
import type { ScopedGrant, ScopedTokens, TokenTarget } from './scoped-tokens';
import type { PageCookie, PageSessions } from './page-sessions';

/** The host's own token. */
const FULL: Access = { scope: 'control' };

/**
 * Where a request asks to go, which decides where its credentials may come from: `api` (REST,
 * `/health`, `/mcp`: the Bearer header only), `upgrade` (a WebSocket: also `?token=`, which a
 * browser's WebSocket cannot send as a header), `page` (the host's pages and their assets: also the
 * page cookie).
 */
export type Place = 'api' | 'upgrade' | 'page';

/** The cookie a host's pages set: named after its port, so two hosts' cookies never replace each other. */
export function pageCookieName(port: number): string {
  return `shared_pty_${port}`;
}

/** Refusal of a request, with its HTTP status. */
export interface Refusal {
  status: 401 | 403;
  code: 'UNAUTHORIZED' | 'FORBIDDEN';
  message: string;
}

/**
 * The checks every HTTP request and WebSocket upgrade passes, in docs/protocol.md's order:
 * Host (DNS rebinding), Origin (cross-site requests and WebSocket hijacking), then the credential.
 * The host's own token is accepted only where a script sends it (the Bearer header, a WebSocket's
 * `?token=`): never in a page's address, never in a cookie, which every other server on 127.0.0.1
 * would receive (cookies are not bound to a port).
 */
export class HttpGuard {
  private readonly _allowedOrigins: Set<string>;
  /** The origins the user allowed (not the host's own): these get CORS headers and preflights. */
  private readonly _corsOrigins: Set<string>;

  constructor(
    readonly token: string,
    private readonly _port: number,
    allowedOrigins: readonly string[] = [],
    private readonly _scoped?: ScopedTokens,
    private readonly _pages?: PageSessions,
  ) {
    this._corsOrigins = new Set(allowedOrigins.map((o) => o.replace(/\/$/, '')));
    this._allowedOrigins = new Set([
      `http://127.0.0.1:${_port}`,
      `http://localhost:${_port}`,
      // Not http://[::1]:PORT: we never listen there, so no page of ours has that origin (docs/protocol.md).
      ...this._corsOrigins,
    ]);
  }

  /**
   * The `Access-Control-*` headers for a request from an allow-listed origin (docs/protocol.md, CORS), so
   * its page may read the answers; none for the host's own pages (same origin) or no Origin.
   */
  corsHeaders(req: IncomingMessage): Record<string, string> {
    const origin = req.headers.origin;
    if (origin === undefined || !this._corsOrigins.has(origin)) return {};
    // A browser MCP client must read the session id /mcp assigns, to send it back on every request.
    return { 'access-control-allow-origin': origin, 'access-control-expose-headers': 'Mcp-Session-Id', vary: 'Origin' };
  }

  /**
   * A CORS preflight: an `OPTIONS` with an `Origin` and `Access-Control-Request-Method`. It carries
   * no token (browsers never send one), so it is answered before the token check — only once
   * `checkSource` has let its Origin through.
   */
  isPreflight(req: IncomingMessage): boolean {
    return req.method === 'OPTIONS' && req.headers.origin !== undefined && req.headers['access-control-request-method'] !== undefined;
  }

  /** Host and Origin checks; undefined when both pass. */
  checkSource(req: IncomingMessage): Refusal | undefined {
    const host = (req.headers.host ?? '').toLowerCase();
    const p = this._port;
    if (host !== `127.0.0.1:${p}` && host !== `localhost:${p}` && host !== `[::1]:${p}`) {
      return { status: 403, code: 'FORBIDDEN', message: 'Forbidden: unexpected Host header' };
    }
    const origin = req.headers.origin;
    if (origin !== undefined && !this._allowedOrigins.has(origin)) {
      return { status: 403, code: 'FORBIDDEN', message: 'Forbidden: origin not allowed' };
    }
    return undefined;
  }

  /**
   * What the request's credentials allow at `place` (undefined: none that counts there). The
   * host's token wins, then a reusable scoped token, then the page cookie's grant for `target`.
   */
  access(req: IncomingMessage, url: URL, place: Place, target?: PageTarget): Access | undefined {
    return this._check(req, url, place, target).access;
  }

  /** Why `access` found nothing, in the terms of the refusal page. */
  refused(req: IncomingMessage, url: URL, place: Place, target?: PageTarget): Refused {
    return this._check(req, url, place, target).refused ?? 'none';
  }

  /**
   * Trades a link's token (`?token=` on a page, as `target`) for a grant in this browser's page
   * session: the cookie to set, or why not. A link trades once; the host's token never does.
   */
  exchange(req: IncomingMessage, secret: string, target: PageTarget): { cookie: PageCookie } | { refused: Refused } {
    if (safeEqual(secret, this.token)) return { refused: 'host-token' };
    if (!this._scoped || !this._pages) return { refused: 'unknown' };
    const r = this._scoped.exchange(secret, (t) => fits(t, target));
    if ('refused' in r) return r;
    return { cookie: this._pages.add(readCookie(req, this._pages.cookieName), r.grant.tokenId) };
  }

  private _check(req: IncomingMessage, url: URL, place: Place, target: PageTarget | undefined): { access?: Access; refused?: Refused } {
    const offered: string[] = [];
    const auth = req.headers.authorization;
    if (auth?.startsWith('Bearer ')) offered.push(auth.slice(7).trim());
    if (place === 'upgrade') {
      const q = url.searchParams.get('token');
      if (q) offered.push(q);
    }
    let refused: Refused | undefined;
    let scoped: Access | undefined;
    for (const c of offered) {
      if (safeEqual(c, this.token)) return { access: FULL };
      const m = this._scoped?.bearer(c);
      if (!m) continue;
      if ('grant' in m) scoped ??= m.grant;
      else refused ??= m.refused;
    }
    if (scoped) return { access: scoped };
    if (place === 'api' || target === undefined || !this._pages) return { refused };
    const cookie = readCookie(req, this._pages.cookieName);
    // A cookie that names no page session (a host that restarted) is no credential at all.
    if (cookie === undefined || !this._pages.knows(cookie)) return { refused };
    const grant = this._pages.grants(cookie).find((g) => grantFits(g, target));
    if (grant) {
      this._scoped?.used(grant.tokenId);
      return { access: { ...grant, viewOnly: true } };
    }
    return { refused: refused ?? this._pages.ended(cookie) ?? 'no-grant' };
  }
}

/** Whether a page cookie's grant opens what a page asks for. */
function grantFits(g: ScopedGrant, target: PageTarget): boolean {
  if (target === 'any') return true;
  if ('replay' in target) return g.replayId !== undefined && g.replayId === target.replay;
  return g.onlySession !== undefined && g.onlySession === target.session;
}

/** Whether a token's target is what a page asks for (`any`: the shared assets, which any grant opens). */
function fits(t: TokenTarget, target: PageTarget): boolean {
  if (target === 'any') return true;
  if ('replay' in target) return 'replay' in t && t.replay === target.replay;
  return 'session' in t && target.session !== undefined && t.session === target.session;
}

/**
 * The value of the cookie `name` (the first non-empty one), or undefined. A malformed value is no
 * credential (decoding it would throw, in the upgrade handler out of the host).
 */
function readCookie(req: IncomingMessage, name: string): string | undefined {
  const header = req.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq === -1 || part.slice(0, eq).trim() !== name) continue;
    const value = decodeSegment(part.slice(eq + 1).trim());
    if (value) return value;
  }
  return undefined;
}
