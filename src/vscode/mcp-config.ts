import type { HostRecord } from '../host/discovery';

/** The MCP endpoint of a host's HTTP server. */
export function mcpUrl(record: HostRecord): string | undefined {
  return record.http ? `${record.http.url.replace(/\/+$/, '')}/mcp` : undefined;
}

/**
 * The MCP configuration for external agents (Claude Code, Cursor, …): the stdio server, which finds
 * the running hosts by itself, and the HTTP endpoint of this host with its bearer token (valid while
 * this host runs).
 */
export function mcpConfigSnippet(record: HostRecord | undefined): string {
  const servers: Record<string, unknown> = {
    'shared-pty': { command: 'npx', args: ['shared-pty', 'mcp'] },
  };
  const url = record && mcpUrl(record);
  if (record?.http && url) {
    servers['shared-pty-http'] = { type: 'http', url, headers: { Authorization: `Bearer ${record.http.token}` } };
  }
  return JSON.stringify({ mcpServers: servers }, null, 2);
}
