import { randomUUID } from 'node:crypto';
import type { PersonPrompt } from './mcp-elicit';
import type { ToolBackend } from './tool-backend';

/** What the agent is told when no page reaches the person. */
const TYPE_IN_TERMINAL = ' Ask the person to type it in the terminal themselves; never ask them for the secret itself.';

/**
 * When an agent's write is refused because the program asks for a secret: a one-time secret page
 * of the host (docs/protocol.md#secret-pages) for the person, so the secret never passes the
 * agent. A client with URL-mode elicitation asks the person to open it (`asks`: the program's
 * prompt line, shown in the question); otherwise no page is made, and the person types the
 * secret in the terminal. Returns what to add to the refusal ('' when the host has no page to
 * offer: it serves no HTTP, or the prompt is already gone).
 */
export async function offerSecretPage(backend: ToolBackend, prompt: PersonPrompt, session: string, asks?: string): Promise<string> {
  // The link goes to the person through the client, never into a result the model reads: with
  // it the agent could type the secret itself (the page asks for nothing else).
  if (!prompt.openUrl) return TYPE_IN_TERMINAL;
  let link: { url: string; expiresAt: string };
  try {
    link = (await backend.call('pty/secretPage', { session })) as typeof link;
  } catch {
    return '';
  }
  try {
    // What the program shows (its prompt line, never an answer: echo is off) tells the person which secret.
    const shown = asks ? ` It asks: ${JSON.stringify(asks)}.` : '';
    const message = `A program in your shared terminal asks for a password or passphrase.${shown} Open this page of Shared PTY to type it straight into the terminal: the agent never sees it.`;
    const action = await prompt.openUrl(message, link.url, randomUUID());
    return action === 'accept'
      ? ' The person was asked through your MCP client to type it on a one-time page of the host, and opened it: wait for the program to go on (wait_for, or list_sessions until it no longer shows secret-input), never ask for the secret itself.'
      : ' The person was offered a one-time page of the host to type it and did not open it: ask them to type it in the terminal.';
  } catch {
    // The client did not answer the question: the terminal is the way left.
  }
  return TYPE_IN_TERMINAL;
}
