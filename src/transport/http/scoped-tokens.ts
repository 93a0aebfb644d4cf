import * as crypto from 'node:crypto';
import { Disposable, disposableTimeout, toDisposable, type IDisposable } from '../../core/base/lifecycle';
import { TokenHolder, type Grant, type TokenScope } from '../../core/io/caller';
import type { TokenInfo, TokenService } from '../../core/methods/types';
import type { Session } from '../../core/session/session';
import { newToken } from './http-security';

/** What a scoped token allows, and its id (so what was opened with it ends with it). */
export interface ScopedGrant extends Grant {
  readonly onlySession: string;
  readonly tokenId: string;
  readonly holder: TokenHolder;
}

/** Why a token's open connections are being ended. */
export type TokenEnd = 'token revoked' | 'token expired';

/** Longest single timer Node keeps (about 24.8 days); a longer expiry re-arms. */
const MAX_TIMER_MS = 2 ** 31 - 1;

interface Entry {
  info: TokenInfo;
  /** SHA-256 of the token: the token itself is never kept. */
  hash: Buffer;
  /** Whoever holds it: an agent once used on `/mcp`, and the regex time its callers share. */
  holder: TokenHolder;
  expiresAtMs: number;
  /** How to end each connection still open with it (WebSockets, requests in flight). */
  connections: Set<(why: TokenEnd) => void>;
  timer: IDisposable;
}

/**
 * The scoped tokens of one HTTP server (docs/protocol.md#scoped-tokens), in its memory only and as hashes only:
 * they end with the host. A token reaches one session with one scope until it expires or is
 * revoked, and then the connections opened with it end too.
 */
export class ScopedTokens extends Disposable implements TokenService {
  private readonly _entries = new Map<string, Entry>();

  /** `viewUrl` makes the browser link of a session opened with a given token. */
  constructor(private readonly _viewUrl: (sessionId: string, token: string) => string) {
    super();
    this._register(toDisposable(() => this._endAll()));
  }

  share(session: Session, scope: TokenScope, expiresInSeconds: number): { token: string; url: string; info: TokenInfo } {
    const token = newToken();
    const id = this._newId();
    const now = Date.now();
    const expiresAtMs = now + expiresInSeconds * 1000;
    const info: TokenInfo = {
      id,
      scope,
      session: session.id,
      createdAt: new Date(now).toISOString(),
      expiresAt: new Date(expiresAtMs).toISOString(),
      lastUsedAt: null,
    };
    const entry: Entry = { info, hash: sha256(token), holder: new TokenHolder(id), expiresAtMs, connections: new Set(), timer: toDisposable(() => {}) };
    this._entries.set(id, entry);
    this._armExpiry(entry);
    return { token, url: this._viewUrl(session.id, token), info: { ...info } };
  }

  /**
   * The grant of a token, or undefined when it is none of ours (or has expired). Every stored hash
   * is compared, in constant time, whichever matches.
   */
  match(secret: string): ScopedGrant | undefined {
    const hash = sha256(secret);
    let found: Entry | undefined;
    for (const e of this._entries.values()) if (crypto.timingSafeEqual(hash, e.hash)) found = e;
    if (!found) return undefined;
    if (Date.now() >= found.expiresAtMs) {
      this._end(found, 'token expired');
      return undefined;
    }
    found.info.lastUsedAt = new Date().toISOString();
    return { scope: found.info.scope, onlySession: found.info.session, tokenId: found.info.id, holder: found.holder };
  }

  list(): TokenInfo[] {
    const now = Date.now();
    return [...this._entries.values()].filter((e) => e.expiresAtMs > now).map((e) => ({ ...e.info }));
  }

  revoke(id: string): boolean {
    const e = this._entries.get(id);
    if (!e) return false;
    this._end(e, 'token revoked');
    return true;
  }

  /** A session has gone: its tokens can open nothing any more. */
  dropSession(sessionId: string): void {
    for (const e of [...this._entries.values()]) if (e.info.session === sessionId) this._end(e, 'token revoked');
  }

  /**
   * Ties an open connection to its token: `end` runs when the token is revoked or expires.
   * Dispose the result when the connection closes by itself.
   */
  track(tokenId: string, end: (why: TokenEnd) => void): IDisposable {
    const e = this._entries.get(tokenId);
    if (!e) {
      end('token revoked');
      return toDisposable(() => {});
    }
    e.connections.add(end);
    return toDisposable(() => e.connections.delete(end));
  }

  private _armExpiry(e: Entry): void {
    const left = e.expiresAtMs - Date.now();
    e.timer = disposableTimeout(
      () => (Date.now() >= e.expiresAtMs ? this._end(e, 'token expired') : this._armExpiry(e)),
      Math.max(0, Math.min(left, MAX_TIMER_MS)),
      { unref: true },
    );
  }

  private _end(e: Entry, why: TokenEnd): void {
    if (this._entries.get(e.info.id) !== e) return;
    this._entries.delete(e.info.id);
    e.timer.dispose();
    const ends = [...e.connections];
    e.connections.clear();
    for (const end of ends) end(why);
  }

  private _endAll(): void {
    for (const e of [...this._entries.values()]) this._end(e, 'token revoked');
  }

  /** A short id to name the token by (`shared-pty revoke <id>`); it opens nothing. */
  private _newId(): string {
    for (;;) {
      const id = 't' + crypto.randomBytes(5).toString('hex');
      if (!this._entries.has(id)) return id;
    }
  }
}

function sha256(s: string): Buffer {
  return crypto.createHash('sha256').update(s, 'utf8').digest();
}
