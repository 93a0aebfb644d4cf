import { serverError, sessionExited } from '../base/errors';
import type { Session } from '../session/session';
import { isAgentCall, type InputSource } from '../session/input/input-source';

/** The human counts as typing for this long after their last key (docs/protocol.md#typing-arbitration). */
export const HUMAN_PAUSE_MS = 1500;
/** While the human has a line started, how often the wait looks again (only during an agent's call). */
const LINE_POLL_MS = 250;

/**
 * Typing arbitration (docs/protocol.md#typing-arbitration): an agent's (MCP) write waits while the human is typing in
 * that session (a key from their views in the last 1.5 s, or a line started and not submitted:
 * not for an agent's Ctrl+C alone, `from.abandonsLine`, which clears that line), up to
 * `timeoutMs`, then fails with text that says the user is typing; nothing is written.
 * Scripts and the human's own views are never held. Resolves with the milliseconds waited.
 */
export async function waitForHumanPause(session: Session, from: InputSource, timeoutMs: number, signal?: AbortSignal): Promise<number> {
  if (!isAgentCall(from)) return 0;
  const started = Date.now();
  for (;;) {
    if (!humanTypingNow(session, from)) return Date.now() - started;
    const human = session.humanInput;
    const quietFor = Date.now() - human.lastAt;
    const left = started + timeoutMs - Date.now();
    if (!session.running) throw sessionExited(session.id, `Session ${session.name} ended while the user was typing; nothing was written.`);
    const line = lineHolds(session, from);
    if (left <= 0 || signal?.aborted) {
      throw serverError(
        line
          ? `The user is typing in session ${session.name} (a line they have not submitted yet); nothing was written. Wait for them to finish, or ask them, then try again; a line they left is cleared by send_keys Ctrl+C, which waits only for their pause.`
          : `The user is typing in session ${session.name}; nothing was written. Wait for them to finish, or ask them, then try again.`,
        { session: session.id, userTyping: true },
      );
    }
    const wait = line ? LINE_POLL_MS : HUMAN_PAUSE_MS - quietFor;
    await new Promise((r) => setTimeout(r, Math.max(1, Math.min(wait, left))));
  }
}

/** True when an agent's write would now type over the human: a key of theirs within the pause, or their line not submitted. */
export function humanTypingNow(session: Session, from: InputSource): boolean {
  if (!isAgentCall(from)) return false;
  return lineHolds(session, from) || Date.now() - session.humanInput.lastAt < HUMAN_PAUSE_MS;
}

/** The human's line not submitted holds this write: any but Ctrl+C alone, which abandons the line (InputSource.abandonsLine). */
function lineHolds(session: Session, from: InputSource): boolean {
  return session.humanInput.lineStarted && from.abandonsLine !== true;
}

/** Thrown by whenHumanPaused's guard when the human typed after the admission: nothing was written. */
class HumanTypedMeanwhile extends Error {}

/**
 * Runs `attempt`, an agent's write that waits for its outcome, so that its keys never land in a
 * line the human started after the write was admitted: between the admission and the write the
 * call waits (for the shell's first prompt, for the screen mirror), and the human may type then.
 * `attempt` calls `guard()` in the same turn as its write, before it; when the human typed, nothing
 * is written, the call waits for their pause again (until `deadline`) and runs `attempt` afresh.
 */
export async function whenHumanPaused<T>(
  session: Session,
  from: InputSource,
  deadline: number,
  signal: AbortSignal | undefined,
  attempt: (guard: () => void) => Promise<T>,
): Promise<T> {
  const guard = () => {
    if (humanTypingNow(session, from)) throw new HumanTypedMeanwhile();
  };
  for (;;) {
    try {
      return await attempt(guard);
    } catch (e) {
      if (!(e instanceof HumanTypedMeanwhile)) throw e;
    }
    await waitForHumanPause(session, from, Math.max(0, deadline - Date.now()), signal);
  }
}
