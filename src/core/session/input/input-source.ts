import type { ApprovalDecision, Origin, Transport } from './input-kinds';

/**
 * What a write's text is, judged as it reaches the PTY: `shown` (the terminal echoes it, or a
 * program that draws what is typed reads it), `secret` (a password prompt reads it), or
 * `unknown` (the terminal's mode cannot be read here: treated as a secret by whoever keeps text).
 */
export type InputVerdict = 'shown' | 'secret' | 'unknown';

export type { ApprovalDecision, Transport } from './input-kinds';

/** How an agent's MCP tool calls arrive: over `/mcp`, or relayed by `shared-pty mcp`. */
const MCP_TRANSPORTS: ReadonlySet<Transport> = new Set<Transport>(['mcp-http', 'mcp-stdio']);

/** Whether a call comes through an MCP server (its own results go to the model; what it asks the client does not). */
export function isMcpCall(from: InputSource): boolean {
  return MCP_TRANSPORTS.has(from.transport);
}

/**
 * True for an agent's call: an MCP tool, over `/mcp` or relayed by `shared-pty mcp`, any call made
 * with a token an agent holds (used on `/mcp`), whatever the surface, and any caller that says it
 * is an agent (`client: {origin: "agent"}`): the guards bind the principal, not the transport, and
 * a write credited to an agent meets the agent's guards.
 */
export function isAgentCall(from: InputSource): boolean {
  return isMcpCall(from) || from.agentToken === true || from.origin === 'agent';
}

/** Who a write comes from: the kind of caller (the human's views, an agent, a script) and how it came. */
export interface InputSource {
  readonly origin: Origin;
  readonly transport: Transport;
  /** For an agent's write that needed a decision: what decided it. */
  readonly approval?: ApprovalDecision;
  /** Made with a scoped token an agent holds (it was used on `/mcp`), through whichever surface. */
  readonly agentToken?: boolean;
  /**
   * An agent's admitted write that is Ctrl+C alone (agent-write.ts): it abandons the line at the
   * prompt rather than typing into it, so typing arbitration holds it for the user's pause only,
   * not for a line they have not submitted (docs/protocol.md#typing-arbitration).
   */
  readonly abandonsLine?: boolean;
}

/** The last write into a session and when it happened (`pty/info`'s `lastInput`, docs/protocol.md#ptyinfo). */
export interface LastInput extends InputSource {
  /** Milliseconds since the epoch, like `Session.lastOutputAt` (typing arbitration compares it with now). */
  readonly at: number;
}

/** A decision about an agent's write (`Session.onAgentDecision`): whose, what it was for, and what decided. */
export interface AgentDecision {
  readonly from: InputSource;
  readonly decision: ApprovalDecision;
  /** What the agent wanted to type (never a secret: agents cannot write during secret input). */
  readonly text: string;
}

/**
 * What of a write's text may be kept (recordings with `input: true`), judged as its bytes reached
 * the PTY (docs/protocol.md, "Recording"). Only the text up to the first line end goes to the
 * program reading at that moment; what follows is typed ahead for whatever reads next, whose
 * mode is not known yet, so it is never kept.
 */
export interface InputJudgement {
  /** The text up to and including the write's first line end (all of it when it has none). */
  readonly head: string;
  /** Bytes after `head`: typed ahead. */
  readonly aheadBytes: number;
  /** What `head` was when it reached the PTY (a prompt that reads keys: decided by the line at the cursor, later). */
  readonly verdict: InputVerdict | Promise<InputVerdict>;
}

/** One write into a session (`Session.onInput`): who wrote it and what, unless it was a secret. */
export interface SessionInput {
  /** The text written; empty when `secret` (what is typed at a password prompt is never passed on). */
  readonly data: string;
  readonly from: InputSource;
  /** Written while the session was known to be at secret input (docs/protocol.md#secret-input: SessionInfo.secretInput). */
  readonly secret: boolean;
  /** Bytes written (UTF-8). */
  readonly bytes: number;
  /** The judgement of its text, made only while someone asked for it (Session.judgeInputs). */
  readonly judged?: InputJudgement;
}
