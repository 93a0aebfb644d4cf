import type { z } from 'zod';
import { invalidParams } from '../base/errors';
import { commandOutputMethod, commandsMethod } from './command-methods';
import { createMethod, hostInfoMethod, listMethod } from './host-methods';
import { resizeMethod, sendMethod, signalMethod, writeMethod } from './input-methods';
import { ackMethod, outputMethod, subscribeMethod, unsubscribeMethod } from './output-methods';
import { readMethod, scrollbackMethod, snapshotMethod, waitMethod } from './screen-methods';
import { infoMethod, keepMethod, killMethod, statusMethod } from './session-methods';
import { eventsMethod, waitEventMethod } from './event-methods';
import { recordMethod, replayMethod } from './record-methods';
import { agentTokenMethod, revokeMethod, shareMethod, tokensMethod, viewUrlMethod } from './token-methods';
import { agentPolicyMethod, approveMethod, watchAgentsMethod } from './approval-methods';
import { appInputMethod } from './app-methods';
import { secretPageMethod } from './secret-methods';
import type { MethodSpec } from './spec';

/**
 * The one table of methods. The JSON-RPC sockets and `/rpc` serve it as it is; the MCP tools,
 * the REST routes, the protocol reference's tables and the typed client are generated from it.
 * A new capability is a new row (or a field of one), not an edit in every transport.
 */
export const METHODS = [
  readMethod,
  writeMethod,
  waitMethod,
  statusMethod,
  resizeMethod,
  killMethod,
  infoMethod,
  scrollbackMethod,
  outputMethod,
  sendMethod,
  commandsMethod,
  commandOutputMethod,
  signalMethod,
  subscribeMethod,
  unsubscribeMethod,
  ackMethod,
  snapshotMethod,
  eventsMethod,
  waitEventMethod,
  recordMethod,
  replayMethod,
  keepMethod,
  viewUrlMethod,
  listMethod,
  createMethod,
  hostInfoMethod,
  shareMethod,
  tokensMethod,
  agentTokenMethod,
  revokeMethod,
  watchAgentsMethod,
  approveMethod,
  agentPolicyMethod,
  appInputMethod,
  secretPageMethod,
] as const;

type AnySpec = (typeof METHODS)[number];
/** Every method's name. */
export type MethodName = AnySpec['name'];
type SpecOf<M extends MethodName> = Extract<AnySpec, { name: M }>;
/** `z.object({})` infers as an index type that admits no field at all: no params is `{}`. */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- `{}` is what a call without params passes
type NoIndex<T> = string extends keyof T ? {} : T;
/** A method's params as a client sends them (on a session socket: the session is implied). */
export type ParamsOf<M extends MethodName> = NoIndex<z.input<SpecOf<M>['params']>>;
/** A method's result. */
export type ResultOf<M extends MethodName> = z.output<SpecOf<M>['result']>;
/** A method's params on a control endpoint: session methods also name their session (some may). */
export type ControlParamsOf<M extends MethodName> = SpecOf<M>['target'] extends 'session'
  ? ParamsOf<M> & { session: string }
  : SpecOf<M>['target'] extends 'session-or-host'
    ? ParamsOf<M> & { session?: string }
    : ParamsOf<M>;

/** The table by name. */
export const METHOD_INDEX: ReadonlyMap<string, MethodSpec> = new Map((METHODS as readonly MethodSpec[]).map((m) => [m.name, m]));

/** Validates raw input against a schema; -32602 with the first problem otherwise (`what` names the call). */
export function parseWith<T>(schema: z.ZodType<T>, raw: unknown, what: string): T {
  const r = schema.safeParse(raw ?? {});
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  const where = issue.path.length ? `${issue.path.join('.')}: ` : '';
  // A custom check may say which value was wrong (an unknown key name: `{ key }`).
  const data = issue.code === 'custom' ? (issue as { params?: Record<string, unknown> }).params : undefined;
  throw invalidParams(`${what}: ${where}${issue.message}`, data);
}

/** Validates raw params against a method's schema (its `quickParams` first, when it has them). */
export function parseParams(spec: MethodSpec, raw: Record<string, unknown>): unknown {
  return spec.quickParams?.(raw) ?? parseWith(spec.params, raw, `Invalid params for ${spec.name}`);
}
