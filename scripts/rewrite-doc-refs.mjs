// Turns citations of the design notes the project grew from (the interface contract's "§" sections
// and its seed documents, neither of which is in the repository) into links to the handbook in
// docs/, so a maintainer who clones the repository can follow every comment.
//
//   node scripts/rewrite-doc-refs.mjs            rewrite src/ and test/ in place, list what changed
//   node scripts/rewrite-doc-refs.mjs --check    change nothing; exit 1 when something would change
//
// Idempotent: a rewritten file has no citation left, so a second run changes nothing. Run it again
// after merging branches that added new citations; a section the table below does not know is
// reported and left alone (exit 1), so add a row for it and run again.
//
// In a comment a citation becomes a link (`(CONTRACT §9.3)` → `(docs/protocol.md#secret-input)`).
// Inside a string (a test's name, an assertion message, a schema description a user may read) a
// path means nothing to the reader, so the citation is dropped instead. Afterwards
// scripts/check-doc-links.mjs checks that every link resolves.
import { readdirSync, readFileSync, writeFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const ROOT = join(import.meta.dirname, '..');
const DIRS = ['src', 'test'];
const EXTENSIONS = /\.(ts|tsx|js|mjs|cjs|html|css|sh)$/;

/**
 * Each section of the contract, and where the handbook says the same. `rules` are tried in order
 * against the comment's text (its line and the next) and the file's path; the first that matches
 * wins, else `to`.
 */
const SECTIONS = {
  1: { to: 'docs/README.md' },
  2: {
    to: 'docs/hosts.md#hosts',
    rules: [
      [/selector/i, 'docs/hosts.md#session-selectors'],
      [/runtime|directory|tmux/i, 'docs/hosts.md#runtime-directory'],
      [/SessionInfo|listing|session field/i, 'docs/hosts.md#sessioninfo'],
      [/discovery|record|host\/info/i, 'docs/hosts.md#discovery-records'],
    ],
  },
  3: {
    to: 'docs/protocol.md#2-framing',
    rules: [[/error code/i, 'docs/protocol.md#4-error-codes']],
  },
  3.1: {
    to: 'docs/protocol.md#per-session-socket-and-control-socket',
    rules: [
      [/scrollback/, 'docs/protocol.md#ptyscrollback'],
      [/pty\/send|ready/, 'docs/protocol.md#ptysend'],
    ],
  },
  3.2: {
    to: 'docs/protocol.md#per-session-socket-and-control-socket',
    rules: [[/scrollback/, 'docs/protocol.md#ptyscrollback']],
  },
  4: {
    to: 'docs/protocol.md#5-http-and-websocket',
    rules: [[/origin|token|Bearer|Authorization|Host/i, 'docs/protocol.md#access-checks']],
  },
  5: {
    to: 'docs/protocol.md#6-mcp',
    rules: [[/registered|mcpServerDefinition|agent chat|set-up/i, 'docs/editor.md#mcp-registration']],
  },
  6: {
    to: 'docs/editor.md',
    rules: [
      [/scrollback/i, 'docs/editor.md#settings'],
      [/reload|shut|lease|live on|closes/i, 'docs/editor.md#terminal-lifetimes'],
    ],
  },
  7: { to: 'docs/cli.md' },
  8: {
    to: 'docs/guarantees.md#settled-details',
    rules: [
      [/written|byte count/, 'docs/guarantees.md#bytes-written'],
      [/trailing|empty rows/, 'docs/guarantees.md#screen-text'],
      [/Host|Origin|origin/, 'docs/guarantees.md#http-checks-and-shapes'],
      [/user's shell|session\/create.*shell/i, 'docs/editor.md#the-shell'],
      [/label/i, 'docs/editor.md#mcp-registration'],
      [/terminal name|origin says|closed terminal|within 2 s/i, 'docs/guarantees.md#editor-details'],
      [/Most text|end is kept|maxBytes/, 'docs/guarantees.md#send-output-limit'],
      [/exited session|stays listed|5 min/i, 'docs/guarantees.md#exited-sessions'],
      [/retained|cursor row|lower of/, 'docs/guarantees.md#retained-buffer'],
      [/ring|raw output|replay/i, 'docs/guarantees.md#subscriptions-and-replay'],
      [/send_keys|keys: string/, 'docs/guarantees.md#mcp-details'],
      [/\bCLI\b/, 'docs/guarantees.md#cli-details'],
      [/one at a time|concurrent|busy|error code/i, 'docs/guarantees.md#error-codes-beyond-json-rpc'],
      [/pty\/send|ready|stdin_read/, 'docs/guarantees.md#send-readiness'],
    ],
  },
  9: { to: 'docs/guarantees.md#additions-never-break-clients' },
  9.1: {
    to: 'docs/guarantees.md#output-under-load',
    rules: [[/\back\b|flow|window/i, 'docs/protocol.md#flow-control-ptyack-and-ptyflow']],
  },
  9.2: {
    to: 'docs/guarantees.md#shell-integration',
    rules: [[/pty\/commands|CommandRecord|command records?|One command/, 'docs/protocol.md#ptycommands']],
  },
  9.3: {
    to: 'docs/protocol.md#secret-input',
    rules: [[/tells the user|notice/i, 'docs/editor.md#password-prompts']],
  },
  9.4: {
    to: 'docs/protocol.md#events-ptyevents-and-ptywaitevent',
    rules: [[/progress/i, 'docs/guarantees.md#events-instead-of-polling']],
  },
  9.5: {
    to: 'docs/guarantees.md#output-budget-for-agents',
    rules: [[/command log|log of its own|commandOutput|logs/i, 'docs/protocol.md#ptycommandoutput']],
  },
  9.6: {
    to: 'docs/guarantees.md#sharing-with-control',
    rules: [
      [/src\/vscode\/approval/, 'docs/editor.md#approvals'],
      [/src\/vscode\/(share|recording)/, 'docs/editor.md#sharing-and-recording'],
      [/agent typing|AGENT_TYPING/i, 'docs/editor.md#agent-typing'],
      [/lastInput|who typed last|who wrote|last write/, 'docs/protocol.md#ptyinfo'],
      [/record|asciicast|marker|\bplay\b/i, 'docs/protocol.md#ptyrecord'],
      [/token|scope|share/i, 'docs/protocol.md#scoped-tokens'],
      [/typing|arbitration|human|pause/i, 'docs/protocol.md#typing-arbitration'],
      [/approv|policy|Allow|decision|decided|\bask\b|\bdeny\b/i, 'docs/protocol.md#agent-write-approval'],
    ],
  },
  9.7: { to: 'docs/guarantees.md#the-terminal-in-the-agents-chat' },
  9.8: { to: 'docs/guarantees.md#cors' },
  10: { to: 'docs/guarantees.md#this-round' },
  10.1: {
    to: 'docs/guarantees.md#no-side-doors',
    rules: [[/runtime|directory|O_EXCL|NOFOLLOW|symlink/i, 'docs/hosts.md#files-written-safely']],
  },
  10.2: { to: 'docs/guarantees.md#agents-are-told-the-truth' },
  10.3: {
    to: 'docs/guarantees.md#installed-like-real-software',
    rules: [
      [/install|PATH|launcher/, 'docs/editor.md#install-the-command-in-path'],
      [/124|exit status|exit code/i, 'docs/cli.md#send-exit-status'],
      [/\b(open|kill|commands)\b/, 'docs/cli.md#open-kill-and-commands'],
    ],
  },
  10.4: { to: 'docs/guarantees.md#mcp-current-revision' },
  10.5: { to: 'docs/hosts.md#remote-hosts' },
};

/** The seed documents, the same way. */
const SEEDS = {
  'socket-pty.md': {
    to: 'docs/guarantees.md#compatibility-with-socket-pty',
    rules: [
      [/error code/i, 'docs/protocol.md#4-error-codes'],
      [/pty\/wait/, 'docs/protocol.md#ptywait'],
      [/pty\/read|rows/, 'docs/protocol.md#ptyread'],
    ],
  },
  'pty-session-mcp.md': {
    to: 'docs/protocol.md#5-http-and-websocket',
    rules: [
      [/stream/, 'docs/protocol.md#websocket-get-sessionsidstream'],
      [/REST|route/, 'docs/protocol.md#rest'],
    ],
  },
  'persistent-pty-sessions.md': { to: 'docs/protocol.md#ptysend' },
};

/**
 * Citations that do not read as a link once rewritten (a possessive, a quotation, a list of
 * sections in prose), each with its rewording; applied first, exactly as written. A phrase that is
 * no longer there is skipped, so merging a branch that still has the old wording and running this
 * again gives the same result as on this branch.
 */
const PHRASES = [
  [" in CONTRACT §8's order:", ' in the order docs/guarantees.md#http-checks-and-shapes gives:'],
  ["else CONTRACT §2's default.", 'else the default of docs/hosts.md#choosing-the-runtime-directory.'],
  ["(CONTRACT §9.6's token scopes)", '(the token scopes of docs/protocol.md#scoped-tokens)'],
  ['(CONTRACT §3: "a line longer than the host\'s limit")', '(docs/protocol.md#2-framing: a line over the limit)'],
  [
    "/** The eleven tools of CONTRACT §5, list_commands of §9.2, wait_event of §9.4, read_command_output of §9.5 and the terminal view's terminal_snapshot of §9.7. */",
    "/** The MCP tools of docs/protocol.md#6-mcp: the eleven first ones, list_commands, wait_event, read_command_output and the terminal view's terminal_snapshot. */",
  ],
  ["'listTools: exactly the tools of CONTRACT §5, §9.2 and §9.4, each with", "'listTools: exactly the documented tools, each with"],
  [
    '/** The eleven tools of CONTRACT §5, and those §9 adds. */',
    '/** The MCP tools of docs/protocol.md#6-mcp: the eleven first ones and those added since. */',
  ],
  [
    "/** The REST routes of CONTRACT §4, and ours for §9's methods. */",
    '/** The REST routes of docs/protocol.md#rest: the six original ones and ours for later methods. */',
  ],
  [
    "'the tools and routes are exactly the ones CONTRACT §4 and §5 name, each from one method'",
    "'the tools and routes are exactly the documented ones, each from one method'",
  ],
  ['// not JSON: raw input, as the seed says', '// not JSON: raw input, as the stream protocol says (docs/protocol.md#websocket-get-sessionsidstream)'],
  ["(the seed's examples:", "(socket-pty's examples:"],
  ["the seed's types with wrong fields", "the stream's message types with wrong fields"],
  ["'pty/read: the seed example —", "'pty/read: the socket-pty example —"],
  [
    '// The seed says 11 for "echo hello"; the contract settles it: 10 bytes were written.',
    '// socket-pty\'s documentation says 11 for "echo hello"; 10 bytes were written (docs/guarantees.md#bytes-written).',
  ],
  ['// The seed says 5 for ls + Enter; it is 2 + 1.', "// socket-pty's documentation says 5 for ls + Enter; it is 2 + 1."],
  ["exactly as the seed shows'", "exactly as socket-pty shows'"],
  ['// params must be an object (the seed: "params 必须是对象").', '// params must be an object, as socket-pty requires.'],
  [
    '// request/response example of seeds/socket-pty.md\'s "数据包格式" section checked for its exact shape.',
    "// request/response example of socket-pty's protocol description (its packet format section) checked\n// for its exact shape (docs/guarantees.md#compatibility-with-socket-pty).",
  ],
  ["describe('REST (seeds/pty-session-mcp.md shapes)'", "describe('REST (the documented shapes)'"],
  [
    ' * `pty/send` must return when the program is ready for input again (CONTRACT §3.1, §8 "pty/send\n * readiness"): every process of the terminal\'s foreground process group is asleep and one of them waits\n * for terminal input — a `read` of the tty, or a `select`/`poll`/`epoll` family wait that includes it.',
    " * `pty/send` must return when the program is ready for input again\n * (docs/guarantees.md#send-readiness): every process of the terminal's foreground process group\n * is asleep and one of them waits for terminal input — a `read` of the tty, or a `select`/`poll`/`epoll`\n * family wait that includes it.",
  ],
  [
    '/** JSON-RPC 2.0 error codes used on every transport (CONTRACT §3, §8; seeds/socket-pty.md). */',
    '/** JSON-RPC 2.0 error codes used on every transport (docs/protocol.md#4-error-codes). */',
  ],
  [
    '// The HTTP server of a host (CONTRACT §4, §8; seeds/pty-session-mcp.md): every refusal of the',
    '// The HTTP server of a host (docs/protocol.md#5-http-and-websocket): every refusal of the',
  ],
  ['(CONTRACT §5, §8)', '(docs/protocol.md#6-mcp, docs/guarantees.md#mcp-details)'],
  ["besides the host's own (CONTRACT\n * §9.8), each", "besides the host's own\n * (docs/guarantees.md#cors), each"],
];

/** Test identifiers named after the contract, and their new names. */
const RENAMES = [
  [/\bCONTRACT_TOOLS\b/g, 'DOCUMENTED_TOOLS'],
  [/\bCONTRACT_ROUTES\b/g, 'DOCUMENTED_ROUTES'],
];

const SECTION = String.raw`§\s?(\d+(?:\.\d+)*)`;
/** `CONTRACT §4`, `CONTRACT §4, §8`, `CONTRACT §5, §9.2 and §9.4`, `CONTRACT\n * §9.8`, `CONTRACT §9.5.`; also a bare `CONTRACT`. */
const CITATION = new RegExp(String.raw`CONTRACT(?:\.md)?(?:\s*\n\s*(?:\*|//)\s*|\s+)?((?:${SECTION})(?:(?:,\s*|\s+and\s+)${SECTION})*)?`, 'g');
const SEED = /seeds\/([\w.-]+\.md)/g;

function resolve(table, key, context, file) {
  const entry = table[key];
  if (!entry) return undefined;
  for (const [pattern, to] of entry.rules ?? []) {
    if (pattern.test(context) || pattern.test(file)) return to;
  }
  return entry.to;
}

/** Where a match sits on its line: in a string literal (not in a trailing comment) or in a comment. */
function inString(line, col) {
  const trimmed = line.trimStart();
  if (trimmed.startsWith('//') || trimmed.startsWith('*') || trimmed.startsWith('/*')) return false;
  let quote = null;
  for (let i = 0; i < col; i++) {
    const c = line[i];
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = null;
    } else if (c === "'" || c === '"' || c === '`') quote = c;
    else if (c === '/' && line[i + 1] === '/') return false;
  }
  return quote !== null;
}

function lineAt(text, index) {
  const start = text.lastIndexOf('\n', index - 1) + 1;
  const end1 = text.indexOf('\n', index);
  const end2 = end1 === -1 ? -1 : text.indexOf('\n', end1 + 1);
  return { start, line: text.slice(start, end1 === -1 ? undefined : end1), context: text.slice(start, end2 === -1 ? undefined : end2) };
}

const unknown = [];

function rewrite(text, file) {
  let out = text;
  for (const [from, to] of PHRASES) out = out.split(from).join(to);
  for (const [pattern, name] of RENAMES) out = out.replace(pattern, name);
  out = out.replace(CITATION, (match, sections, ...rest) => {
    const index = rest[rest.length - 2];
    const { start, line, context } = lineAt(out, index);
    const where = `${file}:${out.slice(0, index).split('\n').length}`;
    if (!sections) {
      unknown.push(`${where}: "${line.trim()}" (no section named)`);
      return match;
    }
    const keys = [...sections.matchAll(new RegExp(SECTION, 'g'))].map((m) => m[1].replace(/\.$/, ''));
    const links = [];
    for (const key of keys) {
      const to = resolve(SECTIONS, key, context, file);
      if (!to) {
        unknown.push(`${where}: §${key} has no row in SECTIONS`);
        return match;
      }
      if (!links.includes(to)) links.push(to);
    }
    if (inString(line, index - start)) return '\u0000DROP\u0000';
    // A citation broken over two comment lines keeps its line break: the link goes on the second.
    const broken = /^CONTRACT(?:\.md)?(\s*\n\s*(?:\*|\/\/)\s*)/.exec(match);
    return (broken ? broken[1] : '') + links.join(', ');
  });
  // A dropped citation takes its brackets and separator with it: "x (CONTRACT §8)" → "x",
  // "(CONTRACT §4, §8: Host, …)" → "(Host, …)", "writes (CONTRACT §9.6): read" → "writes: read".
  out = out
    .replace(/ \(\u0000DROP\u0000\)/g, '')
    .replace(/\(\u0000DROP\u0000[:;,] /g, '(')
    .replace(/\u0000DROP\u0000[:;,]? ?/g, '');
  out = out.replace(SEED, (match, name, index) => {
    const { context } = lineAt(out, index);
    const to = resolve(SEEDS, name, context, file);
    if (!to) {
      unknown.push(`${file}: seeds/${name} has no row in SEEDS`);
      return match;
    }
    return to;
  });
  return out;
}

function* filesUnder(dir) {
  for (const name of readdirSync(dir).sort()) {
    if (name === 'node_modules' || name === 'dist') continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) yield* filesUnder(p);
    else if (EXTENSIONS.test(name)) yield p;
  }
}

const check = process.argv.includes('--check');
let changed = 0;
for (const dir of DIRS) {
  for (const path of filesUnder(join(ROOT, dir))) {
    const file = relative(ROOT, path);
    const before = readFileSync(path, 'utf8');
    const after = rewrite(before, file);
    if (after === before) continue;
    changed++;
    console.log(`${check ? 'would rewrite' : 'rewrote'} ${file}`);
    if (!check) writeFileSync(path, after);
  }
}
for (const u of unknown) console.error(`cannot map ${u}`);
console.log(
  `${changed} file(s) ${check ? 'to rewrite' : 'rewritten'}${unknown.length ? `, ${unknown.length} citation(s) left: add rows to SECTIONS or SEEDS` : ''}`,
);
process.exit(unknown.length || (check && changed) ? 1 : 0);
