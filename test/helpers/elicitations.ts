// An MCP client (the official SDK's) that answers the server's questions as a test says.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ElicitRequestSchema, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';

/** What the server asked `client`, in order, and what it answers next (cancel until told). */
export interface Elicitations {
  questions: any[];
  answer: { next: ElicitResult };
}

/** Makes `client` (which declared elicitation, not yet connected) answer every question with `answer.next`, and keep each. */
export function answerElicitations(client: Client): Elicitations {
  const questions: any[] = [];
  const answer = { next: { action: 'cancel' } as ElicitResult };
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    questions.push(req.params);
    return answer.next;
  });
  return { questions, answer };
}
