import { z } from 'zod';

// Who writes into a session and how it came, declared once as schemas: the TypeScript types are
// inferred from them, and the method table's params and results use the same schemas. This file
// imports nothing of Node, so the browser views can import its types too.

/** Who a caller is: the human's views (`user`), an agent (MCP), or a script (docs/protocol.md#ptyinfo). */
export const origin = z.enum(['user', 'agent', 'script']);
/** Who a caller is: the human's views (`user`), an agent (MCP), or a script. */
export type Origin = z.infer<typeof origin>;

/**
 * How a caller reaches the host: `socket` a session's own socket, `control` the host control
 * socket, `ws-rpc` and `ws-stream` the WebSocket endpoints, `rest` the REST routes, `mcp-http`
 * the `/mcp` endpoint; `mcp-stdio` is `shared-pty mcp`, which relays an agent's calls over the
 * control socket and says so (see core/io/caller.ts); `mcp-app` is the person's keys in the terminal view
 * of MCP Apps (`app_input`), which reach the host through the agent's MCP client but are not the
 * agent's; `secret-page` is the one-time page where the person types a secret.
 */
export const transport = z.enum(['socket', 'control', 'ws-rpc', 'ws-stream', 'rest', 'mcp-http', 'mcp-stdio', 'mcp-app', 'secret-page']);
/** How a caller reaches the host (see `transport`). */
export type Transport = z.infer<typeof transport>;

/**
 * What decided an agent's write into a session the user opened (docs/protocol.md#agent-write-approval): the user's answer
 * (`allowed_once`, `allowed_for_session`, `denied`), no answer in time (`unanswered`), a deny rule
 * (`deny_rule`), or the host's policy: `deny` (`policy_deny`), or `allow`, or `ask` with nobody
 * to ask (`policy_allow`).
 */
export const approvalDecision = z.enum(['allowed_once', 'allowed_for_session', 'denied', 'unanswered', 'deny_rule', 'policy_deny', 'policy_allow']);
/** What decided an agent's write (see `approvalDecision`). */
export type ApprovalDecision = z.infer<typeof approvalDecision>;
