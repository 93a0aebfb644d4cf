import { ErrorCode, RpcError, unknownSession } from '../base/errors';

/** What a session selector matched: one item, nothing, or several (the candidates). */
export type Selection<T> = { kind: 'found'; item: T } | { kind: 'unknown' } | { kind: 'ambiguous'; candidates: T[] };

/**
 * Resolves a session selector (docs/hosts.md#session-selectors: an id, an exact name, or a unique id prefix): the one
 * rule of every surface (the host's registry, the CLI, stdio MCP), so a selector means the same
 * thing wherever it is typed. An exact id first (ambiguous if two hosts both have it, or another
 * host has a session of that name); then an
 * exact name only one item has; then an id prefix only one item has. Several items of that name
 * or prefix make it ambiguous; an empty selector is nobody's prefix.
 */
export function resolveSelector<T>(items: readonly T[], selector: string, idOf: (item: T) => string, nameOf: (item: T) => string): Selection<T> {
  const byId = items.filter((item) => idOf(item) === selector);
  if (byId.length === 1) {
    // Another host's session of that name (a host refuses such a name only among its own): either
    // may be meant, and a kill must not guess.
    const named = items.filter((item) => item !== byId[0] && nameOf(item) === selector);
    return named.length === 0 ? { kind: 'found', item: byId[0] } : { kind: 'ambiguous', candidates: [byId[0], ...named] };
  }
  // One id on two hosts (ids are random per host): no name or prefix may stand in for it.
  if (byId.length > 1) return { kind: 'ambiguous', candidates: byId };
  const byName = items.filter((item) => nameOf(item) === selector);
  if (byName.length === 1) return { kind: 'found', item: byName[0] };
  // A name two hosts have is ambiguous: an id prefix, a weaker rule, may not stand in for it.
  if (byName.length > 1) return { kind: 'ambiguous', candidates: byName };
  const byPrefix = selector.length > 0 ? items.filter((item) => idOf(item).startsWith(selector)) : [];
  if (byPrefix.length === 1) return { kind: 'found', item: byPrefix[0] };
  if (byPrefix.length > 1) return { kind: 'ambiguous', candidates: byPrefix };
  return { kind: 'unknown' };
}

/** `resolveSelector` for JSON-RPC surfaces: the item, else -32001 with `data: { session }` (unknown or ambiguous). */
export function selectOrThrow<T>(items: readonly T[], selector: string, idOf: (item: T) => string, nameOf: (item: T) => string): T {
  const r = resolveSelector(items, selector, idOf, nameOf);
  if (r.kind === 'found') return r.item;
  throw selectionError(selector, r);
}

/**
 * -32001 with `data: { session }` for a selector that named nothing, or several items; `given`, when
 * there is one, says how each candidate can be named instead, and the message lists them.
 */
export function selectionError<T>(selector: string, r: Exclude<Selection<T>, { kind: 'found' }>, given?: (item: T) => string): RpcError {
  if (r.kind === 'unknown') return unknownSession(selector);
  const which = given ? ` names ${r.candidates.map(given).join(', ')}; give one of those` : '';
  return new RpcError(ErrorCode.UnknownSession, `Session selector is ambiguous: ${selector}${which}`, { session: selector });
}
