import { randomUUID } from 'node:crypto';
import type { PersonPrompt } from './mcp-elicit';
import type { ToolBackend } from './mcp-tools';

/**
 * When an agent's write is refused because the program asks for a secret: a one-time secret page
 * of the host (docs/protocol.md#secret-pages) for the person, so the secret never passes the
 * agent. A client with URL-mode elicitation asks the person to open it (`asks`: the program's
 * prompt line, shown in the question); otherwise the refusal
 * carries the link, for the agent to hand to the person. Returns what to add to the refusal
 * ('' when the host has no page to offer: it serves no HTTP, or the prompt is already gone).
 */
export async function offerSecretPage(backend: ToolBackend, prompt: PersonPrompt, session: string, asks?: string): Promise<string> {
  let link: { url: string; expiresAt: string };
  try {
    link = (await backend.call('pty/secretPage', { session })) as typeof link;
  } catch {
    return '';
  }
  if (prompt.openUrl) {
    try {
      // What the program shows (its prompt line, never an answer: echo is off) tells the person which secret.
      const shown = asks ? ` It asks: ${JSON.stringify(asks)}.` : '';
      const message = `A program in your shared terminal asks for a password or passphrase.${shown} Open this page of Shared PTY to type it straight into the terminal: the agent never sees it.`;
      const action = await prompt.openUrl(message, link.url, randomUUID());
      return action === 'accept'
        ? ' The person was asked through your MCP client to type it on a one-time page of the host, and opened it: wait for the program to go on (wait_for, or list_sessions until it no longer shows secret-input), never ask for the secret itself.'
        : ' The person was offered a one-time page of the host to type it and did not open it: ask them to type it in the terminal.';
    } catch {
      // The client did not answer the question: the link itself is the way left.
    }
  }
  return ` The person can type it on a one-time page of the host instead (it works once, until ${link.expiresAt}, and only while the program asks): ${link.url} — give them this link; never ask them for the secret itself.`;
}
