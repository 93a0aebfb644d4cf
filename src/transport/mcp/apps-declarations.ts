import type { Grant } from '../../core/io/caller';
import { APPS_EXTENSION_ID } from './terminal-app';

/**
 * Whether the client behind a credential said it renders MCP Apps, for 2025-11-25 clients of
 * `/mcp`: each of their requests is served on its own (no Mcp-Session-Id), so only their
 * `initialize` carries capabilities, and the terminal view's keys (`app_input`) are the person's
 * only from a client that declared the extension (docs/protocol.md#6-mcp, "The person's keys"). Kept per credential
 * (the host's token, or a scoped token's holder), the latest `initialize` deciding: the editor's
 * chat uses the host's token, agents outside it reach the host over stdio or with tokens of their own.
 */
export class AppsDeclarations {
  private _hostToken: boolean | undefined;
  private readonly _holders = new WeakMap<object, boolean>();

  /** Takes note of an `initialize` (a request, or one in a batch) in `body`, made with `grant`. */
  noteInitialize(grant: Grant, body: unknown): void {
    const init = (Array.isArray(body) ? body : [body]).find((m) => isInitialize(m)) as { params?: { capabilities?: unknown } } | undefined;
    if (!init) return;
    const extensions = (init.params?.capabilities as { extensions?: Record<string, unknown> } | undefined)?.extensions;
    const declares = typeof extensions === 'object' && extensions !== null && extensions[APPS_EXTENSION_ID] !== undefined;
    if (grant.holder) this._holders.set(grant.holder, declares);
    else this._hostToken = declares;
  }

  /** What the latest `initialize` made with `grant`'s credential declared; undefined before any. */
  declared(grant: Grant): boolean | undefined {
    return grant.holder ? this._holders.get(grant.holder) : this._hostToken;
  }
}

function isInitialize(m: unknown): boolean {
  return typeof m === 'object' && m !== null && (m as { method?: unknown }).method === 'initialize';
}
