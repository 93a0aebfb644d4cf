import { readLiveRecords, type HostRecord } from '../host/discovery';
import { RpcClient } from '../transport/rpc-client';
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
    throw new CliError(`cannot reach host ${found.host.hostId}: ${(e as Error).message}`);
  }
}
