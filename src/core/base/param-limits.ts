// The bounds of the methods' numeric params, in one place with no imports: the host's schemas
// refuse what lies outside them, and the CLI checks its flags against the same numbers before it
// asks a host, so its error names the flag (`--timeout`), not the param (`timeout`). The client
// commands load this file and nothing of the engine (docs/architecture.md#the-cli).

/** Longest wait a client may ask for (`timeout`, `idleMs`): a day; longer is a mistake, not a plan. */
export const MAX_WAIT_MS = 24 * 60 * 60 * 1000;

/** Terminal sizes beyond these are a client's mistake, not a screen. */
export const MIN_COLS = 2;
export const MAX_COLS = 1000;
export const MIN_ROWS = 1;
export const MAX_ROWS = 500;

/** Commands a session remembers (`pty/commands` `limit` at most); older ones are forgotten first. */
export const MAX_COMMAND_RECORDS = 1000;

/** Most lines one `pty/scrollback` page returns (docs/protocol.md#ptyscrollback). */
export const MAX_SCROLLBACK_PAGE = 10000;
