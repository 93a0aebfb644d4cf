import type { Event } from '../base/lifecycle';
import { whenFirst } from '../base/when-first';
import type { EventLog } from '../session/events/event-log';
import type { EventType, HostEvent } from '../session/events/session-events';
import type { Session } from '../session/session';

/** Why `wait_event` returned: an event came, time ran out, or the session ended without one. */
export type WaitEventReason = 'matched' | 'timeout' | 'session_exit';

export interface WaitEventResult {
  event: HostEvent | null;
  reason: WaitEventReason;
}

/**
 * Waits for the first event of `session` whose type is one of `types` (any type when undefined)
 * that comes after the call began (docs/protocol.md#events-ptyevents-and-ptywaitevent `wait_event`). An ended session has nothing more
 * to say: it answers `session_exit` (after its `exit` event, when that is one of the types).
 */
export async function waitForEvent(
  log: EventLog,
  session: Session,
  types: readonly EventType[] | undefined,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<WaitEventResult> {
  if (!session.running) return { event: null, reason: 'session_exit' };
  const began = Date.now();
  const wanted = types ? new Set<string>(types) : undefined;
  /** The session's events as this wait's answers: a wanted one, or its exit when that is not wanted. */
  const answers: Event<WaitEventResult> = (listener) =>
    log.onEvent((e) => {
      if (e.session !== session.id) return;
      // A wait seen only now may have begun before the call (the prompt a finished command left,
      // seen by a later probe): not something that happened after the call.
      if (e.type === 'input_wait' && session.inputWatch.waitBegan < began) return;
      if (!wanted || wanted.has(e.type)) listener({ event: e, reason: 'matched' });
      else if (e.type === 'exit') listener({ event: null, reason: 'session_exit' });
    });
  const first = await whenFirst(answers, timeoutMs, signal);
  return first.kind === 'event' ? first.value : { event: null, reason: 'timeout' };
}
