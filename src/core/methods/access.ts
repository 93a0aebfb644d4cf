import { forbidden, type RpcError } from '../base/errors';
import type { Grant, TokenScope } from '../io/caller';
import type { Session } from '../session/session';
import type { SessionRegistry } from '../session/registry';
import type { MethodScope, MethodSpec } from './spec';

/** Each token scope and the method scopes it allows (docs/protocol.md#ptyrecord: each allows what the ones before it do). */
const ALLOWS: Readonly<Record<TokenScope, readonly MethodScope[]>> = {
  view: ['read'],
  input: ['read', 'input'],
  control: ['read', 'input', 'control'],
};

/** The token scope a method needs, as the user names it (`shared-pty share --scope`). */
export function scopeNeeded(spec: MethodSpec): TokenScope {
  return spec.scope === 'read' ? 'view' : spec.scope;
}

/**
 * Why `grant` may not call `spec` at all (whatever its params), or undefined when it may. A
 * scoped token reaches host methods only where they show just its session (`scopedToken: 'filtered'`);
 * an agent's token for every session reaches those and the ones its tools need (`agentToken: 'allowed'`).
 */
export function refusal(grant: Grant, spec: MethodSpec): RpcError | undefined {
  // A method only the host's own token reaches says so first: naming a scope would suggest a
  // token of that scope could call it.
  const scoped = grant.onlySession !== undefined || grant.everySession === true;
  const hostMethodOpen = spec.scopedToken === 'filtered' || (grant.everySession === true && spec.agentToken === 'allowed');
  if (scoped && (spec.scopedToken === 'never' || (spec.target === 'host' && !hostMethodOpen))) {
    const reach = grant.everySession ? "an agent's token reaches the sessions only" : `this token reaches only session ${grant.onlySession}`;
    return forbidden(`${spec.name} needs the host's own token; ${reach}`);
  }
  if (!ALLOWS[grant.scope].includes(spec.scope)) {
    return forbidden(`${spec.name} needs the "${scopeNeeded(spec)}" scope; this token has "${grant.scope}"`);
  }
  // The host's own token and the sockets: every method.
  return undefined;
}

/**
 * The session `selector` names, as `grant` may reach it: the one rule every surface asks (the
 * method table, REST's path, the stream's and the view's URLs). An unknown or ambiguous selector is
 * -32001; for a token bound to one session, any other is -32004, known or not (a token learns
 * nothing of the others).
 */
export function reachSession(registry: SessionRegistry, grant: Grant, selector: string): Session {
  let session: Session;
  try {
    session = registry.resolve(selector);
  } catch (e) {
    if (grant.onlySession !== undefined) throw outOfReach(grant);
    throw e;
  }
  checkReach(grant, session);
  return session;
}

/**
 * Whether a `session` param on a session's own socket names that session, as the control socket
 * would resolve it (an exact name first: a prefix of this id that is another session's name names
 * that one); its own id or name when the host no longer lists it.
 */
export function namesSession(selector: unknown, session: Session, registry: SessionRegistry): boolean {
  if (typeof selector !== 'string' || selector === '') return false;
  try {
    return registry.resolve(selector).id === session.id;
  } catch {
    return selector === session.id || selector === session.name;
  }
}

/** How many sessions `grant` reaches: all of them, or for a token bound to one session its own (1, or 0 once it ended). */
export function sessionsInReach(registry: SessionRegistry, grant: Grant): number {
  if (grant.onlySession === undefined) return registry.size;
  return registry.get(grant.onlySession) ? 1 : 0;
}

/** Refuses a call about `session` from a token bound to another one. */
export function checkReach(grant: Grant, session: Session | undefined): void {
  if (grant.onlySession !== undefined && session?.id !== grant.onlySession) throw outOfReach(grant);
}

/** The refusal of a session a scoped token does not reach (unknown or not: a token learns nothing of others). */
export function outOfReach(grant: Grant): RpcError {
  return forbidden(`this token reaches only session ${grant.onlySession}`);
}
