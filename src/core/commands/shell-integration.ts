import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { writeFileAtomically } from '../base/private-files';
import { shellQuote } from '../base/shell-words';
import { bashArgs, fishArgs, zshArgs } from './shell-args';

/** The shells whose integration ships with us (the scripts in `shell-integration/`). */
export type IntegratedShell = 'bash' | 'zsh' | 'fish';

/** How to start a shell so that it reports its commands. */
export interface ShellIntegrationLaunch {
  shell: IntegratedShell;
  args: string[];
  /** Added to the shell's environment (with the nonce's variable: `nonceHandover`); the scripts remove these variables again. */
  env: Record<string, string>;
  /** The secret the scripts end each of their marks with (OwnMarkFilter): only those marks count. */
  nonce: string;
}

/** The variable that turns integration off for a session (or, in the host's environment, for all). */
export const SHELL_INTEGRATION_ENV = 'SHARED_PTY_SHELL_INTEGRATION';

/**
 * The variable that hands the nonce to the scripts where the session has no folder to hand it
 * over in (`nonceHandover`). They read it before anything else runs and remove it from the
 * environment, so the programs the shell starts do not inherit it.
 */
export const NONCE_ENV = 'SHARED_PTY_NONCE';
/** The variable that names the file holding the nonce, which the scripts read and remove at once. */
export const NONCE_FILE_ENV = 'SHARED_PTY_NONCE_FILE';

/** Bytes of randomness in a session's nonce (128 bits): far beyond guessing, short in every mark. */
const NONCE_BYTES = 16;

/**
 * The folder of the integration scripts: next to the bundle that runs (esbuild copies it into
 * `dist/`), or next to this file when running from the sources.
 */
export function shellIntegrationDir(): string {
  // __filename, not __dirname: tsx gives ES-module importers of this file only the former.
  return path.join(path.dirname(__filename), 'shell-integration');
}

/** Whether the environment turns integration off (`SHARED_PTY_SHELL_INTEGRATION=0`). */
export function integrationDisabled(env: Record<string, string | undefined>): boolean {
  const v = env[SHELL_INTEGRATION_ENV]?.trim().toLowerCase();
  return v === '0' || v === 'false' || v === 'off' || v === 'no';
}

/**
 * How to launch `command args` with shell integration, without touching the user's files: bash
 * reads our init file (which reads the user's startup files first), zsh looks in our ZDOTDIR
 * (whose files read the user's own), fish runs our script after its configuration. Undefined when
 * the program is not one of these shells run interactively with no script (shell-args.ts: a
 * script, `-c`, an option that changes how it starts), when the environment turns integration
 * off, or when the scripts are missing.
 */
export function shellIntegrationLaunch(command: string, args: readonly string[], env: Record<string, string | undefined>): ShellIntegrationLaunch | undefined {
  if (integrationDisabled(env)) return undefined;
  const shell = path.basename(command);
  if (shell !== 'bash' && shell !== 'zsh' && shell !== 'fish') return undefined;
  const dir = shellIntegrationDir();
  const nonce = randomBytes(NONCE_BYTES).toString('hex');
  switch (shell) {
    case 'bash': {
      const b = bashArgs(args);
      const script = path.join(dir, 'bash.sh');
      if (!b || !fs.existsSync(script)) return undefined;
      if (b.login ? b.noprofile : b.norc) {
        // A shell that reads no start-up file at all (not even the system's): it keeps its flags, and
        // the script runs from its first prompt's PROMPT_COMMAND instead, putting back the one
        // bash was given.
        const first: Record<string, string> = { PROMPT_COMMAND: `. ${shellQuote(script)}`, SHARED_PTY_SHELL_FIRST_PROMPT: '1' };
        if (env.PROMPT_COMMAND !== undefined) first.SHARED_PTY_SHELL_PROMPT_COMMAND = env.PROMPT_COMMAND;
        return { shell, args: [...b.given], env: first, nonce };
      }
      // bash reads no --init-file as a login shell: the script reads the login files itself. What
      // is left of the flags changes nothing here (--norc of a login shell, --noprofile of any
      // other), but --norc would skip our init file: they go. So does --rcfile, whose file the
      // script reads in ~/.bashrc's place.
      if (!b.login) {
        const rcfile: Record<string, string> = b.rcfile === undefined ? {} : { SHARED_PTY_SHELL_RCFILE: b.rcfile };
        return { shell, args: ['--init-file', script, ...b.rest], env: rcfile, nonce };
      }
      // A login shell would not read the system bashrc, which bash reads before our file all the
      // same: the script gives back the prompt it would have had (the one in the environment, else
      // bash's own) before the files it reads set theirs.
      const loginEnv: Record<string, string> = { SHARED_PTY_SHELL_LOGIN: '1' };
      if (env.PS1 !== undefined) loginEnv.SHARED_PTY_SHELL_PS1 = env.PS1;
      return { shell, args: ['--init-file', script, ...b.rest], env: loginEnv, nonce };
    }
    case 'zsh': {
      const z = zshArgs(args);
      const zdotdir = path.join(dir, 'zsh');
      if (!z || !fs.existsSync(path.join(zdotdir, '.zshrc'))) return undefined;
      // Where zsh would have read the user's files: their ZDOTDIR, else home (unset: the scripts use $HOME).
      const extra: Record<string, string> = { ZDOTDIR: zdotdir };
      if (env.ZDOTDIR !== undefined) extra.SHARED_PTY_USER_ZDOTDIR = env.ZDOTDIR;
      // -f would skip our files too: it is taken out, and ours skip the user's and the system's
      // after /etc/zshenv instead, then set NO_RCS (.zshenv). -d leaves ours read: it stays.
      if (z.norcs) extra.SHARED_PTY_SHELL_NORCS = '1';
      return { shell, args: z.rest, env: extra, nonce };
    }
    case 'fish': {
      const script = path.join(dir, 'fish.fish');
      if (!fishArgs(args) || !fs.existsSync(script)) return undefined;
      // Set while fish reads its configuration, so VS Code's own integration loaded there stands back.
      // Our folder first in XDG_DATA_DIRS: its vendor snippet takes the secret before config.fish
      // runs, and gives the variable back (empty: it was unset; fish's default follows ours).
      const dataDirs = env.XDG_DATA_DIRS || '/usr/local/share:/usr/share';
      const early = { XDG_DATA_DIRS: `${path.join(dir, 'fish-data')}:${dataDirs}`, SHARED_PTY_FISH_DATA_DIRS: env.XDG_DATA_DIRS ?? '' };
      // After the user's own --init-command, if any: fish runs them in order.
      return { shell, args: [...args, '--init-command', `source ${fishQuote(script)}`], env: { VSCODE_SHELL_INTEGRATION: '1', ...early }, nonce };
    }
  }
}

/** A fish single-quoted word: inside, only `\\` and `\'` are escapes. */
function fishQuote(s: string): string {
  return `'${s.replace(/[\\']/g, (c) => `\\${c}`)}'`;
}

/**
 * How the scripts get the nonce. In a new file of `dir` (mode 0600, written as every file of the
 * host's is, under a name nobody can guess), named by NONCE_FILE_ENV, which they read and remove before anything
 * else runs: a variable holding the nonce itself would stay readable in the shell's
 * `/proc/<pid>/environ` to every program the shell starts, and one of them could forge marks with
 * it. Without a folder to write in (none given, or not safe now) the variable NONCE_ENV carries
 * it. `file` is the file, for the session to remove should the shell never read it.
 */
export function nonceHandover(nonce: string, dir: string | undefined, writable?: () => boolean): { env: Record<string, string>; file?: string } {
  if (dir !== undefined && (writable?.() ?? true)) {
    const file = path.join(dir, `nonce.${randomBytes(8).toString('hex')}`);
    try {
      writeFileAtomically(file, `${nonce}\n`);
      return { env: { [NONCE_FILE_ENV]: file }, file };
    } catch {
      // not written (a full disk, the folder gone): the variable carries it
    }
  }
  return { env: { [NONCE_ENV]: nonce } };
}
