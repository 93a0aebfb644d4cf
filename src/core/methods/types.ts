import type { AgentPolicy } from '../agent/agent-policy';
import type { ApprovalBroker } from '../agent/approval';
import type { z } from 'zod';
import type { hostInfo, tokenInfo } from './schemas';
import type { SessionInfo } from './shapes';
import type { SessionRegistry, CreateSessionParams } from '../session/registry';
import type { Session } from '../session/session';
import type { Caller, TokenScope } from '../io/caller';
import type { ClientLink } from '../io/client-link';
import type { RegexBudget } from '../io/regex-budget';

export type { SessionInfo } from './shapes';

/** The discovery record without the token (`host/info`). */
export type HostInfo = z.infer<typeof hostInfo>;

/** A scoped token as listed: no secret in it. */
export type TokenInfo = z.infer<typeof tokenInfo>;

/** The scoped tokens of a host's HTTP server (docs/protocol.md#scoped-tokens), kept in its memory as hashes only. */
export interface TokenService {
  /**
   * A new token for one session and its browser link; the only time the token itself is seen.
   * `reusable` false (a link): it opens a browser page once and is refused as a Bearer token.
   */
  share(session: Session, scope: TokenScope, expiresInSeconds: number, reusable?: boolean): { token: string; url: string; info: TokenInfo };
  /** A new agent's token for every session (`host/agentToken`); the only time the token itself is seen. */
  agentToken(expiresInSeconds: number, chat?: boolean): { token: string; info: TokenInfo };
  list(): TokenInfo[];
  /** Ends the token now, and the connections opened with it; false when there is none of that id. */
  revoke(id: string): boolean;
}

/** A browser link that replays one recording (`host/replay`). */
export interface ReplayLinkInfo {
  id: string;
  url: string;
  /** The file it replays (its real path, resolved when the link was made). */
  path: string;
  /** ISO time after which the link opens nothing. */
  expiresAt: string;
  /** The id of the link's token (`shared-pty tokens` lists it, `shared-pty revoke` ends it). */
  tokenId: string;
}

/**
 * The recordings a host's HTTP server replays in the browser: only files a caller of `host/replay`
 * named (checked to be asciicast v3 first), each behind an unguessable link that expires.
 */
export interface ReplayService {
  /** A new link that replays `file` (an absolute path already checked to be a recording). */
  open(file: string): ReplayLinkInfo;
}

/** A secret page's one-time link (docs/protocol.md#secret-pages). */
export interface SecretPageLink {
  /** `/secret/<one-time id>` on the host's own origin. */
  url: string;
  /** ISO time after which it opens nothing. */
  expiresAt: string;
}

/**
 * The host's secret pages: where the person types a secret a program asks for straight into its
 * PTY, so neither the agent nor its model ever sees it (docs/protocol.md#secret-pages).
 */
export interface SecretPageService {
  /** A new one-time link for `session` (the caller checked that it asks for a secret now). */
  open(session: Session): SecretPageLink;
}

/** What the method table needs from the host that owns the sessions. */
export interface HostServices {
  readonly registry: SessionRegistry;
  /** The full SessionInfo, with the addresses only the host knows. */
  describe(session: Session): SessionInfo;
  /** The discovery record without the token. */
  hostInfo(): HostInfo;
  /** Creates a session (in the editor it also opens as an editor terminal). */
  createSession(params: CreateSessionParams): Promise<Session> | Session;
  /** The scoped tokens (only a host serving HTTP has them). */
  readonly tokens?: TokenService;
  /** The recordings it replays in the browser (only a host serving HTTP has them). */
  readonly replays?: ReplayService;
  /** Its secret pages (only a host serving HTTP has them). */
  readonly secretPages?: SecretPageService;
  /** `pty/kill`: in a host, ends that session; in socket-pty's single-session serve, ends the server too. */
  killSession(session: Session): Promise<void> | void;
  /** Before `pty/kill` is answered: the session's own endpoints take no more connections. */
  stopListeningFor?(session: Session): void;
  /** What agents' writes may do (docs/protocol.md#agent-write-approval); none: allow. */
  agentPolicy?: AgentPolicy;
  /** Where the host asks the user about agents' writes and tells who watches that an agent types. */
  readonly approvals?: ApprovalBroker;
  /** The regex time every connection to the host's sockets shares, beside its own (regex-budget.ts). */
  readonly socketRegexBudget?: RegexBudget;
}

/** Everything a method handler may use for one call. */
export interface MethodContext {
  services: HostServices;
  /** The session the call is about (session-scoped methods). */
  session?: Session;
  /**
   * Who calls: a connected client's link (it can hold subscriptions) or a one-shot caller's
   * identity (REST, an MCP call over HTTP). Writes are attributed to it.
   */
  caller: ClientLink | Caller;
  /** Aborted when the client goes away mid-call (made on first use: read it only when the call needs it). */
  readonly signal: AbortSignal;
  /** Runs `fn` right after the response is sent (subscriptions start replay there). */
  afterResponse(fn: () => void): void;
  /**
   * The answer may wait a moment for `session`'s output and leave with it (a key's answer with its
   * echo): a connection that follows that session then wakes its client once (json-rpc-peer.ts).
   */
  answerMayRideWith(session: Session): void;
}
