// Calls as the agent-write tests make them: a script's (the test's own) and an agent's, the way
// `shared-pty mcp` relays an MCP tool call over the control socket (`client: { origin: "agent",
// transport: "mcp-stdio" }`), and sessions opened as the user or as an agent.
import type { RpcClient } from '../../src/transport/client/rpc-client';
import { BASH, until } from './host';

/** What `shared-pty mcp` says about itself on every relayed call. */
export const AGENT = { origin: 'agent', transport: 'mcp-stdio' } as const;

export function agentCalls(script: RpcClient, agent: RpcClient) {
  const rpc = (method: string, params: Record<string, unknown>) => script.request<any>(method, params);
  return {
    rpc,
    agentRpc: (method: string, params: Record<string, unknown>) => agent.request<any>(method, { ...params, client: AGENT }),
    /** A bash opened by `origin`, once its prompt shows; resolves with its id. */
    async open(origin: 'user' | 'agent'): Promise<string> {
      const info = await rpc('session/create', { ...BASH, cols: 80, rows: 24, origin });
      await until(async () => (await rpc('pty/read', { session: info.id })).screen.includes('$'), 10_000, 'a prompt');
      return info.id as string;
    },
  };
}
