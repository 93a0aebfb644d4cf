import * as crypto from 'node:crypto';
import type { Session } from '../../core/session/session';
import type { SecretPageLink, SecretPageService } from '../../core/methods/types';

/**
 * How long a secret page's link works (docs/protocol.md#secret-pages): long enough for the person
 * to see the request in their agent's client, open it and type a passphrase; short enough that a
 * link left in a chat log is dead by the time anyone else reads it.
 */
export const SECRET_PAGE_LIFETIME_MS = 5 * 60 * 1000;

/** Links kept at once; the oldest is dropped past this (a session asks for one at a time; nothing grows unbounded). */
const MAX_SECRET_LINKS = 100;

/** Why a secret page's link opens nothing (each one is said to the person in words). */
export type SecretLinkRefused = 'unknown' | 'used' | 'expired';

interface Link {
  session: string;
  expiresAtMs: number;
  used: boolean;
}

/**
 * The one-time links of the host's secret pages: each is a random id (128 bits) for one session,
 * which lets one secret through once, within its lifetime. Used and expired links stay known (up
 * to the bound) so the person is told why a link opens nothing.
 */
export class SecretLinks implements SecretPageService {
  private readonly _links = new Map<string, Link>();

  /**
   * `url` makes a link's address from its id; `lifetimeMs` defaults to SECRET_PAGE_LIFETIME_MS
   * (only tests shorten it, to see a link expire without waiting five minutes).
   */
  constructor(
    private readonly _url: (id: string) => string,
    private readonly _lifetimeMs: number = SECRET_PAGE_LIFETIME_MS,
    private readonly _now: () => number = Date.now,
  ) {}

  open(session: Session): SecretPageLink {
    while (this._links.size >= MAX_SECRET_LINKS) this._links.delete(this._links.keys().next().value as string);
    const id = crypto.randomBytes(16).toString('base64url');
    const expiresAtMs = this._now() + this._lifetimeMs;
    this._links.set(id, { session: session.id, expiresAtMs, used: false });
    return { url: this._url(id), expiresAt: new Date(expiresAtMs).toISOString() };
  }

  /** The session of a link that still works, without using it (the page is shown). */
  peek(id: string): { session: string } | { refused: SecretLinkRefused } {
    const link = this._links.get(id);
    if (!link) return { refused: 'unknown' };
    if (link.used) return { refused: 'used' };
    if (link.expiresAtMs <= this._now()) return { refused: 'expired' };
    return { session: link.session };
  }

  /** Uses the link: its session, once; after that (or past its lifetime) why not. */
  take(id: string): { session: string } | { refused: SecretLinkRefused } {
    const r = this.peek(id);
    const link = this._links.get(id);
    if ('session' in r && link) link.used = true;
    return r;
  }
}
