import * as path from 'node:path';
import * as vscode from 'vscode';
import type { HostRecord } from '../host/discovery';
import type { RpcClient } from '../transport/client/rpc-client';
import { VERSION } from '../version';
import { Ids, MCP_LABEL } from './commands';
import type { HostClients } from './host-clients';
import { mcpUrl } from './mcp-config';
import type { SessionWatcher } from './session-watcher';
import { affects, getSetting } from './settings';

export interface McpProviderDeps {
  hosts: HostClients;
  watcher: SessionWatcher;
  extensionPath: string;
  error(what: string, e: unknown): void;
}

/** Where the definition points before the per-user host runs; resolving it starts the host. */
const PLACEHOLDER_URL = 'http://127.0.0.1/mcp';

/**
 * Registers the per-user host's MCP server (Streamable HTTP, bearer token) with the editor, so agent
 * chat finds it with no set-up (docs/editor.md#mcp-registration). With the HTTP server turned off, or
 * with remote hosts in hosts.json (docs/editor.md#remote-hosts), the stdio server (`shared-pty mcp`,
 * which serves every configured host) is registered instead.
 */
export function registerMcpProvider(context: vscode.ExtensionContext, deps: McpProviderDeps): void {
  if (typeof vscode.lm?.registerMcpServerDefinitionProvider !== 'function') return; // an editor without MCP
  const changed = new vscode.EventEmitter<void>();
  let daemonId = deps.hosts.runningDaemon()?.hostId ?? '';
  let remoteNames = deps.hosts.remotes
    .hosts()
    .map((h) => h.name)
    .join(',');

  const stdio = () =>
    new vscode.McpStdioServerDefinition(
      MCP_LABEL,
      process.execPath,
      [path.join(deps.extensionPath, 'dist', 'cli.js'), 'mcp'],
      // hosts.json is found as this window finds it.
      {
        ELECTRON_RUN_AS_NODE: '1',
        SHARED_PTY_DIR: deps.hosts.runtimeDir(),
        ...(process.env.XDG_CONFIG_HOME ? { XDG_CONFIG_HOME: process.env.XDG_CONFIG_HOME } : {}),
      },
      VERSION,
    );
  // No credential until the definition is resolved: then an agent's token minted for it.
  const http = (record: HostRecord | undefined) => {
    const url = record && mcpUrl(record);
    return new vscode.McpHttpServerDefinition(MCP_LABEL, vscode.Uri.parse(url ?? PLACEHOLDER_URL), {}, VERSION);
  };
  const tokens = new ChatTokens();

  const provider: vscode.McpServerDefinitionProvider = {
    onDidChangeMcpServerDefinitions: changed.event,
    provideMcpServerDefinitions() {
      if (!getSetting('mcp.enabled')) return [];
      // The host's own HTTP server serves this machine's sessions; `shared-pty mcp` serves every host of hosts.json too.
      if (!getSetting('http.enabled') || deps.hosts.remotes.hosts().length > 0) return [stdio()];
      return [http(deps.hosts.runningDaemon())];
    },
    async resolveMcpServerDefinition(def) {
      if (!(def instanceof vscode.McpHttpServerDefinition)) return def;
      try {
        const { record, client } = await deps.hosts.daemon();
        const url = mcpUrl(record);
        if (!record.http || !url) return stdio(); // a host started without HTTP: reach it over stdio
        def.uri = vscode.Uri.parse(url);
        def.headers = { ...def.headers, Authorization: `Bearer ${await tokens.tokenFor(record, client)}` };
        return def;
      } catch (e) {
        deps.error('Cannot start the Shared PTY MCP server', e);
        return undefined;
      }
    },
  };

  context.subscriptions.push(
    changed,
    tokens,
    vscode.lm.registerMcpServerDefinitionProvider(Ids.mcpProvider, provider),
    // A new per-user host has a new port and token.
    deps.watcher.onDidPoll((s) => {
      const id = s.hosts.find((h) => h.kind === 'daemon')?.hostId ?? '';
      // …and a changed hosts.json may switch between the HTTP and the stdio server.
      const names = deps.hosts.remotes
        .hosts()
        .map((h) => h.name)
        .join(',');
      if (id !== daemonId || names !== remoteNames) {
        daemonId = id;
        remoteNames = names;
        changed.fire();
      }
    }),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (affects(e, 'mcp.enabled') || affects(e, 'http.enabled')) changed.fire();
    }),
  );
}

/**
 * The chat's credential on `/mcp`: an agent's token for every session, minted over the control
 * socket (`host/agentToken`), never the host's own token, so that whatever the chat's agent may not
 * type through MCP it cannot type through REST, `/rpc` or the stream with the same token either
 * (docs/editor.md#mcp-registration). One per host this window resolved the server on, minted again
 * when it no longer works (revoked, expired, a new host); revoked when the window closes.
 */
class ChatTokens implements vscode.Disposable {
  private _minted: { hostId: string; id: string; token: string; client: RpcClient } | undefined;

  async tokenFor(record: HostRecord, client: RpcClient): Promise<string> {
    const m = this._minted;
    if (m && m.hostId === record.hostId) {
      const { tokens } = await client.call('host/tokens', {});
      if (tokens.some((t) => t.id === m.id)) return m.token;
    }
    // `chat`: the terminal view this chat shows types as the person (VS Code hides app_input from the model).
    const { token, info } = await client.call('host/agentToken', { chat: true });
    this._minted = { hostId: record.hostId, id: info.id, token, client };
    return token;
  }

  dispose(): void {
    const m = this._minted;
    this._minted = undefined;
    // The host outlives the window: the token it minted for this window's chat ends with it.
    if (m) void Promise.resolve(m.client.call('host/revoke', { id: m.id })).catch(() => {});
  }
}
