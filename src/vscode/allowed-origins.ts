// The `sharedPty.allowedOrigins` setting as the daemon's `--allow-origin` takes it. No `vscode`
// import: a plain function, unit-tested against the CLI's own check.
import { isBrowserOrigin } from '../transport/base/origin';

/** The setting's entries the daemon can take, and those it cannot (each with why, for the user). */
export interface AllowedOrigins {
  origins: string[];
  dropped: string[];
}

/**
 * The entries of `sharedPty.allowedOrigins` as browser origins: each written as a browser writes
 * the `Origin` it sends (scheme and host in lower case, the scheme's default port left out, no
 * trailing `/`: `https://App.Example:443/` is `https://app.example`); an entry that is still no
 * origin after that (a path, a query, no scheme, not a URL) is dropped, never passed on: the
 * daemon refuses its whole command line over one bad origin (exit 2), and the host would not start.
 */
export function normalizeAllowedOrigins(entries: readonly string[]): AllowedOrigins {
  const origins: string[] = [];
  const dropped: string[] = [];
  // An entry may hold several, comma-separated: the CLI reads its list so, and would split it anyway.
  for (const entry of entries.flatMap((e) => e.split(','))) {
    const text = entry.trim();
    if (!text) continue;
    const origin = asOrigin(text);
    if (origin === undefined) dropped.push(text);
    else if (!origins.includes(origin)) origins.push(origin);
  }
  return { origins, dropped };
}

/** `text` as a browser origin, or undefined when it is more (a path, a query, credentials) or no URL. */
function asOrigin(text: string): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return undefined;
  }
  if (url.username || url.password || url.search || url.hash || url.pathname !== '/') return undefined;
  // Also what the CLI checks: an origin the URL standard makes opaque ("null": file:, data:, a bare host:port) is none.
  return isBrowserOrigin(url.origin) ? url.origin : undefined;
}

/** The warning for entries left out, naming them and what an entry must look like. */
export function droppedOriginsWarning(dropped: readonly string[]): string {
  const list = dropped.map((d) => `"${d}"`).join(', ');
  return `sharedPty.allowedOrigins: left out ${list}, not ${dropped.length === 1 ? 'an origin' : 'origins'}: write scheme://host[:port], such as https://example.com or http://localhost:3000`;
}
