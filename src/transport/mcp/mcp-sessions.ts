import { StatelessCalls } from './stateless-calls';

/**
 * The `/mcp` sessions (`Mcp-Session-Id`) of 2025-11-25 clients that declared elicitation: the
 * server asks such a client in the middle of a tool call (an approval, the secret page:
 * docs/protocol.md#6-mcp), and the client's answer comes back in a request of its own, which the
 * session's server must receive. Every other 2025-11-25 request is served on its own, with no state.
 *
 * Bounded per credential and in all (the oldest goes first: its client starts a new session on the
 * 404 it then gets); a session ends on the client's DELETE and with the HTTP server. Holds nothing
 * of the SDK's, so the HTTP server keeps the store without loading the SDK.
 */
export class McpSessions<T extends { close(): Promise<void> }> {
  /** The requests served with no session, in flight: a cancellation posted apart names one of them. */
  readonly stateless = new StatelessCalls();
  /** Id → the session, oldest first (a Map keeps insertion order). */
  private readonly _sessions = new Map<string, { owner: object; session: T }>();
  private _disposed = false;

  /** Keeps `session` under `id` for `owner` (the token's holder, or the host's own grant); ends the oldest past a limit. */
  add(id: string, owner: object, session: T): void {
    if (this._disposed) {
      void session.close();
      return;
    }
    this._sessions.set(id, { owner, session });
    const owned = [...this._sessions].filter(([, s]) => s.owner === owner);
    if (owned.length > MCP_SESSION_LIMITS.perOwner) this.end(owned[0][0]);
    if (this._sessions.size > MCP_SESSION_LIMITS.total) this.end(this._sessions.keys().next().value as string);
  }

  /** The session `id` names, if `owner` opened it: another credential's is as unknown as none. */
  get(id: string, owner: object): T | undefined {
    const kept = this._sessions.get(id);
    return kept?.owner === owner ? kept.session : undefined;
  }

  /** Ends session `id` (its client's DELETE, a limit); nothing when it is gone already. */
  end(id: string): void {
    const kept = this._sessions.get(id);
    if (!kept) return;
    this._sessions.delete(id);
    void kept.session.close();
  }

  /** Forgets `id` (its transport closed on its own). */
  forget(id: string): void {
    this._sessions.delete(id);
  }

  dispose(): void {
    this._disposed = true;
    for (const id of [...this._sessions.keys()]) this.end(id);
  }
}

/** Sessions one credential may hold, and all of them: far more than an agent's client opens. */
const MCP_SESSION_LIMITS = { perOwner: 32, total: 256 };
