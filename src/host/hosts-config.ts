import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { unsafePath, unsafePathAdvice } from '../core/base/safe-path';

/**
 * The name that always means this machine's own hosts (`local:bash-1`): hosts.json cannot take it,
 * so a selector can reach a local session while `--host` or SHARED_PTY_HOST points elsewhere.
 */
export const LOCAL_HOST = 'local';

/** Host names: short words that cannot be mistaken for a path or a selector's own colon. */
const HOST_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** A hosts.json that cannot be used, or a host it does not name. */
export class HostsConfigError extends Error {}

/** The remote hosts of hosts.json (docs/hosts.md#remote-hosts): name → the command that reaches its bridge. */
export interface HostsConfig {
  /** Where it was read from (shown in errors). */
  file: string;
  hosts: ReadonlyMap<string, string>;
  /** Why the file could not be used, when a caller chose to go on with this machine alone. */
  broken?: string;
}

/** `$XDG_CONFIG_HOME/shared-pty/hosts.json`, else `~/.config/shared-pty/hosts.json`. */
export function hostsConfigPath(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CONFIG_HOME && path.isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : path.join(os.homedir(), '.config');
  return path.join(base, 'shared-pty', 'hosts.json');
}

/**
 * Reads hosts.json: no file is no remote host; a file that is not `{ "hosts": { NAME: COMMAND } }`
 * is an error that says what is wrong and where (a typo must not silently hide a host).
 */
export function readHostsConfig(env: NodeJS.ProcessEnv = process.env): HostsConfig {
  const file = hostsConfigPath(env);
  // Its commands run as the user: a file (or a folder above it) another user can change is not
  // taken, as ssh takes no such ~/.ssh/config.
  const unsafe = unsafePath(file, 'file', 'user-or-root');
  if (unsafe) throw new HostsConfigError(`${file} is not used, as its commands would run as you: ${unsafe.text} (${unsafePathAdvice(unsafe)})`);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { file, hosts: new Map() };
    throw new HostsConfigError(`cannot read ${file}: ${(e as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    throw new HostsConfigError(`${file} is not JSON: ${(e as Error).message}`);
  }
  const hosts = (parsed as { hosts?: unknown } | null)?.hosts;
  if (typeof hosts !== 'object' || hosts === null || Array.isArray(hosts)) {
    throw new HostsConfigError(`${file} needs { "hosts": { "NAME": "COMMAND" } }, e.g. { "hosts": { "build": "ssh build-box shared-pty bridge" } }`);
  }
  // JSON.parse keeps the last of two entries with one name, and says nothing.
  const twice = hostNamedTwice(text);
  if (twice !== undefined) throw new HostsConfigError(`${file}: host "${twice}" is named twice (only the last would count); give each host one entry`);
  const out = new Map<string, string>();
  for (const [name, command] of Object.entries(hosts)) {
    if (!HOST_NAME.test(name) || name === LOCAL_HOST) {
      throw new HostsConfigError(`${file}: "${name}" cannot name a host (letters, digits, . _ -; not "${LOCAL_HOST}", which is this machine)`);
    }
    if (typeof command !== 'string' || command.trim() === '')
      throw new HostsConfigError(`${file}: host "${name}" needs a command (a string), e.g. "ssh build-box shared-pty bridge"`);
    out.set(name, command);
  }
  return { file, hosts: out };
}

/**
 * A name that the `hosts` object of hosts.json's text (valid JSON) gives twice, if one does: a walk
 * over its strings and brackets, each object's keys kept while it is open.
 */
function hostNamedTwice(text: string): string | undefined {
  const open: Array<{ keys?: Set<string>; isHosts: boolean }> = [];
  let lastKey: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      let end = i + 1;
      while (text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      let after = end + 1;
      while (/\s/.test(text[after] ?? '')) after++;
      const inside = open[open.length - 1];
      if (text[after] === ':' && inside?.keys) {
        const key = JSON.parse(text.slice(i, end + 1)) as string;
        if (inside.isHosts && inside.keys.has(key)) return key;
        inside.keys.add(key);
        lastKey = key;
      }
      i = end;
    } else if (c === '{' || c === '[') {
      open.push({ keys: c === '{' ? new Set() : undefined, isHosts: c === '{' && open.length === 1 && lastKey === 'hosts' });
      lastKey = undefined;
    } else if (c === '}' || c === ']') {
      open.pop();
    }
  }
  return undefined;
}

/** The error for a host name hosts.json does not have, listing those it has. */
export function unknownHostError(config: HostsConfig, name: string): HostsConfigError {
  // A broken file is the reason, not the name: say what to fix.
  if (config.broken) return new HostsConfigError(`no host "${name}": ${config.broken}`);
  const known = [...config.hosts.keys()];
  const have = known.length ? `it names ${known.join(', ')}` : 'it names no host';
  return new HostsConfigError(`no host named "${name}" in ${config.file} (${have}; "${LOCAL_HOST}" is this machine)`);
}

/**
 * Why a selector such as `typo:bash-1` found nothing, when its opening looks like a host's name
 * that hosts.json does not have: `no host named "typo" in <file>; it names build, web`.
 */
export function unknownHostHint(config: HostsConfig, selector: string): string | undefined {
  const prefix = /^([A-Za-z0-9][A-Za-z0-9._-]*):./.exec(selector)?.[1];
  if (!prefix || config.hosts.has(prefix) || prefix === LOCAL_HOST) return undefined;
  const names = [...config.hosts.keys()];
  return `no host named "${prefix}" in ${config.file}${names.length ? `; it names ${names.join(', ')}` : ''}`;
}

/**
 * Splits `NAME:SELECTOR` when NAME is a configured host (or `local`); anything else is a selector
 * of this machine as it stands, so a local session whose name has a colon is still found.
 */
export function splitHostSelector(config: HostsConfig, selector: string): { host: string | undefined; selector: string } {
  const i = selector.indexOf(':');
  if (i <= 0) return { host: undefined, selector };
  const name = selector.slice(0, i);
  if (name !== LOCAL_HOST && !config.hosts.has(name)) return { host: undefined, selector };
  return { host: name, selector: selector.slice(i + 1) };
}
