import type { Session } from '../session/session';
import type { InputSource } from '../session/input-source';
import { checkAgentWrite, type AgentPolicy } from './agent-policy';
import { refuseAgentDuringSecretInput } from './secret-guard';
import { waitForHumanPause } from './typing-arbitration';

/**
 * What a write goes through before it reaches the program, in order: the host's approval policy
 * and deny rules, secret input (both refuse at once, nothing written), then typing arbitration (waits
 * up to `waitMs` for the user to pause). Each applies to agents' (MCP) calls only. Resolves with the
 * milliseconds waited, which a send takes off its own timeout.
 */
export async function admitWrite(policy: AgentPolicy | undefined, session: Session, from: InputSource, text: string, waitMs: number, signal?: AbortSignal): Promise<number> {
  checkAgentWrite(policy, session, from, text);
  await refuseAgentDuringSecretInput(session, from);
  return waitForHumanPause(session, from, waitMs, signal);
}
