import { hostEnded, isAlive, readLiveRecords, type HostRecord } from '../host/discovery';
import { ConnectionClosedError, RpcClient } from '../transport/client/rpc-client';
import type { SessionInfo } from '../core/methods/types';
import { resolveSelector } from '../core/session/selector';
import { readHostsConfig, splitHostSelector, unknownHostHint, type HostsConfig } from '../host/hosts-config';

/** A CLI failure with its one-line message and exit status. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

export interface FoundSession {
  host: HostRecord;
  session: SessionInfo;
}

/**
 * Finds a session of this machine for a command that works here only (view, share, record,
 * events): a remote host's session (`build:bash-1`, or `--host`) is a clear error, not "unknown".
 */
export function findSession(selector: string, command?: string): FoundSession {
  let config: HostsConfig | undefined;
  try {
    config = readHostsConfig();
  } catch {
    // a broken hosts.json matters to remote hosts only
  }
  const remote = config && splitHostSelector(config, selector).host;
  if (remote && remote !== 'local') {
    throw new CliError(
      `${command ? `shared-pty ${command}` : 'this command'} works on this machine's sessions; "${selector}" is on host "${remote}" (run it there)`,
    );
  }
  // SHARED_PTY_HOST points the CLI at another machine: a bare name here could be the wrong session.
  const chosen = process.env.SHARED_PTY_HOST;
  if (!remote && chosen && chosen !== 'local') {
    throw new CliError(
      `${command ? `shared-pty ${command}` : 'this command'} works on this machine's sessions, and SHARED_PTY_HOST names host "${chosen}": say local:${selector} for this machine's, or run it on "${chosen}"`,
    );
  }
  return findLocalSession(config && remote === 'local' ? splitHostSelector(config, selector).selector : selector, config);
}

/** Finds a session across every live host of this machine by id, exact name or unique id prefix (core/session/selector.ts). */
export function findLocalSession(selector: string, config?: HostsConfig): FoundSession {
  const hosts = readLiveRecords();
  const all = hosts.flatMap((host) => host.sessions.map((session) => ({ host, session })));
  const r = resolveSelector(
    all,
    selector,
    (f) => f.session.id,
    (f) => f.session.name,
  );
  if (r.kind === 'found') return r.item;
  if (r.kind === 'ambiguous') {
    // Each candidate by its id and name: one's id may be the very selector (another's name), so "use its id" would not do.
    const which = r.candidates.map((f) => `${f.session.id} (named ${f.session.name})`).join(', ');
    throw new CliError(`session "${selector}" is ambiguous: it may be ${which}; give an id, or an id prefix only one of them has`);
  }
  // `typo:bash-1`: the user meant a remote host that hosts.json does not name.
  const hint = config && unknownHostHint(config, selector);
  if (hint) throw new CliError(`unknown session: ${selector} (${hint})`);
  if (hosts.length === 0) throw new CliError('no Shared PTY host is running (start one with: shared-pty open, or shared-pty serve)');
  throw new CliError(`unknown session: ${selector}`);
}

/** Connects to the host control socket of a found session. */
export async function connectHost(found: FoundSession): Promise<RpcClient> {
  try {
    return await RpcClient.connect(found.host.control);
  } catch (e) {
    if (!isAlive(found.host.pid)) throw new CliError(await hostGoneMessage(found.host));
    throw new CliError(`cannot reach host ${found.host.hostId}: ${(e as Error).message}`);
  }
}

/**
 * What to tell the user when a host's connection closed under them: the host is gone (killed,
 * crashed) and its sessions with it, or only the connection dropped. A dead host's record and
 * sockets are removed on the way, so the next command does not meet them.
 */
export async function hostGoneMessage(host: HostRecord, closed?: unknown): Promise<string> {
  return (await whyHostClosed(host, closed)).message;
}

/**
 * hostGoneMessage, and whether the host is gone (not only the connection). `closed`: the error
 * the call failed with; a connection the host refused (a limit reached) is told in the host's words.
 */
export async function whyHostClosed(host: HostRecord, closed?: unknown): Promise<{ gone: boolean; message: string }> {
  const refusal = closed instanceof ConnectionClosedError ? closed.refusal : undefined;
  if (!(await hostEnded(host.pid))) {
    const tooLong = refusal && /line longer than (\d+) bytes/.exec(refusal);
    const message = tooLong
      ? `the Shared PTY host ${host.hostId} takes requests of at most ${tooLong[1]} bytes, and this one is longer (its command line or text): send less at a time`
      : refusal
        ? `the Shared PTY host ${host.hostId} refused the connection: ${refusal}`
        : `the connection to the Shared PTY host ${host.hostId} closed`;
    return { gone: false, message };
  }
  readLiveRecords(); // removes the records (and socket folders) of hosts that are gone
  return { gone: true, message: `the Shared PTY host ${host.hostId} is gone (process ${host.pid} ended); its sessions ended with it` };
}
