import { inSize } from '../base/param-limits';
import { MAX_SESSION_NAME_CHARS, SESSION_NAME_CONTROL, SESSION_NAME_RULE } from '../base/limits';
import { z } from 'zod';
import { checkAgentCommand } from '../agent/agent-policy';
import { DEFAULT_COLS, DEFAULT_ROWS } from '../session/session';
import { byDefault, byDefaultSays, cols, hostInfo, leaseSeconds, origin, rows, sessionInfo, isWholeText, wholeText } from './schemas';
import { method } from './spec';

/** REST's `POST /sessions` without a size opens 80x24, as pty-session-mcp does (its clients expect it). */
const REST_DEFAULT_SIZE = { cols: 80, rows: 24 };
/** The locale of a session opened over REST. */
const REST_LOCALE = { LANG: 'C.UTF-8', LC_ALL: 'C.UTF-8', LC_CTYPE: 'C.UTF-8' };

export const listMethod = method({
  name: 'session/list',
  target: 'host',
  scope: 'read',
  summary: 'Every session of this host.',
  params: z.object({}),
  result: z.object({
    sessions: z.array(sessionInfo),
    unreachable: z
      .array(z.object({ host: z.string(), reason: z.string() }))
      .optional()
      .describe('`shared-pty mcp` only: remote hosts of hosts.json left out of this list because they could not be reached, and why.'),
    hostsFile: z
      .string()
      .optional()
      .describe("`shared-pty mcp` only: why hosts.json is not used (not JSON, another user could change it, …): no remote host's sessions are in this list."),
  }),
  // A scoped token sees only its own session here (docs/protocol.md#scoped-tokens).
  scopedToken: 'filtered',
  handler(ctx) {
    const only = ctx.caller.onlySession;
    const sessions = ctx.services.registry.list().filter((s) => only === undefined || s.id === only);
    return { sessions: sessions.map((s) => ctx.services.describe(s)) };
  },
  mcp: {
    tool: 'list_sessions',
    title: 'List terminal sessions',
    description:
      "List every shared terminal session (the user's editor terminals and those opened by agents or scripts): id, name, command, size, running state (secret-input: its program asks for a password only the user may type). Start here to find the session to work in.",
    text: (r) => {
      const lines = r.sessions.map(
        (s) =>
          `${s.host ? `${s.host}:${s.id}` : s.id}  ${s.name}  ${s.running ? (s.secretInput ? 'running secret-input' : 'running') : `exited(${s.exitCode})`}  ${s.cols}x${s.rows}  ${s.origin}  ${[s.command, ...s.args].join(' ')}  cwd=${s.cwd}`,
      );
      const out = lines.length ? lines.join('\n') : 'No sessions. Open one with open_session.';
      // A host left out is not a host with no sessions: its sessions may run, unseen from here.
      const leftOut = (r.unreachable ?? []).map((u) => `Not listed: host "${u.host}" could not be reached (${u.reason}); its sessions may still run.`);
      const unused = r.hostsFile ? [`Not listed: no remote host's sessions, as ${r.hostsFile}.`] : [];
      return [out, ...leftOut, ...unused].join('\n');
    },
  },
  rest: { verb: 'GET', path: '/sessions', from: 'query', respond: (r) => r.sessions },
});

/** pty-session-mcp's `uid`/`gid`: a number of an account on the machine (2^32 - 1 means "none"). */
function accountId(what: 'user' | 'group') {
  return z
    .number()
    .min(0)
    .int()
    .max(2 ** 32 - 2)
    .optional()
    .describe(`The ${what} id the program runs as when the host runs as root (pty-session-mcp's; a host that is not root runs it as itself).`);
}

export const createMethod = method({
  name: 'session/create',
  target: 'host',
  scope: 'control',
  summary: "Start a program in a new session (default: the user's shell).",
  params: z.object({
    command: byDefaultSays("the user's shell (`$SHELL`, else `/bin/sh`)", wholeText(1).optional().describe("Program to run; default the user's shell.")),
    args: byDefault([], z.array(wholeText()).optional()),
    cwd: byDefaultSays(
      "the host's default directory (`serve`: `--cwd` or its current directory; otherwise home)",
      wholeText(1).optional().describe('Working directory (a relative one is from the default; `~` is not expanded); default the workspace or home.'),
    ),
    env: byDefaultSays(
      "the host's environment",
      z
        .record(z.string(), wholeText())
        // A name with "=" would set another variable than it says (`X=Y` as `X`), and an empty one none.
        .refine(
          (env) => Object.keys(env).every((name) => /^[^=\0]+$/.test(name) && isWholeText(name)),
          'an environment variable name is not empty and holds no "=" (nor a NUL byte, nor a lone UTF-16 surrogate)',
        )
        .optional()
        .describe('Environment variables to set for the program (a name is not empty and holds no "=").'),
    ),
    cols: byDefault(DEFAULT_COLS, cols().optional()),
    rows: byDefault(DEFAULT_ROWS, rows().optional()),
    name: byDefaultSays(
      '`<basename of command>-<n>`',
      z
        .string()
        .min(1)
        .max(MAX_SESSION_NAME_CHARS)
        .refine((n) => !SESSION_NAME_CONTROL.test(n), SESSION_NAME_RULE)
        .refine((n) => n.trim() === n, 'a session name may not begin or end with a space (nor be spaces alone)')
        .optional()
        .describe("A name to find the session by (no control or invisible characters; not another session's id)."),
    ),
    origin: byDefault('script', origin.optional().describe('Who opens it: user (an editor terminal), agent or script.')),
    leaseSeconds: byDefaultSays('none', leaseSeconds().optional().describe('End the session after this long without a client (editor terminals).')),
    workspace: byDefaultSays("the host's workspace", z.string().min(1).optional().describe('The workspace folder the session belongs to.')),
    uid: byDefaultSays("the host's own", accountId('user')),
    gid: byDefaultSays("the host's own", accountId('group')),
  }),
  result: sessionInfo,
  // An agent's token opens sessions (open_session), as the agent's.
  agentToken: 'allowed',
  async handler(ctx, p) {
    // An agent's command line (and the environment it gives it) meets the user's deny rules before anything starts.
    checkAgentCommand(ctx.services.agentPolicy, ctx.caller, p.command !== undefined ? [p.command, ...(p.args ?? [])] : [], p.env);
    // Whatever it says of itself: an agent's token, on any surface, opens the agent's sessions.
    const origin = ctx.caller.agentToken ? 'agent' : p.origin;
    // pty-session-mcp's sessions are named by their id unless they are given a name.
    const namedById = ctx.caller.transport === 'rest';
    return ctx.services.describe(await ctx.services.createSession(inSize({ ...p, origin, namedById })));
  },
  mcp: {
    tool: 'open_session',
    // It types into a shell, or starts a program: anything may follow.
    destructive: true,
    openWorld: true,
    title: 'Open a terminal session',
    description:
      "Start a program (default: the user's shell) in a new shared terminal. The user sees it as an editor terminal and can type into it too. Returns the session; use its id with the other tools.",
    omit: ['origin', 'leaseSeconds', 'workspace', 'uid', 'gid'],
    app: 'shows',
    fixed: { origin: 'agent' },
    text: (s) => `Opened session ${s.host ? `${s.host}:${s.id}` : s.id} (${s.name}): ${[s.command, ...s.args].join(' ')} in ${s.cwd}, ${s.cols}x${s.rows}.`,
  },
  rest: {
    verb: 'POST',
    path: '/sessions',
    from: 'body',
    defaults: { origin: 'script', ...REST_DEFAULT_SIZE },
    // pty-session-mcp's sessions always run in C.UTF-8, whatever `env` says: its clients read
    // what they print as UTF-8 (docs/protocol.md#rest).
    pinned: (p) => ({ env: { ...(p.env as Record<string, string> | undefined), ...REST_LOCALE } }),
  },
});

export const hostInfoMethod = method({
  name: 'host/info',
  target: 'host',
  scope: 'read',
  summary: "This host's discovery record, without the token.",
  params: z.object({}),
  result: hostInfo,
  handler(ctx) {
    return ctx.services.hostInfo();
  },
});
