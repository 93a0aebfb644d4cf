import type { Grant } from '../../core/io/caller';

/** What a request's credentials allow: a scope, perhaps for one session, perhaps only in the browser's pages. */
export interface Access extends Grant {
  /** A page cookie's grant: the host's pages and the stream WebSocket, nothing else (no REST, /rpc, /mcp). */
  readonly viewOnly?: boolean;
  /** A scoped token's id: what is opened with it ends with it. */
  readonly tokenId?: string;
  /** A replay link's grant: that recording's page and file (`/replay/<id>`…), nothing else. */
  readonly replayId?: string;
}

/**
 * Why a secret opens nothing, as the refusal page puts it in words: a one-time link already traded
 * (`used`, also as a Bearer token then), a replay link offered as a Bearer token (`link-only`), one that ended, or none of ours.
 */
export type TokenRefusal = 'used' | 'link-only' | 'revoked' | 'expired' | 'session-ended' | 'unknown';

/** Why a browser's request opens nothing, as the refusal page says it (docs/protocol.md, Links and page cookies). */
export type Refused = TokenRefusal | 'elsewhere' | 'host-token' | 'no-grant' | 'none';

/**
 * Which of a page cookie's grants a request may use: the one for a session (its page, size poll
 * and stream), the one for a replay link (its page, file and assets), or any (the pages' shared
 * assets and the file picker, which show nothing of a session).
 */
export type PageTarget = { session: string | undefined } | { replay: string } | 'any';
