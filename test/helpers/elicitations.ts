// An MCP client (the official SDK's) that answers the server's questions as a test says.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ElicitRequestSchema, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';

/** What the server asked `client`, in order, and what it answers next (cancel until told; `never`: a person who does not answer). */
export interface Elicitations {
  questions: any[];
  answer: { next: ElicitResult | 'never' };
}

/** Makes `client` (which declared elicitation, not yet connected) answer every question with `answer.next`, and keep each. */
export function answerElicitations(client: Client): Elicitations {
  const questions: any[] = [];
  const answer: Elicitations['answer'] = { next: { action: 'cancel' } };
  client.setRequestHandler(ElicitRequestSchema, async (req, extra) => {
    questions.push(req.params);
    const next = answer.next;
    if (next !== 'never') return next;
    // Until the server takes the question back (its call timed out), as a person who walked away.
    await new Promise((r) => extra.signal.addEventListener('abort', r, { once: true }));
    return { action: 'cancel' };
  });
  return { questions, answer };
}
