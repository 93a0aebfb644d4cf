/** Where a JSON-RPC socket listens: a Unix socket path or a loopback TCP port. */
export type Endpoint = { type: 'unix'; path: string } | { type: 'tcp'; host: string; port: number };

/** The address string of an endpoint: `unix:/path` or `tcp:127.0.0.1:PORT`. */
export function formatAddress(ep: Endpoint): string {
  return ep.type === 'unix' ? `unix:${ep.path}` : `tcp:${ep.host}:${ep.port}`;
}

/** Parses `unix:/path`, `tcp:host:port`, a bare path, or `host:port`. */
export function parseAddress(address: string): Endpoint {
  if (address.startsWith('unix:')) return { type: 'unix', path: address.slice(5) };
  const tcp = /^(?:tcp:)?([^:/]+):(\d+)$/.exec(address);
  if (tcp) return { type: 'tcp', host: tcp[1], port: Number(tcp[2]) };
  return { type: 'unix', path: address };
}
