import * as path from 'node:path';
import { RpcCallError } from '../transport/client/rpc-client';
import { quotedWord, UsageError } from './args';
import { HOST_COMMANDS } from './command-flags';
import { CliError } from './find-session';
import { cliMessage } from './host-error';
import { oneLine } from './one-line';
import { closeRemoteHosts, takeHostFlag } from './remote';
import { endBridgesOnSignal, endBySignal } from './end-on-signal';
import { endByHangUpWhenTerminalGone, terminalHungUp } from './terminal-hangup';
import { watchStdout } from './stdout-closed';
import { VERSION } from '../version';

const HELP = `shared-pty ${VERSION} — terminals shared between people and agents

Usage:
  shared-pty list [--json] [--host NAME]        (every host's sessions: this machine's and each remote host's in hosts.json)
  shared-pty open [--host NAME] [--name N] [--cwd DIR] [--cols C] [--rows R] [--json] [-- COMMAND ARGS...]
      (a new session on the per-user host, started if none runs; prints its id, --json its SessionInfo)
  shared-pty kill <session> [--host NAME]       (ends the session and its program)
  shared-pty read <session> [--top N | --bottom N | --start A --end B | --scrollback [--offset N] [--lines N]] [--json] [--host NAME]
  shared-pty send <session> <text> [--no-submit] [--timeout MS] [--idle MS] [--json] [--host NAME]
      (exit status: the command's exit code when it ended, 124 when the wait timed out, else 0)
  shared-pty keys <session> <Key>... [--host NAME]
  shared-pty wait <session> <text> [--regex] [--timeout MS] [--json] [--host NAME]
  shared-pty commands <session> [--limit N] [--json] [--host NAME]   (the commands its shell ran: exit code, duration, cwd)
  shared-pty attach <session> [--no-resize] [--host NAME]   (Ctrl+] detaches; --no-resize: the session keeps its size)
  shared-pty view <session> [--input | --read-only] [--expires 8h]   (a one-time link to watch it live in a browser; --input: and type)
  shared-pty share <session> [--scope view|input|control] [--expires 1h] [--reusable] [--json]   (a one-time link for that session only; --reusable: a token for scripts and agents too)
  shared-pty tokens [--json]                    (the links and tokens: id, scope, session, kind, expiry, last use)
  shared-pty revoke <id>                        (ends a link or token at once)
  shared-pty events [<session>] [--since SEQ] [--json] [--host NAME]   (input waits, password prompts, bell, title, resize, exit…)
  shared-pty record <session> [file] [--input] [--detach | --stop]   (an asciicast v3 recording; Ctrl+C stops)
  shared-pty play <file> [--speed N] [--idle-limit SECONDS]   (replays a recording here)
  shared-pty play <file> --browser              (prints a link that replays it in the browser, in asciinema-player)
  shared-pty serve [--cmd CMD [ARGS...]] [--socket PATH | --port N] [--name NAME] [--cols N] [--rows N] [--cwd DIR] [--quiet]
      [--http-port N | --no-http] [--allow-origin ORIGIN[,ORIGIN...]] [--session-tcp] [--command-log-mb N] [--agent-approval allow|ask|deny] [--agent-deny REGEX]
      limits (README "Reliability"; defaults shown): [--max-sessions 256] [--max-session-connections 64]
      [--max-control-connections 256] [--max-http-connections 256] [--max-in-flight 1024] [--max-line-bytes 1048576]
  shared-pty mcp                                (the MCP server over stdio, for agents' MCP configuration)
  shared-pty bridge                             (the control socket's JSON-RPC over stdin/stdout to this machine's per-user host,
      started if none runs: the far end of a remote host's command in hosts.json, e.g. ssh build-box shared-pty bridge)
  shared-pty daemon [--http-port N | --no-http] [--allow-origin ORIGIN[,ORIGIN...]] [--session-tcp] [--scrollback N]
      [--command-log-mb N] [--agent-approval allow|ask|deny] [--agent-deny REGEX] [--idle-exit-ms N | --stay]
      (the per-user host that the editor, open and mcp start when none runs; exits after 10 min with
      no session and no client)

<session> is a session id, its exact name, or a unique id prefix; NAME:<session> is one on the remote host NAME.
--host NAME (or SHARED_PTY_HOST=NAME) makes list, open, kill, commands, read, send, keys, wait, attach and events act
on the remote host NAME of ~/.config/shared-pty/hosts.json ("local": this machine).
`;

/** What a <session> argument may be, said under every command that takes one. */
const SESSION_NOTE = '\n<session> is a session id, its exact name, or a unique id prefix; NAME:<session> is one on the remote host NAME (hosts.json).\n';
/** The same for a command that works on this machine's sessions only (view, share, record): no remote selector. */
const LOCAL_SESSION_NOTE =
  "\n<session> is a session id, its exact name, or a unique id prefix, of this machine's sessions (run it on the remote host for one there).\n";

/** What `--host` does, said under every command that takes it. */
const HOST_NOTE = '--host NAME (or SHARED_PTY_HOST=NAME): on the remote host NAME of ~/.config/shared-pty/hosts.json ("local": this machine).\n';

type Command = (argv: string[]) => Promise<number>;

/**
 * True in the client bundle only: esbuild.mjs defines it for `dist/cli-client.js`, which
 * `bin/shared-pty.js` runs. That bundle leaves out the commands that need the engine and runs them
 * with the whole CLI beside it, `dist/cli.js` (docs/architecture.md#the-cli).
 */
declare const __SHARED_PTY_CLIENT_BUNDLE__: true | undefined;

/**
 * Each command's module, loaded when that command runs: `list`, `send` or `read` (run by scripts
 * and agents many times a minute) load a client of a few files, never the engine that `serve`,
 * `daemon` and `mcp` run, nor the schemas that `attach`, `events` and `record` read notifications
 * with (docs/architecture.md#the-cli).
 */
const COMMANDS: Record<string, () => Promise<Command>> = {
  list: async () => (await import('./commands')).listCommand,
  open: async () => (await import('./session-commands')).openCommand,
  kill: async () => (await import('./session-commands')).killCommand,
  commands: async () => (await import('./session-commands')).commandsCommand,
  read: async () => (await import('./commands')).readCommand,
  send: async () => (await import('./commands')).sendCommand,
  keys: async () => (await import('./commands')).keysCommand,
  wait: async () => (await import('./commands')).waitCommand,
  view: async () => (await import('./commands')).viewCommand,
  play: async () => (await import('./play')).playCommand,
  share: async () => (await import('./token-commands')).shareCommand,
  tokens: async () => (await import('./token-commands')).tokensCommand,
  revoke: async () => (await import('./token-commands')).revokeCommand,
  bridge: async () => (await import('./bridge')).bridgeCommand,
  // Not in the client bundle (the condition is a constant there, and the bundler drops what it rules out).
  ...(typeof __SHARED_PTY_CLIENT_BUNDLE__ === 'boolean'
    ? {}
    : {
        attach: async () => (await import('./attach')).attachCommand,
        events: async () => (await import('./events')).eventsCommand,
        record: async () => (await import('./record')).recordCommand,
        serve: async () => (await import('./serve')).serveCommand,
        mcp: async () => (await import('./mcp')).mcpCommand,
        daemon: async () => (await import('./daemon')).daemonCommand,
      }),
};

/** Runs a command line with the whole CLI, the bundle beside the client bundle: its own dispatch, help and errors. */
function inWholeCli(argv: string[]): Promise<number> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- the other bundle, found at run time next to this one
  const whole = require(path.join(__dirname, 'cli.js')) as { main: typeof main };
  return whole.main(argv);
}

/** Runs the CLI; resolves to the exit status. */
export async function main(argv: string[]): Promise<number> {
  // A reader that goes away (`| head`) ends the output, not the command with a stack trace.
  watchStdout();
  // A terminal that hangs up ends the command by SIGHUP, whichever way it exits after.
  endByHangUpWhenTerminalGone();
  // `shared-pty --host build list` as well as `shared-pty list --host build`.
  if (argv[0] === '--host' || argv[0]?.startsWith('--host=')) {
    const n = argv[0] === '--host' ? 2 : 1;
    const host = n === 2 ? argv[1] : argv[0].slice('--host='.length);
    // A host name starts with a letter or digit (hosts.json): `--host --help` names none.
    if (!host || host.startsWith('-')) {
      return fail('--host needs a host name, as in: shared-pty --host NAME list (see hosts.json in docs/hosts.md#remote-hosts)', 2);
    }
    if (argv[n] === '--host' || argv[n]?.startsWith('--host=')) return fail('--host is given twice; give it once', 2);
    if (argv.length <= n || argv[n].startsWith('-')) {
      return fail(`--host ${host} needs a command after it (${[...HOST_COMMANDS].join(', ')}), as in: shared-pty --host ${host} list`, 2);
    }
    return main([argv[n], ...argv.slice(0, n), ...argv.slice(n + 1)]);
  }
  const [name, ...rest] = argv;
  if (argv.length === 0) {
    // A usage error, said in one line as every failure is (docs/cli.md); the usage itself is
    // output, for the person who typed the bare command to read.
    process.stdout.write(HELP);
    return fail('no command given (the commands are listed above; shared-pty --help lists them too)', 2);
  }
  if (name === '--help' || name === '-h' || name === 'help') {
    if (rest.length) return fail(surplusAfter(name, rest[0]), 2);
    process.stdout.write(HELP);
    return 0;
  }
  if (name === '--version' || name === '-v') {
    if (rest.length) return fail(surplusAfter(name, rest[0]), 2);
    process.stdout.write(VERSION + '\n');
    return 0;
  }
  // Own names only: `toString` or `constructor` are not commands.
  const load = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  // The client bundle's other commands, and names neither knows (the whole CLI says they are unknown).
  if (!load && typeof __SHARED_PTY_CLIENT_BUNDLE__ === 'boolean') return inWholeCli(argv);
  if (!load) return fail(`unknown command "${name}" (see shared-pty --help)`, 2);
  const flags = rest.includes('--') ? rest.slice(0, rest.indexOf('--')) : rest;
  if (flags.includes('--help') || flags.includes('-h')) {
    process.stdout.write(commandHelp(name));
    return 0;
  }
  // Here, in the bundle that runs the command: a signal ends the bridges it starts before it ends it.
  endBridgesOnSignal();
  try {
    const command = await load();
    return await command(HOST_COMMANDS.has(name) ? takeHostFlag(rest) : rest);
  } catch (e) {
    if (e instanceof UsageError) return fail(/usage: /.test(e.message) ? e.message : `${e.message} (see shared-pty ${name} --help)`, 2);
    // A host's refusal (a CliError made of one, or one no command caught) names no JSON-RPC method.
    if (e instanceof CliError) return fail(cliMessage(e.message), e.exitCode);
    if (e instanceof RpcCallError) return fail(cliMessage(e.message), 1);
    return fail((e as Error).message ?? String(e), 1);
  } finally {
    closeRemoteHosts();
  }
}

/** A word after `--help` or `--version`, which take none: a usage error, as a surplus word is for every command. */
function surplusAfter(option: string, word: string): string {
  // `shared-pty help send`: the user wants that command's usage, so say how to get it.
  const hint = HELP.includes(`\n  shared-pty ${word} `) ? `; for its usage: shared-pty ${word} --help` : ' (see shared-pty --help)';
  return `unexpected argument "${quotedWord(word)}" after ${option}${hint}`;
}

/** The usage lines of one command, with their indented continuations (every command has some in HELP). */
export function commandHelp(name: string): string {
  const lines: string[] = [];
  let inCommand = false;
  for (const l of HELP.split('\n')) {
    if (l.startsWith('  shared-pty ')) inCommand = l.startsWith(`  shared-pty ${name} `) || l === `  shared-pty ${name}`;
    else if (!l.startsWith('      ')) inCommand = false;
    if (inCommand) lines.push(l);
  }
  const sessionNote = lines.some((l) => l.includes('<session>')) ? (HOST_COMMANDS.has(name) ? SESSION_NOTE : LOCAL_SESSION_NOTE) : '';
  const hostNote = HOST_COMMANDS.has(name) ? (sessionNote ? '' : '\n') + HOST_NOTE : '';
  return `Usage:\n${lines.join('\n')}\n${sessionNote}${hostNote}`;
}

function fail(message: string, code: number): number {
  process.stderr.write(`shared-pty: ${oneLine(message)}\n`);
  return code;
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => {
      if (terminalHungUp()) return void endBySignal('SIGHUP');
      process.exitCode = code;
    },
    (e) => {
      // Its terminal hung up under the command (`attach` as a window closes): ended as a hang-up
      // ends a command, with no word to a terminal that is gone and without Node's exit-time
      // restore of its mode, which aborts there.
      if (terminalHungUp()) return void endBySignal('SIGHUP');
      process.stderr.write(`shared-pty: ${oneLine((e as Error).message)}\n`);
      process.exitCode = 1;
    },
  );
}
