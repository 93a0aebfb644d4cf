import * as crypto from 'node:crypto';
import { decodeSegment } from './http-util';
import type { IncomingMessage } from 'node:http';
import type { Grant } from '../../core/io/caller';
import type { ScopedTokens } from './scoped-tokens';
import { isLinkPath } from '../pages/replay-links';

/** What a request's credentials allow: a scope, perhaps for one session, perhaps only in the browser view. */
export interface Access extends Grant {
  /** The derived read-only view token: the view page and its stream, nothing else. */
  readonly viewOnly?: boolean;
  /** A scoped token's id: what is opened with it ends with it. */
  readonly tokenId?: string;
  /** A replay link's token: that recording's page and file (`/replay/<id>`…), nothing else. */
  readonly replayId?: string;
}

/** What the guard asks of the replay links: whose token a secret is. */
export interface ReplayTokens {
  match(token: string): string | undefined;
}

/** The host's own token. */
const FULL: Access = { scope: 'control' };
/** The derived view token (`shared-pty view --read-only`): any session, read-only, only the view. */
const VIEW_LINK: Access = { scope: 'view', viewOnly: true };

/** Name of the cookie the view page uses after its one-time `?token=` link. */
export const AUTH_COOKIE = 'shared_pty_auth';

/** Refusal of a request, with its HTTP status. */
export interface Refusal {
  status: 401 | 403;
  code: 'UNAUTHORIZED' | 'FORBIDDEN';
  message: string;
}

/**
 * The checks every HTTP request and WebSocket upgrade passes, in the order docs/guarantees.md#http-checks-and-shapes gives:
 * Host (DNS rebinding), Origin (cross-site requests and WebSocket hijacking), then the token.
 */
export class HttpGuard {
  /** A token that opens the read-only view and nothing else (derived, so it needs no storage). */
  readonly viewToken: string;
  private readonly _allowedOrigins: Set<string>;
  /** The origins the user allowed (not the host's own): these get CORS headers and preflights. */
  private readonly _corsOrigins: Set<string>;

  constructor(
    readonly token: string,
    private readonly _port: number,
    allowedOrigins: readonly string[] = [],
    private readonly _scoped?: ScopedTokens,
    private readonly _replays?: ReplayTokens,
  ) {
    this.viewToken = crypto.createHmac('sha256', token).update('shared-pty view-only').digest('base64url');
    this._corsOrigins = new Set(allowedOrigins.map((o) => o.replace(/\/$/, '')));
    this._allowedOrigins = new Set([
      `http://127.0.0.1:${_port}`,
      `http://localhost:${_port}`,
      // Not http://[::1]:PORT: we never listen there, so no page of ours has that origin (docs/guarantees.md#http-checks-and-shapes).
      ...this._corsOrigins,
    ]);
  }

  /**
   * The `Access-Control-*` headers for a request from an allow-listed origin (docs/guarantees.md#cors), so
   * its page may read the answers; none for the host's own pages (same origin) or no Origin.
   */
  corsHeaders(req: IncomingMessage): Record<string, string> {
    const origin = req.headers.origin;
    if (origin === undefined || !this._corsOrigins.has(origin)) return {};
    return { 'access-control-allow-origin': origin, vary: 'Origin' };
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
   * What the request's token allows (undefined: no valid token). The Bearer header counts
   * everywhere; `?token=` and the view cookie only where a browser cannot set headers (`browser`:
   * WebSocket upgrades and the view). The host's token wins over a scoped one, a scoped one over
   * the derived view token, and among scoped ones the first place wins (header, query, cookie). A
   * replay link's token counts on that link's own paths only, and wins there (a scoped token's
   * cookie for a session, also sent, would open no recording).
   */
  access(req: IncomingMessage, url: URL, browser: boolean): Access | undefined {
    const candidates: string[] = [];
    const auth = req.headers.authorization;
    if (auth?.startsWith('Bearer ')) candidates.push(auth.slice(7).trim());
    if (browser) {
      const q = url.searchParams.get('token');
      if (q) candidates.push(q);
      // Two cookies of that name on a replay link's pages: the link's (Path=/replay/<id>) and the view's (Path=/).
      candidates.push(...readCookies(req, AUTH_COOKIE));
    }
    let scoped: Access | undefined;
    let view: Access | undefined;
    let replay: Access | undefined;
    for (const c of candidates) {
      if (safeEqual(c, this.token)) return FULL;
      if (safeEqual(c, this.viewToken)) {
        view = VIEW_LINK;
        continue;
      }
      scoped ??= this._scoped?.match(c);
      const replayId = replay ? undefined : this._replays?.match(c);
      if (replayId !== undefined && isLinkPath(url.pathname, replayId)) replay = { scope: 'view', viewOnly: true, replayId };
    }
    return replay ?? scoped ?? view;
  }
}

/** Compares secrets in constant time (length differences leak nothing useful: both are hashed). */
export function safeEqual(a: string, b: string): boolean {
  const ha = crypto.createHash('sha256').update(a).digest();
  const hb = crypto.createHash('sha256').update(b).digest();
  return crypto.timingSafeEqual(ha, hb);
}

/** A new random token (256 bits). */
export function newToken(): string {
  return crypto.randomBytes(32).toString('base64url');
}

/** Every non-empty value of the cookie `name`, most specific path first (as browsers send them). */
function readCookies(req: IncomingMessage, name: string): string[] {
  const header = req.headers.cookie;
  if (!header) return [];
  const values: string[] = [];
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq === -1 || part.slice(0, eq).trim() !== name) continue;
    // A malformed value is no token (decoding it would throw, in the upgrade handler out of the host).
    const value = decodeSegment(part.slice(eq + 1).trim());
    if (value) values.push(value);
  }
  return values;
}
