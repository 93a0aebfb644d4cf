import {
  DEFAULT_APPROVAL_WAIT_MS,
  DEFAULT_ARBITRATION_WAIT_MS,
  DEFAULT_SEND_TIMEOUT_MS,
  DEFAULT_SIGNAL_TIMEOUT_MS,
  DEFAULT_WAIT_EVENT_TIMEOUT_MS,
  DEFAULT_WAIT_TIMEOUT_MS,
} from '../core/base/param-limits';
import { within } from '../core/base/when-first';

/**
 * How long past its own wait a call's answer may take before the host (or the link to it) is said
 * to be stalled (docs/cli.md#errors): a loaded machine answers within a second or two; ssh without
 * keep-alives never notices a peer that stopped, and a stopped host never answers.
 */
export const ANSWER_MARGIN_MS = 15_000;

/** The host's own wait for the calls that wait, when the call names none. */
const DEFAULT_WAIT_MS: Readonly<Record<string, number>> = {
  'pty/wait': DEFAULT_WAIT_TIMEOUT_MS,
  'pty/send': DEFAULT_SEND_TIMEOUT_MS,
  'pty/waitEvent': DEFAULT_WAIT_EVENT_TIMEOUT_MS,
};

/** How long a call of `method` with `params` waits on the host by its own account (0: it answers at once). */
export function ownWaitMs(method: string, params: Record<string, unknown>): number {
  // An agent's write that does not wait for the outcome may still wait for the person: their answer
  // (the policy asks) or their pause in typing (its timeout, else the default).
  if ((method === 'pty/write' || method === 'pty/appInput') && params.wait !== true) {
    return Math.max(DEFAULT_APPROVAL_WAIT_MS, typeof params.timeout === 'number' ? params.timeout : DEFAULT_ARBITRATION_WAIT_MS);
  }
  const named = [params.timeout, params.timeoutMs, params.waitMs].filter((n): n is number => typeof n === 'number');
  if (named.length > 0) return Math.max(...named);
  // A write or a signal that waits, waits as a send does (or as a signal does).
  if (params.wait === true) return method === 'pty/signal' ? DEFAULT_SIGNAL_TIMEOUT_MS : DEFAULT_SEND_TIMEOUT_MS;
  return DEFAULT_WAIT_MS[method] ?? 0;
}

/**
 * `call` raced against its bound: `stalled(ms)` is thrown when no answer came within the call's
 * own wait and ANSWER_MARGIN_MS more.
 */
export function answerWithin<T>(method: string, params: Record<string, unknown>, call: Promise<T>, stalled: (ms: number, own: number) => Error): Promise<T> {
  const own = ownWaitMs(method, params);
  return within(call, own + ANSWER_MARGIN_MS, () => stalled(own + ANSWER_MARGIN_MS, own));
}

/** The words for a stalled host, `who` being `host "NAME"` or `the Shared PTY host ID`. */
export function stalledMessage(who: string, ms: number, own: number): string {
  const within = own > 0 ? ` (the wait's ${own / 1000} s and ${ANSWER_MARGIN_MS / 1000} s more)` : '';
  // A call it had already read is still carried out if it recovers (an `open`, a `kill`): a retry may find it done.
  return `no answer from ${who} within ${ms / 1000} s${within}: it, or the way to it, is stalled (what was asked may still be done if it recovers)`;
}
