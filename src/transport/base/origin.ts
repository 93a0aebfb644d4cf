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
