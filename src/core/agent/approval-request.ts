import { z } from 'zod';
import { origin, transport } from '../session/input/input-kinds';

// The words of agent write approval (docs/protocol.md#agent-write-approval), declared once as
// schemas: the types are inferred from them, and the method table and its notifications use the
// same schemas. Nothing of Node here, so the browser views can import the types too.

/** What the user answers when an agent asks to type: Allow once / for this session / Deny. */
export const approvalAnswer = z.enum(['once', 'session', 'deny']);
/** What the user answers when an agent asks to type. */
export type ApprovalAnswer = z.infer<typeof approvalAnswer>;

/** The host's policy for agents' writes into sessions the user opened. */
export const agentApproval = z.enum(['allow', 'ask', 'deny']);
/** The host's policy for agents' writes into sessions the user opened. */
export type AgentApproval = z.infer<typeof agentApproval>;

/** An agent's write waiting for the user's answer, as the editor windows are told of it (`agent/approval`). */
export const approvalRequest = z
  .object({
    id: z.string(),
    session: z.string().describe("The session's id."),
    name: z.string().describe("The session's name."),
    text: z.string().describe('What the agent wants to type, exactly.'),
    origin,
    transport,
    at: z.string().describe('When it was asked, ISO 8601.'),
  })
  .meta({ title: 'ApprovalRequest' });
/** An agent's write waiting for the user's answer. */
export type ApprovalRequest = z.infer<typeof approvalRequest>;

/**
 * The same question put to the agent's own client (it declared `client.asks`: its person answers
 * through form elicitation): what it shows the person, without who asks or how.
 */
export const approvalQuestion = approvalRequest.pick({ id: true, session: true, name: true, text: true }).meta({ title: 'ApprovalQuestion' });
/** An approval question put to the agent's own client. */
export type ApprovalQuestion = z.infer<typeof approvalQuestion>;
