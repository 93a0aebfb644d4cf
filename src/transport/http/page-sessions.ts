import * as crypto from 'node:crypto';
import type { ScopedGrant, ScopedTokens, TokenGone } from './scoped-tokens';
import { newToken } from '../base/tokens';

/** Bounds of the page sessions a host keeps; each says why. */
export const enum PageLimits {
  /**
   * Page sessions kept at once. A browser holds one per host (its cookie is named after the port),
   * and each is made by opening a link, which only the host's token mints: this is many browsers.
   * Past it, the one used longest ago is dropped (its browser opens a new link).
   */
  MaxSessions = 256,
  /** Grants one page session holds (one per link opened in that browser); the oldest goes past this. */
  MaxGrants = 64,
}

interface Page {
  /** The scoped tokens whose grants this browser holds, oldest first. */
  tokenIds: string[];
  /** Why the last of its grants ended, for the words of a refusal. */
  ended?: TokenGone;
  /** The Host its links were opened under: '' for the host's own addresses, else a proxy's (HttpGuard). */
  host: string;
}

/** The cookie a browser gets once it traded a link: its name, value and lifetime. */
export interface PageCookie {
  name: string;
  value: string;
  maxAgeSeconds: number;
}

/**
 * The page sessions of one HTTP server: what the cookie `shared_pty_<port>` names. A browser that
 * opens a link trades its token for a grant kept here (docs/protocol.md, Links and page cookies);
 * the cookie holds only a random secret naming this browser's page session (kept as a SHA-256),
 * never a token. Every link the browser opens adds its grant to the same page session, so opening
 * someone's shared link never takes away the views the browser already had, whatever their scope.
 * A grant lives exactly as long as its token: revoke or expiry ends it here too.
 */
export class PageSessions {
  /** Page sessions by the SHA-256 (hex) of their secret, least recently used first. */
  private readonly _pages = new Map<string, Page>();

  constructor(
    private readonly _tokens: ScopedTokens,
    readonly cookieName: string,
  ) {}

  /**
   * Adds the grant of `tokenId` to the page session `secret` names (a new one when it names none,
   * or one opened under another Host) and returns the cookie to set: the same secret, with a
   * lifetime that covers its longest grant. `host`: the Host the link came under ('' for the host's own).
   */
  add(secret: string | undefined, tokenId: string, host = ''): PageCookie {
    let key = secret === undefined ? undefined : keyOf(secret);
    let page = key === undefined ? undefined : this._pages.get(key);
    if (!page || page.host !== host || secret === undefined) {
      secret = newToken();
      key = keyOf(secret);
      page = { tokenIds: [], host };
      while (this._pages.size >= PageLimits.MaxSessions) this._pages.delete(this._pages.keys().next().value as string);
    }
    page.tokenIds = [...page.tokenIds.filter((id) => id !== tokenId), tokenId].slice(-PageLimits.MaxGrants);
    this._touch(key as string, page);
    const live = this._live(page);
    const until = Math.max(...live.map((g) => g.expiresAtMs));
    return { name: this.cookieName, value: secret, maxAgeSeconds: Math.max(1, Math.ceil((until - Date.now()) / 1000)) };
  }

  /**
   * The live grants of the page session `secret` names, strongest scope first (a browser that holds
   * a view and an input link to one session types). Ended grants are dropped on the way.
   */
  grants(secret: string): ScopedGrant[] {
    const key = keyOf(secret);
    const page = this._pages.get(key);
    if (!page) return [];
    this._touch(key, page);
    const live = this._live(page);
    if (live.length === 0) return [];
    return live.map((g) => g.grant).sort((a, b) => RANK[b.scope] - RANK[a.scope]);
  }

  /**
   * Whether `secret` names a page session of this host opened under `host` (a stale cookie, from a
   * host that restarted, does not; nor does one traded under another Host).
   */
  knows(secret: string, host = ''): boolean {
    return this._pages.get(keyOf(secret))?.host === host;
  }

  /** Why the page session `secret` names holds nothing any more (its last grant was revoked or expired), if it once did. */
  ended(secret: string): TokenGone | undefined {
    return this._pages.get(keyOf(secret))?.ended;
  }

  private _live(page: Page): Array<{ grant: ScopedGrant; expiresAtMs: number }> {
    const live: Array<{ grant: ScopedGrant; expiresAtMs: number }> = [];
    const kept: string[] = [];
    for (const id of page.tokenIds) {
      const r = this._tokens.grantOf(id);
      if ('refused' in r) {
        page.ended = r.refused;
        continue;
      }
      live.push(r);
      kept.push(id);
    }
    page.tokenIds = kept;
    return live;
  }

  /** Marks a page session as just used (the Map keeps insertion order: the first is the oldest). */
  private _touch(key: string, page: Page): void {
    this._pages.delete(key);
    this._pages.set(key, page);
  }
}

/** Scopes by strength, to pick the strongest grant a browser holds for a session. */
const RANK = { view: 0, input: 1, control: 2 } as const;

/**
 * The key a page session is kept under: the SHA-256 of its secret. Looking it up in a Map by this
 * hash reveals, through timing, at most something about the hash of a random 256-bit secret, which
 * does not help to guess the secret; the secret itself is never kept.
 */
function keyOf(secret: string): string {
  return crypto.createHash('sha256').update(secret, 'utf8').digest('hex');
}
