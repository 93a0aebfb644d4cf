import * as crypto from 'node:crypto';
import type { ReplayLinkInfo, ReplayService } from '../core/methods/types';

/** Bounds of the replay links a host keeps; each says why. */
export const enum ReplayLimits {
  /** A link works this long: long enough to share in a review, short enough not to linger (ms). */
  LifetimeMs = 24 * 60 * 60 * 1000,
  /** Links kept at once; the oldest is dropped past this (each holds only a path, but nothing grows unbounded). */
  MaxLinks = 100,
}

/**
 * The recordings a host's HTTP server replays: each file a `host/replay` caller named, behind a
 * random id (128 bits) that is the only way to reach it over HTTP. Nothing else on disk is served.
 */
export class ReplayLinks implements ReplayService {
  private readonly _links = new Map<string, ReplayLinkInfo>();

  /** `url` makes the browser link of an id. */
  constructor(
    private readonly _url: (id: string) => string,
    private readonly _now: () => number = Date.now,
  ) {}

  open(file: string): ReplayLinkInfo {
    this._dropExpired();
    while (this._links.size >= ReplayLimits.MaxLinks) this._links.delete(this._links.keys().next().value as string);
    const id = crypto.randomBytes(16).toString('hex');
    const link: ReplayLinkInfo = { id, url: this._url(id), path: file, expiresAt: new Date(this._now() + ReplayLimits.LifetimeMs).toISOString() };
    this._links.set(id, link);
    return { ...link };
  }

  /** The link of `id`, unless there is none or it expired. */
  get(id: string): ReplayLinkInfo | undefined {
    this._dropExpired();
    return this._links.get(id);
  }

  private _dropExpired(): void {
    const now = this._now();
    for (const [id, link] of this._links) if (Date.parse(link.expiresAt) <= now) this._links.delete(id);
  }
}
