import { splitShellWords } from '../base/shell-words';

/**
 * What a deny rule is matched against (docs/protocol.md "Agent guards"): a line as the shell will
 * run it, broken into the commands it runs, each as typed and as its words with any wrapper
 * (`sudo`, `env`, `command`, assignments…) taken off, and the script of a `sh -c` as a line of its
 * own. A rule such as `^rm -rf` then meets `rm -rf` in `echo hi; rm -rf x`, `sudo rm -rf x`,
 * `/bin/rm -rf x`, `bash -c 'rm -rf x'` and `"$(rm -rf x)"`.
 *
 * It reads the line as the shell's grammar splits it, without expanding anything: a rule is a
 * guard against an agent's mistakes, not a sandbox (an alias, a variable or a script file still
 * hides a command).
 */
export function commandsToJudge(line: string): string[] {
  const out = new Set<string>();
  addLine(line, out, 0);
  return [...out];
}

/** The same for a program started with these words (`open_session { command, args }`). */
export function argvToJudge(argv: readonly string[]): string[] {
  const out = new Set<string>();
  if (argv.length > 0) {
    out.add(argv.join(' '));
    addArgv(argv, out, 0);
  }
  return [...out];
}

/** How deep `sh -c 'sh -c …'` and `eval` are followed: deeper nesting is not typed by mistake. */
const MAX_NESTING = 4;

function addLine(line: string, out: Set<string>, depth: number): void {
  const whole = line.trim();
  if (whole === '') return;
  out.add(whole);
  for (const command of splitCommands(line)) {
    const text = command.trim();
    if (text === '') continue;
    out.add(text);
    let words: string[];
    try {
      words = splitShellWords(ansiCQuoted(text));
    } catch {
      words = text.split(/\s+/); // an unterminated quote: the shell would wait for more, judge the words as they are
    }
    // Each reading the shell may make of them is judged: as typed, without their redirections
    // (`>/dev/null rm -rf x`), and with a brace list spread (`{rm,-rf,x}`).
    addArgv(words, out, depth);
    const unredirected = withoutRedirections(words);
    if (unredirected.length !== words.length) addArgv(unredirected, out, depth);
    const spread = bracesSpread(unredirected);
    if (spread.length !== unredirected.length) addArgv(spread, out, depth);
  }
}

/** A redirection operator alone (its target is the next word), or with its target in the same word. */
const REDIRECTION_ALONE = /^(?:\d+|&)?(?:<<<|<<-?|<>|>>|>&|<&|>\||&>>?|[<>])$/;
const REDIRECTION_WITH_TARGET = /^(?:\d+|&)?(?:<<<|<<-?|<>|>>|>&|<&|>\||&>>?|[<>])./;

/** The words without redirections (`2>/dev/null`, `> out`, `<<<x`), which bash allows anywhere in a command. */
function withoutRedirections(words: readonly string[]): string[] {
  const kept: string[] = [];
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    if (REDIRECTION_ALONE.test(w)) i++;
    else if (!REDIRECTION_WITH_TARGET.test(w)) kept.push(w);
  }
  return kept;
}

/** A word that is one brace list (`pre{a,b}post`), as bash spreads it into words before running it. */
const BRACE_LIST = /^([^{}]*)\{([^{}]*,[^{}]*)\}([^{}]*)$/;

/** The words with each one-level brace list spread into its words (`{rm,-rf,x}` is `rm -rf x`). */
function bracesSpread(words: readonly string[]): string[] {
  return words.flatMap((w) => {
    const m = BRACE_LIST.exec(w);
    return m ? m[2]!.split(',').map((part) => m[1]! + part + m[3]!) : [w];
  });
}

/**
 * `$'…'` (bash's ANSI-C quoting) as the text it stands for, single-quoted: `$'\x72m'` is `'rm'`.
 * One that holds a single quote is left as it was (its words are judged as typed).
 */
function ansiCQuoted(text: string): string {
  if (!text.includes("$'")) return text;
  return text.replace(/\$'((?:[^'\\]|\\.)*)'/gs, (all, body: string) => {
    const decoded = body.replace(/\\(x[0-9a-fA-F]{1,2}|[0-7]{1,3}|u[0-9a-fA-F]{1,4}|U[0-9a-fA-F]{1,8}|.)/gs, (_e, esc: string) => ansiCEscape(esc));
    return decoded.includes("'") ? all : `'${decoded}'`;
  });
}

const ANSI_C_LETTERS: Readonly<Record<string, string>> = { a: '\x07', b: '\b', e: '\x1b', E: '\x1b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v' };

function ansiCEscape(esc: string): string {
  const kind = esc[0]!;
  if (kind === 'x' || kind === 'u' || kind === 'U') return String.fromCodePoint(Number.parseInt(esc.slice(1), 16));
  if (/^[0-7]/.test(esc)) return String.fromCharCode(Number.parseInt(esc, 8) & 0xff);
  return ANSI_C_LETTERS[esc] ?? esc;
}

/** Commands run before the command they name (with their options), and words the grammar puts first. */
const WRAPPERS: Readonly<Record<string, { withValue?: ReadonlySet<string> }>> = {
  sudo: { withValue: new Set(['-u', '-g', '-h', '-p', '-C', '-D', '-r', '-t', '-T', '-U', '--user', '--group', '--host', '--prompt', '--chdir']) },
  doas: { withValue: new Set(['-u', '-C']) },
  env: { withValue: new Set(['-u', '-C', '-S', '--unset', '--chdir', '--split-string']) },
  command: {},
  builtin: {},
  exec: { withValue: new Set(['-a']) },
  coproc: {},
  nohup: {},
  nice: { withValue: new Set(['-n', '--adjustment']) },
  ionice: { withValue: new Set(['-c', '-n', '--class', '--classdata']) },
  setsid: {},
  setpriv: {
    withValue: new Set([
      '--reuid',
      '--regid',
      '--ruid',
      '--rgid',
      '--euid',
      '--egid',
      '--groups',
      '--inh-caps',
      '--ambient-caps',
      '--bounding-set',
      '--securebits',
      '--pdeathsig',
    ]),
  },
  runuser: { withValue: new Set(['-u', '-g', '-G', '-s', '-w', '--user', '--group', '--supp-group', '--shell', '--whitelist-environment']) },
  watch: { withValue: new Set(['-n', '--interval']) },
  unbuffer: {},
  busybox: {},
  time: { withValue: new Set(['-f', '-o', '--format', '--output']) },
  timeout: { withValue: new Set(['-s', '-k', '--signal', '--kill-after']) },
  chrt: {},
  taskset: {},
  chroot: { withValue: new Set(['--userspec', '--groups']) },
  flock: { withValue: new Set(['-w', '-E', '--timeout', '--conflict-exit-code']) },
  stdbuf: { withValue: new Set(['-i', '-o', '-e', '--input', '--output', '--error']) },
  xargs: {
    withValue: new Set([
      '-n',
      '-I',
      '-P',
      '-L',
      '-s',
      '-d',
      '-E',
      '-a',
      '--max-args',
      '--replace',
      '--max-procs',
      '--max-lines',
      '--max-chars',
      '--delimiter',
      '--eof',
      '--arg-file',
    ]),
  },
  '!': {},
  '{': {},
  '(': {},
  then: {},
  do: {},
  else: {},
  if: {},
  while: {},
  until: {},
};

/** Options after which a wrapper runs nothing: it only says what it would run (`command -v rm`, `sudo -l rm`). */
const ONLY_TELLS: Readonly<Record<string, ReadonlySet<string>>> = { command: new Set(['-v', '-V']), sudo: new Set(['-l', '--list']) };
/** Options whose value is itself a command line: `env -S 'rm -rf x'`. */
const LINE_VALUE: Readonly<Record<string, ReadonlySet<string>>> = { env: new Set(['-S', '--split-string']) };

/** Programs whose `-c <script>` is a line of its own. */
const SHELLS = new Set(['sh', 'bash', 'dash', 'zsh', 'ksh', 'mksh', 'ash', 'fish']);
/** Wrappers whose first word after their options is a number of theirs (a duration, a priority, a CPU mask). */
const NUMBER_FIRST = new Set(['timeout', 'chrt', 'taskset']);
/** Wrappers whose first word after their options is a path of theirs (the new root, the lock file). */
const PATH_FIRST = new Set(['chroot', 'flock']);
/**
 * Programs that run `-c <script>` (`--command`, `-lc`: a `c` ending a group of letters) in a shell,
 * wherever it comes among their words: `su root -c 'rm …'`, `flock /tmp/l -c 'rm …'`, `script -qc 'rm …'`.
 */
const DASH_C_RUNNERS = new Set(['su', 'runuser', 'flock', 'script']);

const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/;

function addArgv(argv: readonly string[], out: Set<string>, depth: number): void {
  let i = 0;
  for (;;) {
    while (i < argv.length && ASSIGNMENT.test(argv[i]!)) i++;
    // `function name { …` and `function name() { …`: the body's commands follow.
    if (argv[i] === 'function') i += argv[i + 2] === '()' ? 3 : 2;
    const word = argv[i];
    if (word === undefined) return;
    const name = basename(word);
    if (DASH_C_RUNNERS.has(name) && depth < MAX_NESTING) {
      const script = dashCScript(argv.slice(i + 1));
      if (script !== undefined) return addLine(script, out, depth + 1);
    }
    const wrapper = WRAPPERS[name];
    if (!wrapper) break;
    i++;
    // Its options (and their values); `timeout 5 cmd` takes a duration first, `chroot / cmd` a path.
    let pathTaken = false;
    while (i < argv.length) {
      const opt = argv[i]!;
      if (!opt.startsWith('-') && !(NUMBER_FIRST.has(name) && /^\.?\d/.test(opt)) && !(PATH_FIRST.has(name) && !pathTaken)) break;
      if (!opt.startsWith('-')) pathTaken = PATH_FIRST.has(name);
      i++;
      if (opt === '--') break;
      if (ONLY_TELLS[name]?.has(opt)) return;
      // `--opt=value`, `--opt value`, `-o value`, and a group of letters that ends in one (`-Hu root`).
      const [flag, inline] = opt.startsWith('--') && opt.includes('=') ? [opt.slice(0, opt.indexOf('=')), opt.slice(opt.indexOf('=') + 1)] : [opt, undefined];
      const valueFlag = wrapper.withValue?.has(flag)
        ? flag
        : /^-[A-Za-z]{2,}$/.test(opt) && wrapper.withValue?.has(`-${opt.at(-1)}`)
          ? `-${opt.at(-1)}`
          : undefined;
      if (LINE_VALUE[name]?.has(valueFlag ?? flag) && depth < MAX_NESTING) {
        const line = inline ?? argv[i];
        if (line !== undefined) addLine(line, out, depth + 1);
      }
      if (valueFlag !== undefined && inline === undefined) i++;
    }
  }
  const rest = argv.slice(i);
  if (rest.length === 0) return;
  out.add(rest.join(' '));
  const name = basename(rest[0]!);
  // `/bin/rm -rf x` is `rm -rf x` to a rule that names rm.
  out.add([name, ...rest.slice(1)].join(' '));
  if (depth >= MAX_NESTING) return;
  if (name === 'eval') return addLine(rest.slice(1).join(' '), out, depth + 1);
  if (SHELLS.has(name)) {
    // `bash -c 'script'`, `sh -ec 'script'`, `bash -l -c 'script'`, `bash -O extglob -c -- 'script'`:
    // the script is the word after the options (and a `--`).
    for (let k = 1; k < rest.length; k++) {
      const w = rest[k]!;
      if (w === '--' || !/^[-+]/.test(w)) break;
      // fish's long form: `fish --command 'script'`, `--command=script`.
      if (w.startsWith('--command=')) return addLine(w.slice('--command='.length), out, depth + 1);
      if (w === '--command' && rest[k + 1] !== undefined) return addLine(rest[k + 1]!, out, depth + 1);
      // Options that take a value: the shell's `-o`/`+o` option names, bash's `-O`/`+O` shopt names.
      if (/^[-+][oO]$/.test(w)) {
        k++;
        continue;
      }
      // (Letters with a `c` among them, tested apart: one pattern for it backtracks on a long word.)
      if (/^-[A-Za-z]+$/.test(w) && w.includes('c', 1)) {
        const script = rest[k + 1] === '--' ? rest[k + 2] : rest[k + 1];
        if (script !== undefined) return addLine(script, out, depth + 1);
      }
    }
  }
}

/** The script of `-c SCRIPT`, `--command SCRIPT`, `--command=SCRIPT` or `-lc SCRIPT` among `words` (before a `--`). */
function dashCScript(words: readonly string[]): string | undefined {
  for (let k = 0; k < words.length; k++) {
    const w = words[k]!;
    if (w === '--') return undefined;
    if (w.startsWith('--command=')) return w.slice('--command='.length);
    if ((w === '--command' || /^-[A-Za-z]*c$/.test(w)) && words[k + 1] !== undefined) return words[k + 1];
  }
  return undefined;
}

function basename(word: string): string {
  const slash = word.lastIndexOf('/');
  return slash >= 0 ? word.slice(slash + 1) : word;
}

/**
 * The commands of a line: split at the unquoted `;`, `&`, `|` (so `&&`, `||`, `|&`), newlines,
 * parentheses and braces' neighbours, and at command substitutions (`$(…)` and backquotes, also
 * inside double quotes, where they still run). Quotes are kept in the pieces (splitShellWords
 * reads them later).
 */
export function splitCommands(line: string): string[] {
  const pieces: string[] = [];
  let cur = '';
  let quote: '"' | "'" | undefined;
  const cut = () => {
    pieces.push(cur);
    cur = '';
  };
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote === "'") {
      cur += c;
      if (c === "'") quote = undefined;
      continue;
    }
    if (c === '\\' && i + 1 < line.length) {
      cur += c + line[i + 1];
      i++;
      continue;
    }
    if (c === '`' || (c === '$' && line[i + 1] === '(')) {
      // A command substitution runs a command of its own, quoted or not.
      cut();
      if (c === '$') i++;
      continue;
    }
    if (quote === '"') {
      cur += c;
      if (c === '"') quote = undefined;
      continue;
    }
    if (c === '"' || c === "'") {
      quote = c;
      cur += c;
      continue;
    }
    if (c === ';' || c === '&' || c === '|' || c === '\n' || c === '(' || c === ')') {
      cut();
      continue;
    }
    cur += c;
  }
  cut();
  // Its length is bounded by the line's (MAX_TYPED_LINE_CHARS), and matching all of them by the regex time.
  return pieces.map((p) => p.trim()).filter((p) => p !== '');
}
