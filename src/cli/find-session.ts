import { readLiveRecords, type HostRecord } from '../host/discovery';
import { RpcClient } from '../transport/rpc-client';
import type { SessionInfo } from '../core/methods/types';

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

/** Finds a session across every live host by id, exact name or unique id prefix. */
export function findSession(selector: string): FoundSession {
  const hosts = readLiveRecords();
  if (hosts.length === 0) throw new CliError('no Shared PTY host is running (start one with: shared-pty serve)');
  const all = hosts.flatMap((host) => host.sessions.map((session) => ({ host, session })));
  const byId = all.filter((f) => f.session.id === selector);
  if (byId.length === 1) return byId[0];
  const byName = all.filter((f) => f.session.name === selector);
  if (byName.length === 1) return byName[0];
  const byPrefix = all.filter((f) => f.session.id.startsWith(selector));
  if (byPrefix.length === 1) return byPrefix[0];
  if (byName.length > 1 || byPrefix.length > 1) throw new CliError(`session "${selector}" is ambiguous; use its id`);
  throw new CliError(`unknown session: ${selector}`);
}

/** Connects to the host control socket of a found session. */
export async function connectHost(found: FoundSession): Promise<RpcClient> {
  try {
    return await RpcClient.connect(found.host.control);
  } catch (e) {
    throw new CliError(`cannot reach host ${found.host.hostId}: ${(e as Error).message}`);
  }
}
