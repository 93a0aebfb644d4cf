import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import { FULL_GRANT, oneShotCaller, type Grant } from '../../core/io/caller';
import { outOfReach } from '../../core/methods/access';
import { schemaDefOf } from '../../core/base/internals/zod';
import { invoke } from '../../core/methods/dispatch';
import type { MethodSpec, RestPath, RestProjection } from '../../core/methods/spec';
import { METHODS, parseWith } from '../../core/methods/table';
import type { HostServices } from '../../core/methods/types';
import { decodeSegment, readJsonBody, requestSignal, sendError, sendOk, sendRpcError } from '../base/http-util';


/** One REST route (docs/protocol.md#rest), generated from its method's entry in the table. */
export interface RestRoute {
  method: MethodSpec;
  rest: RestProjection;
  /** What the request is validated against: the route's own input, or the method's params. */
  input: z.ZodObject;
}

/** Every REST route, from the table. */
export const REST_ROUTES: readonly RestRoute[] = (METHODS as readonly MethodSpec[]).flatMap((m) =>
  m.rest ? [{ method: m, rest: m.rest, input: m.rest.input?.schema ?? m.params }] : [],
);

/** The route pattern a path matches (`:id` is any one segment), and the selector in it ('' when malformed). */
function matchPath(pathname: string): { path: RestPath; id?: string } | undefined {
  const parts = pathname.split('/').filter(Boolean);
  if (parts[0] !== 'sessions' || parts.length > 3) return undefined;
  if (parts.length === 1) return { path: '/sessions' };
  const id = decodeSegment(parts[1]) ?? '';
  if (parts.length === 2) return { path: '/sessions/:id', id };
  if (parts[2] === 'write' || parts[2] === 'resize' || parts[2] === 'commands') return { path: `/sessions/:id/${parts[2]}`, id };
  return undefined;
}

/** Serves the REST routes: validation, the call and the envelope, the same for every route. */
export async function handleRest(services: HostServices, req: IncomingMessage, res: ServerResponse, url: URL, grant: Grant = FULL_GRANT): Promise<boolean> {
  const matched = matchPath(url.pathname);
  if (!matched) return false;
  const route = REST_ROUTES.find((r) => r.rest.path === matched.path && r.rest.verb === req.method);
  if (!route) {
    if (matched.id === undefined) return false;
    sendError(res, 'NOT_FOUND', `No route for ${req.method} ${url.pathname}`);
    return true;
  }
  if (matched.id === '') {
    sendError(res, 'BAD_REQUEST', `Malformed session in the path: ${url.pathname}`);
    return true;
  }
  const signal = requestSignal(req, res);
  // Every REST request is a one-shot script call, with what its token allows.
  const caller = oneShotCaller('script', 'rest', grant);
  const call = (method: string, params: Record<string, unknown>) => invoke(method, params, { mode: { kind: 'control' }, services, caller, signal });
  try {
    const raw = route.rest.from === 'query' ? queryParams(url, route.input) : await readJsonBody(req);
    const what = `Invalid ${route.rest.from === 'query' ? 'query' : 'body'} for ${route.rest.verb} ${route.rest.path}`;
    const input = route.rest.input ? (parseWith(route.input, raw, what) as Record<string, unknown>) : raw;
    const own = route.rest.input ? route.rest.input.toParams(input) : { ...route.rest.defaults, ...input };
    const session = matched.id === undefined ? undefined : resolveFor(services, matched.id, grant);
    const id = session?.id ?? '';
    const params = session ? { session: id, ...own } : own;
    const ctx = { id, session, input, call };
    await route.rest.before?.(ctx);
    const result = await call(route.method.name, params);
    sendOk(res, route.rest.respond ? await route.rest.respond(result as never, ctx) : result);
  } catch (e) {
    sendRpcError(res, e);
  }
  return true;
}

/** The session in the path; for a scoped token, any but its own is refused (403), known or not. */
function resolveFor(services: HostServices, selector: string, grant: Grant) {
  try {
    return services.registry.resolve(selector);
  } catch (e) {
    if (grant.onlySession !== undefined) throw outOfReach(grant);
    throw e;
  }
}

/**
 * The query string as the schema's types: numbers as numbers and booleans as booleans (a bare
 * `?strip` is true, `?strip=false` false), so the method's own schema validates them.
 */
function queryParams(url: URL, schema: z.ZodObject): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(schema.shape)) {
    if (!url.searchParams.has(name)) continue;
    const v = url.searchParams.get(name) ?? '';
    const kind = baseType(field as z.ZodType);
    if (kind === 'boolean') out[name] = v !== 'false';
    else if (v === '') continue;
    else out[name] = kind === 'number' ? Number(v) : v;
  }
  return out;
}

/** The JSON type under optional/nullable wrappers. */
function baseType(field: z.ZodType): string {
  const def = schemaDefOf(field);
  return def.innerType && (def.type === 'optional' || def.type === 'nullable' || def.type === 'default') ? baseType(def.innerType) : def.type;
}
