import * as fs from 'node:fs';
import * as vscode from 'vscode';
import type { SessionInfo } from '../core/methods/types';
import { HostsConfigError, hostsConfigPath, readHostsConfig, type HostsConfig } from '../host/hosts-config';
import { RemoteHosts } from '../host/remote-hosts';
import type { RpcClient } from '../transport/client/rpc-client';

/** A remote host of hosts.json as this window knows it. */
export interface RemoteHostState {
  /** Its name in hosts.json. */
  name: string;
  /** The command that reaches its bridge. */
  command: string;
  /** Connected: the far host's id and the shared bridge connection; its sessions as last listed. */
  live?: { hostId: string; client: RpcClient; sessions: SessionInfo[] };
  /** Connecting now. */
  connecting: boolean;
  /** Why the last connection failed or dropped (one line naming the host and the command). */
  error?: string;
}

/** A remote host this window has just connected to. */
export interface RemoteConnection {
  name: string;
  hostId: string;
  client: RpcClient;
}

/**
 * The remote hosts of hosts.json as this window reaches them (docs/editor.md#remote-hosts): one
 * bridge per host (src/host/remote-hosts.ts), made when the person first lists or opens a
 * session there, never at activation (an ssh login may ask for a passphrase); the sessions of
 * connected hosts are listed on every poll. A dropped bridge is said once and the host shows as
 * disconnected until the next use.
 */
export class RemoteSessions implements vscode.Disposable {
  private _config: HostsConfig | undefined;
  private _configStamp = '';
  private _remotes: RemoteHosts | undefined;
  private readonly _states = new Map<string, RemoteHostState>();
  private readonly _connecting = new Map<string, Promise<RemoteConnection>>();
  private _polling = false;
  private _warned = '';
  private readonly _onDidConnect = new vscode.EventEmitter<RemoteConnection>();
  /** A bridge to a remote host is up (the approval watcher registers there). */
  readonly onDidConnect = this._onDidConnect.event;
  private readonly _onDidChange = new vscode.EventEmitter<void>();
  /** A host connected, dropped, failed, or its sessions changed. */
  readonly onDidChange = this._onDidChange.event;

  constructor(private readonly _log: vscode.LogOutputChannel) {}

  /** Every configured remote host (hosts.json re-read when it changed), in its file's order. */
  hosts(): RemoteHostState[] {
    const config = this._readConfig();
    return [...config.hosts].map(([name, command]) => {
      let s = this._states.get(name);
      if (!s || s.command !== command) {
        s = { name, command, connecting: false };
        this._states.set(name, s);
      }
      return s;
    });
  }

  /** The connected host with this id. */
  byHostId(hostId: string): RemoteHostState | undefined {
    for (const s of this._states.values()) if (s.live?.hostId === hostId) return s;
    return undefined;
  }

  /** The bridge to `name` (made now if none is up): the far host's id and the connection. */
  connect(name: string): Promise<RemoteConnection> {
    const state = this.hosts().find((h) => h.name === name);
    if (!state) return Promise.reject(new Error(`no host named "${name}" in ${hostsConfigPath()}`));
    if (state.live && !state.live.client.closed) return Promise.resolve({ name, hostId: state.live.hostId, client: state.live.client });
    let p = this._connecting.get(name);
    if (!p) {
      p = this._connect(state).finally(() => this._connecting.delete(name));
      this._connecting.set(name, p);
    }
    return p;
  }

  /** A session this window just opened on a connected host: listed before the next poll would. */
  noteSession(hostId: string, info: SessionInfo): void {
    const live = this.byHostId(hostId)?.live;
    if (!live || live.sessions.some((s) => s.id === info.id)) return;
    const { host: _name, ...plain } = info;
    live.sessions = [...live.sessions, plain];
  }

  /** Connects every configured host (the session list does, to show them all); failures stay in each state. */
  async connectAll(): Promise<void> {
    await Promise.all(this.hosts().map((h) => this.connect(h.name).catch(() => undefined)));
  }

  /** Lists the sessions of every connected host; true when something changed. */
  async poll(): Promise<boolean> {
    if (this._polling) return false;
    this._polling = true;
    try {
      const live = [...this._states.values()].filter((s) => s.live && !s.live.client.closed);
      const changed = await Promise.all(live.map((s) => this._list(s)));
      return changed.some(Boolean);
    } finally {
      this._polling = false;
    }
  }

  dispose(): void {
    this._remotes?.dispose();
    this._onDidConnect.dispose();
    this._onDidChange.dispose();
  }

  private async _connect(state: RemoteHostState): Promise<RemoteConnection> {
    state.connecting = true;
    state.error = undefined;
    this._onDidChange.fire();
    try {
      const client = await this._bridges().connect(state.name);
      const info = await client.call('host/info', {});
      state.live = { hostId: info.hostId, client, sessions: info.sessions };
      client.onClose(() => {
        if (state.live?.client !== client) return;
        state.live = undefined;
        this._onDidChange.fire();
      });
      this._log.info(`remote host "${state.name}" (${state.command}): host ${info.hostId}, ${info.sessions.length} session(s)`);
      const conn = { name: state.name, hostId: info.hostId, client };
      this._onDidConnect.fire(conn);
      return conn;
    } catch (e) {
      state.error = (e as Error).message;
      this._log.warn(state.error);
      throw e;
    } finally {
      state.connecting = false;
      this._onDidChange.fire();
    }
  }

  private async _list(state: RemoteHostState): Promise<boolean> {
    const live = state.live!;
    try {
      const { sessions } = await live.client.call('session/list', {});
      const changed = JSON.stringify(sessions) !== JSON.stringify(live.sessions);
      live.sessions = sessions;
      return changed;
    } catch {
      return false; // a drop: the bridge's close says so
    }
  }

  /** The bridges, made again when hosts.json changed (a host's command may be new). */
  private _bridges(): RemoteHosts {
    const config = this._readConfig();
    if (!this._remotes || this._remotes.config !== config) {
      this._remotes?.dispose();
      this._remotes = new RemoteHosts(config, (message, name) => {
        const s = this._states.get(name);
        if (s) s.error = message;
        this._log.warn(message);
        void vscode.window.showWarningMessage(`Shared PTY: ${message}`);
      });
    }
    return this._remotes;
  }

  private _readConfig(): HostsConfig {
    const file = hostsConfigPath();
    let stamp = 'none';
    try {
      const st = fs.statSync(file);
      stamp = `${st.mtimeMs}:${st.size}`;
    } catch {
      // no hosts.json: no remote host
    }
    if (this._config && stamp === this._configStamp) return this._config;
    this._configStamp = stamp;
    try {
      this._config = readHostsConfig();
    } catch (e) {
      if (!(e instanceof HostsConfigError)) throw e;
      // Said once per version of the file: the local sessions still work.
      if (this._warned !== stamp) {
        this._warned = stamp;
        this._log.warn(e.message);
        void vscode.window.showWarningMessage(`Shared PTY: ${e.message}`);
      }
      this._config = { file, hosts: new Map() };
    }
    return this._config;
  }
}
