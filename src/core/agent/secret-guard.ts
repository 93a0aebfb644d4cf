import { serverError } from '../base/errors';
import { isAgentCall, type InputSource } from '../session/input/input-source';
import type { Session } from '../session/session';

/**
 * Refuses an agent's write (MCP `send`, `send_keys`) while the program asks for a secret
 * (docs/protocol.md#secret-input): a password is the user's to type, and nothing is written. The job is probed
 * afresh, so a prompt that appeared a moment ago counts and one answered a moment ago does not.
 * Scripts (JSON-RPC, REST) and the human's views write as always.
 */
export async function refuseAgentDuringSecretInput(session: Session, from: InputSource): Promise<void> {
  if (!isAgentCall(from) || !session.running) return;
  if ((await session.inputWatch.probeNow()) !== 'secret_input') return;
  throw serverError(
    // What to do next must hold whether the user answers after this refusal or already did before
    // the agent reads it: a wait_event started now would miss an answer given meanwhile.
    `The program in session ${session.name} asks for a secret (a password or passphrase) that the user must type in the terminal; nothing was written. Ask the user to type it. To go on, call send or send_keys again: while the program still asks, it is refused like this with nothing written, and once the user has answered (before or after now) it goes through. list_sessions shows "secret-input" while the program asks; with shell integration, list_commands shows when the command has finished.`,
    { session: session.id, secretInput: true },
  );
}
