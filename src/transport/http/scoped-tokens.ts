import * as crypto from 'node:crypto';
import { Disposable, disposableTimeout, Emitter, toDisposable, type IDisposable } from '../../core/base/lifecycle';
import { TokenHolder, type Grant, type TokenScope } from '../../core/io/caller';
import type { TokenInfo, TokenService } from '../../core/methods/types';
import type { Session } from '../../core/session/session';
import type { TokenRefusal } from '../base/access';
import { newToken } from '../base/tokens';

/** What a scoped token allows, and its id (so what was opened with it ends with it). */
export interface ScopedGrant extends Grant {
  readonly tokenId: string;
  readonly holder: TokenHolder;
  /** The one session it reaches (a session link or token). */
  readonly onlySession?: string;
  /** The one replay link it opens (`play --browser`): that recording's page, nothing else. */
  readonly replayId?: string;
}

/**
 * Why a token's open connections are being ended: it was revoked or expired, or its link was
 * opened in a browser (what was opened with the printed token before ends with it).
 */
/** Why a token that once worked opens nothing now: revoked, expired, or its session ended (closed with it). */
export type TokenGone = 'revoked' | 'expired' | 'session-ended';

export type TokenEnd = 'token revoked' | 'token expired' | 'session ended' | 'link opened';

/** A secret's grant, or why it has none. */
export type TokenMatch = { grant: ScopedGrant } | { refused: TokenRefusal };

/**
 * What a token opens: one session, one recording's replay page, or every session as an agent (the
 * credential of the editor's MCP server, so that its chat never holds the host's own token).
 */
export type TokenTarget =
  { readonly session: string } | { readonly replay: string; readonly recording: string } | { readonly agent: true; readonly chat: boolean };

/** Bounds of the token store; each says why. */
export const enum TokenLimits {
  /** Longest single timer Node keeps (about 24.8 days); a longer expiry re-arms. */
  MaxTimerMs = 2 ** 31 - 1,
  /**
   * Ended tokens remembered (id and hash, never the token) so that a link opened after its end
   * says "revoked" or "expired" instead of "unknown"; the oldest is forgotten past this.
   */
  MaxEndedKept = 512,
}

interface Entry {
  info: TokenInfo;
  target: TokenTarget;
  /** SHA-256 of the token: the token itself is never kept. */
  hash: Buffer;
  /** Whoever holds it: an agent once used on `/mcp`, and the regex time its callers share. */
  holder: TokenHolder;
  expiresAtMs: number;
  /** How to end each connection still open with it (WebSockets, requests in flight). */
  connections: Set<(why: TokenEnd) => void>;
  timer: IDisposable;
}

interface Ended {
  hash: Buffer;
  why: TokenGone;
}

/**
 * The scoped tokens of one HTTP server (docs/protocol.md, Scoped tokens), in its memory only and
 * as hashes only: they end with the host. A token reaches one session (or one replay link) with
 * one scope until it expires or is revoked, and then the connections opened with it end too.
 *
 * Two kinds: a reusable token (`share --reusable`) works as a Bearer token until it ends; a link
 * (the default, and every link the product prints) opens a browser page once — the browser trades
 * it for a page cookie (PageSessions) — and its token works as a Bearer token only until then, so
 * whoever reads it later (off a shared screen, from history) gains nothing. The link's grant lives
 * on in that cookie until the token is revoked or expires. A replay link is for its page only.
 */
export class ScopedTokens extends Disposable implements TokenService {
  private readonly _entries = new Map<string, Entry>();
  private readonly _ended = new Map<string, Ended>();
  private readonly _onDidEndUses = this._register(new Emitter<{ holder: TokenHolder; why: TokenEnd }>());
  /**
   * What was started with a token must end: it was revoked or expired, or its link was opened.
   * Besides its connections (`track`), what outlives them hears it here: MCP tasks (RunStore).
   */
  readonly onDidEndUses = this._onDidEndUses.event;

  /** `viewUrl` makes the browser link of a session opened with a given token. */
  constructor(private readonly _viewUrl: (sessionId: string, token: string) => string) {
    super();
    this._register(toDisposable(() => this._endAll()));
  }

  share(session: Session, scope: TokenScope, expiresInSeconds: number, reusable = false): { token: string; url: string; info: TokenInfo } {
    const { token, info } = this._mint({ session: session.id }, scope, expiresInSeconds, reusable);
    return { token, url: this._viewUrl(session.id, token), info };
  }

  /**
   * A token for an agent, reaching every session with the `control` scope: an agent's from the
   * start (each write made with it, on any surface, passes the agent guards), never a page's.
   */
  agentToken(expiresInSeconds: number, chat = false): { token: string; info: TokenInfo } {
    const minted = this._mint({ agent: true, chat }, 'control', expiresInSeconds, true);
    this._entries.get(minted.info.id)!.holder.markAgent();
    return minted;
  }

  /** A one-time link token for a replay link (`host/replay`): it opens that recording's page only. */
  shareReplay(replayId: string, recording: string, expiresInSeconds: number): { token: string; info: TokenInfo } {
    return this._mint({ replay: replayId, recording }, 'view', expiresInSeconds, false);
  }

  /**
   * The grant of a token offered as `Authorization: Bearer` (or a WebSocket's `?token=`): a
   * reusable token's until it ends, a session link's until its page was opened (`share` prints the
   * token for scripts too); a replay link is for its page only. Every stored hash is compared, in
   * constant time, whichever matches.
   */
  bearer(secret: string): TokenMatch {
    const found = this._find(secret);
    if ('refused' in found) return found;
    if ('replay' in found.target) return { refused: 'link-only' };
    if (spentLink(found.info)) return { refused: 'used' };
    return { grant: this._use(found) };
  }

  /**
   * Trades a link for a browser page (`?token=` on a page): once for a link, which opens nothing
   * by itself afterwards; any number of times for a reusable token. `fits` says whether the token
   * is for the page asked (a link for another page is refused and stays unused).
   */
  exchange(secret: string, fits: (target: TokenTarget) => boolean): TokenMatch | { refused: 'elsewhere' } {
    const found = this._find(secret);
    if ('refused' in found) return found;
    // An agent's token opens no page: a page's keys are the person's.
    if ('agent' in found.target || !fits(found.target)) return { refused: 'elsewhere' };
    if (spentLink(found.info)) return { refused: 'used' };
    found.info.openedAt ??= new Date().toISOString();
    // A link is spent now: what someone opened with its token before (off a shared screen, before
    // the browser it was for) ends, so the printed token keeps nothing open. The browser's own
    // connections (its page cookie's) come after, and are tracked from then on.
    if (!found.info.reusable) this._endConnections(found, 'link opened');
    return { grant: this._use(found) };
  }

  /** The grant of a token by its id while it lives (a page cookie's grants), or why it ended. */
  grantOf(tokenId: string): { grant: ScopedGrant; expiresAtMs: number } | { refused: TokenGone } {
    const e = this._entries.get(tokenId);
    if (e && Date.now() >= e.expiresAtMs) this._end(e, 'token expired');
    const live = this._entries.get(tokenId);
    if (!live) return { refused: this._ended.get(tokenId)?.why ?? 'revoked' };
    return { grant: grantOf(live), expiresAtMs: live.expiresAtMs };
  }

  /** Notes a use of the token (`lastUsedAt`): a page cookie's grant was the one a request used. */
  used(tokenId: string): void {
    const e = this._entries.get(tokenId);
    if (e) e.info.lastUsedAt = new Date().toISOString();
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
    for (const e of [...this._entries.values()]) if ('session' in e.target && e.target.session === sessionId) this._end(e, 'session ended');
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

  private _mint(target: TokenTarget, scope: TokenScope, expiresInSeconds: number, reusable: boolean): { token: string; info: TokenInfo } {
    const token = newToken();
    const id = this._newId();
    const now = Date.now();
    const expiresAtMs = now + expiresInSeconds * 1000;
    const info: TokenInfo = {
      id,
      scope,
      session: 'session' in target ? target.session : null,
      ...('replay' in target ? { recording: target.recording } : {}),
      ...('agent' in target ? { agent: true as const, ...(target.chat ? { chat: true as const } : {}) } : {}),
      reusable,
      openedAt: null,
      createdAt: new Date(now).toISOString(),
      expiresAt: new Date(expiresAtMs).toISOString(),
      lastUsedAt: null,
    };
    const entry: Entry = { info, target, hash: sha256(token), holder: new TokenHolder(id), expiresAtMs, connections: new Set(), timer: toDisposable(() => {}) };
    this._entries.set(id, entry);
    this._armExpiry(entry);
    return { token, info: { ...info } };
  }

  /** The live entry whose hash matches (every hash compared), or why there is none. */
  private _find(secret: string): Entry | { refused: TokenRefusal } {
    const hash = sha256(secret);
    let found: Entry | undefined;
    for (const e of this._entries.values()) if (crypto.timingSafeEqual(hash, e.hash)) found = e;
    if (found && Date.now() >= found.expiresAtMs) {
      this._end(found, 'token expired');
      found = undefined;
    }
    if (found) return found;
    let ended: Ended | undefined;
    for (const e of this._ended.values()) if (crypto.timingSafeEqual(hash, e.hash)) ended = e;
    return { refused: ended?.why ?? 'unknown' };
  }

  private _use(e: Entry): ScopedGrant {
    e.info.lastUsedAt = new Date().toISOString();
    return grantOf(e);
  }

  private _armExpiry(e: Entry): void {
    const left = e.expiresAtMs - Date.now();
    // The timer it replaces (the placeholder of _mint, or the one that just fired) is let go first.
    e.timer.dispose();
    e.timer = disposableTimeout(
      () => (Date.now() >= e.expiresAtMs ? this._end(e, 'token expired') : this._armExpiry(e)),
      Math.max(0, Math.min(left, TokenLimits.MaxTimerMs)),
      { unref: true },
    );
  }

  private _end(e: Entry, why: TokenEnd): void {
    if (this._entries.get(e.info.id) !== e) return;
    this._entries.delete(e.info.id);
    this._ended.set(e.info.id, { hash: e.hash, why: why === 'token expired' ? 'expired' : why === 'session ended' ? 'session-ended' : 'revoked' });
    while (this._ended.size > TokenLimits.MaxEndedKept) this._ended.delete(this._ended.keys().next().value as string);
    e.timer.dispose();
    this._endConnections(e, why);
  }

  private _endConnections(e: Entry, why: TokenEnd): void {
    const ends = [...e.connections];
    e.connections.clear();
    for (const end of ends) end(why);
    this._onDidEndUses.fire({ holder: e.holder, why });
  }

  private _endAll(): void {
    for (const e of [...this._entries.values()]) this._end(e, 'token revoked');
  }

  /** A short id to name the token by (`shared-pty revoke <id>`); it opens nothing. */
  private _newId(): string {
    for (;;) {
      const id = 't' + crypto.randomBytes(5).toString('hex');
      if (!this._entries.has(id) && !this._ended.has(id)) return id;
    }
  }
}

/** A link whose page was opened: it opens nothing more, as a link or as a Bearer token. */
function spentLink(info: TokenInfo): boolean {
  return !info.reusable && info.openedAt !== null;
}

/** What an entry's token allows. */
function grantOf(e: Entry): ScopedGrant {
  const t = e.target;
  const common = { tokenId: e.info.id, holder: e.holder };
  if ('agent' in t) return { ...common, scope: e.info.scope, everySession: true, ...(t.chat ? { chatView: true as const } : {}) };
  return 'session' in t ? { ...common, scope: e.info.scope, onlySession: t.session } : { ...common, scope: 'view', replayId: t.replay };
}

function sha256(s: string): Buffer {
  return crypto.createHash('sha256').update(s, 'utf8').digest();
}
