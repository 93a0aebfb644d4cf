import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { makeFolders } from '../core/base/private-files';
import { shellQuote } from '../core/base/shell-words';

/**
 * The `shared-pty` launcher the editor command "Install 'shared-pty' Command in PATH" writes
 * (docs/install.md). No `vscode` import: the installer runs, and is tested, in plain Node.
 *
 * Surviving extension updates takes two things, since an update installs the new version in a new
 * folder (`<publisher>.<name>-<version>`) and removes the old one later, and a remote editor's
 * server (its Node) moves with every editor update:
 * - every activation rewrites the launcher when it is ours, so it points at the running version
 *   and the Node running it now;
 * - until then (an update installed from the command line, no window opened since), the launcher
 *   itself falls back, at run time, to the newest installed version of the extension beside the
 *   one it names, and to `node` on PATH when the editor's Node is gone.
 */

/** The line that marks a launcher as ours: a file without it is never replaced unasked. */
export const LAUNCHER_MARK = '# shared-pty launcher, written by the Shared PTY extension';

/** What a launcher runs. */
export interface LauncherTarget {
  /** The extension's folder (holding dist/cli.js). */
  extensionPath: string;
  /** The Node runtime: the editor's own (Electron with ELECTRON_RUN_AS_NODE, or a server's node). */
  execPath: string;
  /** node-pty folders to try when the extension's own does not load (the editor's copies). */
  nodePtyFallback?: string[];
  /** A runtime directory the user set (`sharedPty.runtimeDirectory`), so CLI and editor meet. */
  runtimeDir?: string;
}

/** `~/.local/bin`, where the launcher goes (the XDG place for a user's own commands). */
export function launcherDir(home = os.homedir()): string {
  return path.join(home, '.local', 'bin');
}

/** The launcher's path. */
export function launcherPath(home = os.homedir()): string {
  return path.join(launcherDir(home), 'shared-pty');
}

/** A value inside sh double quotes (and a `${…}` word): `"`, `\`, `$`, `` ` `` and `}` escaped. */
function dqEscape(value: string): string {
  return value.replace(/(["\\$`}])/g, '\\$1');
}

/**
 * The extension's folder name without its version: `shared-pty.shared-pty-0.1.0` (maybe with a
 * platform suffix) gives `shared-pty.shared-pty-`, the prefix of every installed version.
 */
export function versionlessPrefix(extensionPath: string): string {
  const base = path.basename(extensionPath);
  const m = /^(.*-)\d+\.\d+\.\d+.*$/.exec(base);
  return m ? m[1] : `${base}-`;
}

/** The launcher's text: a POSIX sh script (see the module's comment for what it falls back to). */
export function launcherScript(t: LauncherTarget): string {
  const lines = [
    '#!/bin/sh',
    LAUNCHER_MARK,
    '# (command "Shared PTY: Install \'shared-pty\' Command in PATH"); rewritten each time the extension',
    '# starts, so it follows updates. Remove it to uninstall.',
    `ext=${shellQuote(t.extensionPath)}`,
    `node=${shellQuote(t.execPath)}`,
    'if [ ! -f "$ext/dist/cli.js" ]; then',
    '  # Updated since this was written: the newest installed version beside it.',
    `  prefix=${shellQuote(path.join(path.dirname(t.extensionPath), versionlessPrefix(t.extensionPath)))}`,
    '  newest=',
    '  for d in "$prefix"*; do',
    '    [ -f "$d/dist/cli.js" ] || continue',
    '    if [ -z "$newest" ] || [ "$(printf \'%s\\n%s\\n\' "$newest" "$d" | sort -V | tail -n 1)" = "$d" ]; then newest=$d; fi',
    '  done',
    '  [ -n "$newest" ] || { echo "shared-pty: the Shared PTY extension is no longer installed in $(dirname "$ext"); run its command Install \'shared-pty\' Command in PATH again, or remove $0" >&2; exit 127; }',
    '  ext=$newest',
    'fi',
    "# The editor's Node moved (a remote editor's server was updated): any node on PATH.",
    '[ -x "$node" ] || node=$(command -v node) || { echo "shared-pty: no Node.js found (the editor\'s is gone); open the editor once to update this launcher" >&2; exit 127; }',
  ];
  // Defaults only: what the user sets in the environment wins.
  if (t.nodePtyFallback?.length) lines.push(`: "\${SHARED_PTY_NODE_PTY_FALLBACK:=${dqEscape(t.nodePtyFallback.join(path.delimiter))}}"`);
  if (t.runtimeDir) lines.push(`: "\${SHARED_PTY_DIR:=${dqEscape(t.runtimeDir)}}"`);
  lines.push('ELECTRON_RUN_AS_NODE=1', 'export ELECTRON_RUN_AS_NODE SHARED_PTY_NODE_PTY_FALLBACK SHARED_PTY_DIR', 'exec "$node" "$ext/dist/cli.js" "$@"', '');
  return lines.join('\n');
}

/** What is at the launcher's path now. */
export type LauncherState = 'absent' | 'ours' | 'other';

export function launcherState(file = launcherPath()): LauncherState {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') {
      // A dangling symbolic link is someone's too.
      return fs.lstatSync(file, { throwIfNoEntry: false }) ? 'other' : 'absent';
    }
    return 'other';
  }
  return text.split('\n', 3).includes(LAUNCHER_MARK) ? 'ours' : 'other';
}

/** The outcome of installing. */
export interface InstallResult {
  path: string;
  /** False when the launcher was already exactly this. */
  changed: boolean;
  /** True when the launcher's folder is on PATH (else the user must add it). */
  onPath: boolean;
}

/**
 * Writes the launcher (mode 0755) at `file`, creating its folder, replacing it whole (a temporary
 * file renamed over it, so a launcher running meanwhile never reads half a script). A file there
 * that is not ours is replaced only with `replaceOther`.
 */
export function installLauncher(t: LauncherTarget, opts: { file?: string; pathEnv?: string; replaceOther?: boolean } = {}): InstallResult {
  const file = opts.file ?? launcherPath();
  const dir = path.dirname(file);
  const state = launcherState(file);
  if (state === 'other' && !opts.replaceOther) throw new LauncherTakenError(file);
  const text = launcherScript(t);
  const onPath = (opts.pathEnv ?? process.env.PATH ?? '').split(path.delimiter).some((p) => p && path.resolve(p) === path.resolve(dir));
  if (state === 'ours' && fs.readFileSync(file, 'utf8') === text) return { path: file, changed: false, onPath };
  makeFolders(dir, 0o755);
  const tmp = path.join(dir, `.shared-pty-${process.pid}-${Date.now()}`);
  fs.writeFileSync(tmp, text, { mode: 0o755, flag: 'wx' });
  try {
    fs.renameSync(tmp, file);
  } catch (e) {
    fs.rmSync(tmp, { force: true });
    throw e;
  }
  return { path: file, changed: true, onPath };
}

/**
 * On every activation: brings a launcher of ours up to date (this version, this Node); leaves
 * alone a file that is not ours, or none. Returns true when it rewrote one.
 */
export function refreshLauncher(t: LauncherTarget, file = launcherPath()): boolean {
  if (launcherState(file) !== 'ours') return false;
  return installLauncher(t, { file }).changed;
}

/** Another program's `shared-pty` is where the launcher would go (an npm install, a link). */
export class LauncherTakenError extends Error {
  constructor(readonly file: string) {
    super(`${file} exists and is not a Shared PTY launcher`);
  }
}
