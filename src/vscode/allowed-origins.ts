// The `sharedPty.allowedOrigins` setting as the daemon's `--allow-origin` takes it. No `vscode`
// import: a plain function, unit-tested against the CLI's own check.
import { asBrowserOrigin } from '../transport/base/origin';

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
    const origin = asBrowserOrigin(text);
    if (origin === undefined) dropped.push(text);
    else if (!origins.includes(origin)) origins.push(origin);
  }
  return { origins, dropped };
}

/** The warning for entries left out, naming them and what an entry must look like. */
export function droppedOriginsWarning(dropped: readonly string[]): string {
  const list = dropped.map((d) => `"${d}"`).join(', ');
  return `sharedPty.allowedOrigins: left out ${list}, not ${dropped.length === 1 ? 'an origin' : 'origins'}: write scheme://host[:port], such as https://example.com or http://localhost:3000`;
}
