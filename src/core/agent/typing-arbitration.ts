import { serverError } from '../base/errors';
import type { Session } from '../session/session';
import { isAgentCall, type InputSource } from '../session/input/input-source';

/** The human counts as typing for this long after their last key (docs/protocol.md#typing-arbitration). */
export const HUMAN_PAUSE_MS = 1500;
/** How long an agent's write without a timeout of its own (send_keys, a raw write) waits for the human. */
export const DEFAULT_ARBITRATION_WAIT_MS = 15_000;
/** While the human has a line started, how often the wait looks again (only during an agent's call). */
const LINE_POLL_MS = 250;

/**
 * Typing arbitration (docs/protocol.md#typing-arbitration): an agent's (MCP) write waits while the human is typing in
 * that session (a key from their views in the last 1.5 s, or a line started and not submitted),
 * up to `timeoutMs`, then fails with text that says the user is typing; nothing is written.
 * Scripts and the human's own views are never held. Resolves with the milliseconds waited.
 */
export async function waitForHumanPause(session: Session, from: InputSource, timeoutMs: number, signal?: AbortSignal): Promise<number> {
  if (!isAgentCall(from)) return 0;
  const started = Date.now();
  for (;;) {
    const human = session.humanInput;
    const quietFor = Date.now() - human.lastAt;
    if (!human.lineStarted && quietFor >= HUMAN_PAUSE_MS) return Date.now() - started;
    const left = started + timeoutMs - Date.now();
    if (left <= 0 || signal?.aborted || !session.running) {
      throw serverError(
        `The user is typing in session ${session.name}${human.lineStarted ? ' (a line they have not submitted yet)' : ''}; nothing was written. Wait for them to finish, or ask them, then try again.`,
        { session: session.id, userTyping: true },
      );
    }
    const wait = human.lineStarted ? LINE_POLL_MS : HUMAN_PAUSE_MS - quietFor;
    await new Promise((r) => setTimeout(r, Math.max(1, Math.min(wait, left))));
  }
}
