// What a shell's arguments say about integrating it (docs/protocol.md#ptycommands): whether they
// leave it an interactive shell with no script and no command, and which of them the integration
// replaces. Each shell's own rules: bash's `bash --help` and its manual page, zsh's zshoptions(1)
// and `zsh --help`, fish's fish(1).

/** bash's one-letter options that keep it interactive: `set`'s letters, and -i, -l, -s. */
const BASH_LETTERS = new Set('abefhkmnptuvxBCHPils');
/** bash's long options that keep it interactive (and take no value). */
const BASH_LONG = new Set(['--norc', '--noprofile', '--login', '--interactive', '--noediting', '--verbose', '--debugger']);

/** How an interactive bash was asked to start. */
export interface BashArgs {
  /** Its arguments, less `-l`/`--login`, `--norc`, `--noprofile` and `--rcfile FILE` (the launch says them its own way). */
  rest: string[];
  login: boolean;
  norc: boolean;
  noprofile: boolean;
  /** `--rcfile FILE` or `--init-file FILE`: the file to read instead of ~/.bashrc. */
  rcfile?: string;
  /** The arguments exactly as given, for a bash that keeps them (one that reads no start-up file). */
  given: readonly string[];
}

/**
 * Reads bash's arguments; undefined when they make it run a script or a command, dump strings,
 * restrict it, put it in POSIX mode (which reads `$ENV`, not an init file), or are ones bash refuses
 * (a long option after a one-letter one).
 */
export function bashArgs(args: readonly string[]): BashArgs | undefined {
  const out: BashArgs = { rest: [], login: false, norc: false, noprofile: false, given: args };
  let shortSeen = false;
  let stdin = false;
  for (let k = 0; k < args.length; k++) {
    const a = args[k];
    if (a === '--' || a === '-') {
      // The end of the options: what follows is a script and its arguments, unless -s reads stdin.
      if (k + 1 < args.length && !stdin) return undefined;
      out.rest.push(...args.slice(k));
      break;
    }
    if (a.startsWith('--')) {
      if (shortSeen) return undefined; // bash refuses to start
      if (a === '--rcfile' || a === '--init-file') {
        if (k + 1 >= args.length) return undefined;
        out.rcfile = args[++k];
      } else if (a === '--login') out.login = true;
      else if (a === '--norc') out.norc = true;
      else if (a === '--noprofile') out.noprofile = true;
      else if (BASH_LONG.has(a)) out.rest.push(a);
      else return undefined;
      continue;
    }
    if ((a === '-o' || a === '+o' || a === '-O' || a === '+O') && k + 1 < args.length) {
      shortSeen = true;
      out.rest.push(a, args[++k]);
      continue;
    }
    if (/^[-+][A-Za-z]+$/.test(a)) {
      shortSeen = true;
      const letters = a.slice(1);
      if (![...letters].every((c) => BASH_LETTERS.has(c))) return undefined;
      if (a[0] === '-') {
        if (letters.includes('l')) out.login = true;
        if (letters.includes('s')) stdin = true;
        const kept = letters.replace(/l/g, '');
        if (kept) out.rest.push(`-${kept}`);
      } else out.rest.push(a);
      continue;
    }
    // A word that is no option: the script bash would run, or, after -s, its positional parameters.
    if (!stdin) return undefined;
    out.rest.push(...args.slice(k));
    break;
  }
  return out;
}

/** How an interactive zsh was asked to start. */
export interface ZshArgs {
  /** Its arguments, less `-f` (the launch says it its own way). */
  rest: string[];
  /** `-f` (NO_RCS) in any of its forms. */
  norcs: boolean;
}

/** zsh's long form of an option without its `no` (`--no-rcs`, `--NO_RCS`, `--norcs`: case, `-` and `_` do not count). */
function zshLongName(arg: string): string {
  return arg.slice(2).toLowerCase().replace(/[-_]/g, '');
}

/**
 * Reads zsh's arguments; undefined when they make it run a script or a command (`-c`), or emulate
 * another shell (`--emulate`, which reads no zsh start-up file, ours included).
 */
export function zshArgs(args: readonly string[]): ZshArgs | undefined {
  const out: ZshArgs = { rest: [], norcs: false };
  let stdin = false;
  for (let k = 0; k < args.length; k++) {
    const a = args[k];
    if (a === '--' || a === '-' || a === '-b') {
      if (k + 1 < args.length && !stdin) return undefined;
      out.rest.push(...args.slice(k));
      break;
    }
    if (a.startsWith('--')) {
      const name = zshLongName(a);
      if (name === 'emulate' || name === 'help' || name === 'version') return undefined;
      if (name === 'norcs') out.norcs = true;
      else if (name === 'shinstdin') {
        stdin = true;
        out.rest.push(a);
      } else out.rest.push(a);
      continue;
    }
    if ((a === '-o' || a === '+o') && k + 1 < args.length) {
      out.rest.push(a, args[++k]);
      continue;
    }
    if (/^[-+][A-Za-z0-9]+$/.test(a)) {
      const letters = a.slice(1);
      if (letters.includes('c') || letters.includes('o') || letters.includes('b')) return undefined;
      if (a[0] === '-' && letters.includes('s')) stdin = true;
      if (a[0] === '-' && letters.includes('f')) out.norcs = true;
      const kept = a[0] === '-' ? letters.replace(/f/g, '') : letters;
      if (kept) out.rest.push(`${a[0]}${kept}`);
      continue;
    }
    if (!stdin) return undefined;
    out.rest.push(...args.slice(k));
    break;
  }
  return out;
}

/** fish's options that take a value, short and long (`-C CMD`, `--init-command=CMD`). */
const FISH_VALUED = new Map([
  ['-C', '--init-command'],
  ['-d', '--debug'],
  ['-o', '--debug-output'],
  ['-f', '--features'],
]);
/** fish's options without a value that keep it interactive. */
const FISH_FLAGS = new Set(['-i', '--interactive', '-l', '--login', '-N', '--no-config', '-P', '--private', '--print-rusage-self']);

/**
 * Whether fish's arguments leave it an interactive fish with no script: undefined when they name
 * a script or a command (`-c`), check syntax only (`-n`), print and exit (`-v`, `-h`, the debug
 * categories), or profile its start (`--profile-startup`, `-p`: our script would be in the profile).
 */
export function fishArgs(args: readonly string[]): readonly string[] | undefined {
  for (let k = 0; k < args.length; k++) {
    const a = args[k];
    if (FISH_FLAGS.has(a)) continue;
    const long = a.startsWith('--') ? a.split('=')[0] : undefined;
    if (long && [...FISH_VALUED.values()].includes(long)) {
      if (!a.includes('=') && ++k >= args.length) return undefined;
      continue;
    }
    if (FISH_VALUED.has(a)) {
      if (++k >= args.length) return undefined;
      continue;
    }
    // A short valued option with its value joined (`-Cset x 1`).
    if (a.length > 2 && FISH_VALUED.has(a.slice(0, 2))) continue;
    return undefined;
  }
  return args;
}
