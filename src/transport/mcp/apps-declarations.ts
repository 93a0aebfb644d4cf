import type { Grant } from '../../core/io/caller';
import { APPS_EXTENSION_ID } from './terminal-app';

/**
 * Whether the editor's chat said it renders MCP Apps: the client of `/mcp` with the host's own
 * token or with the agent's token the editor mints for it (`host/agentToken`). Its 2025-11-25
 * requests are each served on their own (no Mcp-Session-Id), so only its `initialize` carries
 * capabilities, and the terminal view's keys (`app_input`) are the person's only from a client that
 * declared the extension (docs/protocol.md#6-mcp, "The person's keys"); the latest `initialize`
 * made with that credential decides. A session's scoped token's are never the person's, so none is
 * kept for them.
 */
export class AppsDeclarations {
  private readonly _declared = new WeakMap<object, boolean>();

  /** Takes note of an `initialize` (a request, or one in a batch) in `body`, made with the credential `owner`. */
  noteInitialize(owner: object, body: unknown): void {
    const init = (Array.isArray(body) ? body : [body]).find((m) => isInitialize(m)) as { params?: { capabilities?: unknown } } | undefined;
    if (!init) return;
    const extensions = (init.params?.capabilities as { extensions?: Record<string, unknown> } | undefined)?.extensions;
    this._declared.set(owner, typeof extensions === 'object' && extensions !== null && extensions[APPS_EXTENSION_ID] !== undefined);
  }

  /** What the latest `initialize` made with the credential `owner` declared; undefined before any. */
  declared(owner: object): boolean | undefined {
    return this._declared.get(owner);
  }
}

/**
 * Whether the terminal view's keys sent with this credential may be the person's: the host's own
 * token, or an agent's token minted for a chat host (`host/agentToken` with `chat`: the one the
 * editor mints for its chat). Both are held by the chat host, never shown to its model; any other
 * token (a session's, an agent's) may be an agent's own.
 */
export function personKeysTrusted(grant: Grant): boolean {
  return grant.holder === undefined || grant.holder.hostToken || grant.chatView === true;
}

function isInitialize(m: unknown): boolean {
  return typeof m === 'object' && m !== null && (m as { method?: unknown }).method === 'initialize';
}
