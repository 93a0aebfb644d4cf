import { z } from 'zod';
import { admitWrite } from '../agent/agent-write';
import { DEFAULT_APPROVAL_WAIT_MS, DEFAULT_ARBITRATION_WAIT_MS } from '../base/param-limits';
import type { InputSource } from '../session/input/input-source';
import { requireSession } from './context';
import { method } from './spec';
import type { MethodContext } from './types';

/**
 * Who typed what reaches `pty/appInput`. Through MCP it is the person at the terminal view of MCP
 * Apps: the chat host runs the view's calls of an app-only tool (`_meta.ui.visibility: ["app"]`)
 * for the view alone and never lets the model call it (docs/guarantees.md#the-terminal-in-the-agents-chat),
 * so those keys are the user's, not the agent's whose connection carries them. The MCP layer sends
 * them here only from a client that declared MCP Apps (src/transport/mcp/mcp-tools.ts). Elsewhere
 * nothing vouches for that, and the caller writes as itself.
 */
function personAtTheView(ctx: MethodContext): InputSource | undefined {
  const t = ctx.caller.transport;
  return t === 'mcp-http' || t === 'mcp-stdio' ? { origin: 'user', transport: 'mcp-app' } : undefined;
}

export const appInputMethod = method({
  name: 'pty/appInput',
  target: 'session',
  scope: 'input',
  summary:
    "What the person types in the terminal view of MCP Apps (the app-only tool app_input): written as the user's keys, exactly as given, from a client that declared MCP Apps; from any other, and over any other transport, it is the caller's own write.",
  params: z.object({ data: z.string().min(1).describe("The bytes typed, as the view's terminal produced them (escape sequences included).") }),
  result: z.object({
    written: z.number().describe('UTF-8 bytes written.'),
    secretInput: z.boolean().describe('The program was asking for a secret when they arrived: the view tells the model nothing of what was typed.'),
  }),
  needsRunning: true,
  async handler(ctx, p) {
    const session = requireSession(ctx);
    const secretInput = session.secretInput;
    const person = personAtTheView(ctx);
    if (person) return { written: session.write(p.data, person), secretInput };
    const { from } = await admitWrite(
      ctx.services,
      session,
      ctx.caller,
      p.data,
      { askMs: DEFAULT_APPROVAL_WAIT_MS, pauseMs: DEFAULT_ARBITRATION_WAIT_MS },
      ctx,
    );
    return { written: session.write(p.data, from), secretInput };
  },
  mcp: {
    tool: 'app_input',
    // It types into a shell, or starts a program: anything may follow.
    destructive: true,
    openWorld: true,
    title: "The person's keys (terminal view)",
    description:
      "Only for the terminal view of MCP Apps, hidden from the model: what the person types in the view, written into the session as the user's keys. Agents type with send and send_keys.",
    app: 'feeds',
    text: (r) => `Typed ${r.written} bytes as the user.`,
  },
});
