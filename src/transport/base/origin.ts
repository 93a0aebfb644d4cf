/**
 * Whether `value` is exactly a browser origin, `scheme://host[:port]` as a browser sends it in an
 * `Origin` header (scheme and host in lower case, no default port, no path): what an allow-list
 * entry must be to ever match one (docs/protocol.md#access-checks). The one check the CLI's
 * `--allow-origin` and the editor's `sharedPty.allowedOrigins` both apply.
 */
export function isBrowserOrigin(value: string): boolean {
  try {
    return new URL(value).origin === value;
  } catch {
    return false; // not a URL at all
  }
}

/**
 * `text` written as a browser writes the `Origin` it sends (scheme and host in lower case, the
 * scheme's default port and a trailing `/` left out: `HTTPS://App.Example:443/` is
 * `https://app.example`), or undefined when it is more than an origin (a path, a query,
 * credentials) or none (no URL, an opaque origin such as `file:`).
 */
export function asBrowserOrigin(text: string): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return undefined;
  }
  if (url.username || url.password || url.search || url.hash || url.pathname !== '/') return undefined;
  return isBrowserOrigin(url.origin) ? url.origin : undefined;
}
