import { decodeSegment } from '../base/http-util';
import { isOwnHost, isSameOriginAs } from './proxy-path';
import type { IncomingMessage } from 'node:http';
import type { Access, PageTarget, Refused } from '../base/access';

export type { PageTarget } from '../base/access';
import { safeEqual } from '../base/tokens';
import { TokenHolder } from '../../core/io/caller';
import type { ScopedGrant, ScopedTokens, TokenTarget } from './scoped-tokens';
import type { PageCookie, PageSessions } from './page-sessions';

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
  status: 400 | 401 | 403;
  code: 'BAD_REQUEST' | 'UNAUTHORIZED' | 'FORBIDDEN';
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
  /**
   * What the host's own token allows: everything, with one holder its requests share (caller.ts
   * Grant): the user's scripts, until the token is used on `/mcp`; from then on an agent holds it,
   * and its writes on every surface meet the agent guards (docs/protocol.md "Agent guards").
   */
  private readonly _hostHolder = new TokenHolder('host', true);
  private readonly _hostAccess: Access = { scope: 'control', holder: this._hostHolder, regexBudget: this._hostHolder.regexBudget };

  constructor(
    readonly token: string,
    private readonly _port: number,
    allowedOrigins: readonly string[] = [],
    private readonly _scoped?: ScopedTokens,
    private readonly _pages?: PageSessions,
  ) {
    this._allowedOrigins = new Set([
      `http://127.0.0.1:${_port}`,
      `http://localhost:${_port}`,
      // Not http://[::1]:PORT: we never listen there, so no page of ours has that origin (docs/protocol.md).
      ...allowedOrigins.map((o) => o.replace(/\/$/, '')),
    ]);
  }

  /**
   * The `Access-Control-*` headers for a request from an allowed origin (docs/protocol.md#access-checks,
   * CORS), so its page may read the answers: an allow-listed one, or one of the host's own (always
   * allowed), the very origin the request asks included: a browser needs none there, but a client
   * that checks CORS anyway, or sends a preflight anyway, gets what any allowed origin gets. None
   * without an Origin.
   */
  corsHeaders(req: IncomingMessage): Record<string, string> {
    const origin = req.headers.origin;
    if (origin === undefined || !this._allowedOrigins.has(origin)) return {};
    // A browser MCP client must read the session id /mcp assigns, to send it back on every request.
    return { 'access-control-allow-origin': origin, 'access-control-expose-headers': 'Mcp-Session-Id', vary: 'Origin' };
  }

  /**
   * A CORS preflight: an `OPTIONS` with an `Origin` (a browser's also names the method it asks
   * for; one without that is answered the same, as the contract's "a preflight (`OPTIONS`) whose
   * `Origin` is on the allow-list" reads, and it does nothing either way). It carries no token
   * (browsers never send one), so it is answered before the token check — only once
   * `checkSource` has let its Origin through.
   */
  isPreflight(req: IncomingMessage): boolean {
    return req.method === 'OPTIONS' && req.headers.origin !== undefined;
  }

  /**
   * Host and Origin checks; undefined when both pass. `page`: what the request may bring to the
   * browser's pages: `link` (it trades a link's token), `cookie` (a page, its assets or the view's
   * stream, opened with the page cookie); undefined: it is not for the pages. Only those may come
   * under a Host that is not the host's own (an editor's port proxy or port forward,
   * docs/protocol.md#pages-behind-an-editors-proxy), and then only with a link, or a page cookie traded
   * under that same Host; their Origin may then be the page's own origin as the browser sees it
   * (same host and port as the Host). Anything else under a foreign Host is DNS rebinding's 403.
   */
  checkSource(req: IncomingMessage, page?: 'link' | 'cookie'): Refusal | undefined {
    // One Host, and a path for the target: a second Host, an absolute URL (`GET http://x/…`) or a
    // scheme-relative one (`GET //x/…`, which URL parsing reads as a host) names another host,
    // which a proxy in between may read instead of the one checked here.
    const target = req.url ?? '/';
    if ((req.headersDistinct.host?.length ?? 0) > 1 || !target.startsWith('/') || target.startsWith('//')) return AMBIGUOUS_HOST;
    const host = hostOf(req);
    const proxied = !isOwnHost(host, this._port);
    if (proxied && !(page === 'link' || (page === 'cookie' && this._hasPageSession(req, host)))) return PROXY_REFUSAL;
    const origin = req.headers.origin;
    if (origin !== undefined && !this._allowedOrigins.has(origin) && !(proxied && isSameOriginAs(origin, host))) {
      return { status: 403, code: 'FORBIDDEN', message: 'Forbidden: origin not allowed' };
    }
    return undefined;
  }

  /** Whether the request's page cookie names a page session opened under `host`. */
  private _hasPageSession(req: IncomingMessage, host: string): boolean {
    const cookie = this._pages ? readCookie(req, this._pages.cookieName) : undefined;
    return cookie !== undefined && this._pages!.knows(cookie, host);
  }

  /** Whether the request came under a Host other than the host's own (through a proxy, or a DNS-rebinding page). */
  isProxied(req: IncomingMessage): boolean {
    return !isOwnHost(hostOf(req), this._port);
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
    return { cookie: this._pages.add(readCookie(req, this._pages.cookieName), r.grant.tokenId, this._pageHost(req)) };
  }

  /**
   * The Host a page session belongs to: '' for the host's own addresses, else the proxy's Host. A
   * cookie traded under one Host opens nothing under another, so a proxy's name is trusted only by
   * the browser that opened a link through it.
   */
  private _pageHost(req: IncomingMessage): string {
    return this.isProxied(req) ? hostOf(req) : '';
  }

  private _check(req: IncomingMessage, url: URL, place: Place, target: PageTarget | undefined): { access?: Access; refused?: Refused } {
    const offered: string[] = [];
    const auth = req.headers.authorization;
    // Through a proxy only the page cookie counts: no token (the host's, a script's) is sent that way.
    const proxied = this.isProxied(req);
    // The scheme's name is case-insensitive (RFC 9110 §11.1): `bearer <token>` is the same offer.
    const bearer = auth === undefined ? undefined : /^bearer +(.*)$/i.exec(auth)?.[1];
    if (bearer !== undefined && !proxied) offered.push(bearer.trim());
    if (place === 'upgrade' && !proxied) {
      const q = url.searchParams.get('token');
      if (q) offered.push(q);
    }
    let refused: Refused | undefined;
    let scoped: Access | undefined;
    for (const c of offered) {
      if (safeEqual(c, this.token)) return { access: this._hostAccess };
      const m = this._scoped?.bearer(c);
      if (!m) continue;
      // An agent's token opens no page: a page's keys are the person's.
      if ('grant' in m) {
        if (place !== 'page' || !m.grant.everySession) scoped ??= m.grant;
      } else refused ??= m.refused;
    }
    if (scoped) return { access: scoped };
    if (place === 'api' || target === undefined || !this._pages) return { refused };
    const cookie = readCookie(req, this._pages.cookieName);
    // A cookie that names no page session (a host that restarted) is no credential at all.
    if (cookie === undefined || !this._pages.knows(cookie, this._pageHost(req))) return { refused };
    const grant = this._pages.grants(cookie).find((g) => grantFits(g, target));
    if (grant) {
      this._scoped?.used(grant.tokenId);
      return { access: { ...grant, viewOnly: true } };
    }
    return { refused: refused ?? this._pages.ended(cookie) ?? 'no-grant' };
  }
}

/** The answer to a request under a foreign Host that is not for the browser's pages (DNS rebinding, or a script through a proxy). */
export const PROXY_REFUSAL: Refusal = { status: 403, code: 'FORBIDDEN', message: 'Forbidden: unexpected Host header' };

/** The answer to a request with two Host headers, or a target that is not a path. */
const AMBIGUOUS_HOST: Refusal = { status: 400, code: 'BAD_REQUEST', message: 'Bad Request: one Host header and a path as the request target are expected' };

/** A request's Host header, lower case ('' when missing). */
function hostOf(req: IncomingMessage): string {
  return (req.headers.host ?? '').toLowerCase();
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
