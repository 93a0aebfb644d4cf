import { randomUUID } from 'node:crypto';
import { serverError } from '../base/errors';
import { Emitter, toDisposable, type IDisposable } from '../base/lifecycle';
import { anyEvent, mapEvent, whenFirst } from '../base/when-first';
import type { Session } from '../session/session';
import type { InputSource } from '../session/input/input-source';
import type { NotificationSink } from '../io/subscription';
import type { PersonAsker } from '../io/caller';
import { approvalAnswer, type ApprovalAnswer, type ApprovalRequest } from './approval-request';

export type { ApprovalAnswer, ApprovalRequest } from './approval-request';

/** The user's answers, in the order the editor offers them. */
export const APPROVAL_ANSWERS: readonly ApprovalAnswer[] = approvalAnswer.options;

/** Notifications to the clients that answer (`host/watchAgents`). */
export const AgentNotification = {
  /** A new request: `ApprovalRequest`. */
  Approval: 'agent/approval',
  /** A request is over (answered here or elsewhere, timed out, or its caller went away): `{ id, decision }`. */
  ApprovalEnded: 'agent/approvalEnded',
  /** An agent's write call started or ended on a session: `{ session, typing }`. */
  Typing: 'agent/typing',
} as const;

interface Pending {
  request: ApprovalRequest;
  /** Where the answer goes; listened to while the request waits. */
  answered: Emitter<ApprovalAnswer | 'unanswered'>;
  /** Asked through the agent's own client: the caller whose client asks (it alone may answer it). */
  owner?: object;
}

/**
 * Where the host asks the user before an agent types into a session the user opened (`ask`), and
 * tells who is watching which sessions have an agent's call writing or waiting ("agent typing").
 * The watchers are the editor windows connected to this host (`host/watchAgents`); the first
 * answer wins, and every watcher is told the request is over so no window keeps asking.
 */
export class ApprovalBroker {
  private readonly _watchers = new Set<NotificationSink>();
  private _controlWatchers = 0;
  private readonly _pending = new Map<string, Pending>();
  /** Agent calls in progress per session id. */
  private readonly _typing = new Map<string, number>();

  /** True when some client can answer (with none, `ask` acts as the headless policy, docs/protocol.md#agent-write-approval). */
  get canAsk(): boolean {
    return this._watchers.size > 0;
  }

  /**
   * Connections on the control socket that watch: an editor window watches every host it sees,
   * which must not keep an empty host from ending by itself (exit-empty counts the others).
   */
  get controlWatchers(): number {
    return this._controlWatchers;
  }

  /** Adds a client that answers requests and follows agent typing, until the handle is disposed. */
  watch(sink: NotificationSink, onControlSocket = false): IDisposable {
    this._watchers.add(sink);
    if (onControlSocket) this._controlWatchers++;
    return toDisposable(() => {
      if (!this._watchers.delete(sink)) return;
      if (onControlSocket) this._controlWatchers--;
    });
  }

  /** The requests waiting for an answer now (a window that connects late asks them too). */
  pending(): ApprovalRequest[] {
    return [...this._pending.values()].filter((p) => p.answered.hasListeners()).map((p) => p.request);
  }

  /** Session ids with an agent's write call in progress. */
  typingSessions(): string[] {
    return [...this._typing.keys()];
  }

  /**
   * Asks the watchers whether the agent may write `text` into `session`; resolves with the first
   * answer, or `unanswered` when `timeoutMs` passes or `signal` aborts (the caller went away).
   * With no watcher, `own` (the agent's own client, which can ask the person) is asked instead,
   * and only its caller `owner` may answer.
   */
  ask(
    session: Session,
    from: InputSource,
    text: string,
    timeoutMs: number,
    signal?: AbortSignal,
    own?: { asker: PersonAsker; owner: object },
  ): Promise<ApprovalAnswer | 'unanswered'> {
    // One question per session at a time: an agent that writes again (or in parallel) before the
    // user answered would otherwise stack questions on the user's screen.
    if ([...this._pending.values()].some((p) => p.request.session === session.id && p.answered.hasListeners())) {
      return Promise.reject(
        serverError(
          `An earlier request of an agent to type into session ${session.name} still waits for the user's answer; nothing was written. Wait for that call to return, then try again.`,
          {
            session: session.id,
            awaitingApproval: true,
          },
        ),
      );
    }
    const request: ApprovalRequest = {
      id: randomUUID(),
      session: session.id,
      name: session.name,
      text,
      origin: from.origin,
      transport: from.transport,
      at: new Date().toISOString(),
    };
    // The first answer wins: once the wait is over nobody listens to `answered`, so a later one does not count.
    const answered = new Emitter<ApprovalAnswer | 'unanswered'>();
    const byOwn = this._watchers.size === 0 && own !== undefined;
    this._pending.set(request.id, { request, answered, owner: byOwn ? own.owner : undefined });
    // A session that ends has nothing left to approve.
    const first = whenFirst(
      anyEvent(
        answered.event,
        mapEvent(session.onExit, () => 'unanswered' as const),
      ),
      timeoutMs,
      signal,
    );
    // The question's own end (an answer, the timeout, the caller gone) stops the client asking.
    const over = new AbortController();
    if (byOwn) {
      own.asker.ask({ id: request.id, session: request.session, name: request.name, text }, over.signal)?.then(
        (a) => answered.fire(a),
        () => answered.fire('unanswered'),
      );
    } else this._notify(AgentNotification.Approval, { ...request });
    return first.then((outcome) => {
      const answer = outcome.kind === 'event' ? outcome.value : 'unanswered';
      this._pending.delete(request.id);
      over.abort();
      answered.dispose();
      this._notify(AgentNotification.ApprovalEnded, { id: request.id, decision: answer });
      return answer;
    });
  }

  /**
   * The user's answer to request `id`; false when it is no longer waiting (answered elsewhere, or
   * over). `by`: an agent's caller answering what its own client asked the person; it answers
   * only those (false for any other).
   */
  answer(id: string, answer: ApprovalAnswer, by?: object): boolean {
    const p = this._pending.get(id);
    // Over (timed out, the caller gone, answered) but not yet cleared: too late.
    if (!p || !p.answered.hasListeners()) return false;
    if (by !== undefined && p.owner !== by) return false;
    p.answered.fire(answer);
    return true;
  }

  /** Marks an agent's write call in progress on `session` until the handle is disposed. */
  agentTyping(session: Session): IDisposable {
    const n = this._typing.get(session.id) ?? 0;
    this._typing.set(session.id, n + 1);
    if (n === 0) this._notify(AgentNotification.Typing, { session: session.id, typing: true });
    let done = false;
    return toDisposable(() => {
      if (done) return;
      done = true;
      const left = (this._typing.get(session.id) ?? 1) - 1;
      if (left > 0) {
        this._typing.set(session.id, left);
        return;
      }
      this._typing.delete(session.id);
      this._notify(AgentNotification.Typing, { session: session.id, typing: false });
    });
  }

  private _notify(method: string, params: Record<string, unknown>): void {
    for (const w of this._watchers) w.notify(method, params);
  }
}
