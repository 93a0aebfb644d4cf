import * as crypto from 'node:crypto';
import type { ReplayLinkInfo, ReplayService, TokenInfo } from '../../core/methods/types';

/** Bounds of the replay links a host keeps; each says why. */
export const enum ReplayLimits {
  /** A link works this long: long enough to share in a review, short enough not to linger (ms). */
  LifetimeMs = 24 * 60 * 60 * 1000,
  /** Links kept at once; the oldest is dropped past this (each holds only a path, but nothing grows unbounded). */
  MaxLinks = 100,
}

interface Link {
  info: ReplayLinkInfo;
  expiresAtMs: number;
}

/** A one-time link token for a replay link, minted by the host's scoped tokens (so `tokens` lists it and `revoke` ends it). */
export type MintReplayToken = (id: string, recording: string, expiresInSeconds: number) => { token: string; info: TokenInfo };

/**
 * The recordings a host's HTTP server replays: each file a `host/replay` caller named, behind a
 * random id (128 bits), the only way to reach it over HTTP; nothing else on disk is served. Each
 * link carries a scoped token of its own (ScopedTokens.shareReplay) that a browser trades once for
 * that recording's page and file and nothing else: a leaked link shows one recording at most, never
 * a live terminal, and `shared-pty revoke` ends it.
 */
export class ReplayLinks implements ReplayService {
  private readonly _links = new Map<string, Link>();

  /** `url` makes the browser link of an id opened with its token; `mint` makes that token. */
  constructor(
    private readonly _url: (id: string, token: string) => string,
    private readonly _mint: MintReplayToken,
    private readonly _now: () => number = Date.now,
  ) {}

  open(file: string): ReplayLinkInfo {
    this._dropExpired();
    while (this._links.size >= ReplayLimits.MaxLinks) this._links.delete(this._links.keys().next().value as string);
    const id = crypto.randomBytes(16).toString('hex');
    const { token, info: tokenInfo } = this._mint(id, file, ReplayLimits.LifetimeMs / 1000);
    const expiresAtMs = this._now() + ReplayLimits.LifetimeMs;
    const info: ReplayLinkInfo = { id, url: this._url(id, token), path: file, expiresAt: new Date(expiresAtMs).toISOString(), tokenId: tokenInfo.id };
    this._links.set(id, { info, expiresAtMs });
    return { ...info };
  }

  /** The link of `id`, unless there is none or it expired. */
  get(id: string): ReplayLinkInfo | undefined {
    this._dropExpired();
    return this._links.get(id)?.info;
  }

  private _dropExpired(): void {
    const now = this._now();
    for (const [id, link] of this._links) if (link.expiresAtMs <= now) this._links.delete(id);
  }
}
