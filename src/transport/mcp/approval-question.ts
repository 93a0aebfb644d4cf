import type { ApprovalQuestion } from '../../core/agent/approval-request';
import type { Choice, PersonPrompt } from './mcp-elicit';

/** The person's answers, as the editor's question offers them (docs/protocol.md#agent-write-approval). */
const CHOICES: readonly Choice<'once' | 'session' | 'deny'>[] = [
  { value: 'once', title: 'Allow once' },
  { value: 'session', title: 'Allow for this session' },
  { value: 'deny', title: 'Deny' },
];

/** Most characters of the text shown in the question; the rest is counted, not shown. */
const MAX_SHOWN_CHARS = 500;

/** The question as the agent's own client is asked it (`agent/approval` without a watching window). */
export type { ApprovalQuestion } from '../../core/agent/approval-request';

/**
 * Asks the person, through the agent's own client (form elicitation), whether the agent may type
 * `text` into their session. Declined, dismissed or unanswerable is Deny: nothing is written
 * unless the person said so.
 */
export async function askPersonToApprove(prompt: PersonPrompt, q: ApprovalQuestion, signal?: AbortSignal): Promise<'once' | 'session' | 'deny'> {
  if (!prompt.choose) return 'deny';
  const shown = q.text.length > MAX_SHOWN_CHARS ? `${JSON.stringify(q.text.slice(0, MAX_SHOWN_CHARS))}… (${q.text.length} characters)` : JSON.stringify(q.text);
  const message = `Your agent wants to type into the terminal ${q.name}, which you opened (Shared PTY):\n${shown}\nAllow it?`;
  try {
    return (await prompt.choose(message, CHOICES, signal)) ?? 'deny';
  } catch {
    return 'deny';
  }
}
