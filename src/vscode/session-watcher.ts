import * as vscode from 'vscode';
import type { HostKind, HostRecord } from '../host/discovery';
import type { SessionInfo } from '../core/methods/types';
import type { HostClients } from './host-clients';

/** How often the discovery records are re-read: fast enough that an agent's terminal shows at once. */
const POLL_MS = 1000;

/** A session and the host that owns it. */
export interface HostedSession {
  hostId: string;
  hostKind: HostKind;
  info: SessionInfo;
  /** The remote host's name in hosts.json (its sessions come through a bridge); undefined on this machine. */
  remote?: string;
}

/** What every live host of this user publishes, as of one reading of the discovery records. */
export interface Snapshot {
  hosts: HostRecord[];
  sessions: HostedSession[];
}

/** The key that names a session across hosts. */
export function sessionKey(hostId: string, sessionId: string): string {
  return `${hostId}/${sessionId}`;
}

/**
 * Follows the sessions of every host through the discovery records (docs/hosts.md#discovery-records), which each host
 * rewrites on every change. Reading them needs no connection and never starts a host.
 */
export class SessionWatcher implements vscode.Disposable {
  private _snapshot: Snapshot = { hosts: [], sessions: [] };
  private _fingerprint = '';
  private readonly _timer: NodeJS.Timeout;
  private readonly _remoteSub: vscode.Disposable;
  private readonly _onDidChange = new vscode.EventEmitter<Snapshot>();
  /** The sessions changed (added, removed, renamed, resized, exited, clients). */
  readonly onDidChange = this._onDidChange.event;
  private readonly _onDidPoll = new vscode.EventEmitter<Snapshot>();
  /** Every reading, changed or not. */
  readonly onDidPoll = this._onDidPoll.event;

  constructor(private readonly _hosts: HostClients) {
    this._timer = setInterval(() => {
      this.refresh();
      // Remote hosts have no discovery records here: their connected bridges are asked.
      void _hosts.remotes.poll().then((changed) => changed && this.refresh());
    }, POLL_MS);
    this._remoteSub = _hosts.remotes.onDidChange(() => this.refresh());
    this.refresh();
  }

  get snapshot(): Snapshot {
    return this._snapshot;
  }

  find(hostId: string, sessionId: string): HostedSession | undefined {
    return this._snapshot.sessions.find((s) => s.hostId === hostId && s.info.id === sessionId);
  }

  /** Reads the records now (after an action of ours, so the UI follows at once). */
  refresh(): Snapshot {
    const hosts = this._hosts.records();
    const sessions: HostedSession[] = hosts.flatMap((h) => h.sessions.map((info) => ({ hostId: h.hostId, hostKind: h.kind, info })));
    for (const r of this._hosts.remotes.hosts()) {
      if (!r.live) continue;
      for (const info of r.live.sessions) sessions.push({ hostId: r.live.hostId, hostKind: 'daemon', info: { ...info, host: r.name }, remote: r.name });
    }
    const snapshot = { hosts, sessions };
    const fingerprint = JSON.stringify(sessions);
    this._snapshot = snapshot;
    if (fingerprint !== this._fingerprint) {
      this._fingerprint = fingerprint;
      this._onDidChange.fire(snapshot);
    }
    this._onDidPoll.fire(snapshot);
    return snapshot;
  }

  dispose(): void {
    clearInterval(this._timer);
    this._remoteSub.dispose();
    this._onDidChange.dispose();
    this._onDidPoll.dispose();
  }
}
