import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { writeFileAtomically } from '../base/private-files';
import { shellQuote } from '../base/shell-words';

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

/** Arguments that keep a shell interactive with its usual start-up files. */
const INTERACTIVE_ARGS = new Set(['-i', '--interactive', '-l', '--login', '-il', '-li']);
const LOGIN_ARGS = new Set(['-l', '--login']);

/**
 * Each shell's flags that skip start-up files (or, fish's `--private`, keep no history). Such a
 * shell is still interactive with no script, so it is integrated too
 * (docs/protocol.md#ptycommands); each shell's case below keeps what its flags mean.
 */
const EXTRA_ARGS: Record<IntegratedShell, ReadonlySet<string>> = {
  bash: new Set(['--norc', '--noprofile']),
  // -f (NO_RCS) and -d (NO_GLOBAL_RCS), long forms as zshFlag reads them.
  zsh: new Set(['-f', '-d']),
  fish: new Set(['-N', '--no-config', '-P', '--private']),
};

/** zsh's long form of an option (`--no-rcs`, `--NO_RCS`, `--norcs`: case, `-` and `_` do not count) as its letter. */
function zshFlag(arg: string): string {
  if (!arg.startsWith('--')) return arg;
  const name = arg.slice(2).toLowerCase().replace(/[-_]/g, '');
  return name === 'norcs' ? '-f' : name === 'noglobalrcs' ? '-d' : arg;
}

/** Whether `arg` is one of `shell`'s flags that skip start-up files. */
function isExtraArg(shell: IntegratedShell, arg: string): boolean {
  return EXTRA_ARGS[shell].has(shell === 'zsh' ? zshFlag(arg) : arg);
}

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
 * the program is not one of these shells run interactively (a script, `-c`, other flags), when the
 * environment turns integration off, or when the scripts are missing.
 */
export function shellIntegrationLaunch(command: string, args: readonly string[], env: Record<string, string | undefined>): ShellIntegrationLaunch | undefined {
  if (integrationDisabled(env)) return undefined;
  const shell = path.basename(command);
  if (shell !== 'bash' && shell !== 'zsh' && shell !== 'fish') return undefined;
  if (!args.every((a) => INTERACTIVE_ARGS.has(a) || isExtraArg(shell, a))) return undefined;
  const dir = shellIntegrationDir();
  const nonce = randomBytes(NONCE_BYTES).toString('hex');
  const login = args.some((a) => LOGIN_ARGS.has(a) || a === '-il' || a === '-li');
  switch (shell) {
    case 'bash': {
      const script = path.join(dir, 'bash.sh');
      if (!fs.existsSync(script)) return undefined;
      // bash takes its long options only before its one-letter ones, else it refuses to start: so it does here too.
      if (args.some((a, k) => a.startsWith('--') && args.slice(0, k).some((b) => !b.startsWith('--')))) return undefined;
      if (args.includes(login ? '--noprofile' : '--norc')) {
        // A shell that reads no start-up file at all (not even the system's): it keeps its flags, and
        // the script runs from its first prompt's PROMPT_COMMAND instead, putting back the one
        // bash was given.
        const first: Record<string, string> = { PROMPT_COMMAND: `. ${shellQuote(script)}`, SHARED_PTY_SHELL_FIRST_PROMPT: '1' };
        if (env.PROMPT_COMMAND !== undefined) first.SHARED_PTY_SHELL_PROMPT_COMMAND = env.PROMPT_COMMAND;
        return { shell, args: [...args], env: first, nonce };
      }
      // bash reads no --init-file as a login shell: the script reads the login files itself. What
      // is left of the flags changes nothing here (--norc of a login shell, --noprofile of any
      // other), but --norc would skip our init file: they go.
      const rest = args.flatMap((a) => (LOGIN_ARGS.has(a) || isExtraArg('bash', a) ? [] : a === '-il' || a === '-li' ? ['-i'] : [a]));
      if (!login) return { shell, args: ['--init-file', script, ...rest], env: {}, nonce };
      // A login shell would not read the system bashrc, which bash reads before our file all the
      // same: the script gives back the prompt it would have had (the one in the environment, else
      // bash's own) before the files it reads set theirs.
      const loginEnv: Record<string, string> = { SHARED_PTY_SHELL_LOGIN: '1' };
      if (env.PS1 !== undefined) loginEnv.SHARED_PTY_SHELL_PS1 = env.PS1;
      return { shell, args: ['--init-file', script, ...rest], env: loginEnv, nonce };
    }
    case 'zsh': {
      const zdotdir = path.join(dir, 'zsh');
      if (!fs.existsSync(path.join(zdotdir, '.zshrc'))) return undefined;
      // Where zsh would have read the user's files: their ZDOTDIR, else home (unset: the scripts use $HOME).
      const extra: Record<string, string> = { ZDOTDIR: zdotdir };
      if (env.ZDOTDIR !== undefined) extra.SHARED_PTY_USER_ZDOTDIR = env.ZDOTDIR;
      // -f would skip our files too: it is taken out, and ours skip the user's and the system's
      // after /etc/zshenv instead, then set NO_RCS (.zshenv). -d leaves ours read: it stays.
      const norcs = args.some((a) => zshFlag(a) === '-f');
      if (norcs) extra.SHARED_PTY_SHELL_NORCS = '1';
      return { shell, args: args.filter((a) => zshFlag(a) !== '-f'), env: extra, nonce };
    }
    case 'fish': {
      const script = path.join(dir, 'fish.fish');
      if (!fs.existsSync(script)) return undefined;
      // Set while fish reads its configuration, so VS Code's own integration loaded there stands back.
      return { shell, args: [...args, '--init-command', `source ${fishQuote(script)}`], env: { VSCODE_SHELL_INTEGRATION: '1' }, nonce };
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
