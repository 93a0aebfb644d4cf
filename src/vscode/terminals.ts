import * as vscode from 'vscode';
import { Commands, Ids } from './commands';
import type { TerminalManager } from './terminal-manager';

/** `sharedPty.open` and the "Shared PTY" terminal profile (the "+" menu, the default-profile setting). */
export function registerTerminals(context: vscode.ExtensionContext, deps: { terminals: TerminalManager }): void {
  context.subscriptions.push(
    vscode.commands.registerCommand(Commands.open, () => deps.terminals.openUserTerminal()),
    vscode.window.registerTerminalProfileProvider(Ids.terminalProfile, {
      provideTerminalProfile: () =>
        new vscode.TerminalProfile({ name: 'Shared PTY', pty: deps.terminals.createUserPty(), iconPath: new vscode.ThemeIcon('terminal') }),
    }),
  );
}
