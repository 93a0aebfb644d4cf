import { z } from 'zod';
import { MAX_COLS, MAX_ROWS, MAX_WAIT_MS, MIN_COLS, MIN_ROWS } from '../base/param-limits';

export * from './shapes';

// The pieces the method table's params and results are built from; every surface (JSON-RPC,
// REST, MCP, the docs, the typed client) reads them through the table.

/**
 * An integer, at least `min` when given: the bound is checked before integrality, so a value far
 * below it is told the bound (`>=0`), not the safe-integer range an integer check names first.
 */
export const int = (min?: number) => (min === undefined ? z.number().int() : z.number().min(min).int());
export const nonNegInt = () => int(0);
/**
 * Milliseconds of a wait: any number, not only an integer (socket-pty's `timeout` is "milliseconds",
 * and a client that computes what is left of a deadline sends a fraction); timers take fractions.
 */
export const millis = (min = 0) => z.number().min(min);
/** A wait in milliseconds: at most a day (a client that wants longer asks again). */
export const waitMs = () => millis().max(MAX_WAIT_MS);
// Any positive size; the handlers bring it within MIN/MAX (inSize), as socket-pty clamps.
export const cols = () => int(1).describe(`Columns (${MIN_COLS}…${MAX_COLS}; a size outside is brought within).`);
export const rows = () => int(1).describe(`Rows (${MIN_ROWS}…${MAX_ROWS}; a size outside is brought within).`);
/** How long a session may stay without a client before it ends (a week at most). */
export const leaseSeconds = () =>
  z
    .number()
    .min(0)
    .max(7 * 24 * 3600);

export const signalName = z.enum(['SIGINT', 'SIGTERM', 'SIGKILL', 'SIGHUP', 'SIGQUIT', 'SIGTSTP', 'SIGCONT']);

/** A lone UTF-16 surrogate: half of a pair, no character (JSON's `"\\ud800"`; a pair is one astral code point here). */
const LONE_SURROGATE = /[\ud800-\udfff]/u;
/** Whether `s` is whole characters (no lone surrogate): see wholeText. */
export const isWholeText = (s: string): boolean => !LONE_SURROGATE.test(s);
/**
 * A string the host keeps and tells again (a command, its args, a directory, a variable): whole
 * characters only. A lone surrogate reached the program as U+FFFD while the session's info said
 * the escape, and made the discovery record JSON that jq refuses.
 */
export const wholeText = (min?: number) =>
  (min === undefined ? z.string() : z.string().min(min)).refine(isWholeText, 'holds a lone UTF-16 surrogate (half of a pair), which is no character');

/** The selector every session method takes on a control endpoint (docs/hosts.md#session-selectors). */
export const selector = z.string().min(1).describe('Session selector: its id, exact name, or a unique id prefix (see list_sessions).');

/**
 * What a param is when the caller leaves it out: a value, or words where it is not one value (the
 * user's shell). Kept beside the schema, not in it, so a parse leaves absent params absent (handlers
 * tell "not given" apart) and tools/list stays as it is; the protocol reference's tables show it.
 */
export type ParamDefault = { value: unknown } | { says: string };

/** The defaults of the table's params, by field schema (read by scripts/protocol-tables.ts). */
export const paramDefaults = z.registry<ParamDefault>();

/** `field`, documented as `value` when left out; the handler applies the same named constant. */
export function byDefault<T extends z.ZodType>(value: unknown, field: T): T {
  paramDefaults.add(field, { value });
  return field;
}

/** `field`, documented by `says` when left out (a default that is not one value). */
export function byDefaultSays<T extends z.ZodType>(says: string, field: T): T {
  paramDefaults.add(field, { says });
  return field;
}

/** A result with nothing to say. */
export const empty = z.object({});
