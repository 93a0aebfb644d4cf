import { APPS_EXTENSION_ID } from './terminal-app';

/**
 * Whether the editor's chat, the client of `/mcp` with the host's own token, said it renders MCP
 * Apps. Its 2025-11-25 requests are each served on their own (no Mcp-Session-Id), so only its
 * `initialize` carries capabilities, and the terminal view's keys (`app_input`) are the person's
 * only from a client that declared the extension (docs/protocol.md#6-mcp, "The person's keys"); the
 * latest `initialize` decides. A scoped token's are never the person's, so none is kept for them.
 */
export class AppsDeclarations {
  private _declared: boolean | undefined;

  /** Takes note of an `initialize` (a request, or one in a batch) in `body`, made with the host's token. */
  noteInitialize(body: unknown): void {
    const init = (Array.isArray(body) ? body : [body]).find((m) => isInitialize(m)) as { params?: { capabilities?: unknown } } | undefined;
    if (!init) return;
    const extensions = (init.params?.capabilities as { extensions?: Record<string, unknown> } | undefined)?.extensions;
    this._declared = typeof extensions === 'object' && extensions !== null && extensions[APPS_EXTENSION_ID] !== undefined;
  }

  /** What the latest `initialize` made with the host's token declared; undefined before any. */
  get declared(): boolean | undefined {
    return this._declared;
  }
}

function isInitialize(m: unknown): boolean {
  return typeof m === 'object' && m !== null && (m as { method?: unknown }).method === 'initialize';
}
