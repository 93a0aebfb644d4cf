import { declined, sessionExited } from '../base/errors';
import type { IDisposable } from '../base/lifecycle';
import type { Session } from '../session/session';
import { isAgentCall, type ApprovalDecision, type InputSource } from '../session/input/input-source';
import { checkAgentWrite, needsAsking, type AgentPolicy } from './agent-policy';
import type { ApprovalBroker } from './approval';
import type { PersonAsker } from '../io/caller';
import { refuseAgentDuringSecretInput } from './secret-guard';
import { waitForHumanPause } from './typing-arbitration';

/** What the host gives every agent write: its policy, and where it asks the user. */
export interface WriteGuards {
  readonly agentPolicy?: AgentPolicy;
  readonly approvals?: ApprovalBroker;
}

/**
 * An admitted write: the source to write as (it carries the approval decision). How long the
 * admission waited is in the call's own `waitedMs`, counted from the call's start.
 */
export interface Admitted {
  from: InputSource;
}

/** How long a write may wait: for the user's answer (`ask`), and for the user to pause typing. */
export interface WriteWait {
  askMs: number;
  /** At most this, and never past `askMs` from the start. */
  pauseMs: number;
}

/** The key that abandons the line at a prompt (or interrupts the program): `send_keys ["Ctrl+C"]`. */
const CTRL_C = '\x03';

/**
 * Marks an agent's write call in progress on `session` (the editor shows "agent typing" on that
 * terminal while it writes or waits, docs/guarantees.md#sharing-with-control) until the handle is disposed.
 */
export function agentCall(guards: WriteGuards, session: Session, from: InputSource): IDisposable {
  return isAgentCall(from) && guards.approvals ? guards.approvals.agentTyping(session) : { dispose() {} };
}

/**
 * What a write goes through before it reaches the program, in order: deny rules and the `deny`
 * policy, secret input (both refuse at once, nothing written), the user's approval under `ask`
 * (waits up to `wait.askMs` for an answer), then typing arbitration (waits for the user to pause,
 * within what is left; for their line too, unless the write is Ctrl+C alone: InputSource.abandonsLine). Each applies to agents' (MCP) calls only; a write of nothing passes the
 * deny rules only. `call.signal` (the call's abort) is read only for an agent's write.
 */
export function admitWrite(
  guards: WriteGuards,
  session: Session,
  from: InputSource & { personAsker?: PersonAsker },
  text: string,
  wait: WriteWait,
  call?: { readonly signal: AbortSignal },
): Admitted | Promise<Admitted> {
  // Every step applies to agents' calls only: anyone else's write (a key typed in a view, a
  // script's) is admitted in the same turn, without the promises of the steps below (an echo's
  // path allocated ~1.4 KB of them per key, bench/README.md "Issue 25: the echo's request path").
  if (!isAgentCall(from)) return { from };
  return admitAgentWrite(guards, session, from, text, wait, call?.signal);
}

async function admitAgentWrite(
  guards: WriteGuards,
  session: Session,
  from: InputSource & { personAsker?: PersonAsker },
  text: string,
  wait: WriteWait,
  signal?: AbortSignal,
): Promise<Admitted> {
  checkAgentWrite(guards.agentPolicy, session, from, text);
  // A write of nothing (a send that only waits: a task waiting for the person) types over no one
  // and puts nothing into a password prompt: there is nothing to refuse, ask about or hold back.
  // (Refused at a prompt whose secret was typed a moment ago, which the program has not read yet,
  // it used to offer the person a second secret page.)
  if (text === '') return { from };
  await refuseAgentDuringSecretInput(session, from);
  const started = Date.now();
  const approval = await approve(guards, session, from, text, wait.askMs, signal);
  if (approval) from = { origin: from.origin, transport: from.transport, approval, agentToken: from.agentToken };
  // Ctrl+C alone clears the user's line instead of typing into it: the way to clear a line they
  // left (the deny rules' refusal says to send it). It still waits for their pause.
  if (text === CTRL_C) from = { origin: from.origin, transport: from.transport, approval: from.approval, agentToken: from.agentToken, abandonsLine: true };
  const asked = Date.now() - started;
  await waitForHumanPause(session, from, Math.max(0, Math.min(wait.pauseMs, wait.askMs - asked)), signal);
  return { from };
}

/** The approval decision of an agent's write, or undefined when none was needed; throws when refused. */
async function approve(
  guards: WriteGuards,
  session: Session,
  from: InputSource & { personAsker?: PersonAsker },
  text: string,
  waitMs: number,
  signal?: AbortSignal,
): Promise<ApprovalDecision | undefined> {
  if (!isAgentCall(from)) return undefined;
  if (session.agentsAllowed && guards.agentPolicy?.approval === 'ask') return 'allowed_for_session';
  const broker = guards.approvals;
  // No editor window to ask: the agent's own client may ask the person (docs/protocol.md#agent-write-approval).
  const own = from.personAsker ? { asker: from.personAsker, owner: from } : undefined;
  if (!broker || !needsAsking(guards.agentPolicy, broker.canAsk || own !== undefined, session, from)) {
    // Nobody was asked: a session the user opened takes it because the policy allows it (`allow`,
    // or `ask` with nobody to ask), a decision said as the others are; one an agent or a script
    // opened is not the user's to decide about.
    if (session.options.origin !== 'user') return undefined;
    // Said when the write is made (Session.write): until then it may still be refused (the user typing).
    return 'policy_allow';
  }
  // Who was asked, so the refusal points the agent at the right place: an editor window, or its own client.
  const askedWhere = broker.canAsk ? 'the Shared PTY prompt in their editor' : 'the question your MCP client showed them';
  const answer = await broker.ask(session, from, text, waitMs, signal, own);
  if (answer === 'session') session.agentsAllowed = true;
  const decision: ApprovalDecision =
    answer === 'once' ? 'allowed_once' : answer === 'session' ? 'allowed_for_session' : answer === 'deny' ? 'denied' : 'unanswered';
  session.noteAgentDecision(from, decision, text);
  if (answer === 'once' || answer === 'session') {
    // Asking took time: the program may have started to ask for a password meanwhile.
    await refuseAgentDuringSecretInput(session, from);
    return decision;
  }
  if (!session.running) throw sessionExited(session.id, `Session ${session.name} ended while the user was asked; nothing was written.`, { approval: decision });
  throw declined(
    answer === 'deny'
      ? `The user declined: they did not allow the agent to type into session ${session.name}; nothing was written. Ask the user, or open a session of your own with open_session.`
      : `The user declined: nobody allowed the agent to type into session ${session.name} within the call's timeout; nothing was written. Ask the user to answer ${askedWhere}, or open a session of your own with open_session.`,
    { session: session.id, approval: decision },
  );
}
