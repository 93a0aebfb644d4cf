import * as path from 'node:path';
import { serveStdio, StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { ErrorCode, RpcError } from '../core/base/errors';
import type { SessionInfo } from '../core/methods/types';
import { resolveSelector, selectOrThrow } from '../core/session/selector';
import { ensureDaemon } from '../host/daemon';
import { isAlive, readLiveRecords, type HostRecord } from '../host/discovery';
import { ConnectionClosedError, RpcCallError, RpcClient } from '../transport/client/rpc-client';
import { createMcpServer, guardParams, type ToolBackend } from '../transport/mcp/mcp-tools';
import { parseArgs } from './args';
import { hostGoneMessage } from './find-session';

/**
 * Every call names its caller (the `client` param, see src/core/io/caller.ts): the host sees a
 * control-socket client, but the writes are an agent's, relayed from stdio.
 */
const AGENT_OVER_STDIO = { origin: 'agent', transport: 'mcp-stdio' } as const;

/** How long a host may take to list its sessions before its discovery record stands in for it. */
const HOST_LIST_WAIT_MS = 2000;

/**
 * The stdio MCP backend: reaches every live host of the user through discovery, routes each
 * session's calls to the host that owns it, and opens new sessions in the host whose workspace
 * holds `cwd`, else in the per-user host (started on demand).
 */
export class DiscoveryBackend implements ToolBackend {
  private readonly _clients = new Map<string, Promise<RpcClient>>();
  /** Every session seen listed, so a call to one whose host has since died can say so. */
  private readonly _seen = new Map<string, { host: HostRecord; s: SessionInfo }>();
  /** Hosts already reported gone on stderr (once each). */
  private readonly _reported = new Set<string>();

  constructor(private readonly _cliPath: string) {}

  async call(method: string, params: Record<string, unknown>): Promise<unknown> {
    try {
      if (method === 'session/list') return { sessions: (await this._liveSessions()).map((f) => f.s) };
      if (method === 'session/create') return await this._create(params);
      const selector = String(params.session ?? '');
      const host = await this._hostOf(selector);
      try {
        const client = await this._client(host);
        return await client.request(method, { ...params, client: AGENT_OVER_STDIO });
      } catch (e) {
        // The host died under the call (or just before it): say so, not "Connection closed".
        if (e instanceof ConnectionClosedError || !isAlive(host.pid)) throw await this._gone(host);
        throw e;
      }
    } catch (e) {
      if (e instanceof RpcCallError) throw new RpcError(e.code, e.message, e.data);
      throw e;
    }
  }

  private async _create(params: Record<string, unknown>): Promise<unknown> {
    // Without a cwd the session opens where the agent works: the folder it started us in.
    const cwd = path.resolve(typeof params.cwd === 'string' ? params.cwd : process.cwd());
    const hosts = readLiveRecords();
    // The per-user host of our own version: one left by an update keeps its sessions, takes no new ones.
    const host =
      hosts.find((h) => h.workspace && isInside(cwd, h.workspace)) ??
      (await ensureDaemon({ cliPath: this._cliPath, onOutdatedHost: (message) => process.stderr.write(`shared-pty mcp: ${message}\n`) }));
    return (await this._client(host)).request('session/create', { ...params, cwd, client: AGENT_OVER_STDIO });
  }

  /** The host of the session `selector` names, by the rule of every surface (core/session/selector.ts). */
  private async _hostOf(selector: string): Promise<HostRecord> {
    const live = await this._liveSessions();
    const r = resolveSelector(live, selector, (f) => f.s.id, (f) => f.s.name);
    if (r.kind === 'unknown') {
      // A session listed before whose host has died since: the host is gone, not the name wrong.
      const before = resolveSelector([...this._seen.values()], selector, (f) => f.s.id, (f) => f.s.name);
      if (before.kind === 'found' && !isAlive(before.item.host.pid)) throw await this._gone(before.item.host);
    }
    return selectOrThrow(live, selector, (f) => f.s.id, (f) => f.s.name).host;
  }

  /** The tool error for a host that is gone, told once on stderr too (the MCP client's log). */
  private async _gone(host: HostRecord): Promise<RpcError> {
    const message = await hostGoneMessage(host);
    if (!this._reported.has(host.hostId)) {
      this._reported.add(host.hostId);
      process.stderr.write(`shared-pty mcp: ${message}\n`);
    }
    return new RpcError(ErrorCode.ServerError, message, { host: host.hostId });
  }

  /**
   * Every session of every live host, as the hosts themselves list them now: a record is
   * rewritten a moment after a change, so a session just closed would still show as running, and
   * one just opened not at all. A host that does not answer in time is listed from its record.
   */
  private async _liveSessions(): Promise<Array<{ host: HostRecord; s: SessionInfo }>> {
    const lists = await Promise.all(
      readLiveRecords().map(async (host) => {
        const asked = this._client(host).then((c) => c.call('session/list', {}));
        const late = new Promise<undefined>((resolve) => {
          const timer: NodeJS.Timeout = setTimeout(() => resolve(undefined), HOST_LIST_WAIT_MS);
          timer.unref();
        });
        const answer = await Promise.race([asked, late]).catch(() => undefined);
        return (answer?.sessions ?? host.sessions).map((s) => ({ host, s }));
      }),
    );
    // Kept: what live hosts list now, and the last list of hosts that died.
    for (const [key, f] of this._seen) if (isAlive(f.host.pid)) this._seen.delete(key);
    for (const f of lists.flat()) this._seen.set(`${f.host.hostId}/${f.s.id}`, f);
    return lists.flat();
  }

  private _client(host: HostRecord): Promise<RpcClient> {
    let c = this._clients.get(host.hostId);
    if (!c) {
      c = RpcClient.connect(host.control);
      this._clients.set(host.hostId, c);
      c.then(
        (client) => client.onClose(() => this._clients.delete(host.hostId)),
        () => this._clients.delete(host.hostId),
      );
    }
    return c;
  }

  dispose(): void {
    for (const c of this._clients.values()) void c.then((client) => client.close(), () => {});
  }
}

function isInside(child: string, parent: string): boolean {
  const rel = path.relative(parent, child);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/**
 * `mcp`: the MCP server over stdio (one line of MCP configuration is all a client needs). The
 * connection's first message picks the protocol revision: `initialize` (2025-11-25) or a request
 * carrying its revision in `_meta` (2026-07-28, `server/discover` first if the client asks).
 */
export async function mcpCommand(argv: string[]): Promise<number> {
  parseArgs(argv, { maxPositional: 0 });
  const cliPath = require.main?.filename ?? process.argv[1];
  const backend = new DiscoveryBackend(cliPath);
  const handle = serveStdio(() => createMcpServer(backend), {
    transport: guardParams(new StdioServerTransport()),
    onerror: (e) => process.stderr.write(`shared-pty mcp: ${e.message}\n`),
  });
  return new Promise<number>((resolve) => {
    process.stdin.on('end', () => {
      void handle.close();
      backend.dispose();
      resolve(0);
    });
  });
}
