import * as crypto from 'node:crypto';
import type { ReplayLinkInfo, ReplayService } from '../../core/methods/types';

/** Bounds of the replay links a host keeps; each says why. */
export const enum ReplayLimits {
  /** A link works this long: long enough to share in a review, short enough not to linger (ms). */
  LifetimeMs = 24 * 60 * 60 * 1000,
  /** Links kept at once; the oldest is dropped past this (each holds only a path, but nothing grows unbounded). */
  MaxLinks = 100,
}

/** Whether `pathname` is the page, file or an asset of the replay link `id`: all a link's token opens. */
export function isLinkPath(pathname: string, id: string): boolean {
  return pathname === `/replay/${id}` || pathname.startsWith(`/replay/${id}/`);
}

interface Link {
  info: ReplayLinkInfo;
  /** SHA-256 of the link's token: the token itself is only in the URL handed out. */
  hash: Buffer;
  expiresAtMs: number;
}

function sha256(s: string): Buffer {
  return crypto.createHash('sha256').update(s).digest();
}

/**
 * The recordings a host's HTTP server replays: each file a `host/replay` caller named, behind a
 * random id (128 bits), the only way to reach it over HTTP; nothing else on disk is served. Each
 * link has a token of its own (256 bits, kept as a hash) that opens that recording's page and
 * file and nothing else: a leaked link shows one recording, never a live terminal.
 */
export class ReplayLinks implements ReplayService {
  private readonly _links = new Map<string, Link>();

  /** `url` makes the browser link of an id opened with its token. */
  constructor(
    private readonly _url: (id: string, token: string) => string,
    private readonly _now: () => number = Date.now,
  ) {}

  open(file: string): ReplayLinkInfo {
    this._dropExpired();
    while (this._links.size >= ReplayLimits.MaxLinks) this._links.delete(this._links.keys().next().value as string);
    const id = crypto.randomBytes(16).toString('hex');
    const token = crypto.randomBytes(32).toString('base64url');
    const expiresAtMs = this._now() + ReplayLimits.LifetimeMs;
    const info: ReplayLinkInfo = { id, url: this._url(id, token), path: file, expiresAt: new Date(expiresAtMs).toISOString() };
    this._links.set(id, { info, hash: sha256(token), expiresAtMs });
    return { ...info };
  }

  /** The link of `id`, unless there is none or it expired. */
  get(id: string): ReplayLinkInfo | undefined {
    this._dropExpired();
    return this._links.get(id)?.info;
  }

  /** The id of the link whose token this is (every hash compared in constant time), or undefined. */
  match(token: string): string | undefined {
    this._dropExpired();
    const hash = sha256(token);
    let found: string | undefined;
    for (const [id, link] of this._links) if (crypto.timingSafeEqual(hash, link.hash)) found = id;
    return found;
  }

  private _dropExpired(): void {
    const now = this._now();
    for (const [id, link] of this._links) if (link.expiresAtMs <= now) this._links.delete(id);
  }
}
