import { z } from 'zod';
import { invalidParams } from '../base/errors';
import { origin, type Origin } from '../session/input/input-kinds';
import type { InputSource, Transport } from '../session/input/input-source';
import { RegexBudget } from './regex-budget';
import { FlowPatience } from './flow-window';

/**
 * What a caller's token allows (docs/protocol.md#scoped-tokens): `view` reads and subscribes, `input` also writes
 * and resizes, `control` everything. The host's own token (and its sockets) give `control`; a
 * scoped token (`shared-pty share`) gives its scope, for one session.
 */
export type TokenScope = 'view' | 'input' | 'control';

/**
 * Whoever holds one token (a scoped token, or the host's own over HTTP), as the host has come to
 * know them: guards bind this principal, not the transport it comes through (docs/protocol.md
 * "Agent guards"). Every connection and request made with the token shares it.
 */
export class TokenHolder {
  /**
   * The token has been used on `/mcp`: an agent holds it, so every write made with it, on any
   * surface (REST, the stream WebSocket, `/rpc`), is an agent's and passes the agent guards.
   * Once set it stays set for the token's life.
   */
  private _agent = false;
  /** The regex time every connection and request with this token shares (regex-budget.ts). */
  readonly regexBudget = new RegexBudget();
  /** How long its flow-controlled subscriptions held the session's PTY without acknowledging (flow-window.ts). */
  readonly flowPatience = new FlowPatience();

  constructor(
    readonly tokenId: string,
    /** The host's own token: its holder is the user until the token is used on `/mcp`; it reaches everything. */
    readonly hostToken = false,
  ) {}

  get agent(): boolean {
    return this._agent;
  }

  /** The token was used where agents call (`/mcp`). */
  markAgent(): void {
    this._agent = true;
  }
}

/** What a token allows: its scope and, for a scoped token, the one session it reaches. */
export interface Grant {
  readonly scope: TokenScope;
  /** The id of the only session a scoped token reaches; undefined: every session (the host's token, an agent's token). */
  readonly onlySession?: string;
  /**
   * An agent's token for every session (`host/agentToken`): every session's methods, and of the
   * host's only those an agent's MCP tools need (docs/protocol.md#agent-tokens).
   */
  readonly everySession?: true;
  /** An agent's token a chat host holds (`host/agentToken` with `chat`): its terminal view's keys are the person's. */
  readonly chatView?: true;
  /** For a token: its holder (undefined for the host's sockets). */
  readonly holder?: TokenHolder;
  /**
   * For the host's own token over HTTP: the regex time its requests share (one per host token,
   * as a holder's is per scoped token), so stateless `/mcp` calls cannot each start afresh.
   */
  readonly regexBudget?: RegexBudget;
}

/** The host's own token and sockets: everything. */
export const FULL_GRANT: Grant = { scope: 'control' };

/** The regex time every request and connection with the grant's token shares: a scoped token's holder's, or the host token's. */
export function tokenRegexBudget(grant: Pick<Grant, 'holder' | 'regexBudget'>): RegexBudget | undefined {
  return grant.holder?.regexBudget ?? grant.regexBudget;
}

/** The person's answer to an agent's approval question (the strings of core/agent/approval.ts). */
export type PersonAnswer = 'once' | 'session' | 'deny' | 'unanswered';

/**
 * An agent's own client that can put a question to the person (MCP elicitation), used when no
 * editor window watches the host to ask (docs/protocol.md#agent-write-approval). `ask` answers
 * by its promise, or (returning nothing) later through `host/approve` from the same caller.
 */
export interface PersonAsker {
  ask(question: { id: string; session: string; name: string; text: string }, signal: AbortSignal): Promise<PersonAnswer> | void;
}

/** Whoever calls a method: a connected client (a ClientLink) or a one-shot request (REST, an MCP call over HTTP). */
export interface Caller extends InputSource, Grant {
  /** The regex time its regexes (and the deny rules its writes meet) are charged to: its connection's, its token's. */
  readonly regexBudgets?: readonly RegexBudget[];
  /** Where its own client asks the person (an agent's MCP client with elicitation); undefined: it cannot. */
  readonly personAsker?: PersonAsker;
}

/**
 * The identity of a one-shot caller: fixed by the endpoint it came through, no notifications;
 * except that a scoped token an agent holds makes its writes an agent's on every endpoint.
 */
export function oneShotCaller(origin: Origin, transport: Transport, grant: Grant = FULL_GRANT): Caller {
  const holder = grant.holder;
  const budget = tokenRegexBudget(grant);
  return {
    get origin() {
      return holder?.agent ? 'agent' : origin;
    },
    transport,
    get agentToken() {
      return holder?.agent === true;
    },
    scope: grant.scope,
    onlySession: grant.onlySession,
    everySession: grant.everySession,
    holder,
    regexBudgets: budget ? [budget] : [],
  };
}

/**
 * What a client may say about itself in the optional `client` param of any JSON-RPC call (an
 * addition, docs/guarantees.md#additions-never-break-clients: clients that never send it are `script`, as before). Only the relay
 * `shared-pty mcp` names a transport: it reaches the host through the control socket on behalf of
 * an agent, and `lastInput` should say `mcp-stdio`, not `control`.
 */
export interface ClientDeclaration {
  origin: Origin;
  transport?: 'mcp-stdio';
  /**
   * The relay's MCP client can ask the person (form elicitation): with no editor window to ask,
   * the host sends this connection `agent/approval` for its own writes, and takes its
   * `host/approve` for those questions only.
   */
  asks?: boolean;
}

const declaration = z.object({ origin, transport: z.literal('mcp-stdio').optional(), asks: z.boolean().optional() }).strict();

/** Validates a `client` param (undefined when absent); -32602 when it is malformed. */
export function parseClientDeclaration(raw: unknown): ClientDeclaration | undefined {
  if (raw === undefined) return undefined;
  const r = declaration.safeParse(raw);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  throw invalidParams(`Invalid params: client${issue.path.length ? '.' + issue.path.join('.') : ''}: ${issue.message}`);
}
