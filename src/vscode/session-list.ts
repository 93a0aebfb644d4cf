import * as vscode from 'vscode';
import { Commands } from './commands';
import type { HostClients } from './host-clients';
import { mcpConfigSnippet, stdioLaunch } from './mcp-config';
import { startRecording, stopRecording, type RecordTarget } from './recording-actions';
import { RecordingMemory } from './recording-notices';
import type { HostedSession, SessionWatcher } from './session-watcher';
import { revokeLinks, shareLink, type ShareTarget } from './share-actions';
import type { TerminalManager } from './terminal-manager';

export interface SessionListDeps {
  hosts: HostClients;
  watcher: SessionWatcher;
  terminals: TerminalManager;
  /** The extension's folder (the MCP configuration names its CLI when no launcher is installed). */
  extensionPath: string;
  error(what: string, e: unknown): void;
}

type Action = 'focus' | 'copyAddress' | 'copyMcp' | 'shareView' | 'shareInput' | 'revoke' | 'record' | 'stopRecording' | 'keep' | 'kill';

interface SessionPick extends vscode.QuickPickItem {
  session?: HostedSession;
  command?: string;
  /** A row of a remote host's group: its name. */
  remote?: string;
}

interface ActionPick extends vscode.QuickPickItem {
  action: Action;
}

/** Title of the session list (the status bar item opens it). */
export const SESSION_LIST_TITLE = 'Shared PTY sessions';

/** What the list works with: its dependencies, and the recordings this window started. */
interface ListContext extends SessionListDeps {
  recordings: RecordingMemory;
}

/** `sharedPty.listSessions` and `sharedPty.copyMcpConfig`. */
export function registerSessionList(context: vscode.ExtensionContext, deps: SessionListDeps): void {
  const list: ListContext = { ...deps, recordings: new RecordingMemory() };
  context.subscriptions.push(
    vscode.commands.registerCommand(Commands.listSessions, () => listSessions(list)),
    vscode.commands.registerCommand(Commands.copyMcpConfig, () => copyMcpConfig(deps)),
  );
}

async function listSessions(deps: ListContext): Promise<void> {
  const snapshot = deps.watcher.refresh();
  deps.recordings.keepOnly(snapshot.sessions.filter((s) => s.info.running && !s.remote).map((s) => ({ hostId: s.hostId, sessionId: s.info.id })));
  const pick = vscode.window.createQuickPick<SessionPick>();
  pick.title = SESSION_LIST_TITLE;
  pick.matchOnDescription = true;
  pick.matchOnDetail = true;
  const render = () => {
    const { items, any } = listItems(deps);
    // Keep the person's place while remote hosts answer one by one.
    const active = pick.activeItems[0];
    pick.items = items;
    const same = active && items.find((i) => i.label === active.label && i.session?.info.id === active.session?.info.id);
    if (same) pick.activeItems = [same];
    pick.placeholder = any ? 'Pick a session for its actions' : 'No shared sessions yet';
    pick.busy = deps.hosts.remotes.hosts().some((h) => h.connecting);
  };
  const subs = [
    deps.watcher.onDidChange(render),
    deps.hosts.remotes.onDidChange(() => {
      deps.watcher.refresh();
      render();
    }),
  ];
  render();
  // The list shows every configured host: bridges not up yet are made now (each row says how it goes).
  void deps.hosts.remotes.connectAll();
  const picked = await new Promise<SessionPick | undefined>((resolve) => {
    subs.push(
      pick.onDidAccept(() => resolve(pick.selectedItems[0])),
      pick.onDidHide(() => resolve(undefined)),
    );
    pick.show();
  });
  for (const d of subs) d.dispose();
  pick.dispose();
  if (!picked) return;
  if (picked.remote) {
    if (picked.command === Commands.open) deps.terminals.openUserTerminal(picked.remote);
    else
      void deps.hosts.remotes.connect(picked.remote).then(
        () => listSessions(deps),
        (e: unknown) => deps.error(`Cannot reach host "${picked.remote}"`, e),
      );
    return;
  }
  if (picked.command) {
    await vscode.commands.executeCommand(picked.command);
    return;
  }
  if (picked.session) await sessionActions(picked.session, deps);
}

/**
 * The list's rows: this machine's sessions, then each remote host of hosts.json under its name
 * (its sessions, or how connecting to it goes, and opening a terminal there), then the actions.
 */
function listItems(deps: ListContext): { items: SessionPick[]; any: boolean } {
  const snapshot = deps.watcher.snapshot;
  const remotes = deps.hosts.remotes.hosts();
  const items: SessionPick[] = [];
  const local = snapshot.sessions.filter((s) => !s.remote);
  const openHere: SessionPick = { label: '$(add) Open Shared PTY', description: 'a new terminal with your shell, shared at once', command: Commands.open };
  if (remotes.length) items.push({ label: 'this machine', kind: vscode.QuickPickItemKind.Separator });
  items.push(...local.map((s) => sessionItem(s, deps)));
  // With hosts to group by, each group ends with opening a terminal there (an empty group would not show).
  if (remotes.length) items.push({ ...openHere, description: 'on this machine: a new terminal with your shell, shared at once' });
  for (const r of remotes) {
    items.push({ label: r.name, kind: vscode.QuickPickItemKind.Separator });
    if (r.live) {
      items.push(...snapshot.sessions.filter((s) => s.remote === r.name).map((s) => sessionItem(s, deps)));
      items.push({ label: `$(add) Open Shared PTY on ${r.name}`, description: r.command, command: Commands.open, remote: r.name });
    } else if (r.connecting) {
      items.push({ label: `$(sync~spin) Connecting to ${r.name}…`, description: r.command, remote: r.name });
    } else {
      items.push({
        label: `$(debug-disconnect) ${r.name}: not connected`,
        description: r.command,
        detail: r.error ? `${r.error} · pick to try again` : 'pick to connect',
        remote: r.name,
      });
    }
  }
  const any = snapshot.sessions.length > 0;
  if (items.length) items.push({ label: '', kind: vscode.QuickPickItemKind.Separator });
  items.push(
    ...(remotes.length ? [] : [openHere]),
    { label: '$(json) Copy MCP Configuration', description: 'for agents outside the editor', command: Commands.copyMcpConfig },
    { label: '$(play) Replay a Recording…', description: 'a .cast file, in the browser', command: Commands.replayRecording },
  );
  return { items, any };
}

function sessionItem(s: HostedSession, deps: SessionListDeps): SessionPick {
  const i = s.info;
  const here = deps.terminals.terminalFor(s.hostId, i.id) !== undefined;
  const state = i.running ? (i.secretInput ? ' · asks for a password' : '') : ` · exited (${i.exitCode ?? '?'})`;
  const icon = !i.running ? '$(circle-slash)' : i.secretInput ? '$(lock)' : '$(terminal)';
  return {
    label: `${icon} ${i.name}`,
    description: `${[i.command, ...i.args].join(' ')} · ${i.cols}×${i.rows}${state}`,
    detail: `${s.remote ? `${s.remote}:${i.id}` : i.address} · ${i.clients} client${i.clients === 1 ? '' : 's'} · ${i.origin}${here ? ' · in this window' : ''}${s.hostKind === 'serve' ? ` · host ${s.hostId}` : ''}`,
    session: s,
  };
}

async function sessionActions(s: HostedSession, deps: ListContext): Promise<void> {
  const here = deps.terminals.terminalFor(s.hostId, s.info.id);
  const recordingTo = deps.recordings.fileOf(s.hostId, s.info.id);
  const focus: ActionPick = { label: here ? '$(eye) Focus Terminal' : '$(terminal) Show in This Window', action: 'focus' };
  const keepKill: ActionPick[] = [
    { label: '$(pin) Keep Running', description: 'keep the session when no editor shows it (detach)', action: 'keep' },
    { label: '$(trash) Kill Session', description: `ends ${s.info.command} (pid ${s.info.pid})`, action: 'kill' },
  ];
  // A remote session's address, links and recordings belong to its own machine: use `shared-pty` there for them.
  const actions: ActionPick[] = s.remote
    ? [focus, ...keepKill]
    : [
        focus,
        { label: '$(copy) Copy Address', description: s.info.address, action: 'copyAddress' },
        { label: '$(json) Copy MCP Configuration', description: 'for agents outside the editor', action: 'copyMcp' },
        { label: '$(eye) Share Read-only Link…', description: 'a browser link that watches it live, until it expires', action: 'shareView' },
        { label: '$(edit) Share with Input…', description: 'a browser link that can also type into it', action: 'shareInput' },
        { label: '$(circle-slash) Revoke Shared Links…', description: 'end links to this session at once', action: 'revoke' },
        ...recordAction(s, recordingTo),
        ...keepKill,
      ];
  const picked = await vscode.window.showQuickPick(actions, { title: `${SESSION_LIST_TITLE}: ${s.remote ? `${s.remote}:` : ''}${s.info.name}` });
  if (!picked) return;
  try {
    switch (picked.action) {
      case 'focus':
        deps.terminals.attach(s, false).show(false);
        return;
      case 'copyAddress':
        await vscode.env.clipboard.writeText(s.info.address);
        void vscode.window.showInformationMessage(`Copied the address of ${s.info.name}: ${s.info.address}`);
        return;
      case 'copyMcp':
        await copyMcpConfig(deps);
        return;
      case 'shareView':
        await shareLink(await sessionTarget(deps, s), 'view', 'Share read-only link');
        return;
      case 'shareInput':
        await shareLink(await sessionTarget(deps, s), 'input', 'Share with input');
        return;
      case 'revoke':
        await revokeLinks(await sessionTarget(deps, s));
        return;
      case 'record':
        await startRecording(await sessionTarget(deps, s), deps.recordings);
        return;
      case 'stopRecording':
        await stopRecording(await sessionTarget(deps, s), deps.recordings);
        return;
      case 'keep':
        await call(deps, s, 'session/keep');
        void vscode.window.showInformationMessage(`${s.info.name} keeps running when no editor shows it, until it is killed.`);
        return;
      case 'kill':
        await call(deps, s, 'pty/kill');
        setTimeout(() => deps.watcher.refresh(), 100);
        return;
    }
  } catch (e) {
    deps.error(`${picked.label.replace(/^\$\([^)]*\)\s*/, '')} failed`, e);
  }
}

/** "Stop Recording" while this window knows it records, else "Start Recording" while it runs. */
function recordAction(s: HostedSession, recordingTo: string | undefined): ActionPick[] {
  if (recordingTo) return [{ label: '$(debug-stop) Stop Recording', description: `recording to ${recordingTo}`, action: 'stopRecording' }];
  if (!s.info.running) return [];
  return [{ label: '$(record) Start Recording', description: 'an asciicast file in the recordings folder, to replay', action: 'record' }];
}

async function call(deps: SessionListDeps, s: HostedSession, method: string, params: Record<string, unknown> = {}): Promise<unknown> {
  const client = await deps.hosts.anyClientFor(s.hostId);
  if (!client)
    throw new Error(
      s.remote ? `the connection to host "${s.remote}" is down; pick the host in the list to connect again` : `the host of ${s.info.name} is no longer running`,
    );
  return client.request(method, { ...params, session: s.info.id });
}

/** The session and its host's control connection (for sharing and recording: both take the same). */
async function sessionTarget(deps: SessionListDeps, s: HostedSession): Promise<ShareTarget & RecordTarget> {
  const found = await deps.hosts.clientFor(s.hostId);
  if (!found) throw new Error(`the host of ${s.info.name} is no longer running`);
  return { name: s.info.name, sessionId: s.info.id, ...found };
}

async function copyMcpConfig(deps: SessionListDeps): Promise<void> {
  try {
    const stdio = stdioLaunch(deps.extensionPath);
    // The runtime directory this window's hosts use (sharedPty.runtimeDirectory may name another than the default).
    await vscode.env.clipboard.writeText(mcpConfigSnippet(stdio, deps.hosts.runtimeDir()));
    const how = stdio.viaLauncher
      ? `"shared-pty" (stdio, through ${stdio.command}, which follows updates)`
      : '"shared-pty" (stdio, with this version\'s absolute paths: run "Shared PTY: Install \'shared-pty\' Command in PATH" for one that survives updates)';
    void vscode.window.showInformationMessage(`Copied the MCP configuration: ${how}. It holds no token: the server finds your hosts by itself.`);
  } catch (e) {
    deps.error('Cannot copy the MCP configuration', e);
  }
}
