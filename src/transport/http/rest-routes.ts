import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import { oneShotCaller, type Grant } from '../../core/io/caller';
import { reachSession, refusal } from '../../core/methods/access';
import { schemaDefOf } from '../../core/base/internals/zod';
import { invoke } from '../../core/methods/dispatch';
import type { MethodSpec, RestProjection } from '../../core/methods/spec';
import { METHODS, parseWith } from '../../core/methods/table';
import type { HostServices } from '../../core/methods/types';
import { readJsonBody, requestSignal, sendError, sendOk, sendRpcError } from '../base/http-util';

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

/**
 * Serves one REST route the router matched (docs/protocol.md#rest): validation, the call and the
 * envelope, the same for every route. `id` is the path's `:id`, percent-decoded: '' when malformed.
 */
export async function serveRest(
  services: HostServices,
  route: RestRoute,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  grant: Grant,
  id: string | undefined,
): Promise<void> {
  if (id === '') return sendError(res, 'BAD_REQUEST', `Malformed session in the path: ${url.pathname}`);
  const matched = { id };
  const signal = requestSignal(req, res);
  // Every REST request is a one-shot script call, with what its token allows.
  const caller = oneShotCaller('script', 'rest', grant);
  const call = (method: string, params: Record<string, unknown>) => invoke(method, params, { mode: { kind: 'control' }, services, caller, signal });
  try {
    const raw = route.rest.from === 'query' ? queryParams(url, route.input) : await readJsonBody(req);
    const what = `Invalid ${route.rest.from === 'query' ? 'query' : 'body'} for ${route.rest.verb} ${route.rest.path}`;
    const input = route.rest.input ? (parseWith(route.input, raw, what) as Record<string, unknown>) : raw;
    const given = route.rest.input ? route.rest.input.toParams(input) : { ...route.rest.defaults, ...input };
    const own = route.rest.pinned ? { ...given, ...route.rest.pinned(given) } : given;
    const session = matched.id === undefined ? undefined : reachSession(services.registry, grant, matched.id);
    const sessionId = session?.id ?? '';
    const params = session ? { session: sessionId, ...own } : own;
    const ctx = { id: sessionId, session, input, call };
    // A route's first step (DELETE's signal) acts for the method: only for a caller the method
    // admits, refused as the call itself would be (core/methods/access.ts).
    const refused = refusal(caller, route.method);
    if (refused) throw refused;
    await route.rest.before?.(ctx);
    const result = await call(route.method.name, params);
    sendOk(res, route.rest.respond ? await route.rest.respond(result as never, ctx) : result);
  } catch (e) {
    sendRpcError(res, e);
  }
}

/** A number as a query writes it. */
const DECIMAL = /^-?\d+(\.\d+)?$/;

/**
 * The query string as the schema's types: numbers as numbers and booleans as booleans (a bare
 * `?strip` is true, `?strip=false` or `=0` false), so the method's own schema validates them.
 */
function queryParams(url: URL, schema: z.ZodObject): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(schema.shape)) {
    if (!url.searchParams.has(name)) continue;
    const v = url.searchParams.get(name) ?? '';
    const kind = baseType(field as z.ZodType);
    // A bare flag is true; any other spelling than these is passed on as text, and refused (400).
    if (kind === 'boolean') out[name] = v === '' || v === 'true' || v === '1' ? true : v === 'false' || v === '0' ? false : v;
    else if (v === '') continue;
    // Decimal only: `0x10` or `1e3` is text, and refused, as JSON-RPC refuses a string for a number.
    else out[name] = kind === 'number' && DECIMAL.test(v) ? Number(v) : v;
  }
  return out;
}

/** The JSON type under optional/nullable wrappers. */
function baseType(field: z.ZodType): string {
  const def = schemaDefOf(field);
  return def.innerType && (def.type === 'optional' || def.type === 'nullable' || def.type === 'default') ? baseType(def.innerType) : def.type;
}
