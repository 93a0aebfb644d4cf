import { hostEnded, isAlive, readLiveRecords, type HostRecord } from '../host/discovery';
import { RpcClient } from '../transport/client/rpc-client';
import type { SessionInfo } from '../core/methods/types';
import { resolveSelector } from '../core/session/selector';

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

/** Finds a session across every live host by id, exact name or unique id prefix (core/session/selector.ts). */
export function findSession(selector: string): FoundSession {
  const hosts = readLiveRecords();
  if (hosts.length === 0) throw new CliError('no Shared PTY host is running (start one with: shared-pty serve)');
  const all = hosts.flatMap((host) => host.sessions.map((session) => ({ host, session })));
  const r = resolveSelector(all, selector, (f) => f.session.id, (f) => f.session.name);
  if (r.kind === 'found') return r.item;
  if (r.kind === 'ambiguous') throw new CliError(`session "${selector}" is ambiguous; use its id`);
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
export async function hostGoneMessage(host: HostRecord): Promise<string> {
  if (!(await hostEnded(host.pid))) return `the connection to the Shared PTY host ${host.hostId} closed`;
  readLiveRecords(); // removes the records (and socket folders) of hosts that are gone
  return `the Shared PTY host ${host.hostId} is gone (process ${host.pid} ended); its sessions ended with it`;
}
