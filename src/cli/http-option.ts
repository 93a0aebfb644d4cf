import type { Host } from '../host/host';
import { startHttpServer } from '../transport/http/http-server';

/** Starts the host's HTTP server (REST, WebSocket, MCP, browser view) and shows it in the record. */
export async function startHttpFor(host: Host, port: number | undefined, allowedOrigins?: string[]): Promise<void> {
  const { maxHttpConnections, maxInFlightRequests, maxLineBytes } = host.options;
  const http = await startHttpServer(host, {
    hostId: host.hostId,
    port,
    allowedOrigins,
    maxConnections: maxHttpConnections,
    maxInFlightRequests,
    maxLineBytes,
  });
  host.attachHttp(http);
}
