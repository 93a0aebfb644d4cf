import { z } from 'zod';
import { MAX_COLS, MAX_ROWS } from '../session/registry';
import { MAX_WAIT_MS } from '../io/wait';

export * from './shapes';

// The pieces the method table's params and results are built from; every surface (JSON-RPC,
// REST, MCP, the docs, the typed client) reads them through the table.

export const int = () => z.number().int();
export const nonNegInt = () => int().min(0);
/** A wait in milliseconds: at most a day (a client that wants longer asks again). */
export const waitMs = () => nonNegInt().max(MAX_WAIT_MS);
export const cols = () => int().min(2).max(MAX_COLS);
export const rows = () => int().min(1).max(MAX_ROWS);
/** How long a session may stay without a client before it ends (a week at most). */
export const leaseSeconds = () => z.number().min(0).max(7 * 24 * 3600);

export const signalName = z.enum(['SIGINT', 'SIGTERM', 'SIGKILL', 'SIGHUP', 'SIGQUIT', 'SIGTSTP', 'SIGCONT']);

/** The selector every session method takes on a control endpoint (docs/hosts.md#session-selectors). */
export const selector = z.string().min(1).describe('Session selector: its id, exact name, or a unique id prefix (see list_sessions).');

/** Longest life of a scoped token: 30 days (it ends with its host anyway). */
export const MAX_TOKEN_SECONDS = 30 * 24 * 3600;

/** A result with nothing to say. */
export const empty = z.object({});
