// How deeply a message a client sends may nest (docs/protocol.md#3-methods). JSON.parse takes
// thousands of levels, but re-serialising such a value (an error that quotes a wrong selector, a
// call handed to the MCP SDK) overflows the stack; no method's params nest beyond a few levels.

/** Levels a request may nest; deeper is refused as invalid params before anything walks it. */
export const MAX_NESTING = 256;

/**
 * Whether `value` nests deeper than `max` levels of objects and arrays. Recursion is bounded by
 * `max` (it stops there), and nothing is allocated: it runs on every call, a key's write included.
 */
export function nestsDeeperThan(value: unknown, max: number = MAX_NESTING): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (max <= 0) return true;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (nestsDeeperThan(value[i], max - 1)) return true;
    return false;
  }
  for (const key in value) if (nestsDeeperThan((value as Record<string, unknown>)[key], max - 1)) return true;
  return false;
}
