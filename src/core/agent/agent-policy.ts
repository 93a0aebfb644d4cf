import { declined, invalidParams } from '../base/errors';
import type { Session } from '../session/session';
import { isAgentCall, type InputSource } from '../session/input/input-source';
import { MAX_TYPED_LINE_CHARS } from '../session/input/typed-line';
import { boundedFirstMatch, REGEX_BUDGET_MS, RegexTimeoutError } from '../io/bounded-regex';
import type { Caller } from '../io/caller';
import { argvToJudge, commandsToJudge } from './command-line';
import { agentApproval, type AgentApproval } from './approval-request';

/** What the host does with an agent's write into a session the user opened (docs/protocol.md#agent-write-approval). */
export type { AgentApproval } from './approval-request';
export const AGENT_APPROVALS: readonly AgentApproval[] = agentApproval.options;

/** The host's policy for agents' writes. */
export interface AgentPolicy {
  approval: AgentApproval;
  /** Lines an agent may never submit, whatever the approval. */
  denyCommands: readonly RegExp[];
}

/** A policy as settings and `host/agentPolicy` say it: the rules as their sources. */
export function describePolicy(policy: AgentPolicy | undefined): { approval: AgentApproval; denyCommands: string[] } {
  return { approval: policy?.approval ?? 'allow', denyCommands: (policy?.denyCommands ?? []).map((r) => r.source) };
}

/** A policy from its settings; a deny rule that is not a valid regex is a clear error, not a silent gap. */
export function agentPolicy(approval: AgentApproval = 'allow', denyCommands: readonly string[] = []): AgentPolicy {
  const rules = denyCommands.map((source) => {
    try {
      return new RegExp(source);
    } catch (e) {
      throw invalidParams(`Invalid agent deny rule ${JSON.stringify(source)}: ${(e as Error).message}`);
    }
  });
  return { approval, denyCommands: rules };
}

/**
 * Refuses an agent's write that the policy does not allow, with nothing written: a line that a
 * deny rule matches, at once whatever the approval; and with `deny`, any write into a session
 * the user opened (sessions an agent opened itself are the agent's). `ask` is `needsAsking`'s.
 * A rule is matched against each line as the shell will run it (the characters typed since the
 * last Enter, by anyone, and this write's; every command of it, wrappers taken off: see
 * command-line.ts) and against the agent's own lines as written.
 */
export function checkAgentWrite(policy: AgentPolicy | undefined, session: Session, from: InputSource, text: string): void {
  if (!policy || !isAgentCall(from)) return;
  if (policy.denyCommands.length > 0) {
    const typedAhead = session.kernelEdits(text);
    const atPrompt = session.atPrompt;
    const preview = session.typedLine.preview(text, typedAhead);
    const { lines } = preview;
    const own = text.split(/[\r\n]+/).filter((l) => l.trim() !== '');
    // A line of the write's own longer than a typed line may be is judged no more than one is.
    const overflow = preview.overflow || own.some((l) => l.length > MAX_TYPED_LINE_CHARS);
    const refuse = (why: string): never => {
      session.noteAgentDecision(from, 'deny_rule', text);
      throw declined(`${why}; nothing was written. Ask the user to run it themselves if it is needed.`, { session: session.id });
    };
    if (overflow)
      refuse(
        `The line in the terminal is longer than ${MAX_TYPED_LINE_CHARS} characters or was edited with more keys in one write than the host follows, so it cannot be checked against the user's deny rules`,
      );
    // Where the shell's line editor reads the keys (at its prompt, or typed ahead for it), keys the
    // host does not follow there, or Enter on a line they left, would run what no rule saw
    // (history, a completion, an undo, a paste, a key `stty` changed).
    if ((typedAhead || atPrompt) && [...session.changedEditingKeys].some((key) => text.includes(key)))
      refuse(
        "The terminal's editing keys were changed (stty) and this write has one of them, so the host cannot follow the line it makes, nor check it against the user's deny rules; run `stty sane` first, or ask the user",
      );
    if (typedAhead && preview.unfollowed)
      refuse(
        "This write is typed ahead while a command runs, and the shell's line editor may read it when the command ends; it has keys the host does not follow there, so the line they make cannot be checked against the user's deny rules; wait for the prompt, or type the whole line",
      );
    if (atPrompt && preview.unfollowed)
      refuse(
        "At the shell's prompt this write has keys the host does not follow (history, history expansion or `fc`, completion, a paste, or another key of the line editor's), so the line they make cannot be checked against the user's deny rules; type the whole line instead",
      );
    if (atPrompt && preview.unknown)
      refuse(
        "The line at the shell's prompt holds text the host could not follow (recalled from history, completed, or typed while a command ran), so it cannot be checked against the user's deny rules; send Ctrl+C to clear it, then type the whole line",
      );
    const rule = firstDenyRule(policy, [...lines, ...own].flatMap(commandsToJudge), from, refuse);
    if (rule) refuse(`The user does not allow agents to run this in a terminal (deny rule ${rule.source})`);
  }
  if (policy.approval === 'deny' && session.options.origin === 'user') {
    session.noteAgentDecision(from, 'policy_deny', text);
    throw declined(
      `The user declined: agents may not type into session ${session.name}, which the user opened (agent approval: deny); nothing was written. Open a session of your own with open_session, or ask the user.`,
      { session: session.id },
    );
  }
}

/** What an agent's write into `session` gets now, and why when that is not the policy (`pty/info`'s agentApproval). */
export function agentApprovalNow(
  policy: AgentPolicy | undefined,
  canAsk: boolean,
  session: Session,
): { policy: AgentApproval; effective: AgentApproval; reason?: string } {
  const approval = policy?.approval ?? 'allow';
  if (approval === 'allow') return { policy: approval, effective: approval };
  if (session.options.origin !== 'user')
    return {
      policy: approval,
      effective: 'allow',
      reason: `${session.options.origin === 'agent' ? 'an agent' : 'a script'} opened this session: it is not one the user opened`,
    };
  if (approval === 'deny') return { policy: approval, effective: approval };
  if (session.agentsAllowed) return { policy: approval, effective: 'allow', reason: 'the user allowed agents for this session' };
  if (!canAsk) return { policy: approval, effective: 'allow', reason: NOBODY_TO_ASK };
  return { policy: approval, effective: approval };
}

/** Why `ask` acts as `allow`: said by pty/info and by `serve` at start-up. */
export const NOBODY_TO_ASK =
  "no editor window is connected to ask the user, so agents' writes are allowed (as with allow) until one connects, except an agent whose own MCP client can ask the user (form elicitation): that client asks";

/**
 * Refuses an agent's `open_session` whose command line a deny rule matches (`{command: "/bin/sh",
 * args: ["-c", "rm -rf …"]}` is `rm -rf …` to the rules), before anything is started. Each value of
 * its `env` is judged as a line too: the agent wrote them in the same call, and a shell runs some
 * (`PROMPT_COMMAND`, a `BASH_ENV` file's name, `$X` in `sh -c '$X'`).
 */
export function checkAgentCommand(
  policy: AgentPolicy | undefined,
  from: InputSource,
  argv: readonly string[],
  env: Readonly<Record<string, string>> = {},
): void {
  if (!policy || policy.denyCommands.length === 0 || !isAgentCall(from)) return;
  const refuse = (why: string): never => {
    throw declined(`${why}; no session was opened. Ask the user to run it themselves if it is needed.`, {});
  };
  const denied = (texts: string[], where: string) => {
    const rule = texts.length > 0 ? firstDenyRule(policy, texts, from, refuse) : undefined;
    if (rule) refuse(`The user does not allow agents to run this in a terminal (deny rule ${rule.source}${where})`);
  };
  if (argv.length > 0) denied(argvToJudge(argv), '');
  // Each variable on its own, so the refusal says which one held the command.
  for (const [name, value] of Object.entries(env)) denied(commandsToJudge(value), `, in the value of ${name}`);
}

/**
 * The first deny rule that matches one of `texts`, within DENY_RULES_BUDGET_MS and the caller's
 * regex time: a user's rule that backtracks cannot hold the host, and a line it cannot judge in
 * time is refused (`refuse`), never let through.
 */
function firstDenyRule(policy: AgentPolicy, texts: string[], from: InputSource, refuse: (why: string) => never): RegExp | undefined {
  const budgets = (from as Caller).regexBudgets ?? [];
  try {
    const i = boundedFirstMatch(policy.denyCommands, [...new Set(texts)], budgets, DENY_RULES_BUDGET_MS);
    return i < 0 ? undefined : policy.denyCommands[i];
  } catch (e) {
    if (e instanceof RegexTimeoutError)
      return refuse(`The user's deny rules took more than ${DENY_RULES_BUDGET_MS} ms on this line (a rule that backtracks?), so it could not be checked`);
    throw e;
  }
}

/**
 * How long the deny rules may take on one write or command line, all rules and commands together:
 * as long as one `pty/wait` test (REGEX_BUDGET_MS). A real rule takes microseconds per line.
 */
export const DENY_RULES_BUDGET_MS = REGEX_BUDGET_MS;

/**
 * True when an agent's write into `session` waits for the user's answer: policy `ask`, a session
 * the user opened, not yet allowed for the session, and a window connected to ask in (with none,
 * `ask` acts as the headless policy, `allow`: docs/protocol.md#agent-write-approval).
 */
export function needsAsking(policy: AgentPolicy | undefined, canAsk: boolean, session: Session, from: InputSource): boolean {
  return policy?.approval === 'ask' && isAgentCall(from) && session.options.origin === 'user' && !session.agentsAllowed && canAsk;
}
