// The Tasks extension's requester (@modelcontextprotocol/ext-tasks) beside the SDK's v2 client, as
// the MCP suites drive `shared-pty mcp` (docs/protocol.md#tasks-and-input-rounds).

/** A request the requester hands over (it has no id yet), and its answer as the requester takes it. */
type RawRequest = { method: string; params?: Record<string, unknown> };
type RawAnswer = { kind: 'result'; result: unknown } | { kind: 'error'; error: unknown };

/** What the requester makes of a JSON-RPC answer: `{ kind, result | error }`. */
export function rawAnswer(m: { result?: unknown; error?: unknown } | undefined): RawAnswer {
  return m?.error ? { kind: 'error', error: m.error } : { kind: 'result', result: m?.result };
}

/**
 * The raw request path over a stdio transport the SDK client already uses (the SDK refuses task
 * methods toward a 2026-07-28 server): sent on the client's own transport, its answers picked out
 * by id before the client sees them.
 */
export function stdioRawDispatch(transport: { onmessage?: unknown; send(m: unknown): Promise<void> }): (req: RawRequest) => Promise<RawAnswer> {
  let n = 0;
  const pending = new Map<string, (m: { result?: unknown; error?: unknown }) => void>();
  const inner = transport.onmessage as (m: unknown, extra: unknown) => void;
  transport.onmessage = (m: { id?: unknown; result?: unknown; error?: unknown }, extra: unknown) => {
    const back = typeof m?.id === 'string' ? pending.get(m.id) : undefined;
    if (back && ('result' in m || 'error' in m)) {
      pending.delete(m.id as string);
      back(m);
    } else inner(m, extra);
  };
  return (req) =>
    new Promise((resolve) => {
      const id = `raw-${++n}`;
      pending.set(id, (m) => resolve(rawAnswer(m)));
      void transport.send({ jsonrpc: '2.0', ...req, id });
    });
}
