// The flags of the commands that run a host (`serve`, `daemon`): its limits, its command logs and
// its agent policy, as host options. Apart from args.ts because checking them needs the engine's
// agent policy, which a client command never loads (docs/architecture.md#the-cli).
import { AGENT_APPROVALS, type AgentApproval } from '../core/agent/agent-policy';
import type { HostLimits } from '../core/base/limits';
import { intFlag, listFlag, strFlag, UsageError, type ParsedArgs } from './args';
import { asBrowserOrigin } from '../transport/base/origin';
import { LIMIT_FLAGS } from './command-flags';

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
  const deny = listFlag(args, '--agent-deny');
  for (const rule of deny) {
    try {
      new RegExp(rule);
    } catch (e) {
      throw new UsageError(`--agent-deny: ${(e as Error).message}`);
    }
  }
  return { ...(approval ? { agentApproval: approval as AgentApproval } : {}), ...(deny.length ? { agentDenyCommands: deny } : {}) };
}

/** The LIMIT_FLAGS given, as host options; a bad value is a UsageError. */
export function limitFlags(args: ParsedArgs): HostLimits {
  const limits: HostLimits = {};
  for (const { flag, option, ceiling } of LIMIT_FLAGS) {
    const n = intFlag(args, flag, 1, ceiling);
    if (n !== undefined) limits[option] = n;
  }
  return limits;
}

/**
 * `--http-port N`, `--allow-origin ORIGIN[,ORIGIN…]` and `--no-http`, checked together: the port
 * (0: any free one), and the browser origins allowed besides the host's own
 * (docs/guarantees.md#cors), each exactly `scheme://host[:port]` as a browser sends it in `Origin`.
 */
export function httpFlags(args: ParsedArgs): { httpPort?: number; allowedOrigins: string[] } {
  const noHttp = args.flags.has('--no-http');
  if (noHttp && args.flags.has('--http-port')) throw new UsageError('--http-port and --no-http are mutually exclusive');
  const httpPort = intFlag(args, '--http-port', 0, 65535);
  const allowedOrigins = listFlag(args, '--allow-origin').flatMap(originsFlag);
  if (allowedOrigins.length && noHttp) throw new UsageError('--allow-origin and --no-http are mutually exclusive');
  return { httpPort, allowedOrigins };
}

function originsFlag(value: string): string[] {
  // Written as a browser sends it (`HTTPS://App.Example:443/` is `https://app.example`), or it would never match.
  return value.split(',').map((raw) => {
    const o = asBrowserOrigin(raw.trim());
    if (o === undefined) throw new UsageError(`--allow-origin needs origins such as https://example.com or http://localhost:3000, got "${raw}"`);
    return o;
  });
}
