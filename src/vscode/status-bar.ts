import * as vscode from 'vscode';
import { Commands, Ids } from './commands';
import type { SessionWatcher, Snapshot } from './session-watcher';

/** The status bar item: the number of shared sessions (0 included); a click lists them. */
export function registerStatusBar(context: vscode.ExtensionContext, deps: { watcher: SessionWatcher }): void {
  const item = vscode.window.createStatusBarItem(Ids.statusBar, vscode.StatusBarAlignment.Left, 100);
  item.name = 'Shared PTY';
  item.command = Commands.listSessions;
  const render = (s: Snapshot) => {
    const n = s.sessions.length;
    item.text = `$(terminal) Shared: ${n}`;
    const running = s.sessions.filter((x) => x.info.running).length;
    item.tooltip =
      n === 0
        ? 'Shared PTY: no shared sessions. Click to open one.'
        : `Shared PTY: ${n} shared session${n === 1 ? '' : 's'} (${running} running). Click to list them.`;
  };
  render(deps.watcher.snapshot);
  item.show();
  context.subscriptions.push(item, deps.watcher.onDidChange(render));
}
