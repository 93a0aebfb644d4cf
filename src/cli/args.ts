import { AGENT_APPROVALS, type AgentApproval } from '../core/agent/agent-policy';
import type { HostLimits } from '../core/base/limits';
/** A bad command line: printed as one line, exit status 2. */
export class UsageError extends Error {}

export interface FlagSpec {
  /** Flags that take a value (`--timeout 500` or `--timeout=500`). */
  values?: string[];
  /** Flags that take none. */
  booleans?: string[];
  /**
   * The most positional arguments the command takes (none checked when absent): one more is a
   * UsageError, so a typo or a misplaced word is never silently ignored.
   */
  maxPositional?: number;
}

export interface ParsedArgs {
  positional: string[];
  flags: Map<string, string | true>;
  /** Everything after a lone `--`. */
  rest: string[];
}

/** Parses argv against a flag spec; an unknown flag is a UsageError. */
export function parseArgs(argv: string[], spec: FlagSpec): ParsedArgs {
  const values = new Set(spec.values ?? []);
  const booleans = new Set(spec.booleans ?? []);
  const out: ParsedArgs = { positional: [], flags: new Map(), rest: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--') {
      out.rest = argv.slice(i + 1);
      break;
    }
    if (a.startsWith('--') || (a.startsWith('-') && a.length === 2 && !/^-\d$/.test(a))) {
      const eq = a.indexOf('=');
      const name = eq === -1 ? a : a.slice(0, eq);
      if (booleans.has(name)) {
        if (eq !== -1) throw new UsageError(`${name} takes no value`);
        out.flags.set(name, true);
      } else if (values.has(name)) {
        const v = eq !== -1 ? a.slice(eq + 1) : argv[++i];
        if (v === undefined) throw new UsageError(`${name} needs a value`);
        out.flags.set(name, v);
      } else throw new UsageError(`unknown flag ${name}`);
    } else out.positional.push(a);
  }
  if (spec.maxPositional !== undefined && out.positional.length > spec.maxPositional) {
    throw new UsageError(`unexpected argument "${out.positional[spec.maxPositional]}"`);
  }
  return out;
}

/** A flag's value as a non-negative integer (or undefined when absent). */
export function intFlag(args: ParsedArgs, name: string, min = 0, max = Number.MAX_SAFE_INTEGER): number | undefined {
  const v = args.flags.get(name);
  if (v === undefined) return undefined;
  const n = typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) throw new UsageError(`${name} needs a whole number from ${min} to ${max}, got "${v}"`);
  return n;
}

export function strFlag(args: ParsedArgs, name: string): string | undefined {
  const v = args.flags.get(name);
  return typeof v === 'string' ? v : undefined;
}

/** Most MiB of command logs a session may keep (`--command-log-mb`): a few GiB of disk at most. */
const MAX_COMMAND_LOG_MB = 4096;

/**
 * `--command-log-mb N`: the command logs each session keeps (docs/protocol.md#ptycommandoutput), as host options;
 * 0 keeps none, no flag keeps the default (64 MiB).
 */
export function commandLogFlag(args: ParsedArgs): { commandLogDir?: undefined; commandLogBytes?: number } {
  const mb = intFlag(args, '--command-log-mb', 0, MAX_COMMAND_LOG_MB);
  if (mb === undefined) return {};
  return mb === 0 ? { commandLogDir: undefined } : { commandLogBytes: mb * 1024 * 1024 };
}

/** `--agent-approval allow|ask|deny` and `--agent-deny REGEX` (docs/protocol.md#agent-write-approval) as host options. */
export function agentFlags(args: ParsedArgs): { agentApproval?: AgentApproval; agentDenyCommands?: string[] } {
  const approval = strFlag(args, '--agent-approval');
  if (approval !== undefined && !(AGENT_APPROVALS as readonly string[]).includes(approval)) {
    throw new UsageError(`--agent-approval must be one of ${AGENT_APPROVALS.join(', ')}, not "${approval}"`);
  }
  const deny = strFlag(args, '--agent-deny');
  if (deny !== undefined) {
    try {
      new RegExp(deny);
    } catch (e) {
      throw new UsageError(`--agent-deny: ${(e as Error).message}`);
    }
  }
  return { ...(approval ? { agentApproval: approval as AgentApproval } : {}), ...(deny ? { agentDenyCommands: [deny] } : {}) };
}

/**
 * The host's limits `serve` can change (README "Reliability"), each a whole number from 1 to a
 * ceiling: high enough for any real use, finite so a typo (a digit too many) cannot lift a limit
 * out of sight. No flag keeps the default of src/core/base/limits.ts.
 */
export const LIMIT_FLAGS: ReadonlyArray<{ flag: string; option: keyof HostLimits; ceiling: number }> = [
  // Linux's default kernel.pty.max: no host gets more PTYs than that anyway.
  { flag: '--max-sessions', option: 'maxSessions', ceiling: 4096 },
  // Each connection holds a file descriptor: far past one user's tools, well below a raised fd limit.
  { flag: '--max-session-connections', option: 'maxConnectionsPerSessionSocket', ceiling: 16384 },
  { flag: '--max-control-connections', option: 'maxControlConnections', ceiling: 16384 },
  { flag: '--max-http-connections', option: 'maxHttpConnections', ceiling: 16384 },
  // Each request in flight holds a little memory (an MCP server over /mcp): 64 times the default.
  { flag: '--max-in-flight', option: 'maxInFlightRequests', ceiling: 65536 },
];

/** The LIMIT_FLAGS given, as host options; a bad value is a UsageError. */
export function limitFlags(args: ParsedArgs): HostLimits {
  const limits: HostLimits = {};
  for (const { flag, option, ceiling } of LIMIT_FLAGS) {
    const n = intFlag(args, flag, 1, ceiling);
    if (n !== undefined) limits[option] = n;
  }
  return limits;
}
