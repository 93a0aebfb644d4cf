import { invalidParams, serverError } from '../base/errors';
import type { Session } from '../session/session';
import { isAgentCall, type InputSource } from '../session/input-source';

/** What the host does with an agent's write into a session the user opened (CONTRACT §9.6). */
export type AgentApproval = 'allow' | 'ask' | 'deny';
export const AGENT_APPROVALS: readonly AgentApproval[] = ['allow', 'ask', 'deny'];

/** The host's policy for agents' writes. */
export interface AgentPolicy {
  approval: AgentApproval;
  /** Lines an agent may never submit, whatever the approval. */
  denyCommands: readonly RegExp[];
}

/** A policy as settings and `host/agentPolicy` say it: the rules as their sources. */
export function describePolicy(policy: AgentPolicy | undefined): { approval: AgentApproval; denyCommands: string[] } {
  return { approval: policy?.approval ?? 'allow', denyCommands: (policy?.denyCommands ?? []).map((r) => r.source) };
}

/** A policy from its settings; a deny rule that is not a valid regex is a clear error, not a silent gap. */
export function agentPolicy(approval: AgentApproval = 'allow', denyCommands: readonly string[] = []): AgentPolicy {
  const rules = denyCommands.map((source) => {
    try {
      return new RegExp(source);
    } catch (e) {
      throw invalidParams(`Invalid agent deny rule ${JSON.stringify(source)}: ${(e as Error).message}`);
    }
  });
  return { approval, denyCommands: rules };
}

/**
 * Refuses an agent's (MCP) write that the policy does not allow, with nothing written: a line that
 * a deny rule matches, at once whatever the approval; and with `deny`, any write into a session
 * the user opened (sessions an agent opened itself are the agent's). `ask` is `needsAsking`'s.
 */
export function checkAgentWrite(policy: AgentPolicy | undefined, session: Session, from: InputSource, text: string): void {
  if (!policy || !isAgentCall(from)) return;
  for (const line of text.split(/[\r\n]+/).filter(Boolean)) {
    const rule = policy.denyCommands.find((r) => r.test(line));
    if (rule) {
      session.noteAgentDecision(from, 'deny_rule', text);
      throw serverError(`The user does not allow agents to run this in a terminal (deny rule ${rule.source}); nothing was written. Ask the user to run it themselves if it is needed.`, { session: session.id, denied: true });
    }
  }
  if (policy.approval === 'deny' && session.options.origin === 'user') {
    session.noteAgentDecision(from, 'policy_deny', text);
    throw serverError(`The user declined: agents may not type into session ${session.name}, which the user opened (agent approval: deny); nothing was written. Open a session of your own with open_session, or ask the user.`, { session: session.id, denied: true });
  }
}

/** What an agent's write into `session` gets now, and why when that is not the policy (`pty/info`'s agentApproval). */
export function agentApprovalNow(policy: AgentPolicy | undefined, canAsk: boolean, session: Session): { policy: AgentApproval; effective: AgentApproval; reason?: string } {
  const approval = policy?.approval ?? 'allow';
  if (approval === 'allow') return { policy: approval, effective: approval };
  if (session.options.origin !== 'user') return { policy: approval, effective: 'allow', reason: `${session.options.origin === 'agent' ? 'an agent' : 'a script'} opened this session: it is not one the user opened` };
  if (approval === 'deny') return { policy: approval, effective: approval };
  if (session.agentsAllowed) return { policy: approval, effective: 'allow', reason: 'the user allowed agents for this session' };
  if (!canAsk) return { policy: approval, effective: 'allow', reason: NOBODY_TO_ASK };
  return { policy: approval, effective: approval };
}

/** Why `ask` acts as `allow`: said by pty/info and by `serve` at start-up. */
export const NOBODY_TO_ASK = 'no editor window is connected to ask the user, so agents\' writes are allowed (as with allow) until one connects';

/**
 * True when an agent's write into `session` waits for the user's answer: policy `ask`, a session
 * the user opened, not yet allowed for the session, and a window connected to ask in (with none,
 * `ask` acts as the headless policy, `allow`: CONTRACT §9.6).
 */
export function needsAsking(policy: AgentPolicy | undefined, canAsk: boolean, session: Session, from: InputSource): boolean {
  return policy?.approval === 'ask' && isAgentCall(from) && session.options.origin === 'user' && !session.agentsAllowed && canAsk;
}
