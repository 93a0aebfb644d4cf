// How the host's pages are reached through an editor's port proxy (docs/protocol.md#pages-behind-an-editors-proxy):
// code-server's `/proxy/<port>/` strips its prefix, `/absproxy/<port>/` keeps it, a domain proxy
// (`<port>.example.com`) or a port forward (VS Code's asExternalUri) keeps the path; each keeps the
// browser's Host and Origin and adds no X-Forwarded-* header.

/**
 * Whether `host` (a request's Host header, lower case) is one of the host's own addresses: the
 * names a browser on this machine uses for 127.0.0.1:port. Any other Host came through a proxy
 * or a port forward (or from a DNS-rebinding page, which holds no link and no cookie).
 */
export function isOwnHost(host: string, port: number): boolean {
  return host === `127.0.0.1:${port}` || host === `localhost:${port}` || host === `[::1]:${port}`;
}

/**
 * A path prefix a proxy kept (code-server's `/absproxy/<port>`, after any `--abs-proxy-base-path`),
 * and the path without it. Only the host's own port counts, so no other path of ours is mistaken
 * for one: none of the host's routes has a `proxy` segment.
 */
export function splitProxyPrefix(pathname: string, port: number): { prefix: string; path: string } {
  const m = new RegExp(`^((?:/[^/]+)*?/(?:abs)?proxy/${port})(/.*)$`).exec(pathname);
  return m ? { prefix: m[1], path: m[2] } : { prefix: '', path: pathname };
}

/**
 * Whether an Origin is the page's own origin as the browser sees it through a proxy: the same
 * host and port as the request's Host, over http or https (code-server's own rule for its
 * WebSockets). Any other origin is a cross-site page.
 */
export function isSameOriginAs(origin: string, host: string): boolean {
  return origin === `http://${host}` || origin === `https://${host}`;
}
