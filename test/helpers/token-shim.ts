// A loopback proxy in front of a host's HTTP server that adds its token: a client that has no way
// to send one (the MCP conformance suite's) reaches the host as one configured with the token
// would. Host and Origin headers that name the shim become the host's own; any other value goes
// through unchanged, so the host's own checks (DNS rebinding, foreign origins) still decide.
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface TokenShim {
  url: string;
  close(): Promise<void>;
}

/** Starts the shim on 127.0.0.1 (a free port) in front of `127.0.0.1:port`. */
export async function startTokenShim(port: number, token: string): Promise<TokenShim> {
  const server = http.createServer((req, res) => {
    const own = (server.address() as AddressInfo).port;
    const headers: http.OutgoingHttpHeaders = { ...req.headers, authorization: `Bearer ${token}` };
    const retarget = (v: string | undefined) => v?.replace(new RegExp(`^(https?://)?(127\\.0\\.0\\.1|localhost|\\[::1\\]):${own}$`), `$1$2:${port}`);
    headers.host = retarget(req.headers.host);
    if (req.headers.origin !== undefined) headers.origin = retarget(req.headers.origin);
    const upstream = http.request({ host: '127.0.0.1', port, method: req.method, path: req.url, headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
