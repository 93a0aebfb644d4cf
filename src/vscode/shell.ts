import * as fs from 'node:fs';
import * as path from 'node:path';
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

/** Whether `program` (an absolute path, or a name looked up on $PATH) is an executable file. */
function isExecutable(program: string, env: NodeJS.ProcessEnv): boolean {
  const candidates = path.isAbsolute(program)
    ? [program]
    : (env.PATH ?? '')
        .split(path.delimiter)
        .filter(Boolean)
        .map((d) => path.join(d, program));
  return candidates.some((c) => {
    try {
      fs.accessSync(c, fs.constants.X_OK);
      return fs.statSync(c).isFile();
    } catch {
      return false;
    }
  });
}

/**
 * The shell of VS Code's default terminal profile, when it names one with a path. As in VS Code,
 * a list of paths is a list of candidates (the first that exists wins), and a profile none of
 * whose paths exists is passed over.
 */
function defaultProfileShell(env: NodeJS.ProcessEnv): ShellCommand | undefined {
  const term = vscode.workspace.getConfiguration('terminal.integrated');
  const key = platformKey();
  const name = term.get<string | null>(`defaultProfile.${key}`);
  if (!name) return undefined;
  const profiles = term.get<Record<string, ProfileEntry | null>>(`profiles.${key}`) ?? {};
  const entry = profiles[name];
  // An extension's profile (ours included) has no entry here: fall through to $SHELL.
  if (!entry || entry.path === undefined) return undefined;
  const paths = Array.isArray(entry.path) ? entry.path : [entry.path];
  const command = paths.find((p) => typeof p === 'string' && p !== '' && isExecutable(p, env));
  if (!command) return undefined;
  const args = entry.args === undefined ? [] : Array.isArray(entry.args) ? entry.args : [entry.args];
  return { command, args };
}

/**
 * The user's shell (docs/editor.md#the-shell): `sharedPty.shell` (with `sharedPty.shellArgs`), else the shell of
 * VS Code's default terminal profile, else $SHELL, else /bin/sh.
 */
export function resolveShell(env: NodeJS.ProcessEnv = process.env): ShellCommand {
  const configured = getSetting('shell').trim();
  if (configured) return { command: configured, args: getSetting('shellArgs') };
  return defaultProfileShell(env) ?? { command: env.SHELL || '/bin/sh', args: [] };
}

/** The folder new terminals start in: the first workspace folder on disk, if any. */
export function workspaceCwd(): string | undefined {
  const folder = vscode.workspace.workspaceFolders?.find((f) => f.uri.scheme === 'file');
  return folder?.uri.fsPath;
}
