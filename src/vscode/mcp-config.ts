import * as path from 'node:path';
import type { HostRecord } from '../host/discovery';
import { launcherPath, launcherState } from './cli-launcher';

/** The MCP endpoint of a host's HTTP server. */
export function mcpUrl(record: HostRecord): string | undefined {
  return record.http ? `${record.http.url.replace(/\/+$/, '')}/mcp` : undefined;
}

/** How an MCP client starts `shared-pty mcp` (stdio), with absolute paths only. */
export interface StdioLaunch {
  command: string;
  args: string[];
  env?: Record<string, string>;
}

/**
 * The stdio server for agents outside the editor, runnable from any folder: the installed
 * launcher (`sharedPty.installCli`), which follows updates; without it, this version's CLI with
 * the editor's Node (absolute paths, valid until the extension is updated).
 */
export function stdioLaunch(extensionPath: string, home?: string): StdioLaunch & { viaLauncher: boolean } {
  const launcher = launcherPath(home);
  if (launcherState(launcher) === 'ours') return { command: launcher, args: ['mcp'], viaLauncher: true };
  return { command: process.execPath, args: [path.join(extensionPath, 'dist', 'cli.js'), 'mcp'], env: { ELECTRON_RUN_AS_NODE: '1' }, viaLauncher: false };
}

/**
 * The MCP configuration for external agents (Claude Code, Cursor, …): the stdio server only, which
 * finds the running hosts by itself. No HTTP entry: it would carry the host's own token into the
 * clients' configuration files (often kept in a repository), and nothing copied may hold it
 * (README "Security"); HTTP clients read the token from the host's 0600 record (docs/protocol.md#6-mcp).
 */
export function mcpConfigSnippet(stdio: StdioLaunch, runtimeDir: string): string {
  // The runtime directory this editor's hosts use, named: an agent started without the session's
  // XDG_RUNTIME_DIR (by a service, over ssh) would look elsewhere and find no host.
  const env = { ...stdio.env, SHARED_PTY_DIR: runtimeDir };
  const servers: Record<string, unknown> = { 'shared-pty': { command: stdio.command, args: stdio.args, env } };
  return JSON.stringify({ mcpServers: servers }, null, 2);
}
