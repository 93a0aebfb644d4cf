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
      words = splitShellWords(text);
    } catch {
      words = text.split(/\s+/); // an unterminated quote: the shell would wait for more, judge the words as they are
    }
    addArgv(words, out, depth);
  }
}

/** Commands run before the command they name (with their options), and words the grammar puts first. */
const WRAPPERS: Readonly<Record<string, { withValue?: ReadonlySet<string> }>> = {
  sudo: { withValue: new Set(['-u', '-g', '-h', '-p', '-C', '-D', '-r', '-t', '-T', '-U', '--user', '--group', '--host', '--prompt', '--chdir']) },
  doas: { withValue: new Set(['-u', '-C']) },
  env: { withValue: new Set(['-u', '-C', '-S', '--unset', '--chdir', '--split-string']) },
  command: {},
  builtin: {},
  exec: { withValue: new Set(['-a']) },
  nohup: {},
  nice: { withValue: new Set(['-n', '--adjustment']) },
  time: {},
  timeout: {},
  stdbuf: {},
  xargs: {},
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

/** Programs whose `-c <script>` is a line of its own. */
const SHELLS = new Set(['sh', 'bash', 'dash', 'zsh', 'ksh', 'mksh', 'ash', 'fish', 'busybox']);

const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/;

function addArgv(argv: readonly string[], out: Set<string>, depth: number): void {
  let i = 0;
  for (;;) {
    while (i < argv.length && ASSIGNMENT.test(argv[i]!)) i++;
    const word = argv[i];
    if (word === undefined) return;
    const wrapper = WRAPPERS[basename(word)];
    if (!wrapper) break;
    i++;
    // Its options (and their values); `timeout 5 cmd` takes a duration first.
    while (i < argv.length && (argv[i]!.startsWith('-') || (basename(word) === 'timeout' && /^\d/.test(argv[i]!)))) {
      const opt = argv[i]!;
      i++;
      if (opt === '--') break;
      if (wrapper.withValue?.has(opt)) i++;
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
    // `bash -c 'script'`, `sh -ec 'script'`, `bash -l -c 'script'`: the script is the word after the options.
    for (let k = 1; k < rest.length; k++) {
      const w = rest[k]!;
      if (!w.startsWith('-')) break;
      // (Letters with a `c` among them, tested apart: one pattern for it backtracks on a long word.)
      if (/^-[A-Za-z]+$/.test(w) && w.includes('c', 1) && rest[k + 1] !== undefined) return addLine(rest[k + 1]!, out, depth + 1);
    }
  }
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
