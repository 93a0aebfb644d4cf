import type { ClientCapabilities, McpServer, ServerContext } from '@modelcontextprotocol/server';

// Asking the person through the agent's own MCP client (elicitation, docs/protocol.md#6-mcp): the
// only place that knows how the SDK sends `elicitation/create` and reads what the client declared.
// Server-initiated elicitation exists on 2025-11-25 connections only (stdio after `initialize`);
// a 2026-07-28 request is asked through its multi-round-trip `input_required` answers instead
// (tool-run.ts, mcp-tasks.ts; docs/protocol.md#tasks-and-input-rounds).

/** Where a 2026-07-28 request carries its client's capabilities (its `_meta` envelope). */
const CAPABILITIES_KEY = 'io.modelcontextprotocol/clientCapabilities';

/** The person's answer to an elicitation: they went along, said no, or dismissed it. */
export type ElicitAction = 'accept' | 'decline' | 'cancel';

/** One choice of a form question: the value sent back, and the words the person sees. */
export interface Choice<T extends string> {
  value: T;
  title: string;
}

/** What the agent's client can ask the person, as it declared (each undefined when it cannot). */
export interface PersonPrompt {
  /** URL mode: asks the person to open `url` (a page of ours); resolves with what they did. */
  openUrl?(message: string, url: string, elicitationId: string): Promise<ElicitAction>;
  /** Form mode, one question with `choices`: the value chosen, or undefined when they declined or dismissed it. */
  choose?<T extends string>(message: string, choices: readonly Choice<T>[], signal?: AbortSignal): Promise<T | undefined>;
}

/**
 * Whether the client declared MCP Apps (the `io.modelcontextprotocol/ui` extension), and with it
 * that it keeps app-only tools from the model; undefined when its capabilities are not known here
 * (a stateless `/mcp` request of the 2025-11-25 revision carries none).
 */
export function clientDeclaresApps(server: McpServer, ctx: ServerContext | undefined, extensionId: string): boolean | undefined {
  const declared =
    server.server.getClientCapabilities() ??
    ((ctx?.mcpReq.envelope as Record<string, unknown> | undefined)?.[CAPABILITIES_KEY] as ClientCapabilities | undefined);
  if (!declared) return undefined;
  return (declared.extensions as Record<string, unknown> | undefined)?.[extensionId] !== undefined;
}

/** The field of the one-question form. */
const ANSWER_FIELD = 'answer';

/**
 * How the person behind `server`'s client can be asked: during the tool call `ctx` (the question
 * travels with that call), or outside any call (the relay asked by its host). Only a client that
 * initialized a 2025-11-25 connection (its capabilities known to the server) is asked. A client
 * that declared `elicitation: {}` supports form mode, as the specification says.
 */
export function personPrompt(server: McpServer, ctx?: ServerContext): PersonPrompt {
  const declared = server.server.getClientCapabilities()?.elicitation as { form?: object; url?: object } | undefined;
  if (!declared) return {};
  const form = declared.form !== undefined || Object.keys(declared).length === 0;
  const elicit: McpServer['server']['elicitInput'] = ctx
    ? (params, options) => ctx.mcpReq.elicitInput(params, options)
    : (params, options) => server.server.elicitInput(params, options);
  // Sent with the call it belongs to: over `/mcp` that is the call's own event stream (a session has
  // no other: mcp-sessions.ts); the SDK's context does not relate it by itself.
  const related = ctx ? { relatedRequestId: ctx.mcpReq.id } : {};
  const options = (signal?: AbortSignal) => ({ ...related, ...(signal ? { signal } : {}) });
  return {
    openUrl: declared.url ? async (message, url, elicitationId) => (await elicit({ mode: 'url', message, url, elicitationId }, options())).action : undefined,
    choose: form
      ? async <T extends string>(message: string, choices: readonly Choice<T>[], signal?: AbortSignal) => {
          const requestedSchema = {
            type: 'object' as const,
            properties: { [ANSWER_FIELD]: { type: 'string' as const, title: 'Answer', oneOf: choices.map((c) => ({ const: c.value, title: c.title })) } },
            required: [ANSWER_FIELD],
          };
          const r = await elicit({ mode: 'form', message, requestedSchema }, options(signal));
          const value = r.action === 'accept' ? r.content?.[ANSWER_FIELD] : undefined;
          return choices.find((c) => c.value === value)?.value;
        }
      : undefined,
  };
}
