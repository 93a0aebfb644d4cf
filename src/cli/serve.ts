import * as fs from 'node:fs';
import * as path from 'node:path';
import { splitShellWords } from '../core/base/shell-words';
import { keepYoungGenerationSmall } from '../host/young-generation';
import { compileBaselineCodeFromNowOn } from '../host/baseline-code';
import { markInheritedCloseOnExec } from '../core/process/close-on-exec';
import { MAX_COLS, MAX_ROWS, MIN_COLS, MIN_ROWS } from '../core/base/param-limits';
import type { Endpoint } from '../transport/socket/socket-server';
import { parseAddress } from '../transport/base/address';
import { intFlag, isFlagOf, nameFlag, parseArgs, quotedWord, strFlag, UsageError } from './args';
import { agentFlags, commandLogFlag, httpFlags, limitFlags } from './host-flags';
import { COMMAND_FLAGS } from './command-flags';
import { CliError } from './find-session';
import { oneLine } from './one-line';

const USAGE =
  'shared-pty serve [--cmd CMD [ARGS…]] [--socket PATH | --port N] [--cols N] [--rows N] [--cwd DIR] [--http-port N | --no-http] [--allow-origin ORIGIN[,ORIGIN…]] [--session-tcp] [--command-log-mb N] [--agent-approval allow|ask|deny] [--agent-deny REGEX] [--max-sessions N] [--max-session-connections N] [--max-control-connections N] [--max-http-connections N] [--max-in-flight N] [--max-line-bytes N]';

/**
 * `serve`: with --socket/--port, socket-pty's single-session server (pty/kill ends it);
 * otherwise a full host in the foreground with one session of --cmd (default: your shell).
 */
export async function serveCommand(commandLine: string[]): Promise<number> {
  const { own: argv, commandArgs } = splitCommandArgs(commandLine);
  const args = parseArgs(argv, COMMAND_FLAGS.serve);
  if (args.positional.length) throw new UsageError(`unexpected argument "${quotedWord(args.positional[0])}"; usage: ${USAGE}`);
  const socketPath = strFlag(args, '--socket');
  const port = intFlag(args, '--port', 1, 65535);
  if (socketPath !== undefined && port !== undefined) throw new UsageError('--socket and --port are mutually exclusive');
  // Every flag is checked before anything starts: a bad one must not leave a host behind, even briefly.
  const { httpPort, allowedOrigins } = httpFlags(args);
  const cols = intFlag(args, '--cols', MIN_COLS, MAX_COLS);
  const rows = intFlag(args, '--rows', MIN_ROWS, MAX_ROWS);
  const maxLineBytes = intFlag(args, '--max-line-bytes', 1024);
  const commandLogs = commandLogFlag(args);
  const limits = limitFlags(args);
  if (limits.maxHttpConnections !== undefined && args.flags.has('--no-http'))
    throw new UsageError('--max-http-connections and --no-http are mutually exclusive');
  let words: string[] | undefined;
  try {
    words = args.flags.has('--cmd') ? splitShellWords(strFlag(args, '--cmd') ?? '') : undefined;
  } catch (e) {
    throw new UsageError(`--cmd: ${(e as Error).message}`);
  }
  if (words?.length === 0) throw new UsageError('--cmd needs a command');
  if (words) words.push(...commandArgs);
  const cwd = path.resolve(strFlag(args, '--cwd') ?? process.cwd());
  const compat: Endpoint | undefined =
    socketPath !== undefined ? { type: 'unix', path: path.resolve(socketPath) } : port !== undefined ? { type: 'tcp', host: '127.0.0.1', port } : undefined;
  if (compat?.type === 'unix') checkSocketFolder(compat.path);
  const log = (line: string) => {
    if (!args.flags.has('--quiet')) process.stdout.write(line + '\n');
  };

  const agents = agentFlags(args);
  keepYoungGenerationSmall();
  // What this process was started with stays here: no session's program inherits it.
  markInheritedCloseOnExec();
  // The engine loads once every flag is checked: a mistyped one is answered without it (docs/architecture.md#the-cli).
  const [{ Host }, { defaultShell }, { NOBODY_TO_ASK }] = await Promise.all([
    import('../host/host'),
    import('../core/session/registry'),
    import('../core/agent/agent-policy'),
  ]);
  const [command, ...cmdArgs] = words ?? [defaultShell()];
  const host = await Host.start({
    kind: 'serve',
    defaultCwd: cwd,
    workspace: cwd,
    sessionTcp: args.flags.has('--session-tcp'),
    maxLineBytes,
    ...limits,
    ...agents,
    ...commandLogs,
  });
  let stopping = false;
  const stop = async (code: number) => {
    if (stopping) return;
    stopping = true;
    try {
      await host.close();
    } catch (e) {
      // Its files are gone all the same (Host.close); the failure is said, not left unhandled.
      process.stderr.write(`shared-pty: while ending: ${oneLine((e as Error).message)}\n`);
    }
    process.exit(code);
  };
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(sig, () => void stop(0));

  // Said once, where the user started it (also with --quiet): `ask` needs someone to ask.
  if (agents.agentApproval === 'ask' && !host.approvals.canAsk) process.stderr.write(`[shared-pty] agent approval ask: ${NOBODY_TO_ASK}\n`);
  try {
    if (!args.flags.has('--no-http')) await (await import('./http-option')).startHttpFor(host, httpPort, allowedOrigins);
    const session = await host.createSession(
      {
        command,
        args: [...cmdArgs, ...args.rest],
        cwd,
        cols,
        rows,
        name: nameFlag(args),
        origin: 'user',
      },
      compat,
    );
    const info = host.describe(session);
    if (compat) {
      // socket-pty's single-session server: its session going away (pty/kill, or its removal after
      // it exited) ends the process, once the session's clients were answered and told of its exit. Another session opened through the host's control socket ends alone.
      host.registry.onDidRemove((removed) => removed === session && void stop(0));
      // socket-pty's own two lines, word for word: a launcher that waits for them works unchanged.
      const ep = parseAddress(info.address);
      log(`[socket-pty] 会话已启动，命令: ${[command, ...info.args].join(' ')}`);
      log(`[socket-pty] 连接地址: ${ep.type === 'tcp' ? `${ep.host}:${ep.port}` : ep.path}`);
    } else {
      log(`[shared-pty] host ${host.hostId} serving (pid ${process.pid}); control socket: ${host.controlAddress}`);
      log(`[shared-pty] session ${info.id} (${info.name}): ${[command, ...info.args].join(' ')} at ${info.address}`);
      if (host.http) log(`[shared-pty] http: ${host.http.url} (token in ${path.join(host.runtimeDir, host.hostId + '.json')})`);
      log(`[shared-pty] attach with: shared-pty attach ${info.name}   ·   list with: shared-pty list`);
    }
    compileBaselineCodeFromNowOn();
  } catch (e) {
    await host.close();
    throw e;
  }
  return new Promise<number>(() => {}); // runs until a signal or pty/kill
}

/**
 * The folder a `--socket` goes in must be there: listen() would say EACCES for one that is missing,
 * which sends the user looking at permissions.
 */
function checkSocketFolder(socket: string): void {
  const folder = path.dirname(socket);
  let stat: fs.Stats;
  try {
    stat = fs.statSync(folder);
  } catch {
    throw new CliError(`cannot listen on ${socket}: no such directory: ${folder}`);
  }
  if (!stat.isDirectory()) throw new CliError(`cannot listen on ${socket}: not a directory: ${folder}`);
}

/**
 * `serve --cmd CMD ARGS…` as socket-pty's users write it (`--cmd python3 -i --port 5174`): the words
 * after `--cmd`'s value, up to the next flag of serve's own (or `--`), are the command's arguments.
 * `--cmd "python3 -i"` (one line, split as a shell would) and `-- ARGS…` still work; an argument
 * that is one of serve's flags goes after `--`.
 */
function splitCommandArgs(argv: string[]): { own: string[]; commandArgs: string[] } {
  const spec = COMMAND_FLAGS.serve;
  const values = new Set<string>(spec.values);
  const booleans = new Set<string>(spec.booleans);
  const at = argv.findIndex((a) => a === '--cmd' || a.startsWith('--cmd='));
  const dashes = argv.indexOf('--');
  if (at === -1 || (dashes !== -1 && dashes < at)) return { own: argv, commandArgs: [] };
  let end = at + (argv[at] === '--cmd' ? 2 : 1);
  const from = end;
  while (end < argv.length && !isFlagOf(argv[end], values, booleans)) end++;
  return { own: [...argv.slice(0, from), ...argv.slice(end)], commandArgs: argv.slice(from, end) };
}
