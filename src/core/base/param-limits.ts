// The bounds of the methods' numeric params, in one place with no imports: the host's schemas
// refuse what lies outside them, and the CLI checks its flags against the same numbers before it
// asks a host, so its error names the flag (`--timeout`), not the param (`timeout`). The client
// commands load this file and nothing of the engine (docs/architecture.md#the-cli).

/** Longest wait a client may ask for (`timeout`, `idleMs`): a day; longer is a mistake, not a plan. */
export const MAX_WAIT_MS = 24 * 60 * 60 * 1000;

/** The wait of `pty/wait` and of `pty/send` when the call names none (docs/protocol.md#ptywait). */
export const DEFAULT_WAIT_TIMEOUT_MS = 10000;
export const DEFAULT_SEND_TIMEOUT_MS = 30000;
/** The wait of `pty/signal` with `wait` (MCP `signal`) and of `pty/waitEvent` when the call names none. */
export const DEFAULT_SIGNAL_TIMEOUT_MS = 5000;
export const DEFAULT_WAIT_EVENT_TIMEOUT_MS = 30000;

/**
 * The terminal sizes a session takes. The methods take any positive size and bring it within
 * these, as socket-pty clamps what is out of range (`inSize`); the CLI's flags are checked
 * against them, so a typo there is a usage error.
 */
export const MIN_COLS = 2;
export const MAX_COLS = 1000;
export const MIN_ROWS = 1;
export const MAX_ROWS = 500;

/** `size`'s columns and rows brought within the bounds above (either may be left out). */
export function inSize<T extends { cols?: number; rows?: number }>(size: T): T {
  const out = { ...size };
  if (out.cols !== undefined) out.cols = Math.min(Math.max(out.cols, MIN_COLS), MAX_COLS);
  if (out.rows !== undefined) out.rows = Math.min(Math.max(out.rows, MIN_ROWS), MAX_ROWS);
  return out;
}

/** Commands a session remembers (`pty/commands` `limit` at most); older ones are forgotten first. */
export const MAX_COMMAND_RECORDS = 1000;

/** Most lines one `pty/scrollback` page returns (docs/protocol.md#ptyscrollback). */
export const MAX_SCROLLBACK_PAGE = 10000;

/** How long an agent's write waits for the user's answer when the policy asks and the call names no wait of its own (docs/protocol.md#agent-write-approval). */
export const DEFAULT_APPROVAL_WAIT_MS = 60_000;
/** How long an agent's write without a timeout of its own (send_keys, a raw write) waits for the human to pause typing. */
export const DEFAULT_ARBITRATION_WAIT_MS = 15_000;

/** Longest file path a method takes (`pty/record`, `host/replay`): Linux's PATH_MAX. */
export const MAX_PATH_CHARS = 4096;
