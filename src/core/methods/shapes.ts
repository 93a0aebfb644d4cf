import { z } from 'zod';
import { approvalDecision, origin, transport } from '../session/input/input-kinds';
import { agentApproval } from '../agent/approval-request';
import { commandRecord } from '../commands/command-record';
import { sessionStatus } from '../session/session-status';

// The shapes the method table's results and notifications are made of, as every client reads them.
// Nothing of Node is imported here (only zod and other such files), so the browser views import
// these types as the CLI and the editor do.

export { commandRecord, origin, sessionStatus, transport };

export const cursorPos = z.object({ row: z.number(), col: z.number() });
export const screenSize = z.object({ cols: z.number(), rows: z.number() });

/** What every listing, record and `pty/info` says about a session (docs/hosts.md#sessioninfo). */
export const sessionInfo = z
  .object({
    id: z.string(),
    name: z.string(),
    pid: z.number(),
    command: z.string(),
    args: z.array(z.string()),
    cwd: z.string(),
    workspace: z.string().nullable(),
    cols: z.number(),
    rows: z.number(),
    createdAt: z.string(),
    running: z.boolean(),
    exitCode: z.number().nullable(),
    origin,
    address: z.string(),
    tcp: z.string().optional(),
    stream: z.string().optional(),
    clients: z.number(),
    secretInput: z.boolean().describe('The program asks for a secret (echo off, it reads the terminal): only the user should type.'),
    integration: z.boolean().describe('The shell reports its commands (shell integration): see pty/commands.'),
    host: z
      .string()
      .optional()
      .describe(
        'The remote host (named in hosts.json) the session runs on, in listings that cover remote hosts; absent for this machine. Select it as HOST:ID.',
      ),
  })
  .meta({ title: 'SessionInfo' });

/** The last write into a session: who, how, when (docs/protocol.md#ptyinfo). */
export const lastInput = z
  .object({
    origin: origin.describe("Who wrote: the human's views (user), an agent (MCP), or a script."),
    transport: transport.describe('How the write came.'),
    at: z.string().describe('When, ISO 8601.'),
    approval: approvalDecision
      .optional()
      .describe("For an agent's write that needed a decision: what decided it. A refused write sets lastInput too, with nothing written."),
  })
  .meta({ title: 'LastInput' });

/** What happens now to an agent's write into a session, and why when it is not the host's policy (docs/protocol.md#agent-write-approval). */
export const agentApprovalNow = z
  .object({
    policy: agentApproval.describe("The host's policy for agents' writes into sessions the user opened (--agent-approval, sharedPty.agent.approval)."),
    effective: agentApproval.describe(
      "What an agent's write into this session gets now: allow (written), ask (waits for the user's answer in the editor) or deny (refused). Deny rules apply in every case.",
    ),
    reason: z
      .string()
      .optional()
      .describe(
        'Why effective differs from policy: no editor window is connected to ask (ask acts as allow), an agent or a script opened this session (it is theirs), or the user allowed agents for this session.',
      ),
  })
  .meta({ title: 'AgentApprovalNow' });

/** `pty/info`'s answer: the SessionInfo, who typed last (null before any input), and what an agent's write would get. */
export const sessionDetails = sessionInfo.extend({ lastInput: lastInput.nullable(), agentApproval: agentApprovalNow }).meta({ title: 'SessionDetails' });

/** The discovery record without the token (docs/hosts.md#discovery-records, `host/info`). */
export const hostInfo = z
  .object({
    hostId: z.string(),
    pid: z.number(),
    kind: z.enum(['daemon', 'serve']),
    version: z.string(),
    startedAt: z.string(),
    control: z.string(),
    http: z.object({ url: z.string() }).nullable(),
    sessions: z.array(sessionInfo),
    workspace: z.string().nullable(),
  })
  .meta({ title: 'HostInfo' });

export const tokenScope = z.enum(['view', 'input', 'control']);

/** A scoped token as `host/tokens` lists it: never the token, never its hash (docs/protocol.md#scoped-tokens). */
export const tokenInfo = z
  .object({
    id: z.string().describe('Names the token for host/revoke; it is not the token.'),
    scope: tokenScope,
    session: z.string().nullable().describe("The id of the one session it reaches; null for a replay link (`recording`) and for an agent's token (`agent`)."),
    agent: z
      .literal(true)
      .optional()
      .describe("An agent's token for every session (the editor's MCP server holds one): each write made with it, on any surface, is an agent's."),
    chat: z
      .literal(true)
      .optional()
      .describe("An agent's token for a chat host (host/agentToken chat): the keys of the terminal view it shows are the person's."),
    recording: z.string().optional().describe("A replay link's recording (its path): the one page it opens."),
    reusable: z
      .boolean()
      .describe(
        "true: a token for scripts and agents, valid until it expires; false: a link that opens a browser page once (then only that browser's page cookie works).",
      ),
    openedAt: z.string().nullable().describe('When a browser first traded it for a page cookie; null when no browser has opened it.'),
    createdAt: z.string(),
    expiresAt: z.string().describe('ISO 8601: it stops working then, and its open WebSockets close.'),
    lastUsedAt: z.string().nullable().describe('The last request made with it; null when never used.'),
  })
  .meta({ title: 'TokenInfo' });

/** `pty/output`'s answer: raw output after a cursor, and the program's state (the views follow a session with it). */
export const outputResult = z.object({ data: z.string(), cursor: z.number(), dropped: z.number(), running: z.boolean(), exitCode: z.number().nullable() });

/** `pty/snapshot`'s answer: text that redraws the terminal, the cursor it stands for, and the size to draw it at. */
export const snapshotResult = z.object({ data: z.string(), cursor: z.number(), cols: z.number(), rows: z.number() });

/** What every listing, record and `pty/info` says about a session (docs/hosts.md#sessioninfo). */
export type SessionInfo = z.infer<typeof sessionInfo>;
/** `pty/output`'s answer. */
export type OutputResult = z.infer<typeof outputResult>;
/** `pty/snapshot`'s answer. */
export type SnapshotResult = z.infer<typeof snapshotResult>;
export type { CommandRecord } from '../commands/command-record';
