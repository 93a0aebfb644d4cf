import { decodeSegment } from '../base/http-util';
import type { PageTarget } from './http-security';

/**
 * Who may call a route (docs/protocol.md#access-checks), which decides where its credential may come from:
 * - `open`: no credential; the path's own one-time id is one (the secret page);
 * - `api`: the Bearer header only (REST, `/health`, `/mcp`); a page cookie opens none of them;
 * - `page`: the host's pages and their assets: also a page cookie, or a link's `?token=` traded for one;
 * - `upgrade`: a WebSocket; also `?token=` (a browser's WebSocket sends no header), and a page cookie
 *   where the route says so (`cookie`).
 */
export type RouteAccess = 'open' | 'api' | 'page' | 'upgrade';

/** The `:name` segments of a matched path: raw, and percent-decoded (undefined when malformed). */
export interface RouteParams {
  raw: Readonly<Record<string, string>>;
  decoded: Readonly<Record<string, string | undefined>>;
  /** What `*` matched (the rest of the path, without its leading `/`), or ''. */
  rest: string;
}

/** One HTTP route, declared as data: the verbs, the path, who may call it, and its handler. */
export interface HttpRoute<H> {
  /** The verbs it answers; any other gets "No route" (404), as an unknown path does. `*`: any (the handler answers 405). */
  verbs: readonly string[] | '*';
  /** `/literal/:param/*`: a `:param` is one segment, a trailing `*` one or more. */
  pattern: string;
  access: RouteAccess;
  /** For `page` and cookie-opened `upgrade` routes: which page cookie grant opens it, and whether a link may be traded here. */
  page?: (params: RouteParams) => { target: PageTarget; link: boolean };
  handle: H;
}

/** A route that matched a request, with its params. */
export interface RouteMatch<H> {
  route: HttpRoute<H>;
  params: RouteParams;
}

/**
 * The first route whose verbs and pattern match, or undefined. Matching is by segments of the path
 * as it arrives (no prefix is assumed or stripped), so the same table serves the host behind a proxy
 * that forwards a prefix-free path.
 */
export function matchRoute<H>(routes: readonly HttpRoute<H>[], verb: string, pathname: string): RouteMatch<H> | undefined {
  // Empty segments (`//`, a trailing `/`) are not counted: `/sessions/` is `/sessions`, as REST always took it.
  const segments = pathname.split('/').filter(Boolean);
  for (const route of routes) {
    // HEAD is GET without the body (Node's response leaves the body out by itself).
    if (route.verbs !== '*' && !route.verbs.includes(verb) && !(verb === 'HEAD' && route.verbs.includes('GET'))) continue;
    const params = matchPattern(route.pattern, segments);
    if (params) return { route, params };
  }
  return undefined;
}

function matchPattern(pattern: string, segments: readonly string[]): RouteParams | undefined {
  const parts = pattern.split('/').filter(Boolean);
  const raw: Record<string, string> = {};
  const decoded: Record<string, string | undefined> = {};
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i];
    if (part === '*' && i === parts.length - 1) return segments.length > i ? { raw, decoded, rest: segments.slice(i).join('/') } : undefined;
    const segment = segments[i];
    if (segment === undefined) return undefined;
    if (part.startsWith(':')) {
      raw[part.slice(1)] = segment;
      decoded[part.slice(1)] = decodeSegment(segment);
    } else if (part !== segment) return undefined;
  }
  return segments.length === parts.length ? { raw, decoded, rest: '' } : undefined;
}
