import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { ensureDaemon, isCurrentDaemon } from '../host/daemon';
import { readLiveRecords, type HostRecord } from '../host/discovery';
import { checkRuntimeDir, runtimeDirPath } from '../host/runtime-dir';
import { RpcClient } from '../transport/client/rpc-client';
import { SHELL_INTEGRATION_ENV } from '../core/commands/shell-integration';
import { RemoteSessions } from './remote-sessions';
import { getSetting } from './settings';
import { droppedOriginsWarning, normalizeAllowedOrigins } from './allowed-origins';

/** The per-user host and a live connection to its control socket. */
export interface DaemonConnection {
  record: HostRecord;
  client: RpcClient;
}

export interface HostClientsOptions {
  /** The extension's folder (`dist/cli.js` runs the host; `node_modules/node-pty` is beside it). */
  extensionPath: string;
  /** The editor's install folder: its own node-pty is the host's fallback. */
  appRoot: string;
  log: vscode.LogOutputChannel;
}

/** Variables of the extension host that describe this editor process, not the long-lived host. */
const EDITOR_ONLY_ENV = [/^ELECTRON_/, /^VSCODE_(?!PROXY_URI$)/, /^NODE_OPTIONS$/, /^SNAP(_.*)?$/, /^GDK_PIXBUF_/];

/**
 * Finds the hosts of this user and connects to them. The per-user host (kind "daemon") is started
 * only on first need (opening a terminal, resolving the MCP server, copying its configuration).
 */
export class HostClients implements vscode.Disposable {
  private _starting: Promise<DaemonConnection> | undefined;
  private readonly _clients = new Map<string, Promise<RpcClient>>();
  private _disposed = false;
  private _warned: string | undefined;
  private _lastDaemon: string | undefined;
  /** The last warning about `sharedPty.allowedOrigins` shown: said once, not at every connect. */
  private _originsWarning: string | undefined;
  /** The remote hosts of hosts.json, reached through their bridges (docs/editor.md#remote-hosts). */
  readonly remotes: RemoteSessions;

  constructor(private readonly _opts: HostClientsOptions) {
    this.remotes = new RemoteSessions(_opts.log);
  }

  /** The runtime directory: `sharedPty.runtimeDirectory`, else the default of docs/hosts.md#choosing-the-runtime-directory. */
  runtimeDir(): string {
    const configured = getSetting('runtimeDirectory').trim();
    if (!configured) return runtimeDirPath();
    return path.resolve(configured.replace(/^~(?=$|\/)/, os.homedir()));
  }

  /** Every live host's discovery record (cheap: a few small files; no host is started). */
  records(): HostRecord[] {
    const dir = this.runtimeDir();
    try {
      // Sockets found through a directory others can write to could be anyone's (tmux's rule).
      checkRuntimeDir(dir);
      return readLiveRecords(dir);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && this._warned !== dir) {
        this._warned = dir;
        this._opts.log.warn(`not reading ${dir}: ${(e as Error).message}`);
      }
      return [];
    }
  }

  /** The record of the per-user host of this version when one runs (one left by an update takes no new sessions). */
  runningDaemon(): HostRecord | undefined {
    return this.records().find(isCurrentDaemon);
  }

  /** The per-user host, started when none runs, and a connection to it. */
  daemon(): Promise<DaemonConnection> {
    this._starting ??= this._startDaemon().finally(() => (this._starting = undefined));
    return this._starting;
  }

  /** A connection to a host's control socket, shared by every caller until it closes. */
  client(record: HostRecord): Promise<RpcClient> {
    const key = `${record.hostId}:${record.pid}`;
    let c = this._clients.get(key);
    if (!c) {
      c = RpcClient.connect(record.control).then((client) => {
        client.onClose(() => this._clients.delete(key));
        if (this._disposed) client.close();
        return client;
      });
      c.catch(() => this._clients.delete(key));
      this._clients.set(key, c);
    }
    return c;
  }

  /** The connection to the local host with this id, if that host still runs. */
  async clientFor(hostId: string): Promise<{ record: HostRecord; client: RpcClient } | undefined> {
    const record = this.records().find((r) => r.hostId === hostId);
    return record ? { record, client: await this.client(record) } : undefined;
  }

  /** The connection to the host with this id, local or remote (a remote one through its bridge, while it is up). */
  async anyClientFor(hostId: string): Promise<RpcClient | undefined> {
    const local = await this.clientFor(hostId);
    if (local) return local.client;
    const remote = this.remotes.byHostId(hostId)?.live?.client;
    return remote && !remote.closed ? remote : undefined;
  }

  dispose(): void {
    // Closing the connections releases this window's subscriptions; leases then decide (never a kill).
    this._disposed = true;
    this.remotes.dispose();
    for (const c of this._clients.values())
      void c.then(
        (client) => client.close(),
        () => undefined,
      );
    this._clients.clear();
  }

  private async _startDaemon(): Promise<DaemonConnection> {
    const runtimeDir = this.runtimeDir();
    const record = await ensureDaemon({
      cliPath: path.join(this._opts.extensionPath, 'dist', 'cli.js'),
      execPath: process.execPath,
      env: this._daemonEnv(),
      runtimeDir,
      args: daemonArgs((message) => this._warnOrigins(message)),
      // Said once: the user's running sessions stay where they are, new ones open here.
      onOutdatedHost: (message) => {
        this._opts.log.info(message);
        void vscode.window.showInformationMessage(message);
      },
    });
    if (this._lastDaemon !== record.hostId) this._opts.log.info(`per-user host ${record.hostId} (pid ${record.pid}) at ${record.control}`);
    this._lastDaemon = record.hostId;
    return { record, client: await this.client(record) };
  }

  /** An entry of `sharedPty.allowedOrigins` left out: in the log, and once in a warning the user sees. */
  private _warnOrigins(message: string): void {
    if (this._originsWarning === message) return;
    this._originsWarning = message;
    this._opts.log.warn(message);
    void vscode.window.showWarningMessage(`Shared PTY: ${message}`);
  }

  /** The host outlives this window: it gets the user's environment, not this editor process's. */
  private _daemonEnv(): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = {};
    for (const key of Object.keys(process.env)) if (EDITOR_ONLY_ENV.some((re) => re.test(key))) env[key] = undefined;
    env.ELECTRON_RUN_AS_NODE = '1';
    // When the extension's own node-pty cannot load, the host tries the editor's copy.
    env.SHARED_PTY_NODE_PTY_FALLBACK = nodePtyFallback(this._opts.appRoot).join(path.delimiter);
    // The sessions agents open in this host follow the setting as it was when the host started.
    if (!getSetting('shellIntegration')) env[SHELL_INTEGRATION_ENV] = '0';
    return env;
  }
}

/** The editor's own node-pty folders, for a host whose node-pty (the extension's) does not load. */
export function nodePtyFallback(appRoot: string): string[] {
  return [path.join(appRoot, 'node_modules', 'node-pty'), path.join(appRoot, 'node_modules.asar.unpacked', 'node-pty')];
}

/**
 * `daemon` flags from the settings (they apply when this window is the one that starts the host).
 * A setting the daemon would refuse is left out, with `warn`, so the host still starts.
 */
function daemonArgs(warn: (message: string) => void): string[] {
  const args = ['--scrollback', String(Math.max(100, Math.floor(getSetting('scrollbackLines'))))];
  if (!getSetting('http.enabled')) args.push('--no-http');
  else if (getSetting('http.port') > 0) args.push('--http-port', String(Math.floor(getSetting('http.port'))));
  const { origins, dropped } = normalizeAllowedOrigins(getSetting('allowedOrigins'));
  if (dropped.length) warn(droppedOriginsWarning(dropped));
  if (origins.length) args.push('--allow-origin', origins.join(','));
  if (getSetting('sessionTcp')) args.push('--session-tcp');
  const approval = getSetting('agent.approval');
  if (['allow', 'ask', 'deny'].includes(approval)) args.push('--agent-approval', approval);
  const deny = getSetting('agent.denyCommands').filter(Boolean);
  if (deny.length) args.push('--agent-deny', deny.map((r) => `(?:${r})`).join('|'));
  return args;
}
