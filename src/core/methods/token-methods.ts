import { z } from 'zod';
import { forbidden, invalidParams, serverError } from '../base/errors';
import { isAgentCall } from '../session/input/input-source';
import { MAX_TOKEN_SECONDS } from '../base/limits';
import { byDefault, tokenInfo, tokenScope } from './schemas';
import { requireSession } from './context';
import { method } from './spec';
import type { MethodContext, TokenService } from './types';

/** A token lives this long unless the user says otherwise (`--expires`). */
export const DEFAULT_TOKEN_SECONDS = 3600;

/** A `view` link lives this long unless the user says otherwise: a working day in one browser. */
export const DEFAULT_VIEW_LINK_SECONDS = 8 * 3600;

function tokensOf(ctx: MethodContext): TokenService {
  if (!ctx.services.tokens) throw serverError('This host serves no HTTP (started with --no-http): there is nothing a token could open');
  return ctx.services.tokens;
}

export const shareMethod = method({
  name: 'session/share',
  target: 'session',
  scope: 'control',
  // A scoped token may not mint tokens (a longer-lived one, a stronger one): the host's token only.
  scopedToken: 'never',
  summary:
    'A new token for this session only, with a scope (view, input or control) and an expiry, and the browser link that uses it; the host keeps only its hash.',
  params: z.object({
    scope: byDefault(
      'view',
      tokenScope.optional().describe('view reads and subscribes; input also writes and resizes; control also sends, signals and closes. Default view.'),
    ),
    expiresIn: byDefault(
      DEFAULT_TOKEN_SECONDS,
      z.number().min(1).int().max(MAX_TOKEN_SECONDS).optional().describe(`Seconds until it stops working (default ${DEFAULT_TOKEN_SECONDS}).`),
    ),
    reusable: byDefault(
      false,
      z
        .boolean()
        .optional()
        .describe(
          'true: a Bearer token for REST, /rpc, /mcp and the stream WebSocket until it expires (scripts, agents). Default false: a link, which a browser trades once for a page cookie; its token is a Bearer token too until then, and opens nothing after.',
        ),
    ),
  }),
  result: z.object({
    token: z
      .string()
      .describe(
        "The token (shown only here): a Bearer token until it ends when reusable, else the one-time link's secret, a Bearer token until the link is opened.",
      ),
    url: z.string().describe("The session's browser view, opened with this token."),
    info: tokenInfo,
  }),
  handler(ctx, p) {
    return tokensOf(ctx).share(requireSession(ctx), p.scope ?? 'view', p.expiresIn ?? DEFAULT_TOKEN_SECONDS, p.reusable ?? false);
  },
});

export const viewUrlMethod = method({
  name: 'session/viewUrl',
  target: 'session',
  // A link that can type is as strong as input: only a caller that may control gets one.
  scope: 'control',
  // A scoped token must not trade itself for a link (a longer-lived one, a stronger one).
  scopedToken: 'never',
  summary:
    "A link that opens the session live in a browser: a one-time link with a view token of its own (input: one that types), listed by host/tokens and ended by host/revoke; never the host's token.",
  params: z.object({
    readOnly: byDefault(true, z.boolean().optional().describe('A link that cannot type (the default; kept for older callers).')),
    input: byDefault(false, z.boolean().optional().describe('A link that also types and resizes (an input-scope token).')),
    expiresIn: byDefault(
      DEFAULT_VIEW_LINK_SECONDS,
      z.number().min(1).int().max(MAX_TOKEN_SECONDS).optional().describe(`Seconds until it stops working (default ${DEFAULT_VIEW_LINK_SECONDS}).`),
    ),
  }),
  result: z.object({ url: z.string(), readOnly: z.boolean(), info: tokenInfo }),
  handler(ctx, p) {
    if (p.readOnly && p.input) throw invalidParams('Invalid params for session/viewUrl: readOnly and input exclude each other');
    const shared = tokensOf(ctx).share(requireSession(ctx), p.input ? 'input' : 'view', p.expiresIn ?? DEFAULT_VIEW_LINK_SECONDS, false);
    return { url: shared.url, readOnly: !p.input, info: shared.info };
  },
});

// Host methods, so a scoped token never reaches them (access.ts): only the host's own token
// lists or ends tokens.

export const tokensMethod = method({
  name: 'host/tokens',
  target: 'host',
  scope: 'control',
  summary: 'The scoped tokens that still work: id, scope, session, expiry, last use (never the token or its hash).',
  params: z.object({}),
  result: z.object({ tokens: z.array(tokenInfo) }),
  handler(ctx) {
    return { tokens: ctx.services.tokens?.list() ?? [] };
  },
});

export const agentTokenMethod = method({
  name: 'host/agentToken',
  target: 'host',
  scope: 'control',
  // Only the user's own credentials mint one (the editor, for its chat's MCP server).
  scopedToken: 'never',
  summary:
    "A new agent's token for every session, for an agent's MCP client (the editor gives one to its chat instead of the host's own token): every write made with it, on any surface, is an agent's and meets the agent guards; it opens no page, lists and ends no tokens, and sets no policy. host/tokens lists it, host/revoke ends it.",
  params: z.object({
    chat: byDefault(
      false,
      z
        .boolean()
        .optional()
        .describe(
          "true: for a chat host that shows the terminal view and keeps app-only tools from its model (the editor's chat): the view's keys (app_input) sent with it are the person's. Never give such a token to an agent itself.",
        ),
    ),
    expiresIn: byDefault(
      MAX_TOKEN_SECONDS,
      z.number().min(1).int().max(MAX_TOKEN_SECONDS).optional().describe(`Seconds until it stops working (default ${MAX_TOKEN_SECONDS}: 30 days).`),
    ),
  }),
  result: z.object({
    token: z.string().describe('The token (shown only here): a Bearer token for /mcp, REST, /rpc and the stream WebSocket until it ends.'),
    info: tokenInfo,
  }),
  handler(ctx, p) {
    // Nor a caller that says it is one (its `client` param): what it would mint is for an agent's use.
    if (isAgentCall(ctx.caller) || ctx.caller.origin === 'agent') throw forbidden("host/agentToken is the user's: an agent cannot mint itself a token");
    return tokensOf(ctx).agentToken(p.expiresIn ?? MAX_TOKEN_SECONDS, p.chat ?? false);
  },
});

export const revokeMethod = method({
  name: 'host/revoke',
  target: 'host',
  scope: 'control',
  summary: 'End a scoped token at once: its next request is refused and the WebSockets opened with it close.',
  params: z.object({ id: z.string().min(1).describe("The token's id (host/tokens).") }),
  result: z.object({ id: z.string(), revoked: z.literal(true) }),
  handler(ctx, p) {
    if (!tokensOf(ctx).revoke(p.id)) throw serverError(`Unknown token: ${p.id}`, { id: p.id });
    return { id: p.id, revoked: true as const };
  },
});
