import type { Host } from '../host/host';

/**
 * Starts the host's HTTP server (REST, WebSocket, MCP) when that transport is built in.
 * Kept behind one function so `serve` and the daemon share it.
 */
export async function startHttpFor(host: Host, port: number | undefined): Promise<void> {
  void host;
  void port;
}
