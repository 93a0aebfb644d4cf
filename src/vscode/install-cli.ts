import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { installLauncher, launcherDir, launcherPath, LauncherTakenError, refreshLauncher, type LauncherTarget } from './cli-launcher';
import { Commands } from './commands';
import { nodePtyFallback, type HostClients } from './host-clients';
import { getSetting } from './settings';

export interface InstallCliDeps {
  hosts: HostClients;
  extensionPath: string;
  appRoot: string;
  log: vscode.LogOutputChannel;
  error(what: string, e: unknown): void;
}

/** What this window's launcher runs: this version of the extension, with the Node running it now. */
export function launcherTarget(deps: Pick<InstallCliDeps, 'hosts' | 'extensionPath' | 'appRoot'>): LauncherTarget {
  return {
    extensionPath: deps.extensionPath,
    execPath: process.execPath,
    nodePtyFallback: nodePtyFallback(deps.appRoot),
    // Only a directory the user chose: the default is computed the same way by the CLI.
    ...(getSetting('runtimeDirectory').trim() ? { runtimeDir: deps.hosts.runtimeDir() } : {}),
  };
}

/**
 * `sharedPty.installCli` ("Install 'shared-pty' Command in PATH"): writes the launcher in
 * ~/.local/bin (see cli-launcher.ts). And on every activation, a launcher already installed is
 * brought up to date, which is what keeps it working across updates.
 */
export function registerInstallCli(context: vscode.ExtensionContext, deps: InstallCliDeps): void {
  context.subscriptions.push(vscode.commands.registerCommand(Commands.installCli, () => installCli(deps)));
  try {
    if (refreshLauncher(launcherTarget(deps))) deps.log.info(`updated ${launcherPath()} to this version of the extension`);
  } catch (e) {
    deps.log.warn(`could not update ${launcherPath()}: ${(e as Error).message}`);
  }
}

/** Installs the launcher; resolves to its path (undefined when the user declined or it failed). */
async function installCli(deps: InstallCliDeps): Promise<string | undefined> {
  if (process.platform === 'win32') {
    void vscode.window.showErrorMessage(
      'Shared PTY: the shared-pty command is for Linux and macOS (the extension runs where your files are: use it in WSL or a remote).',
    );
    return undefined;
  }
  const target = launcherTarget(deps);
  let result;
  try {
    try {
      result = installLauncher(target);
    } catch (e) {
      if (!(e instanceof LauncherTakenError)) throw e;
      const replace = 'Replace';
      const answer = await vscode.window.showWarningMessage(
        `${e.file} already exists and is not a launcher of this extension (maybe shared-pty installed with npm). Replace it?`,
        { modal: true },
        replace,
      );
      if (answer !== replace) return undefined;
      result = installLauncher(target, { replaceOther: true });
    }
  } catch (e) {
    deps.error('Cannot install the shared-pty command', e);
    return undefined;
  }
  deps.log.info(`installed ${result.path} (runs ${path.join(target.extensionPath, 'dist', 'cli.js')} with ${target.execPath})`);
  const shown = result.path.replace(os.homedir(), '~');
  if (result.onPath) {
    void vscode.window.showInformationMessage(
      `Installed the shared-pty command in ${shown}: try "shared-pty list" in a terminal. It follows the extension's updates.`,
    );
  } else {
    void vscode.window.showWarningMessage(
      `Installed ${shown}, but ${launcherDir().replace(os.homedir(), '~')} is not on your PATH: add the line export PATH="$HOME/.local/bin:$PATH" to ~/.profile (or ~/.bashrc, ~/.zshrc) and open a new terminal, or run it as ${shown}.`,
    );
  }
  return result.path;
}
