import * as vscode from 'vscode';
import { sessionKey, type HostedSession, type SessionWatcher, type Snapshot } from './session-watcher';
import type { TerminalManager } from './terminal-manager';

export interface SecretNoticeDeps {
  watcher: SessionWatcher;
  terminals: TerminalManager;
}

/** The action of the notice. */
export const SHOW_TERMINAL = 'Show terminal';

/**
 * Tells the user when a shared terminal asks for a password (docs/editor.md#password-prompts: `secretInput`, which
 * agents may not answer), naming the terminal, with an action that focuses it. Once per prompt;
 * not for the terminal the user is already typing in (the active terminal of a focused window).
 * Told in the window that shows the terminal, or, when no client shows it, in the focused window.
 */
export function registerSecretNotice(context: vscode.ExtensionContext, deps: SecretNoticeDeps): void {
  let asking = new Set<string>();
  const onSnapshot = (snapshot: Snapshot) => {
    const now = new Set<string>();
    for (const s of snapshot.sessions) {
      if (!s.info.secretInput) continue;
      const key = sessionKey(s.hostId, s.info.id);
      now.add(key);
      if (!asking.has(key) && shouldTell(s, deps)) void tell(s, deps);
    }
    asking = now;
  };
  context.subscriptions.push(deps.watcher.onDidChange(onSnapshot));
}

function shouldTell(s: HostedSession, deps: SecretNoticeDeps): boolean {
  const terminal = deps.terminals.terminalFor(s.hostId, s.info.id);
  const focused = vscode.window.state.focused;
  if (terminal) return !(focused && vscode.window.activeTerminal === terminal);
  return focused && s.info.clients === 0;
}

async function tell(s: HostedSession, deps: SecretNoticeDeps): Promise<void> {
  const picked = await vscode.window.showInformationMessage(
    `The terminal "${s.info.name}" asks for a password or passphrase. Type it there yourself: agents cannot type into it while it asks.`,
    SHOW_TERMINAL,
  );
  if (picked !== SHOW_TERMINAL) return;
  // The session as it is now: it may have ended meanwhile.
  const current = deps.watcher.find(s.hostId, s.info.id);
  if (current?.info.running) deps.terminals.attach(current, false);
}
