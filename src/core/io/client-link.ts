import { Disposable, type IDisposable } from '../base/lifecycle';
import type { Origin, Session } from '../session/session';
import type { Transport } from '../session/input/input-source';
import { tokenRegexBudget, type Caller, type ClientDeclaration, type PersonAsker, type TokenHolder, type TokenScope } from './caller';
import { RegexBudget } from './regex-budget';
import { FlowPatience } from './flow-window';
import { OutputSubscription, type NotificationSink } from './subscription';
import type { EventLog } from '../session/events/event-log';
import { EventSubscription, type EventSubscriptionOptions } from './event-subscription';

/** How a client subscribes: from where, and flow-controlled with which window (lossy without one). */
export interface SubscribeOptions {
  since?: number;
  window?: number;
}

/** Where a client that answers agents' approval requests is kept (the host's `ApprovalBroker`). */
export interface AgentWatchers {
  watch(sink: NotificationSink, onControlSocket: boolean): IDisposable;
}

/** What a transport knows about a new connection when it creates its link. */
export interface ClientLinkOptions {
  /** Who the client is until it says otherwise (see `declare`). */
  origin: Origin;
  transport: Transport;
  scope?: TokenScope;
  /** The only session the client's token reaches (a scoped token); undefined: every one. */
  onlySession?: string;
  /** The client's token is an agent's for every session (caller.ts Grant). */
  everySession?: true;
  /** The holder of the client's scoped token (undefined: the host's token or a socket). */
  holder?: TokenHolder;
  /** With the host's own token over HTTP: the regex time every request and connection with it shares (caller.ts Grant); on the host's sockets, theirs. */
  regexBudget?: RegexBudget;
  /** Where notifications go: the transport's framing and back-pressure. */
  sink: NotificationSink;
  /**
   * The session a per-session socket implies. The link counts as a client of it for its whole
   * life (SessionInfo.clients), so its own subscription there does not count again.
   */
  home?: Session;
}

/**
 * One connected caller, whatever the transport: who it is (origin, transport, token scope), the
 * notification sink the transport gave it, and the subscriptions it holds by session id, so a
 * later call (an acknowledgement) can reach them. The transport creates one per connection and
 * disposes it when the connection closes, which releases everything the client held.
 */
export class ClientLink extends Disposable implements Caller, NotificationSink {
  private _origin: Origin;
  private _transport: Transport;
  readonly scope: TokenScope;
  readonly onlySession: string | undefined;
  readonly everySession: true | undefined;
  readonly holder: TokenHolder | undefined;
  /** The connection's own regex time, and its token's (shared with every connection made with it). */
  readonly regexBudgets: readonly RegexBudget[];
  private readonly _sink: NotificationSink;
  private readonly _home: Session | undefined;
  private readonly _output = new Map<string, OutputSubscription>();
  /** The client's `pty/events` subscription (one per connection: a new one replaces it). */
  private _events: EventSubscription | undefined;
  /** The patience of this connection's flow-controlled subscriptions, per session (with the host's token; a scoped token's is its holder's). */
  private readonly _patience = new Map<string, FlowPatience>();
  /** Set while this client answers approval requests and follows agent typing (`host/watchAgents`). */
  private _agentWatch: IDisposable | undefined;

  constructor(options: ClientLinkOptions) {
    super();
    this._origin = options.origin;
    this._transport = options.transport;
    this.scope = options.scope ?? 'control';
    this.onlySession = options.onlySession;
    this.everySession = options.everySession;
    this.holder = options.holder;
    // Its connection's own, and its token's.
    const token = tokenRegexBudget(options);
    this.regexBudgets = token ? [new RegexBudget(), token] : [new RegexBudget()];
    this._sink = options.sink;
    this._home = options.home;
    this._register({ dispose: () => this._releaseSubscriptions() });
    if (options.home) this._register(options.home.addClient());
  }

  /** Who the client is; with a scoped token an agent holds, an agent, whatever it declared (see TokenHolder). */
  get origin(): Origin {
    return this.agentToken ? 'agent' : this._origin;
  }

  /** The client's token is one an agent holds (it was used on `/mcp`): its writes pass the agent guards. */
  get agentToken(): boolean {
    return this.holder?.agent === true;
  }

  get transport(): Transport {
    return this._transport;
  }

  /** The client said who it is (the `client` param): it is that from now on. */
  declare(d: ClientDeclaration): void {
    this._origin = d.origin;
    if (d.transport) this._transport = d.transport;
    this._asks = d.asks === true;
  }

  /** Set while the client says its MCP client can ask the person (ClientDeclaration.asks). */
  private _asks = false;
  /**
   * Its questions go to it alone, as the watchers' notifications: `agent/approval`, and
   * `agent/approvalEnded` once the question is over (answered, timed out, the call gone), so its
   * client stops asking. It answers with `host/approve`.
   */
  private readonly _asker: PersonAsker = {
    ask: (question, over) => {
      over.addEventListener('abort', () => this.notify('agent/approvalEnded', { id: question.id }), { once: true });
      this.notify('agent/approval', { ...question });
    },
  };

  get personAsker(): PersonAsker | undefined {
    return this._asks ? this._asker : undefined;
  }

  /**
   * Streams `session`'s output to this client from `since` (live when undefined), flow-controlled
   * when a `window` is given, replacing any subscription it had there. The subscription starts
   * sending on `start()`, which the caller runs once its answer is out, so the replay follows the
   * `{cursor}` response.
   */
  subscribe(session: Session, options: SubscribeOptions = {}): OutputSubscription {
    this._output.get(session.id)?.dispose();
    // On a session's own socket the session is implied, so notifications need not name it.
    const extra = session === this._home ? {} : { session: session.id };
    // Only a client that may type may make the program wait (docs/protocol.md): a view is lossy.
    const window = this.scope === 'view' ? undefined : options.window;
    const patience = window === undefined ? undefined : this._patienceOn(session.id);
    const sub = new OutputSubscription(session, this, { since: options.since, window, patience, extra, countAsClient: session !== this._home });
    if (this.isDisposed) sub.dispose();
    else this._output.set(session.id, sub);
    return sub;
  }

  /**
   * The patience of this client's flow-controlled subscriptions on a session: every connection with
   * one scoped token shares its holder's (a token reaches one session), so neither a new
   * subscription nor a new connection gives a client that acknowledges nothing new patience.
   */
  private _patienceOn(sessionId: string): FlowPatience {
    if (this.holder && !this.holder.hostToken) return this.holder.flowPatience;
    let p = this._patience.get(sessionId);
    if (!p) this._patience.set(sessionId, (p = new FlowPatience()));
    return p;
  }

  /** Stops the output of `sessionId`; false when there was none. */
  unsubscribe(sessionId: string): boolean {
    const sub = this._output.get(sessionId);
    sub?.dispose();
    return this._output.delete(sessionId);
  }

  /** The output subscription this client holds on `sessionId` (for `pty/ack` to reach it). */
  subscription(sessionId: string): OutputSubscription | undefined {
    return this._output.get(sessionId);
  }

  /**
   * Sends the host's events to this client (of one session, or all), replacing any event
   * subscription it had; it starts sending on `start()`, once the answer is out.
   */
  subscribeEvents(log: EventLog, options: EventSubscriptionOptions = {}): EventSubscription {
    this._events?.dispose();
    const sub = new EventSubscription(log, this, options);
    if (this.isDisposed) sub.dispose();
    else this._events = sub;
    return sub;
  }

  /** Stops the events; false when there were none. */
  unsubscribeEvents(): boolean {
    const had = this._events !== undefined;
    this._events?.dispose();
    this._events = undefined;
    return had;
  }

  /** Makes this client one that answers agents' approval requests and hears of agent typing (once per connection). */
  watchAgents(broker: AgentWatchers): void {
    if (this._agentWatch || this.isDisposed) return;
    this._agentWatch = broker.watch(this, this._transport === 'control');
  }

  /** True while a subscription of this client may still send (its session has not exited and sent all). */
  get streaming(): boolean {
    for (const sub of this._output.values()) if (!sub.finished) return true;
    return false;
  }

  /** Session ids this client follows. */
  get subscribedSessions(): string[] {
    return [...this._output.keys()];
  }

  // ---- NotificationSink: the transport's

  notify(method: string, params: Record<string, unknown>): void {
    this._sink.notify(method, params);
  }

  congested(): boolean {
    return this._sink.congested();
  }

  whenDrained(fn: () => void): IDisposable {
    return this._sink.whenDrained(fn);
  }

  cork(): void {
    this._sink.cork?.();
  }

  uncork(): void {
    this._sink.uncork?.();
  }

  flush(): void {
    this._sink.flush?.();
  }

  private _releaseSubscriptions(): void {
    for (const sub of this._output.values()) sub.dispose();
    this._output.clear();
    this._patience.clear();
    this.unsubscribeEvents();
    this._agentWatch?.dispose();
    this._agentWatch = undefined;
  }
}
