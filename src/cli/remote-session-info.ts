// A remote host's SessionInfo as every listing shows it, whatever version of Shared PTY runs there.
// No schema is loaded for it (zod is the engine's): `list` runs many times a minute
// (docs/architecture.md#the-cli), and `shared-pty mcp` fills sessions in the same way.
import type { SessionInfo } from '../core/methods/types';

/** The fields a SessionInfo must have besides its id and name (`tcp`, `stream` and `host` may be absent). */
type Described = Omit<SessionInfo, 'id' | 'name' | 'tcp' | 'stream' | 'host'>;

/**
 * What a remote host of an older version leaves out of a SessionInfo (fields are only ever added:
 * docs/hosts.md#sessioninfo), filled in as "not known there": a listing must not fail for every
 * host because one describes its sessions with fewer fields.
 */
export const NOT_KNOWN_THERE = {
  pid: 0,
  command: '',
  args: [],
  cwd: '',
  workspace: null,
  cols: 0,
  rows: 0,
  createdAt: '',
  running: true,
  exitCode: null,
  origin: 'script',
  address: '',
  clients: 0,
  secretInput: false,
  integration: false,
} satisfies Described;

const isString = (v: unknown): boolean => typeof v === 'string';
const isNumber = (v: unknown): boolean => typeof v === 'number' && Number.isFinite(v);
const isBoolean = (v: unknown): boolean => typeof v === 'boolean';
const ORIGINS: ReadonlyArray<SessionInfo['origin']> = ['user', 'agent', 'script'];

/** Whether a field's value is of its SessionInfo type (docs/protocol.md#the-discovery-record), field by field. */
const FITS: { readonly [K in keyof Described]-?: (v: unknown) => boolean } = {
  pid: isNumber,
  command: isString,
  args: (v) => Array.isArray(v) && v.every(isString),
  cwd: isString,
  workspace: (v) => v === null || isString(v),
  cols: isNumber,
  rows: isNumber,
  createdAt: isString,
  running: isBoolean,
  exitCode: (v) => v === null || isNumber(v),
  origin: (v) => ORIGINS.includes(v as SessionInfo['origin']),
  address: isString,
  clients: isNumber,
  secretInput: isBoolean,
  integration: isBoolean,
};

/** The fields that may be absent, and are left out when what a host gave for them is not a string. */
const OPTIONAL_STRINGS = ['tcp', 'stream'] as const;

/**
 * A remote session with every field a SessionInfo has: what its host gave where it is of the
 * field's type, else NOT_KNOWN_THERE's value (an optional field of the wrong type is left out).
 * Its id and name are checked where the list is taken (isSessionLike).
 */
export function describedFully<S extends SessionInfo>(s: S): S {
  const info: Record<string, unknown> = { ...s };
  for (const key of Object.keys(FITS) as Array<keyof Described>) if (!FITS[key](info[key])) info[key] = NOT_KNOWN_THERE[key];
  for (const key of OPTIONAL_STRINGS) if (key in info && !isString(info[key])) delete info[key];
  return info as S;
}

/** What a remote host that does not know a call (an older version there) is said as: named, never the method (docs/hosts.md). */
export function olderHostMessage(host: string): string {
  return `host "${host}" does not know this command (an older version of Shared PTY there?)`;
}
