import * as vscode from 'vscode';
import { registerAgentApproval } from './agent-approval';
import { showError } from './errors';
import { HostClients } from './host-clients';
import { registerInstallCli } from './install-cli';
import { registerMcpProvider } from './mcp-provider';
import { registerReplayCommand } from './recording-actions';
import { registerSecretNotice } from './secret-notice';
import { registerSessionList } from './session-list';
import { SessionWatcher, type HostedSession } from './session-watcher';
import { registerStatusBar } from './status-bar';
import { TerminalManager } from './terminal-manager';
import { registerTerminals } from './terminals';

/** What the extension exports to other extensions and to its in-editor tests. */
export interface SharedPtyApi {
  /** Every session of every live host of this user, as last read. */
  sessions(): HostedSession[];
  /** The session an editor terminal of this window shows. */
  sessionOf(terminal: vscode.Terminal): { hostId: string; id: string } | undefined;
}

let terminals: TerminalManager | undefined;

/**
 * Cheap by design: nothing here starts the per-user host. It starts on first need (a terminal,
 * the MCP server, copying its configuration); until then the status bar reads discovery records.
 */
export function activate(context: vscode.ExtensionContext): SharedPtyApi {
  const log = vscode.window.createOutputChannel('Shared PTY', { log: true });
  const error = (what: string, e: unknown) => showError(what, e, log, context.extensionPath);
  const hosts = new HostClients({ extensionPath: context.extensionPath, appRoot: vscode.env.appRoot, log });
  const watcher = new SessionWatcher(hosts);
  terminals = new TerminalManager({ hosts, watcher, state: context.workspaceState, log, error });
  context.subscriptions.push(log, hosts, watcher, terminals);

  registerStatusBar(context, { watcher });
  registerTerminals(context, { terminals });
  registerSessionList(context, { hosts, watcher, terminals, extensionPath: context.extensionPath, error });
  registerReplayCommand(context, { hosts, error });
  registerMcpProvider(context, { hosts, watcher, extensionPath: context.extensionPath, error });
  registerSecretNotice(context, { watcher, terminals });
  registerAgentApproval(context, { hosts, watcher, terminals, log });
  registerInstallCli(context, { hosts, extensionPath: context.extensionPath, appRoot: vscode.env.appRoot, log, error });

  // A reloaded window gets its terminals back (contacts a host only when there is something to restore).
  terminals.restore().catch((e: unknown) => error('Re-opening the terminals of this window failed', e));

  const manager = terminals;
  return {
    sessions: () => watcher.snapshot.sessions,
    sessionOf: (t) => manager.sessionOf(t),
  };
}

/** A reload or shutdown never ends sessions: connections close, leases decide (docs/editor.md#terminal-lifetimes). */
export function deactivate(): void {
  terminals?.shutdown();
}
