import * as os from 'node:os';
import { z } from 'zod';
import { SessionTuning } from '../session/session';
import { byDefaultSays, leaseSeconds, sessionDetails } from './schemas';
import { sessionExited } from '../base/errors';
import { ignoresSignal, signalForegroundGroup } from '../process/proc-state';
import { method } from './spec';
import { requireSession } from './context';
import { agentApprovalNow } from '../agent/agent-policy';

/** How long REST `DELETE` waits for the program's end: the kill's SIGKILL grace and a margin. */
const KILL_ANSWER_WAIT_MS = SessionTuning.KillGraceMs + 1000;
/** How long REST `DELETE ?signal=` lets the program end of that signal before the session closes (a program may catch it). */
const SIGNAL_EXIT_WAIT_MS = 1000;
/** The signal `DELETE /sessions/:id` sends first when its query names none: pty-session-mcp's kill defaults to SIGTERM. */
const REST_KILL_DEFAULT_SIGNAL: NodeJS.Signals = 'SIGTERM';

/** Each signal this system has, by number, under its first name (SIGABRT and SIGIOT are both 6). */
const SIGNAL_BY_NUMBER = new Map<number, NodeJS.Signals>();
for (const [name, n] of Object.entries(os.constants.signals)) if (!SIGNAL_BY_NUMBER.has(n)) SIGNAL_BY_NUMBER.set(n, name as NodeJS.Signals);

/**
 * The signal `DELETE /sessions/:id?signal=` sends first: any signal Node knows on this system
 * (`os.constants.signals`), by name or, as pty-session-mcp's kill also takes it, by number
 * (`?signal=9`). Names are exact, as `pty/signal`'s are.
 */
const restKillSignal = z.string().transform((v, ctx): NodeJS.Signals => {
  const name = /^\d+$/.test(v) ? SIGNAL_BY_NUMBER.get(Number(v)) : Object.hasOwn(os.constants.signals, v) ? (v as NodeJS.Signals) : undefined;
  if (name) return name;
  ctx.addIssue({ code: 'custom', message: 'expected a signal name (SIGTERM, SIGUSR1, … as this system has them) or its number' });
  return z.NEVER;
});

export const statusMethod = method({
  name: 'pty/status',
  target: 'session',
  scope: 'read',
  summary: 'Whether the program runs, its exit code and pid.',
  params: z.object({}),
  result: z.object({ running: z.boolean(), exitCode: z.number().nullable(), pid: z.number() }),
  handler(ctx) {
    const s = requireSession(ctx);
    return { running: s.running, exitCode: s.exitCode, pid: s.pid };
  },
});

export const killMethod = method({
  name: 'pty/kill',
  target: 'session',
  scope: 'control',
  summary: 'End the session (in socket-pty compatible serve, the server too).',
  params: z.object({}),
  result: z.object({}),
  async handler(ctx) {
    const s = requireSession(ctx);
    // The endpoint goes first, so nobody connects to a session that is being ended (socket-pty:
    // after the answer the endpoint can no longer be connected); the answer itself goes out before
    // the connections close.
    ctx.services.stopListeningFor?.(s);
    ctx.afterResponse(() => void ctx.services.killSession(s));
    return {};
  },
  mcp: {
    tool: 'close_session',
    title: 'Close a session',
    description: "End the session and its program (the editor terminal closes too). Do not close the user's own terminals unless asked.",
    destructive: true,
    output: { schema: z.object({ closed: z.string() }), fromResult: (_r, a) => ({ closed: String(a.session) }) },
    text: (_r, a) => `Closed session ${a.session}.`,
  },
  rest: {
    verb: 'DELETE',
    path: '/sessions/:id',
    from: 'query',
    input: { schema: z.object({ signal: restKillSignal.optional() }), toParams: () => ({}) },
    // Runs once the caller is known to hold pty/kill's scope (rest-routes.ts): the signal (SIGTERM
    // unless the query names one) goes to the terminal's foreground process group, as pty/signal
    // sends its seven; then the session closes, which hangs up whatever outlived it.
    async before(route) {
      const asked = route.input.signal as NodeJS.Signals | undefined;
      const s = route.session;
      if (!s) return;
      if (!s.running) {
        if (asked) throw sessionExited(s.id);
        return; // an exited session: nothing to signal, it is removed
      }
      const signal = asked ?? REST_KILL_DEFAULT_SIGNAL;
      const { pgid } = signalForegroundGroup(s.pid, signal);
      // A program that ignores it (an interactive shell, SIGTERM) is not waited for: the hang-up ends it.
      if (ignoresSignal(pgid, signal)) return;
      // The program ends of the signal asked for before the kill closes its terminal: the hang-up
      // that closing sends could overtake it and be what the program is reported to die of.
      await Promise.race([s.exited, new Promise((r) => setTimeout(r, SIGNAL_EXIT_WAIT_MS).unref())]);
    },
    // Answers with how it ended (as pty-session-mcp's kill does); a program that outlives its
    // SIGKILL grace is reported still running.
    async respond(_r, route) {
      const s = route.session!;
      await Promise.race([s.exited, new Promise((r) => setTimeout(r, KILL_ANSWER_WAIT_MS).unref())]);
      return { id: route.id, ok: true, running: s.running, exitCode: s.exitCode };
    },
  },
});

export const infoMethod = method({
  name: 'pty/info',
  target: 'session',
  scope: 'read',
  summary:
    "The session's SessionInfo, who wrote into it last (lastInput: origin, transport, when; null before any input), and what an agent's write into it gets now (agentApproval: the policy, the effective decision, and why they differ).",
  params: z.object({}),
  result: sessionDetails,
  handler(ctx) {
    const s = requireSession(ctx);
    const last = s.lastInput;
    return {
      ...ctx.services.describe(s),
      lastInput: last
        ? { origin: last.origin, transport: last.transport, at: new Date(last.at).toISOString(), ...(last.approval ? { approval: last.approval } : {}) }
        : null,
      agentApproval: agentApprovalNow(ctx.services.agentPolicy, ctx.services.approvals?.canAsk ?? false, s),
    };
  },
});

export const keepMethod = method({
  name: 'session/keep',
  target: 'session',
  scope: 'control',
  summary: 'Keep the session running when no client is attached (clears its lease; a detach, as in tmux).',
  params: z.object({
    leaseSeconds: byDefaultSays(
      'none: the lease is cleared',
      leaseSeconds().optional().describe('A new lease instead (seconds without a client before it ends).'),
    ),
  }),
  result: z.object({ id: z.string(), leaseSeconds: z.number().nullable() }),
  handler(ctx, p) {
    const s = requireSession(ctx);
    s.leaseSeconds = p.leaseSeconds;
    s.addClient().dispose(); // re-evaluates the lease now
    return { id: s.id, leaseSeconds: s.leaseSeconds ?? null };
  },
});
