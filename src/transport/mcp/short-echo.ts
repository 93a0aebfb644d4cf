import { RpcError, toRpcError } from '../../core/base/errors';

/**
 * How much of a value the caller gave a tool error quotes back: enough to recognise a session
 * selector or a key name (ids are 6 characters, names a few words), while a made-up one of
 * 500 000 characters no longer comes back whole into the model's context.
 */
export const ECHO_MAX_CHARS = 80;

/** `value` as an error quotes it: whole (JSON-quoted) when short, else its first ECHO_MAX_CHARS, "…", and how long it was. */
export function shortQuote(value: string): string {
  if (value.length <= ECHO_MAX_CHARS) return JSON.stringify(value);
  // Not half a surrogate pair at the cut.
  const end = /[\uD800-\uDBFF]/.test(value.charAt(ECHO_MAX_CHARS - 1)) ? ECHO_MAX_CHARS - 1 : ECHO_MAX_CHARS;
  return `${JSON.stringify(`${value.slice(0, end)}…`)} (${value.length} characters)`;
}

/** The fields of an error's `data` that hold a value the caller gave, which its message repeats. */
const ECHOED_FIELDS = ['session', 'key'] as const;

/**
 * The error with the values of the caller it repeats (the session selector of `Unknown session`,
 * the key name of `Unknown key name`, both in its `data`) shortened in its message (shortQuote):
 * the one place where MCP turns errors into tool results, whichever surface made them.
 */
export function withShortEchoes(err: unknown): RpcError {
  const e = toRpcError(err);
  const data = e.data as Record<string, unknown> | undefined;
  let message = e.message;
  for (const field of ECHOED_FIELDS) {
    const value = data?.[field];
    if (typeof value !== 'string' || value.length <= ECHO_MAX_CHARS) continue;
    // Quoted (a key name) or as it is (a selector).
    message = message.split(JSON.stringify(value)).join(shortQuote(value)).split(value).join(shortQuote(value));
  }
  return message === e.message ? e : new RpcError(e.code, message, e.data);
}
