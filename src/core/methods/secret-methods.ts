import { z } from 'zod';
import { forbidden, serverError } from '../base/errors';
import { isAgentCall, isMcpCall } from '../session/input/input-source';
import { requireSession } from './context';
import { method } from './spec';

export const secretPageMethod = method({
  name: 'pty/secretPage',
  target: 'session',
  scope: 'input',
  summary:
    'While the program asks for a secret: a one-time link of the host (/secret/<id>, five minutes, once) where the person types it straight into the terminal; the caller never sees it (MCP offers it through URL-mode elicitation).',
  params: z.object({}),
  result: z.object({
    url: z.string().describe("The page, on the host's own origin: for the person to open."),
    expiresAt: z.string().describe('When it stops working, ISO 8601.'),
  }),
  needsRunning: true,
  async handler(ctx) {
    const session = requireSession(ctx);
    // The page is the person's: an MCP server offers it to them through its client (URL-mode
    // elicitation), never to the model. An agent asking on another surface, with its token, would
    // get a link to type the secret itself.
    if (isAgentCall(ctx.caller) && !isMcpCall(ctx.caller))
      throw forbidden('a secret page is for the person, not an agent: ask the user to type the secret in the terminal');
    const pages = ctx.services.secretPages;
    if (!pages)
      throw serverError('This host serves no HTTP (started with --no-http): it has no secret page; the user must type the secret in the terminal', {
        session: session.id,
      });
    if ((await session.inputWatch.probeNow()) !== 'secret_input') {
      throw serverError(`The program in session ${session.name} does not ask for a secret now: there is nothing to type on a secret page`, {
        session: session.id,
        secretInput: false,
      });
    }
    return pages.open(session);
  },
});
