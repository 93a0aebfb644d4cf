import { describedFully, olderHostMessage } from './remote-session-info';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { serveStdio, StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import type { McpServer } from '@modelcontextprotocol/server';
import { ErrorCode, hostGone, RpcError, unknownSession } from '../core/base/errors';
import type { SessionInfo } from '../core/methods/types';
import { resolveSelector, selectionError, selectOrThrow } from '../core/session/selector';
import { ensureDaemon } from '../host/daemon';
import { hostOfFolder, isAlive, readLiveRecords, type HostRecord } from '../host/discovery';
import { ConnectionClosedError, RequestCancelledError, RpcCallError, RpcClient } from '../transport/client/rpc-client';
import { DEFAULT_MAX_LINE_BYTES } from '../transport/base/line-reader';
import { createMcpServer, guardParams, TOOLS, type CallVia, type ToolBackend } from '../transport/mcp/mcp-tools';
import { TASK_TOOLS } from '../transport/mcp/mcp-tasks';
import { StdinScreen } from '../transport/mcp/stdio-screen';
import { AnswersOwed } from '../transport/mcp/answers-owed';
import { RunStore } from '../transport/mcp/tool-run';
import { personPrompt, type PersonPrompt } from '../transport/mcp/mcp-elicit';
import { askPersonToApprove } from '../transport/mcp/approval-question';
import { paramsOf } from '../core/methods/notifications';
import type { Notification } from '../transport/client/rpc-client';
import { parseArgs } from './args';
import { COMMAND_FLAGS } from './command-flags';
import { HostsConfigError, LOCAL_HOST, splitHostSelector, unknownHostError, unknownHostHint, type HostsConfig } from '../host/hosts-config';
import { hostsConfigForLocal } from './remote';
import { RemoteHostError, RemoteHosts, whenBridgesGone } from '../host/remote-hosts';
import { hostGoneMessage } from './find-session';
import { RuntimeDirWriteError, UnsafeRuntimeDirError } from '../host/runtime-dir';
import { answerWithin, stalledMessage } from './answer-bound';

/**
 * Every call names its caller (the `client` param, see src/core/io/caller.ts): the host sees a
 * control-socket client, but the writes are an agent's, relayed from stdio.
 */
const AGENT_OVER_STDIO = { origin: 'agent', transport: 'mcp-stdio' } as const;

/** How long a host may take to list its sessions before its discovery record stands in for it. */
const HOST_LIST_WAIT_MS = 2000;

/**
 * The methods of the tools that wait for the program (the ones a task runs). A call of one apart
 * from its request (a task, a 2026-07-28 round) gets a connection of its own to the host, closed
 * when the call is cancelled: the host ends a call whose connection goes, so its wait ends at once
 * and the session's one send is free again (docs/protocol.md#tasks-and-input-rounds).
 */
const WAITING_METHODS: ReadonlySet<string> = new Set(TOOLS.filter((t) => TASK_TOOLS.has(t.name)).map((t) => t.method.name));

/** A session as the backend found it: on a host of this machine, or on a remote host (by name). */
interface Found {
  s: SessionInfo;
  host?: HostRecord;
  remote?: string;
}

/** A remote host left out of a listing, and why (`session/list`'s `unreachable`). */
type LeftOut = { host: string; reason: string };

/**
 * The stdio MCP backend: reaches every live host of the user through discovery and every remote
 * host of hosts.json through its bridge (docs/hosts.md#remote-hosts), routes each session's calls
 * to the host that owns it, and opens new sessions on the remote host `host` names, else in the
 * host whose workspace holds `cwd`, else in the per-user host (started on demand).
 */
export class DiscoveryBackend implements ToolBackend {
  private readonly _clients = new Map<string, Promise<RpcClient>>();
  /** Every session seen listed, so a call to one whose host has since died can say so. */
  private readonly _seen = new Map<string, { host: HostRecord; s: SessionInfo }>();
  /** Hosts already reported gone on stderr (once each). */
  private readonly _reported = new Set<string>();
  /** Remote hosts already reported unreachable on stderr, until they answer again. */
  private readonly _unreachable = new Set<string>();
  private readonly _remotes: RemoteHosts;
  /** Connections dropped because they stalled, with the error that said so (see _answer). */
  private readonly _stalled = new WeakMap<RpcClient, RpcError>();

  /** Questions to the person in progress (host/approve answers them), by request id: ended early when the host says so. */
  private readonly _asking = new Map<string, AbortController>();
  /** The prompt of each call in progress that brought its own (a task, a 2026-07-28 round), by session id. */
  private readonly _callPrompts = new Map<string, PersonPrompt>();

  /**
   * `prompt`: what the MCP client can ask the person (read at each call: it is known once the
   * client has initialized). With form elicitation the relay says so to the local hosts, which then
   * ask through it when no editor window watches (docs/protocol.md#agent-write-approval).
   */
  constructor(
    private readonly _cliPath: string,
    config: HostsConfig = { file: '', hosts: new Map() },
    private readonly _prompt: () => PersonPrompt = () => ({}),
  ) {
    // A dropped transport, said once in the MCP client's log; the next call makes it again.
    this._remotes = new RemoteHosts(config, (message) => process.stderr.write(`shared-pty mcp: ${message}\n`));
  }

  /** The remote hosts' names, offered to open_session as `host`. */
  get remoteHosts(): readonly string[] {
    return this._remotes.names;
  }

  /**
   * What every call to a local host says of its caller: an agent over stdio, whose client may ask
   * the person. (A remote host's calls do not offer it: its bridge's notifications are not followed.)
   */
  private _declaration(prompt?: PersonPrompt): { origin: 'agent'; transport: 'mcp-stdio'; asks?: true } {
    return (prompt ?? this._prompt()).choose ? { ...AGENT_OVER_STDIO, asks: true } : AGENT_OVER_STDIO;
  }

  /** A host asks the person through us: `agent/approval` for one of our writes; `agent/approvalEnded` when it is over. */
  private _onHostNotification(client: RpcClient, n: Notification): void {
    const ended = paramsOf(n, 'agent/approvalEnded');
    if (ended) {
      this._asking.get(ended.id)?.abort();
      return;
    }
    const q = paramsOf(n, 'agent/approval');
    if (!q) return;
    const over = new AbortController();
    this._asking.set(q.id, over);
    // A question about a session whose call brought its own prompt goes there (its client's round or task).
    const prompt = (q.session !== undefined ? this._callPrompts.get(q.session) : undefined) ?? this._prompt();
    void askPersonToApprove(prompt, q, over.signal)
      .then((decision) => (over.signal.aborted ? undefined : client.request('host/approve', { id: q.id, decision, client: this._declaration(prompt) })))
      .catch(() => {}) // the question ended meanwhile: the host has decided without it
      .finally(() => this._asking.delete(q.id));
  }

  async call(method: string, params: Record<string, unknown>, via?: CallVia): Promise<unknown> {
    const signal = via?.signal;
    if (!signal) return this._call(method, params, via?.prompt);
    // A call apart from its request stops waiting when it is cancelled; on a host of this machine
    // the host's own wait ends with it (the call's own connection closes, see WAITING_METHODS).
    return new Promise((resolve, reject) => {
      const stop = () => reject(cancelled());
      if (signal.aborted) return stop();
      signal.addEventListener('abort', stop, { once: true });
      this._call(method, params, via?.prompt, signal)
        .then(resolve, reject)
        .finally(() => signal.removeEventListener('abort', stop));
    });
  }

  private async _call(method: string, params: Record<string, unknown>, prompt: PersonPrompt | undefined, signal?: AbortSignal): Promise<unknown> {
    try {
      if (method === 'session/list') {
        // Hosts left out are said with the list: an agent sees no stderr, and "none there" is not "not reached".
        const unreachable: LeftOut[] = [];
        const sessions = (await this._allSessions(unreachable)).map((f) => f.s);
        // So is a hosts.json not used: with it, every remote host's sessions are missing.
        const broken = this._remotes.config.broken;
        return { sessions, ...(unreachable.length ? { unreachable } : {}), ...(broken ? { hostsFile: broken } : {}) };
      }
      if (method === 'session/create') return await this._create(params);
      const selector = String(params.session ?? '');
      const found = await this._find(selector);
      // A remote host's calls share its one bridge: a cancelled one is cancelled on that host by its id.
      if (found.remote !== undefined) {
        if (method === 'pty/events') return await this._remoteEventsOf(found.remote, found.s.id, params.since, signal);
        return await this._onRemote(found.remote, method, { ...params, session: found.s.id }, signal);
      }
      const host = found.host!;
      if (method === 'pty/events') return await this._eventsOf(host, found.s.id, params.since);
      if (prompt) this._callPrompts.set(found.s.id, prompt);
      // A call that may wait long, apart from its request: on a connection of its own, closed on cancel.
      const own = signal && WAITING_METHODS.has(method) ? new AbortController() : undefined;
      const closeOwn = () => own?.abort();
      signal?.addEventListener('abort', closeOwn, { once: true });
      try {
        const sent = { ...params, session: found.s.id, client: this._declaration(prompt) };
        withinLineLimit(method, sent, `the Shared PTY host ${host.hostId}`);
        const client = own ? await this._ownClient(host, own.signal) : await this._client(host);
        const asked = client.request(method, sent);
        // A stopped host never answers: said as the CLI says it, and its connection made again next time.
        return await this._answerLocal(host, client, method, params, asked);
      } catch (e) {
        // Cancelled: the call's own connection was closed on purpose, the host is fine.
        if (signal?.aborted) throw cancelled();
        // The host died under the call (or just before it): say so, not "Connection closed".
        if (e instanceof ConnectionClosedError || !isAlive(host.pid)) throw await this._gone(host);
        throw e;
      } finally {
        signal?.removeEventListener('abort', closeOwn);
        closeOwn();
        if (prompt && this._callPrompts.get(found.s.id) === prompt) this._callPrompts.delete(found.s.id);
      }
    } catch (e) {
      if (e instanceof RpcCallError) throw new RpcError(e.code, e.message, e.data);
      if (e instanceof RemoteHostError) throw hostGone(e.message, e.host);
      if (e instanceof HostsConfigError) throw new RpcError(ErrorCode.ServerError, e.message);
      // A runtime directory the host cannot use (SHARED_PTY_DIR=/proc/x, a folder others can write):
      // the user's to fix, said in its one line, not an internal error.
      if (e instanceof RuntimeDirWriteError || e instanceof UnsafeRuntimeDirError) throw new RpcError(ErrorCode.ServerError, e.message);
      throw e;
    }
  }

  /**
   * `pty/events` as a one-shot caller gets it (retainedEvents), for a task that follows the
   * session's input waits (mcp-tasks.ts): on a connection of its own, closed after.
   */
  private async _eventsOf(host: HostRecord, session: string, since: unknown): Promise<{ seq: number; events: unknown[] }> {
    const client = await RpcClient.connect(host.control);
    try {
      return await retainedEvents(client, session, since, (method, params) => client.request(method, { ...params, client: AGENT_OVER_STDIO }));
    } finally {
      client.close();
    }
  }

  /**
   * `pty/events` on a remote host's session, as `_eventsOf` answers it, on the host's one bridge,
   * which every call shares (nothing of this server subscribes it to events otherwise).
   */
  private async _remoteEventsOf(name: string, session: string, since: unknown, signal?: AbortSignal): Promise<{ seq: number; events: unknown[] }> {
    const client = await this._remotes.connect(name);
    return retainedEvents(client, session, since, (method, params) => this._onRemote(name, method, params, signal));
  }

  /**
   * A connection to `host` for one call, closed once `closed` aborts (after the call, or when it is
   * cancelled: the host then stops the call). The host's questions about the call's writes come on
   * it, as on a shared one.
   */
  private async _ownClient(host: HostRecord, closed: AbortSignal): Promise<RpcClient> {
    const client = await RpcClient.connect(host.control);
    client.onNotification((n) => this._onHostNotification(client, n));
    if (closed.aborted) client.close();
    else closed.addEventListener('abort', () => client.close(), { once: true });
    return client;
  }

  /** One call on a remote host's bridge; a drop under it is said in one line (and the next call reconnects). */
  private async _onRemote(name: string, method: string, params: Record<string, unknown>, signal?: AbortSignal): Promise<unknown> {
    const sent = { ...params, client: AGENT_OVER_STDIO };
    withinLineLimit(method, sent, `host "${name}"`);
    const client = await this._remotes.connect(name);
    try {
      const asked = client.request(method, sent, signal);
      // A link that stalls (an ssh whose peer stopped) never closes by itself: dropped, made again next time.
      return await this._answer(client, method, params, asked, name, `host "${name}"`, () => this._remotes.drop(name));
    } catch (e) {
      if (e instanceof RequestCancelledError) throw cancelled();
      if (e instanceof ConnectionClosedError) throw hostGone(await this._remotes.dropMessage(name), name);
      // Gone meanwhile on its host: said with the host, as the agent named it.
      if (e instanceof RpcCallError && e.code === ErrorCode.UnknownSession && typeof params.session === 'string')
        throw unknownSession(`${name}:${params.session}`);
      // An older version there: the host named, never the method it lacks.
      if (e instanceof RpcCallError && e.code === ErrorCode.MethodNotFound) throw new RpcError(ErrorCode.MethodNotFound, olderHostMessage(name));
      throw e;
    }
  }

  private async _create(params: Record<string, unknown>): Promise<unknown> {
    const { host: name, ...rest } = params;
    if (typeof name === 'string' && name !== LOCAL_HOST) {
      if (!this._remotes.config.hosts.has(name)) throw unknownHostError(this._remotes.config, name);
      // A folder of this machine means nothing there: the remote host's default unless the agent names one.
      const info = (await this._onRemote(name, 'session/create', rest)) as SessionInfo;
      return { ...info, host: name };
    }
    params = rest;
    // Without a cwd the session opens where the agent works: the folder it started us in.
    const cwd = path.resolve(typeof params.cwd === 'string' ? params.cwd : process.cwd());
    // The per-user host of our own version: one left by an update keeps its sessions, takes no new ones.
    const host =
      hostOfFolder(readLiveRecords(), cwd) ??
      (await ensureDaemon({ cliPath: this._cliPath, onOutdatedHost: (message) => process.stderr.write(`shared-pty mcp: ${message}\n`) }));
    const sent = { ...params, cwd, client: this._declaration() };
    withinLineLimit('session/create', sent, `the Shared PTY host ${host.hostId}`);
    const client = await this._client(host);
    const asked = client.request('session/create', sent);
    return this._answerLocal(host, client, 'session/create', params, asked);
  }

  /**
   * The session `selector` names, by the rule of every surface (core/session/selector.ts):
   * `NAME:SELECTOR` on that remote host, else among every session of every host.
   */
  private async _find(selector: string): Promise<Found> {
    const split = splitHostSelector(this._remotes.config, selector);
    if (split.host !== undefined && split.host !== LOCAL_HOST) {
      const sessions = await this._remoteSessions(split.host, true);
      const found = resolveSelector(
        sessions,
        split.selector,
        (x) => x.id,
        (x) => x.name,
      );
      if (found.kind === 'found') return { s: found.item, remote: split.host };
      // The host over there died since (between calls): its sessions ended with it, not a wrong name.
      const gone = this._remotes.goneLine(split.host);
      if (found.kind === 'unknown' && gone) throw new RpcError(ErrorCode.UnknownSession, `Unknown session: ${selector} (${gone})`, { session: selector });
      // The message names the host, as the CLI's does, and the sessions a selector could mean.
      throw selectionError(selector, found, (x) => `${split.host}:${x.id}`);
    }
    if (split.host === LOCAL_HOST) return this._findLocal(split.selector);
    const unreachable: LeftOut[] = [];
    const all = await this._allSessions(unreachable);
    const found = resolveSelector(
      all,
      selector,
      (f) => f.s.id,
      (f) => f.s.name,
    );
    // Unknown everywhere: _findLocal says so, or that the host it was on has died since; a host
    // that could not be asked may have it (an agent sees no stderr).
    if (found.kind === 'unknown') {
      if (unreachable.length === 0 || unknownHostHint(this._remotes.config, selector)) return this._findLocal(selector);
      const notAsked = unreachable.map((u) => `"${u.host}"`).join(', ');
      return this._findLocal(selector).catch((e: unknown) => {
        if (!(e instanceof RpcError) || e.code !== ErrorCode.UnknownSession) throw e;
        const why = `not looked for on host ${notAsked}, which could not be reached; name it as HOST:SESSION to try again`;
        throw new RpcError(ErrorCode.UnknownSession, `${e.message} (${why})`, { session: selector });
      });
    }
    if (found.kind === 'found') return found.item;
    throw selectionError(selector, found, (f) => (f.remote ? `${f.remote}:${f.s.id}` : f.s.id));
  }

  private async _findLocal(selector: string): Promise<Found> {
    const live = await this._liveSessions();
    const r = resolveSelector(
      live,
      selector,
      (f) => f.s.id,
      (f) => f.s.name,
    );
    if (r.kind === 'unknown') {
      // A session listed before whose host has died since: the host is gone, not the name wrong.
      const before = resolveSelector(
        [...this._seen.values()],
        selector,
        (f) => f.s.id,
        (f) => f.s.name,
      );
      if (before.kind === 'found' && !isAlive(before.item.host.pid)) throw await this._gone(before.item.host);
      // `far:bash-1` while hosts.json cannot be read: the file is why, not the name.
      const broken = this._remotes.config.broken;
      if (broken && selector.indexOf(':') > 0) throw new RpcError(ErrorCode.UnknownSession, `Unknown session: ${selector} (${broken})`, { session: selector });
      // `typo:bash-1`: a host hosts.json does not name, as the CLI says it.
      const hint = unknownHostHint(this._remotes.config, selector);
      if (hint) throw new RpcError(ErrorCode.UnknownSession, `Unknown session: ${selector} (${hint})`, { session: selector });
    }
    return selectOrThrow(
      live,
      selector,
      (f) => f.s.id,
      (f) => f.s.name,
    );
  }

  /** Every session of this machine and of every remote host that answers, remote ones with `host`. */
  private async _allSessions(unreachable?: LeftOut[]): Promise<Found[]> {
    const [local, ...remote] = await Promise.all([
      this._liveSessions(),
      ...this._remotes.names.map(async (name) =>
        (await this._remoteSessions(name, false, (reason) => unreachable?.push({ host: name, reason }))).map((s) => ({ s, remote: name }) as Found),
      ),
    ]);
    return [...local, ...remote.flat()];
  }

  /**
   * A remote host's sessions, each with `host`. Unreachable: an error when `must`, else none (said
   * once on stderr until it answers again, so one box that is off does not hide the others; and
   * to `leftOut`, for the listing to say).
   */
  private async _remoteSessions(name: string, must: boolean, leftOut?: (reason: string) => void): Promise<SessionInfo[]> {
    try {
      // Each host within its time: one that stops answering does not hold up the others' sessions.
      const sessions = await this._remotes.listSessions<SessionInfo>(name, () => this._onRemote(name, 'session/list', {}));
      this._unreachable.delete(name);
      return sessions.map((s) => ({ ...describedFully(s), host: name }));
    } catch (e) {
      if (must) throw e;
      // The relay is ending (its client closed stdin): a listing cut short is no failure to report.
      if (!this._remotes.closing) leftOut?.((e as Error).message);
      if (!this._unreachable.has(name) && !this._remotes.closing) {
        this._unreachable.add(name);
        process.stderr.write(`shared-pty mcp: ${(e as Error).message}\n`);
      }
      return [];
    }
  }

  /** The tool error for a host that is gone, told once on stderr too (the MCP client's log). */
  private async _gone(host: HostRecord): Promise<RpcError> {
    const message = await hostGoneMessage(host);
    if (!this._reported.has(host.hostId)) {
      this._reported.add(host.hostId);
      process.stderr.write(`shared-pty mcp: ${message}\n`);
    }
    return hostGone(message, host.hostId);
  }

  /**
   * Every session of every live host, as the hosts themselves list them now: a record is
   * rewritten a moment after a change, so a session just closed would still show as running, and
   * one just opened not at all. A host that does not answer in time is listed from its record.
   */
  private async _liveSessions(): Promise<Array<{ host: HostRecord; s: SessionInfo; remote?: undefined }>> {
    const lists = await Promise.all(
      readLiveRecords().map(async (host) => {
        const asked = this._client(host).then((c) => c.call('session/list', {}));
        const late = new Promise<undefined>((resolve) => {
          const timer: NodeJS.Timeout = setTimeout(() => resolve(undefined), HOST_LIST_WAIT_MS);
          timer.unref();
        });
        const answer = await Promise.race([asked, late]).catch(() => undefined);
        return (answer?.sessions ?? host.sessions).map((s) => ({ host, s }));
      }),
    );
    // Kept: what live hosts list now, and the last list of hosts that died.
    for (const [key, f] of this._seen) if (isAlive(f.host.pid)) this._seen.delete(key);
    for (const f of lists.flat()) this._seen.set(`${f.host.hostId}/${f.s.id}`, f);
    return lists.flat();
  }

  private _client(host: HostRecord): Promise<RpcClient> {
    let c = this._clients.get(host.hostId);
    if (!c) {
      c = RpcClient.connect(host.control);
      this._clients.set(host.hostId, c);
      c.then(
        (client) => {
          client.onNotification((n) => this._onHostNotification(client, n));
          client.onClose(() => this._clients.delete(host.hostId));
        },
        () => this._clients.delete(host.hostId),
      );
    }
    return c;
  }

  /**
   * `asked`'s answer, or, past the call's own wait and ANSWER_MARGIN_MS, a tool error saying the host
   * (`who`) is stalled; its connection is then dropped (`drop`), and every other call on it ends
   * with the same words, not with "the connection closed".
   */
  private async _answer<T>(
    client: RpcClient,
    method: string,
    params: Record<string, unknown>,
    asked: Promise<T>,
    host: string,
    who: string,
    drop: () => void,
  ): Promise<T> {
    try {
      return await answerWithin(method, params, asked, (ms, waited) => {
        const error = hostGone(`${stalledMessage(who, ms, waited)}; the connection is made again on the next use`, host);
        this._stalled.set(client, error);
        drop();
        return error;
      });
    } catch (e) {
      throw (e instanceof ConnectionClosedError && this._stalled.get(client)) || e;
    }
  }

  /** _answer for a host of this machine: the shared connection to it is the one dropped. */
  private _answerLocal<T>(host: HostRecord, client: RpcClient, method: string, params: Record<string, unknown>, asked: Promise<T>): Promise<T> {
    return this._answer(client, method, params, asked, host.hostId, `the Shared PTY host ${host.hostId}`, () => this._dropClient(host, client));
  }

  /** Closes the shared connection to `host` if it is `client` (it stalled): the next call makes a new one. */
  private _dropClient(host: HostRecord, client: RpcClient): void {
    void this._clients.get(host.hostId)?.then((shared) => {
      if (shared !== client) return;
      this._clients.delete(host.hostId);
      client.close();
    });
  }

  dispose(): void {
    for (const c of this._clients.values())
      void c.then(
        (client) => client.close(),
        () => {},
      );
    this._remotes.dispose();
  }
}

/**
 * `pty/events` as a one-shot caller gets it: `{ seq, events }`, the session's retained events after
 * `since` (none without it). The call subscribes `client`'s connection to the session's events;
 * the subscription is taken back at once (`pty/unsubscribe`), and the replay, sent just after the
 * answer, has come before the unsubscribe's answer. `call` sends a request on that connection.
 */
async function retainedEvents(
  client: RpcClient,
  session: string,
  since: unknown,
  call: (method: string, params: Record<string, unknown>) => Promise<unknown>,
): Promise<{ seq: number; events: unknown[] }> {
  const events: Array<{ seq: number }> = [];
  const listening = client.onNotification((n) => {
    const e = paramsOf(n, 'pty/event');
    if (e?.session === session) events.push(e);
  });
  try {
    const { seq } = (await call('pty/events', { session, ...(typeof since === 'number' ? { since } : {}) })) as { seq: number };
    await call('pty/unsubscribe', { session, events: true });
    return { seq, events: typeof since === 'number' ? events.filter((e) => e.seq > since && e.seq <= seq) : [] };
  } finally {
    listening.dispose();
  }
}

/**
 * Refuses a call that would make a line longer than a host reads (`DEFAULT_MAX_LINE_BYTES`, 1 MiB,
 * as `/mcp` takes a body), with -32600 naming the limit, and sends nothing. The stdio side takes
 * lines of up to 10 MiB; a line over the limit made the host close the connection, and every call
 * on it ended "the connection to the host closed" (a `send` of a 1.2 MB text). A host started with
 * `serve --max-line-bytes` may take more: the relay keeps to the default all the same.
 */
function withinLineLimit(method: string, params: Record<string, unknown>, to: string): void {
  // The line as the client writes it, with the longest id it gives: the check never passes one the host refuses.
  const bytes = Buffer.byteLength(JSON.stringify({ jsonrpc: '2.0', id: Number.MAX_SAFE_INTEGER, method, params })) + 1;
  if (bytes <= DEFAULT_MAX_LINE_BYTES) return;
  throw new RpcError(
    ErrorCode.InvalidRequest,
    `Invalid Request: the call is too large: ${bytes} bytes as a JSON-RPC line to ${to}, which reads lines of at most ${DEFAULT_MAX_LINE_BYTES} bytes (1 MiB); nothing was sent: send the text in parts under 1 MiB`,
  );
}

/** How long `shared-pty mcp` waits for the answers to the calls it read, once its input has ended. */
const MCP_ANSWER_AT_END_MS = 3000;

/** How long `shared-pty mcp` lets its cleanup run once its client has closed its input. */
const MCP_EXIT_GRACE_MS = 1000;

/** What a cancelled call answers: the relay no longer waits (a task's program goes on in the terminal). */
function cancelled(): RpcError {
  return new RpcError(ErrorCode.ServerError, 'Cancelled: no longer waiting for the host');
}

/**
 * `mcp`: the MCP server over stdio (one line of MCP configuration is all a client needs). The
 * connection's first message picks the protocol revision: `initialize` (2025-11-25) or a request
 * carrying its revision in `_meta` (2026-07-28, `server/discover` first if the client asks).
 */
export async function mcpCommand(argv: string[]): Promise<number> {
  parseArgs(argv, COMMAND_FLAGS.mcp);
  const cliPath = require.main?.filename ?? process.argv[1];
  // The relay asks the person through the server of the connection (2025-11-25: one, initialized).
  let server: McpServer | undefined;
  // A broken hosts.json is said on stderr (where a client logs its server's words), and the relay
  // serves this machine's sessions rather than leave the agent none.
  const hosts = hostsConfigForLocal((m) => process.stderr.write(`shared-pty mcp: ${m}; serving this machine's sessions only\n`));
  const backend = new DiscoveryBackend(cliPath, hosts, () => (server ? personPrompt(server) : {}));
  // Tasks and 2026-07-28 rounds outlive the request that started them: kept for the connection's life.
  const runs = new RunStore();
  // When the client closes its end, the calls it made are answered before the SDK sees the end
  // (which would drop them): a script may pipe its requests in. A client that closes its end to
  // stop the server (MCP's stdio shutdown) waits for the exit: the answers get MCP_ANSWER_AT_END_MS.
  const owed = new AnswersOwed();
  const answered = () => Promise.race([owed.allAnswered(), sleep(MCP_ANSWER_AT_END_MS, undefined, { ref: false })]);
  const input = process.stdin.pipe(new StdinScreen((line) => process.stdout.write(line), undefined, answered));
  const stdio = new StdioServerTransport(input, process.stdout);
  const handle = serveStdio(() => (server = createMcpServer(backend, undefined, { remoteHosts: backend.remoteHosts, runs })), {
    // Lines that are not JSON-RPC messages are answered here; the SDK would leave them unanswered.
    transport: guardParams(owed.wrap(stdio)),
    onerror: (e) => process.stderr.write(`shared-pty mcp: ${e.message}\n`),
  });
  return new Promise<number>((resolve) => {
    input.on('end', () => {
      void handle.close();
      runs.dispose();
      backend.dispose();
      resolve(0);
      // Its client is gone: calls still waiting on a host that does not answer keep nothing alive,
      // once the bridges have had their SIGTERM's grace (a far shell's own cleanup), not cut short by the exit.
      void Promise.all([whenBridgesGone(), sleep(MCP_EXIT_GRACE_MS, undefined, { ref: false })]).then(() => process.exit(0));
    });
  });
}
