import * as vscode from 'vscode';
import { getSetting } from './settings';

/** A program and its arguments. */
export interface ShellCommand {
  command: string;
  args: string[];
}

/** A terminal profile entry of `terminal.integrated.profiles.<platform>` (only what we use). */
interface ProfileEntry {
  path?: string | string[];
  args?: string | string[];
}

function platformKey(): 'linux' | 'osx' | 'windows' {
  if (process.platform === 'darwin') return 'osx';
  if (process.platform === 'win32') return 'windows';
  return 'linux';
}

/** The shell of VS Code's default terminal profile, when it names one with a path. */
function defaultProfileShell(): ShellCommand | undefined {
  const term = vscode.workspace.getConfiguration('terminal.integrated');
  const key = platformKey();
  const name = term.get<string | null>(`defaultProfile.${key}`);
  if (!name) return undefined;
  const profiles = term.get<Record<string, ProfileEntry | null>>(`profiles.${key}`) ?? {};
  const entry = profiles[name];
  // An extension's profile (ours included) has no entry here: fall through to $SHELL.
  if (!entry || entry.path === undefined) return undefined;
  const command = Array.isArray(entry.path) ? entry.path[0] : entry.path;
  if (!command) return undefined;
  const args = entry.args === undefined ? [] : Array.isArray(entry.args) ? entry.args : [entry.args];
  return { command, args };
}

/**
 * The user's shell (CONTRACT §8): `sharedPty.shell` (with `sharedPty.shellArgs`), else the shell of
 * VS Code's default terminal profile, else $SHELL, else /bin/sh.
 */
export function resolveShell(env: NodeJS.ProcessEnv = process.env): ShellCommand {
  const configured = getSetting('shell').trim();
  if (configured) return { command: configured, args: getSetting('shellArgs') };
  return defaultProfileShell() ?? { command: env.SHELL || '/bin/sh', args: [] };
}

/** The folder new terminals start in: the first workspace folder on disk, if any. */
export function workspaceCwd(): string | undefined {
  const folder = vscode.workspace.workspaceFolders?.find((f) => f.uri.scheme === 'file');
  return folder?.uri.fsPath;
}
