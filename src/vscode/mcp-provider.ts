import * as path from 'node:path';
import * as vscode from 'vscode';
import type { HostRecord } from '../host/discovery';
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
  const http = (record: HostRecord | undefined) => {
    const url = record && mcpUrl(record);
    const headers: Record<string, string> = record?.http ? { Authorization: `Bearer ${record.http.token}` } : {};
    return new vscode.McpHttpServerDefinition(MCP_LABEL, vscode.Uri.parse(url ?? PLACEHOLDER_URL), headers, VERSION);
  };

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
        const { record } = await deps.hosts.daemon();
        const url = mcpUrl(record);
        if (!record.http || !url) return stdio(); // a host started without HTTP: reach it over stdio
        def.uri = vscode.Uri.parse(url);
        def.headers = { ...def.headers, Authorization: `Bearer ${record.http.token}` };
        return def;
      } catch (e) {
        deps.error('Cannot start the Shared PTY MCP server', e);
        return undefined;
      }
    },
  };

  context.subscriptions.push(
    changed,
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
