import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { setImmediate } from 'node:timers/promises';
import { Disposable, disposableTimeout, MutableDisposable, toDisposable, type Event, type IDisposable } from '../core/base/lifecycle';
import { ErrorCode, RpcError } from '../core/base/errors';
import { MAX_CONNECTIONS_PER_SESSION_SOCKET, MAX_CONTROL_CONNECTIONS, type HostLimits } from '../core/base/limits';
import { SessionRegistry, type CreateSessionParams, type RegistryOptions } from '../core/session/registry';
import type { Session } from '../core/session/session';
import { SessionTuning } from '../core/session/session-types';
import { MirrorThread } from '../core/mirror/mirror-thread';
import type { HostInfo, HostServices, ReplayService, SecretPageService, SessionInfo, TokenService } from '../core/methods/types';
import { listenRpc, type Endpoint, type RpcServer } from '../transport/socket/socket-server';
import { VERSION } from '../version';
import { readLiveRecords, removeRecord, writeRecord, type HostKind, type HostRecord } from './discovery';
import { ensureRuntimeDir, runtimeDirWriteError, UnsafeRuntimeDirError } from './runtime-dir';
import { RuntimeDirGuard } from './runtime-guard';
import { agentPolicy, type AgentApproval, type AgentPolicy } from '../core/agent/agent-policy';
import { ApprovalBroker } from '../core/agent/approval';
import { socketsRegexBudget } from '../core/io/regex-budget';

/** A transport the host can add later (the HTTP server) and how it shows in the record and SessionInfo. */
export interface HttpAttachment extends IDisposable {
  url: string;
  token: string;
  /** The `stream` URL of a session. */
  streamUrl(sessionId: string): string;
  /** Its scoped tokens (`shared-pty share`, `view`, `play --browser`): only in its memory, as hashes. */
  tokens?: TokenService;
  /** The recordings it replays in the browser (`host/replay`). */
  replays?: ReplayService;
  /** Its one-time pages where the person types a secret (`pty/secretPage`). */
  secretPages?: SecretPageService;
  /** Resolves once its connections are closed (after `dispose`, which stops it). */
  close(): Promise<void>;
}

export interface HostOptions extends RegistryOptions, HostLimits {
  kind: HostKind;
  runtimeDir?: string;
  /** Also publish each session on a loopback TCP port (`tcp` in SessionInfo). */
  sessionTcp?: boolean;
  /** Longest JSON-RPC line accepted. */
  maxLineBytes?: number;
  /** The workspace this host serves, if any. */
  workspace?: string | null;
  /** The version the record shows (default: this build's; tests play an older host with it). */
  version?: string;
  /** See HostRecord.entry. */
  entry?: string;
  /** Hook for the editor: a session was created through the protocol. */
  onSessionCreated?: (session: Session) => void;
  /** Agents' writes into sessions the user opened: allow (default), ask, deny (docs/protocol.md#agent-write-approval). */
  agentApproval?: AgentApproval;
  /** Regexes of lines an agent may never submit. */
  agentDenyCommands?: string[];
}

/** Changes within this long (a burst of client counts and sizes) make one rewrite of the record. */
const RECORD_COALESCE_MS = 20;

/**
 * One process that owns sessions: the registry, the host control socket, one socket per
 * session, and the discovery record that lets every client find them.
 */
export class Host extends Disposable implements HostServices {
  readonly hostId: string;
  readonly registry: SessionRegistry;
  /** What agents' writes may do; `host/agentPolicy` changes it (the editor follows its settings). */
  agentPolicy: AgentPolicy;
  readonly approvals = new ApprovalBroker();
  readonly socketRegexBudget = socketsRegexBudget();
  readonly startedAt = new Date().toISOString();
  readonly runtimeDir: string;
  readonly hostDir: string;
  private _control: RpcServer | undefined;
  private readonly _sessionServers = new Map<string, RpcServer[]>();
  private _http: HttpAttachment | undefined;
  /** The coalesced rewrite of the discovery record (see `_scheduleRecord`). */
  private readonly _recordTimer = this._register(new MutableDisposable());
  private _closed = false;
  private _closing: Promise<void> | undefined;
  /** Checks, before every write, that the runtime directory and our folder in it are still ours. */
  private readonly _files: RuntimeDirGuard;
  /**
   * The runtime directory was taken over (another user re-created it, its mode or owner changed):
   * fired once, with the one line that says why. The host has stopped listening and writing there;
   * its sessions go on for the clients already connected.
   */
  readonly onDidLoseRuntimeDir: Event<string>;

  private constructor(readonly options: HostOptions) {
    super();
    try {
      // First: a deny rule that is not a regex stops the start with a clear error.
      this.agentPolicy = agentPolicy(options.agentApproval, options.agentDenyCommands);
      this.runtimeDir = ensureRuntimeDir(options.runtimeDir);
      // Hosts that died without cleaning up (SIGKILL, a crash) leave records and sockets: remove them.
      readLiveRecords(this.runtimeDir);
      this.hostId = newHostId(this.runtimeDir);
      this.hostDir = path.join(this.runtimeDir, this.hostId);
      try {
        fs.mkdirSync(this.hostDir, { mode: 0o700 });
      } catch (e) {
        throw runtimeDirWriteError(this.runtimeDir, e);
      }
      this._files = this._register(new RuntimeDirGuard(this.runtimeDir, this.hostDir));
      this.onDidLoseRuntimeDir = this._files.onDidLose;
      this._register(this._files.onDidLose((why) => this._stopListening(why)));
      // Command logs live beside the sockets: private to the user, gone with the host.
      this.registry = this._register(
        new SessionRegistry({
          commandLogDir: path.join(this.hostDir, 'logs'),
          commandLogWritable: () => this._files.check(),
          handoverDir: this.hostDir,
          ...options,
        }),
      );
      this._register(this.registry.onDidRemove((s) => void this._unpublish(s)));
      this._register(this.registry.onDidChange(() => this._scheduleRecord()));
    } catch (e) {
      // A host that cannot start (an unsafe or unwritable runtime directory, a bad deny rule) lets go
      // of what it made so far, its own holders included: nobody else will.
      this.dispose();
      throw e;
    }
  }

  /** Starts a host: runtime directory, control socket, discovery record. */
  static async start(options: HostOptions): Promise<Host> {
    const host = new Host(options);
    try {
      host._control = await listenRpc({
        endpoint: { type: 'unix', path: path.join(host.hostDir, 'control.sock') },
        mode: { kind: 'control' },
        services: host,
        maxLineBytes: options.maxLineBytes,
        maxConnections: options.maxControlConnections ?? MAX_CONTROL_CONNECTIONS,
        maxInFlightRequests: options.maxInFlightRequests,
      });
      // A host nobody can find is no use: a record that cannot be written (a full disk) stops the start.
      if (!host._files.check())
        throw new UnsafeRuntimeDirError(host._files.lost ?? `The runtime directory ${host.runtimeDir} went away while the host started`);
      writeRecord(host.runtimeDir, host.record());
    } catch (e) {
      await host.close();
      throw runtimeDirWriteError(host.runtimeDir, e);
    }
    host._watchFiles();
    return host;
  }

  /** Clients connected now to the control socket or a session socket (the editor, `attach`, `mcp`, scripts). */
  get connections(): number {
    let n = this._control?.connections ?? 0;
    for (const servers of this._sessionServers.values()) for (const s of servers) n += s.connections;
    return n;
  }

  /** Why the host stopped using its runtime directory (see onDidLoseRuntimeDir); undefined while it is ours. */
  get runtimeDirLost(): string | undefined {
    return this._files.lost;
  }

  get controlAddress(): string {
    return this._control?.address ?? '';
  }

  get http(): HttpAttachment | undefined {
    return this._http;
  }

  /** Attaches the HTTP server (issue #3); it shows in the record from now on. */
  attachHttp(http: HttpAttachment): void {
    this._http = this._register(http);
    this.writeRecordNow();
  }

  // ---- HostServices

  async createSession(params: CreateSessionParams, extraEndpoint?: Endpoint): Promise<Session> {
    // Before the session exists: a create the folder refuses starts no program, and the line a
    // takeover prints counts only the sessions that go on.
    if (!extraEndpoint) this._ensureOwnFolder();
    // No program is started while the screen thread starts (it would inherit a descriptor V8 holds then).
    await MirrorThread.shared().whenStarted();
    const session = this.registry.create({ workspace: this.options.workspace ?? null, ...params });
    try {
      await this._publish(session, extraEndpoint);
    } catch (e) {
      this.registry.remove(session.id);
      throw e;
    }
    this.writeRecordNow();
    this.options.onSessionCreated?.(session);
    return session;
  }

  describe(session: Session): SessionInfo {
    const servers = this._sessionServers.get(session.id) ?? [];
    const unix = servers.find((s) => s.endpoint.type === 'unix');
    const tcp = servers.find((s) => s.endpoint.type === 'tcp');
    const o = session.options;
    const info: SessionInfo = {
      id: session.id,
      name: session.name,
      pid: session.pid,
      command: o.command,
      args: o.args,
      cwd: session.cwd,
      workspace: o.workspace ?? null,
      cols: session.cols,
      rows: session.rows,
      createdAt: session.createdAt.toISOString(),
      running: session.running,
      exitCode: session.exitCode,
      origin: o.origin,
      address: unix?.address ?? tcp?.address ?? '',
      clients: session.clients,
      secretInput: session.secretInput,
      integration: session.integration,
    };
    if (tcp) info.tcp = tcp.address;
    if (this._http) info.stream = this._http.streamUrl(session.id);
    return info;
  }

  /** The discovery record (with the token: only for the 0600 file). */
  record(): HostRecord {
    return {
      hostId: this.hostId,
      pid: process.pid,
      kind: this.options.kind,
      version: this.options.version ?? VERSION,
      startedAt: this.startedAt,
      control: this.controlAddress,
      http: this._http ? { url: this._http.url, token: this._http.token } : null,
      sessions: this.registry.list().map((s) => this.describe(s)),
      workspace: this.options.workspace ?? null,
      ...(this.options.entry ? { entry: this.options.entry } : {}),
    };
  }

  hostInfo(): HostInfo {
    const rec = this.record();
    return { ...rec, workspace: rec.workspace ?? null, http: rec.http ? { url: rec.http.url } : null };
  }

  get tokens(): TokenService | undefined {
    return this._http?.tokens;
  }

  get replays(): ReplayService | undefined {
    return this._http?.replays;
  }

  get secretPages(): SecretPageService | undefined {
    return this._http?.secretPages;
  }

  stopListeningFor(session: Session): void {
    for (const server of this._sessionServers.get(session.id) ?? []) server.stopListening();
  }

  async killSession(session: Session): Promise<void> {
    this.registry.remove(session.id);
  }

  // ---- lifetime

  writeRecordNow(): void {
    this._recordTimer.clear();
    // Checked before every write: a directory gone waits for the repair, one taken over is never written in.
    if (this._closed || !this._files.check()) return;
    try {
      writeRecord(this.runtimeDir, this.record());
    } catch {
      // The runtime directory vanished (tmp cleaners): the next change tries again.
    }
  }

  private _scheduleRecord(): void {
    // Client counts and sizes change in bursts: coalesce them into one write.
    if (this._recordTimer.value || this._closed) return;
    this._recordTimer.value = disposableTimeout(() => this.writeRecordNow(), RECORD_COALESCE_MS);
  }

  private async _publish(session: Session, extraEndpoint?: Endpoint): Promise<void> {
    const endpoints: Endpoint[] = [extraEndpoint ?? { type: 'unix', path: path.join(this.hostDir, `${session.id}.sock`) }];
    if (this.options.sessionTcp && extraEndpoint?.type !== 'tcp') endpoints.push({ type: 'tcp', host: '127.0.0.1', port: 0 });
    const servers: RpcServer[] = [];
    this._sessionServers.set(session.id, servers);
    for (const endpoint of endpoints) {
      servers.push(
        await listenRpc({
          endpoint,
          mode: { kind: 'session', session },
          services: this,
          maxLineBytes: this.options.maxLineBytes,
          maxConnections: this.options.maxConnectionsPerSessionSocket ?? MAX_CONNECTIONS_PER_SESSION_SOCKET,
          maxInFlightRequests: this.options.maxInFlightRequests,
        }),
      );
    }
  }

  /** Before a socket is made in our folder: the folders are ours (put back if gone), else a clear error. */
  private _ensureOwnFolder(): void {
    if (this._files.check() || this._files.restore()) return;
    const why = this._files.lost;
    if (why !== undefined) throw new RpcError(ErrorCode.ServerError, `This host takes no new sessions: ${why}`);
    throw new RpcError(ErrorCode.ServerError, `The runtime directory ${this.runtimeDir} cannot be written now; try again, or start another host`);
  }

  /**
   * The runtime directory was taken over: stop listening there (the sockets' listeners are left
   * open but refuse everyone, see RpcServer.abandon), stop writing there, and say why in one line.
   * Sessions, connections already open and the HTTP server (not in the folder) go on.
   */
  private _stopListening(why: string): void {
    this._runtimeDirWatch.clear();
    this._hostDirWatch.clear();
    this._recordTimer.clear();
    const n = this.registry?.size ?? 0;
    const sessions =
      n === 0
        ? 'it has no sessions'
        : n === 1
          ? 'its 1 session goes on for the clients already connected'
          : `its ${n} sessions go on for the clients already connected`;
    // Whoever connects after is told why, and what brings a host back there (this one stays away:
    // what was put in the folder meanwhile is not trusted).
    const toClients = `it stopped serving in its runtime directory, as ${why} (${sessions}; end it, kill ${process.pid}, for a new host to start there)`;
    const inFolder = (s: RpcServer) => s.endpoint.type === 'unix' && s.endpoint.path.startsWith(this.hostDir + path.sep);
    for (const s of [this._control, ...[...this._sessionServers.values()].flat()]) if (s && inFolder(s)) s.abandon(toClients);
    process.stderr.write(`shared-pty: ${why}; host ${this.hostId} stopped listening there and writes nothing more in it (${sessions})\n`);
  }

  private async _unpublish(session: Session): Promise<void> {
    const servers = this._sessionServers.get(session.id) ?? [];
    // They stay ours until closed, so that a host closing meanwhile waits for them too.
    await Promise.all(servers.map((s) => s.close()));
    if (this._sessionServers.get(session.id) === servers) this._sessionServers.delete(session.id);
    this.writeRecordNow();
  }

  /**
   * Files deleted under the running host (a tmp cleaner, a user's `rm`): the record, the socket
   * folder or a socket. Without them nobody finds the host, though it runs; so it puts them back
   * as soon as the file system says they went (inotify: nothing runs while nothing changes).
   */
  private _watchFiles(): void {
    // Ours in it, and the folder itself: a chmod, chown or move of it is reported under its own name.
    const own = new Set([this.hostId, `${this.hostId}.json`, path.basename(this.runtimeDir)]);
    this._runtimeDirWatch.value = watchDir(this.runtimeDir, (name) => (name === null || own.has(name)) && this._scheduleRepair());
    this._watchHostDir();
  }

  private readonly _runtimeDirWatch = this._register(new MutableDisposable());

  private _watchHostDir(): void {
    this._hostDirWatch.value = watchDir(this.hostDir, () => this._scheduleRepair());
  }

  private readonly _hostDirWatch = this._register(new MutableDisposable());
  private _repairing: Promise<void> | undefined;
  private _repairAgain = false;

  private _scheduleRepair(): void {
    if (this._closed) return;
    if (this._repairing) return void (this._repairAgain = true);
    this._repairing = this._repairFiles().finally(() => {
      this._repairing = undefined;
      if (this._repairAgain) {
        this._repairAgain = false;
        this._scheduleRepair();
      }
    });
  }

  private async _repairFiles(): Promise<void> {
    try {
      const runtimeDirWent = !fs.existsSync(this.runtimeDir);
      const hostDirWent = !fs.existsSync(this.hostDir);
      // Made again where gone (0700), then checked: a folder someone else made first stops the host.
      if (!this._files.restore()) return;
      if (runtimeDirWent)
        this._watchFiles(); // the whole folder went (a tmp cleaner): watch the new one
      else if (hostDirWent) this._hostDirWatch.value = undefined; // it watched the folder that went
      const servers = [this._control, ...[...this._sessionServers.values()].flat()].filter((s): s is RpcServer => !!s);
      const restored = (await Promise.all(servers.map((s) => s.restoreSocketFile()))).filter(Boolean).length;
      if (!this._hostDirWatch.value && !this._closed && !this._files.lost) this._watchHostDir();
      const recordGone = !fs.existsSync(path.join(this.runtimeDir, `${this.hostId}.json`));
      if (recordGone) this.writeRecordNow();
      if (restored > 0 || recordGone)
        process.stderr.write(`shared-pty: files of host ${this.hostId} were deleted; put back ${restored} socket(s)${recordGone ? ' and the record' : ''}\n`);
    } catch {
      // The runtime directory itself is gone or unwritable: nothing to repair into.
    }
  }

  /**
   * Each session ended as `pty/kill` ends one, before the sockets close: what clients wait for is
   * answered as at a kill (`pty/send` and `pty/wait` with `session_exit`, a subscription's
   * `pty/exit`). On SIGTERM a send got an error, and a wait and a subscription nothing (an outside
   * audit). Bounded: a program that ignores the hang-up is killed, and the host goes on after that.
   */
  private async _endSessions(): Promise<void> {
    const ending = this.registry.list();
    for (const s of ending) this.registry.remove(s.id);
    if (ending.length === 0) return;
    // As at a kill: each is let go once it has ended and the calls it answers are done (a send
    // still reads the screen it ended with, in the mirror thread, slower under load).
    await this.registry.whenAllLeft(SESSIONS_END_GRACE_MS);
    // The answers and notifications the exits bring leave on the next turns.
    await setImmediate();
  }

  /** Ends every session, closes every socket and removes the host's files. */
  close(): Promise<void> {
    return (this._closing ??= this._close());
  }

  private async _close(): Promise<void> {
    if (this._closed) return;
    await this._endSessions();
    // Checked once more: a takeover found now still keeps us from touching anything there.
    this._files.check();
    const servers = [...this._sessionServers.values()].flat();
    this._sessionServers.clear();
    this._closed = true;
    // Whatever fails on the way (a session's or a server's close), the host's files go: a record
    // left behind names sessions that ended with the host. The first failure is thrown after.
    const failures: unknown[] = [];
    try {
      this.dispose();
    } catch (e) {
      failures.push(e);
    }
    const closed = await Promise.allSettled([...servers.map((s) => s.close()), this._control?.close(), this._http?.close()]);
    for (const c of closed) if (c.status === 'rejected') failures.push(c.reason);
    // Not ours any more: nothing there is removed.
    if (this._files.lost === undefined) {
      removeRecord(this.runtimeDir, this.hostId);
      fs.rmSync(this.hostDir, { recursive: true, force: true });
    }
    if (failures.length > 0) throw failures[0];
  }
}

/** How long a stopping host waits for its sessions to end (hung up, then killed after KillGraceMs) and their calls to answer. */
const SESSIONS_END_GRACE_MS = SessionTuning.KillGraceMs + 2500;

/** Calls `onChange` with the name of each entry of `dir` that changes; undefined where the folder cannot be watched. */
function watchDir(dir: string, onChange: (name: string | null) => void): IDisposable | undefined {
  try {
    const w = fs.watch(dir, { persistent: false }, (_event, name) => onChange(name ? String(name) : null));
    w.on('error', () => w.close());
    return toDisposable(() => w.close());
  } catch {
    return undefined;
  }
}

/** A short random host id (socket paths must stay under ~100 bytes) not used in this directory. */
function newHostId(dir: string): string {
  for (;;) {
    const id = 'h' + crypto.randomBytes(4).readUInt32BE(0).toString(36).slice(0, 5);
    if (!fs.existsSync(path.join(dir, id)) && !fs.existsSync(path.join(dir, `${id}.json`))) return id;
  }
}
