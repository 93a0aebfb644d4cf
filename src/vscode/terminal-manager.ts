import * as path from 'node:path';
import * as vscode from 'vscode';
import type { RpcClient } from '../transport/client/rpc-client';
import { Ids } from './commands';
import type { HostClients } from './host-clients';
import { getSetting } from './settings';
import { SharedPseudoterminal, terminalName, type PtyHooks, type PtyTarget } from './shared-pseudoterminal';
import { sessionKey, type HostedSession, type SessionWatcher, type Snapshot } from './session-watcher';
import { resolveShell, workspaceCwd } from './shell';
import { SHELL_INTEGRATION_ENV } from '../core/commands/shell-integration';

/** Timing constants of the terminal manager; each says why. */
const enum Timing {
  /**
   * After the editor closes a terminal, wait this long for its exit reason: a window that reloads
   * or shuts down also closes its terminals, and those sessions must live on (docs/editor.md#terminal-lifetimes).
   */
  CloseSettleMs = 250,
  /** …checked this many times at most (the session must still end within 2 s of a user's close). */
  CloseSettleTries = 4,
  /**
   * An agent's session whose folder is not this window's and that appeared while this window was
   * not focused is opened after this delay, unless another editor took it meanwhile.
   */
  AgentClaimDelayMs = 1500,
}

/** A session this window shows, remembered across reloads. */
interface Remembered {
  hostId: string;
  id: string;
  /** The remote host's name in hosts.json, for a session reached through its bridge. */
  host?: string;
}

interface Entry {
  pty: SharedPseudoterminal;
  terminal?: vscode.Terminal;
}

export interface TerminalManagerDeps {
  hosts: HostClients;
  watcher: SessionWatcher;
  state: vscode.Memento;
  log: vscode.LogOutputChannel;
  error(what: string, e: unknown): void;
}

const TERMINAL_ICON = new vscode.ThemeIcon('terminal');

/**
 * The editor terminals of this window that show shared sessions: opens them (the user's, an
 * agent's, the ones to restore after a reload), follows renames, closes them when their session
 * ends elsewhere, and kills a session when the user closes its terminal.
 */
export class TerminalManager implements vscode.Disposable {
  private readonly _entries = new Set<Entry>();
  private readonly _disposables: vscode.Disposable[] = [];
  private readonly _known: Set<string>;
  private readonly _missing = new Map<Entry, number>();
  private _shuttingDown = false;
  private readonly _hooks: PtyHooks;
  /** Sessions (sessionKey) where an agent's call writes or waits now (host/watchAgents). */
  private readonly _agentTyping = new Set<string>();

  constructor(private readonly _deps: TerminalManagerDeps) {
    this._hooks = {
      connect: (t) => this._connect(t),
      bound: (pty) => this._bound(pty),
      closed: (pty) => this._closed(pty),
      finished: (pty) => this._finished(pty),
      error: (what, e) => _deps.error(what, e),
      log: _deps.log,
    };
    // What ran before this window came up belongs to other windows (or is restored from memory).
    this._known = new Set(_deps.watcher.snapshot.sessions.map((s) => sessionKey(s.hostId, s.info.id)));
    this._disposables.push(
      vscode.window.onDidOpenTerminal((t) => this._adopt(t)),
      vscode.window.onDidChangeActiveTerminal((t) => this._noteFront(t)),
      _deps.watcher.onDidPoll((s) => this._onSnapshot(s)),
      // What a remote host runs when its bridge comes up was opened while this window did not
      // watch it: only what an agent opens there afterwards pops up (docs/editor.md#remote-hosts).
      _deps.hosts.remotes.onDidConnect((c) => {
        for (const s of _deps.hosts.remotes.byHostId(c.hostId)?.live?.sessions ?? []) this._known.add(sessionKey(c.hostId, s.id));
      }),
    );
  }

  /** A pseudoterminal that starts a new session of the user's shell when the editor opens it. */
  createUserPty(): SharedPseudoterminal {
    const pty = new SharedPseudoterminal({ kind: 'create', params: userSessionParams }, this._hooks);
    this._entries.add({ pty });
    return pty;
  }

  /**
   * Opens a new editor terminal with the user's shell, published at once (`sharedPty.open`); on a
   * remote host of hosts.json, a new session of that machine's shell there.
   */
  openUserTerminal(remote?: string): vscode.Terminal {
    const pty = remote ? new SharedPseudoterminal({ kind: 'create', params: remoteSessionParams, remote }, this._hooks) : this.createUserPty();
    if (remote) this._entries.add({ pty });
    const terminal = vscode.window.createTerminal({ name: 'Shared PTY', pty, iconPath: TERMINAL_ICON });
    this._entryOf(pty)!.terminal = terminal;
    terminal.show();
    return terminal;
  }

  /**
   * Shows a session in this window: its terminal if there is one, else a new attached terminal.
   * `wasInFront`: a reload's terminal that was in front before it, put there again over a terminal
   * nobody typed in yet (the editor opens its default shell in a terminal panel it restores empty).
   */
  attach(s: HostedSession, preserveFocus: boolean, wasInFront = false): vscode.Terminal {
    // A terminal opened beside the user's work (an agent's, a reload's) is revealed only when no
    // terminal is in front: one the user types in stays in front, its keys with it.
    const inFront = vscode.window.activeTerminal;
    const reveal = (t: vscode.Terminal) => {
      const untouched = !inFront || inFront === t || (wasInFront && !inFront.state.isInteractedWith);
      if (!preserveFocus || untouched) t.show(preserveFocus);
    };
    const existing = this.terminalFor(s.hostId, s.info.id);
    if (existing) {
      reveal(existing);
      return existing;
    }
    const pty = new SharedPseudoterminal({ kind: 'attach', hostId: s.hostId, session: s.info }, this._hooks);
    const entry: Entry = { pty };
    this._entries.add(entry);
    entry.terminal = vscode.window.createTerminal({ name: terminalName(s.info.origin, s.info.name, false, s.info.host), pty, iconPath: TERMINAL_ICON });
    reveal(entry.terminal);
    return entry.terminal;
  }

  /**
   * The editor terminal of this window that shows the session, if any (one whose connection broke
   * shows it no more: a remote session is then opened in a new terminal through a new bridge).
   */
  terminalFor(hostId: string, sessionId: string): vscode.Terminal | undefined {
    for (const e of this._entries)
      if (e.pty.hostId === hostId && e.pty.session?.id === sessionId && e.pty.state !== 'closed' && !e.pty.hostLost) return e.terminal;
    return undefined;
  }

  /** An agent's call started (true) or ended (false) in a session: its terminals here say so. */
  setAgentTyping(hostId: string, sessionId: string, typing: boolean): void {
    const key = sessionKey(hostId, sessionId);
    if (typing) this._agentTyping.add(key);
    else this._agentTyping.delete(key);
    for (const e of this._entries) if (e.pty.hostId === hostId && e.pty.session?.id === sessionId) e.pty.setAgentTyping(typing);
  }

  /** Forgets the agent typing of a host's sessions (its connection closed: nobody will say it ended). */
  clearAgentTyping(hostId: string): void {
    for (const key of [...this._agentTyping]) if (key.startsWith(`${hostId}/`)) this.setAgentTyping(hostId, key.slice(hostId.length + 1), false);
  }

  /** The session an editor terminal shows. */
  sessionOf(terminal: vscode.Terminal): { hostId: string; id: string } | undefined {
    for (const e of this._entries) if (e.terminal === terminal && e.pty.hostId && e.pty.session) return { hostId: e.pty.hostId, id: e.pty.session.id };
    return undefined;
  }

  /**
   * After a reload: re-opens a terminal for every remembered session that still runs. A remote
   * one makes its host's bridge again first: only when a terminal there was open, so a window
   * that showed none logs in nowhere at start-up.
   */
  async restore(): Promise<void> {
    const remembered = this._remembered();
    if (remembered.length === 0) return;
    const snapshot = this._deps.watcher.refresh();
    const front = this._deps.state.get<Remembered>(Ids.frontSession);
    const keep: Remembered[] = [];
    const remote = new Map<string, Remembered[]>();
    for (const r of remembered) {
      if (r.host) {
        remote.set(r.host, [...(remote.get(r.host) ?? []), r]);
        continue;
      }
      const s = snapshot.sessions.find((x) => x.hostId === r.hostId && x.info.id === r.id);
      if (!s || !s.info.running) continue;
      keep.push(r);
      this._reattach(s, front?.hostId === r.hostId && front.id === r.id);
    }
    // Until their hosts answer, remote entries stay remembered (a reload meanwhile still restores them).
    await this._deps.state.update(Ids.rememberedSessions, [...keep, ...[...remote.values()].flat()]);
    await Promise.all([...remote].map(([host, list]) => this._restoreRemote(host, list, front)));
  }

  /** The window is going away: from now on a closing terminal never ends its session. */
  shutdown(): void {
    this._shuttingDown = true;
  }

  dispose(): void {
    this._shuttingDown = true;
    for (const d of this._disposables.splice(0)) d.dispose();
  }

  /** Re-opens the remembered terminals of one remote host through its bridge (made again now). */
  private async _restoreRemote(host: string, list: Remembered[], front: Remembered | undefined): Promise<void> {
    let gone = list;
    try {
      const { hostId } = await this._deps.hosts.remotes.connect(host);
      const snapshot = this._deps.watcher.refresh();
      gone = [];
      for (const r of list) {
        const s = r.hostId === hostId ? snapshot.sessions.find((x) => x.hostId === hostId && x.info.id === r.id) : undefined;
        if (s?.info.running) this._reattach(s, front?.hostId === r.hostId && front.id === r.id);
        else gone.push(r);
      }
    } catch (e) {
      // Unreachable now: remembered still, for the next reload; the list says why and retries.
      this._deps.log.warn(`not re-opening ${list.length} terminal(s) on host "${host}": ${(e as Error).message}`);
      return;
    }
    const next = this._remembered().filter((r) => !gone.some((g) => g.hostId === r.hostId && g.id === r.id));
    await this._deps.state.update(Ids.rememberedSessions, next);
  }

  private _reattach(s: HostedSession, wasInFront: boolean): void {
    if (this.terminalFor(s.hostId, s.info.id)) return;
    const name = s.remote ? `${s.remote}:${s.info.name}` : s.info.name;
    this._deps.log.info(`re-attaching ${name} (${s.info.id}, pid ${s.info.pid})${wasInFront ? ', the terminal in front' : ''}`);
    this.attach(s, true, wasInFront);
  }

  /**
   * Remembers which shared terminal is in front, or that another one is. No terminal in front is
   * not remembered: a reload closes the terminals one by one before it, and each close says so.
   */
  private _noteFront(t: vscode.Terminal | undefined): void {
    if (!t || this._shuttingDown) return;
    const shown = [...this._entries].find((e) => e.terminal === t)?.pty;
    const front = shown?.hostId && shown.session ? { hostId: shown.hostId, id: shown.session.id } : undefined;
    void this._deps.state.update(Ids.frontSession, front);
  }

  // ---- hooks of the pseudoterminals

  private async _connect(target: PtyTarget): Promise<{ hostId: string; client: RpcClient; remote?: string }> {
    if (target.kind === 'create' && target.remote) {
      const { hostId, client, name } = await this._deps.hosts.remotes.connect(target.remote);
      return { hostId, client, remote: name };
    }
    if (target.kind === 'create') {
      const { record, client } = await this._deps.hosts.daemon();
      return { hostId: record.hostId, client };
    }
    if (target.session.host) {
      // A remote session: through its host's bridge, made again if it dropped.
      const { hostId, client, name } = await this._deps.hosts.remotes.connect(target.session.host);
      if (hostId !== target.hostId) throw new Error(`host "${name}" was restarted: session ${target.session.name} ended with the host that ran it`);
      return { hostId, client, remote: name };
    }
    const found = await this._deps.hosts.clientFor(target.hostId);
    if (!found) throw new Error(`the host of session ${target.session.name} is no longer running`);
    return { hostId: found.record.hostId, client: found.client };
  }

  private _bound(pty: SharedPseudoterminal): void {
    if (!pty.hostId || !pty.session) return;
    const host = pty.session.host;
    // A remote session is listed at once (the next poll of its host would be late for _followSessions).
    if (host) this._deps.hosts.remotes.noteSession(pty.hostId, pty.session);
    // Remembered for a reload, a remote one with its host's name (its bridge is made again then).
    const list = this._remembered().filter((r) => !(r.hostId === pty.hostId && r.id === pty.session!.id));
    list.push(host ? { hostId: pty.hostId, id: pty.session.id, host } : { hostId: pty.hostId, id: pty.session.id });
    void this._deps.state.update(Ids.rememberedSessions, list);
    this._known.add(sessionKey(pty.hostId, pty.session.id));
    // A terminal comes in front before its session is known (a new one is bound after it opens).
    const terminal = this._entryOf(pty)?.terminal;
    if (terminal && terminal === vscode.window.activeTerminal) this._noteFront(terminal);
    pty.setAgentTyping(this._agentTyping.has(sessionKey(pty.hostId, pty.session.id)));
    const shown = host ? `${host}:${pty.session.name}` : pty.session.name;
    this._deps.log.info(`terminal shows ${shown} (${pty.session.id}, pid ${pty.session.pid}, origin ${pty.session.origin})`);
    setTimeout(() => this._deps.watcher.refresh(), 50);
  }

  private _closed(pty: SharedPseudoterminal): void {
    const entry = this._entryOf(pty);
    if (this._shuttingDown) return;
    const decide = (attempt: number) => {
      const reason = entry?.terminal?.exitStatus?.reason;
      if (this._shuttingDown || reason === vscode.TerminalExitReason.Shutdown) {
        this._deps.log.info(`terminal of ${pty.session?.id ?? '(new)'} closed by a shutdown: the session lives on`);
        return;
      }
      // The reason comes in its own message; give it a little longer before deciding without it.
      if (reason === undefined && entry?.terminal && attempt < Timing.CloseSettleTries) {
        setTimeout(() => decide(attempt + 1), Timing.CloseSettleMs);
        return;
      }
      if (entry) this._entries.delete(entry);
      this._forget(pty);
      void this._kill(pty, `terminal closed (exit reason ${reasonName(reason)})`);
    };
    setTimeout(() => decide(1), Timing.CloseSettleMs);
  }

  private _finished(pty: SharedPseudoterminal): void {
    const entry = this._entryOf(pty);
    if (entry) this._entries.delete(entry);
    this._forget(pty);
    // The process has exited: removing the exited session frees its socket and listing at once.
    void this._kill(pty, 'terminal of an exited session closed');
  }

  private async _kill(pty: SharedPseudoterminal, why: string): Promise<void> {
    if (!pty.hostId || !pty.session) return;
    try {
      const client = await this._deps.hosts.anyClientFor(pty.hostId);
      if (!client) return;
      this._deps.log.info(`ending session ${pty.session.id}: ${why}`);
      await client.call('pty/kill', { session: pty.session.id });
    } catch (e) {
      this._deps.log.warn(`pty/kill ${pty.session.id}: ${(e as Error).message}`);
    }
    setTimeout(() => this._deps.watcher.refresh(), 100);
  }

  // ---- following the hosts

  private _onSnapshot(snapshot: Snapshot): void {
    this._followSessions(snapshot);
    this._openNewAgentSessions(snapshot);
  }

  private _followSessions(snapshot: Snapshot): void {
    for (const entry of this._entries) {
      const { pty } = entry;
      if (pty.state === 'closed') {
        this._entries.delete(entry); // a pending close decision keeps its own reference
        this._missing.delete(entry);
        continue;
      }
      if (!pty.hostId || !pty.session || pty.state === 'idle') continue;
      const s = snapshot.sessions.find((x) => x.hostId === pty.hostId && x.info.id === pty.session!.id);
      if (s) {
        this._missing.delete(entry);
        pty.rename(s.info);
        continue;
      }
      // Gone in two readings in a row (a record is never half-written, but a host may be restarting).
      const misses = (this._missing.get(entry) ?? 0) + 1;
      this._missing.set(entry, misses);
      if (misses >= 2) {
        this._missing.delete(entry);
        this._entries.delete(entry);
        this._forget(pty);
        // A host that died took the session: the terminal stays, saying so, until the user closes it.
        if (pty.hostLost) {
          this._deps.log.info(`session ${pty.session.id} went with its host: its terminal stays to say so`);
          continue;
        }
        this._deps.log.info(`session ${pty.session.id} ended elsewhere: closing its terminal`);
        pty.sessionGone();
      }
    }
  }

  /**
   * Sessions an agent or script opened appear as editor terminals, without taking focus: in the
   * per-user host, and in a remote host while this window's bridge to it is up.
   */
  private _openNewAgentSessions(snapshot: Snapshot): void {
    const daemonIds = new Set(snapshot.hosts.filter((h) => h.kind === 'daemon').map((h) => h.hostId));
    for (const s of snapshot.sessions) {
      const key = sessionKey(s.hostId, s.info.id);
      if (this._known.has(key)) continue;
      this._known.add(key);
      if (!(daemonIds.has(s.hostId) || s.remote) || s.info.origin === 'user' || !s.info.running) continue;
      if (this.terminalFor(s.hostId, s.info.id)) continue;
      // A remote session's folder is a path of that machine: it says nothing about this window's.
      if ((!s.remote && isInWorkspace(s.info.cwd)) || vscode.window.state.focused) {
        this._deps.log.info(`opening ${s.info.origin} session ${s.info.name} (${s.info.id})`);
        this.attach(s, true);
        continue;
      }
      const clientsThen = s.info.clients;
      setTimeout(() => {
        const now = this._deps.watcher.find(s.hostId, s.info.id);
        if (!now || !now.info.running || this.terminalFor(s.hostId, s.info.id)) return;
        if (now.info.clients > clientsThen) return; // another window shows it
        this._deps.log.info(`opening ${s.info.origin} session ${s.info.name} (${s.info.id})`);
        this.attach(now, true);
      }, Timing.AgentClaimDelayMs);
    }
  }

  // ---- bookkeeping

  private _adopt(terminal: vscode.Terminal): void {
    const opts = terminal.creationOptions as vscode.ExtensionTerminalOptions;
    if (!opts || !('pty' in opts)) return;
    for (const e of this._entries) {
      if (e.pty !== opts.pty || e.terminal) continue;
      e.terminal = terminal;
      // Opened from the terminal's profile menu (Create New Terminal (With Profile)): the workbench
      // left the focus on the terminal before, so what the user typed next went there.
      if (e.pty.target.kind === 'create') terminal.show(false);
    }
  }

  private _entryOf(pty: SharedPseudoterminal): Entry | undefined {
    for (const e of this._entries) if (e.pty === pty) return e;
    return undefined;
  }

  private _remembered(): Remembered[] {
    const v = this._deps.state.get<unknown>(Ids.rememberedSessions);
    return Array.isArray(v) ? v.filter((r): r is Remembered => typeof r?.hostId === 'string' && typeof r?.id === 'string') : [];
  }

  private _forget(pty: SharedPseudoterminal): void {
    if (!pty.hostId || !pty.session) return;
    const list = this._remembered();
    const next = list.filter((r) => !(r.hostId === pty.hostId && r.id === pty.session!.id));
    if (next.length !== list.length) void this._deps.state.update(Ids.rememberedSessions, next);
  }
}

/**
 * `session/create` params for a session the person opens on a remote host: that machine's shell
 * in its home (this window's shell setting and folder are paths of this machine).
 */
function remoteSessionParams(): Record<string, unknown> {
  return { origin: 'user', leaseSeconds: Math.max(0, getSetting('reattachSeconds')) };
}

/** `session/create` params for the user's shell in this window (docs/editor.md#the-shell). */
function userSessionParams(): Record<string, unknown> {
  const shell = resolveShell();
  const params: Record<string, unknown> = {
    command: shell.command,
    args: shell.args,
    origin: 'user',
    leaseSeconds: Math.max(0, getSetting('reattachSeconds')),
  };
  if (!getSetting('shellIntegration')) params.env = { [SHELL_INTEGRATION_ENV]: '0' };
  const cwd = workspaceCwd();
  if (cwd) {
    params.cwd = cwd;
    params.workspace = cwd; // SessionInfo.workspace: which window's folder the session belongs to
  }
  return params;
}

function reasonName(reason: vscode.TerminalExitReason | undefined): string {
  return reason === undefined ? 'unknown' : (vscode.TerminalExitReason[reason] ?? String(reason));
}

function isInWorkspace(dir: string): boolean {
  return (vscode.workspace.workspaceFolders ?? []).some((f) => {
    if (f.uri.scheme !== 'file') return false;
    const rel = path.relative(f.uri.fsPath, dir);
    return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
  });
}
