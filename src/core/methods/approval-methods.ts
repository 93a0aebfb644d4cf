import { z } from 'zod';
import { forbidden, invalidParams } from '../base/errors';
import { agentApproval, approvalAnswer, approvalRequest } from '../agent/approval-request';
import { agentPolicy, describePolicy } from '../agent/agent-policy';
import { ClientLink } from '../io/client-link';
import { isAgentCall } from '../session/input/input-source';
import type { MethodContext } from './types';
import { byDefaultSays } from './schemas';
import { method } from './spec';

/** Only the user answers: not an agent (its own approval would mean nothing), and not a scoped token. */
function requireUserSide(ctx: MethodContext, name: string): void {
  if (isAgentCall(ctx.caller)) throw forbidden(`${name} is the user's: an agent cannot answer its own approval requests`);
}

export const watchAgentsMethod = method({
  name: 'host/watchAgents',
  target: 'host',
  scope: 'control',
  summary:
    "Answer agents' approval requests and follow agent typing (the editor does): notifications agent/approval (an ApprovalRequest), agent/approvalEnded {id, decision?}, agent/typing {session, typing}; until the connection closes.",
  params: z.object({}),
  result: z.object({
    pending: z.array(approvalRequest).describe('Requests already waiting for an answer.'),
    typing: z.array(z.string()).describe("Ids of sessions with an agent's write call in progress."),
  }),
  handler(ctx) {
    requireUserSide(ctx, 'host/watchAgents');
    const broker = ctx.services.approvals;
    if (!broker) return { pending: [], typing: [] };
    if (!(ctx.caller instanceof ClientLink)) throw invalidParams('host/watchAgents needs a connection that receives notifications (a socket or a WebSocket)');
    ctx.caller.watchAgents(broker);
    return { pending: broker.pending(), typing: broker.typingSessions() };
  },
});

export const approveMethod = method({
  name: 'host/approve',
  target: 'host',
  scope: 'control',
  summary: "The user's answer to an agent's approval request: once (Allow once), session (Allow for this session) or deny.",
  params: z.object({ id: z.string().min(1), decision: approvalAnswer }),
  result: z.object({ decided: z.boolean().describe('false: the request was no longer waiting (answered elsewhere, timed out, or its caller left).') }),
  handler(ctx, p) {
    // An agent's relay answers only what its own client asked the person (ClientDeclaration.asks).
    if (isAgentCall(ctx.caller) && ctx.caller.personAsker) {
      if (ctx.services.approvals?.answer(p.id, p.decision, ctx.caller)) return { decided: true };
      throw forbidden("host/approve is the user's: an agent's client answers only the questions it put to its person, while they wait");
    }
    requireUserSide(ctx, 'host/approve');
    return { decided: ctx.services.approvals?.answer(p.id, p.decision) ?? false };
  },
});

const policyShape = {
  approval: agentApproval,
  denyCommands: z.array(z.string()).describe('Regular expressions of lines an agent may never submit.'),
};

export const agentPolicyMethod = method({
  name: 'host/agentPolicy',
  target: 'host',
  scope: 'control',
  summary:
    "The host's policy for agents' writes: read it, or set it (the editor sets its settings sharedPty.agent.approval and denyCommands on its per-user host, at once).",
  params: z.object({
    approval: byDefaultSays('unchanged', policyShape.approval.optional()),
    denyCommands: byDefaultSays('unchanged', policyShape.denyCommands.optional()),
  }),
  result: z.object({
    ...policyShape,
    canAsk: z.boolean().describe('A window watches this host to ask the user (host/watchAgents); without one, ask acts as allow.'),
  }),
  handler(ctx, p) {
    if (p.approval !== undefined || p.denyCommands !== undefined) {
      requireUserSide(ctx, 'host/agentPolicy');
      const now = describePolicy(ctx.services.agentPolicy);
      // A rule that is not a regex is a clear error, and the policy stays as it was.
      ctx.services.agentPolicy = agentPolicy(p.approval ?? now.approval, p.denyCommands ?? now.denyCommands);
    }
    return { ...describePolicy(ctx.services.agentPolicy), canAsk: ctx.services.approvals?.canAsk ?? false };
  },
});
