import * as fs from 'node:fs';
import * as path from 'node:path';
import { ensureDaemon } from '../host/daemon';
import { readLiveRecords, type HostRecord } from '../host/discovery';
import { isSessionLike, REMOTE_OPEN_WAIT_MS, RemoteHostError } from '../host/remote-hosts';
import type { CommandRecord } from '../core/commands/command-tracker';
import { ErrorCode } from '../core/base/errors';
import { ConnectionClosedError, RpcCallError, RpcClient } from '../transport/client/rpc-client';
import { intFlag, nameFlag, parseArgs, strFlag, UsageError } from './args';
import { COMMAND_FLAGS } from './command-flags';
import { callOn, callOnTarget, needSession } from './commands';
import { CliError, hostGoneMessage } from './find-session';
import { answerWithin, stalledMessage } from './answer-bound';
import { describedFully } from './remote-session-info';
import { MAX_COLS, MAX_COMMAND_RECORDS, MAX_ROWS, MIN_COLS, MIN_ROWS } from '../core/base/param-limits';
import { chosenHost, connectRemote, findTarget, remoteHosts, remoteName, remoteRefusal } from './remote';

export const OPEN_USAGE = 'shared-pty open [--name N] [--cwd DIR] [--cols C] [--rows R] [--json] [-- COMMAND ARGS…]';
export const KILL_USAGE = 'shared-pty kill <session>';
export const COMMANDS_USAGE = 'shared-pty commands <session> [--limit N] [--json]';

/** How long `kill` waits for the session to be gone from its host's list: the host's SIGKILL grace and a margin. */
const KILL_GONE_WAIT_MS = 6000;
/** How often `kill` asks meanwhile. */
const KILL_POLL_MS = 50;

/**
 * `open [--name N] [--cwd DIR] [--cols C] [--rows R] [--json] [-- COMMAND ARGS…]`: a new session on
 * the per-user host (started, detached, when none runs), running COMMAND or the user's shell in DIR
 * (default: here). Prints its id, or with `--json` its SessionInfo. It runs until it exits or
 * `shared-pty kill` ends it; `attach` shows it.
 */
export async function openCommand(argv: string[]): Promise<number> {
  const args = parseArgs(argv, COMMAND_FLAGS.open);
  if (args.positional.length > 0) {
    throw new UsageError(`the command goes after --, as in: shared-pty open -- ${args.positional.join(' ')}; usage: ${OPEN_USAGE}`);
  }
  const cols = intFlag(args, '--cols', MIN_COLS, MAX_COLS);
  const rows = intFlag(args, '--rows', MIN_ROWS, MAX_ROWS);
  const [command, ...commandArgs] = args.rest;
  if (args.rest.length > 0 && !command) throw new UsageError(`an empty command after --; usage: ${OPEN_USAGE}`);
  const remote = remoteName(chosenHost());
  const cwdFlag = strFlag(args, '--cwd');
  if (cwdFlag === '') throw new UsageError(`--cwd needs a folder; usage: ${OPEN_USAGE}`);
  // On a remote host a folder of this machine means nothing: its own default (home) unless --cwd says.
  const cwd = remote === undefined ? path.resolve(cwdFlag ?? process.cwd()) : cwdFlag;
  // A folder of this machine is checked here, before a host is started for it.
  if (remote === undefined && cwdFlag !== undefined) checkFolder(cwd!);
  const name = nameFlag(args);
  const local = remote === undefined ? await localDaemon() : undefined;
  const client = local ? await connectTo(local) : await connectRemote(remote!);
  try {
    const create = client.call('session/create', {
      ...(command ? { command, args: commandArgs } : {}),
      ...(cwd !== undefined ? { cwd } : {}),
      ...(cols !== undefined ? { cols } : {}),
      ...(rows !== undefined ? { rows } : {}),
      ...(name !== undefined ? { name } : {}),
      origin: 'user',
    });
    // A far host that answered once and then stalls is given its time, then named, as a listing is.
    // This machine's host, stopped (SIGSTOP), never answers: said as a stalled call is (docs/cli.md#errors).
    const info =
      remote === undefined
        ? await answerWithin('session/create', {}, create, (ms, own) => new CliError(stalledMessage(`the Shared PTY host ${local!.hostId}`, ms, own)))
        : await remoteHosts().within(remote, create, REMOTE_OPEN_WAIT_MS, 'open the session');
    // A far end of another kind (or version) that answers something else is said so, never printed as an id.
    if (remote !== undefined && !isSessionLike(info)) throw new CliError(`host "${remote}" answered something that is not a session`);
    // With the host it is on, as `list --json` shows each session: this machine's by its hostId; a
    // remote one's selector names the host too, so the printed id works in the next command.
    const shown = remote === undefined ? { ...info, hostId: local!.hostId } : { ...describedFully(info), host: remote };
    process.stdout.write(args.flags.has('--json') ? JSON.stringify(shown, null, 2) + '\n' : (remote === undefined ? info.id : `${remote}:${info.id}`) + '\n');
    return 0;
  } catch (e) {
    if (e instanceof RpcCallError) throw remote !== undefined ? remoteRefusal(remote, e) : new CliError(e.message, e.code === ErrorCode.InvalidParams ? 2 : 1);
    if (e instanceof ConnectionClosedError && remote !== undefined) throw new CliError(await remoteHosts().dropMessage(remote));
    // This machine's host closed on us (gone, or refusing: a limit, a runtime directory it gave up): in its words.
    if (e instanceof ConnectionClosedError) throw new CliError(await hostGoneMessage(local!, e));
    if (e instanceof RemoteHostError) throw new CliError(e.message);
    throw e;
  } finally {
    if (remote === undefined) client.close();
  }
}

/** The per-user host of this machine (started, detached, when none runs). */
function localDaemon(): Promise<HostRecord> {
  // The host to start is this very CLI (`daemon`), with the Node that runs us.
  const cliPath = require.main?.filename ?? process.argv[1];
  return ensureDaemon({ cliPath, onOutdatedHost: (message) => process.stderr.write(`shared-pty: ${message}\n`) });
}

/** A connection to `host`'s control socket, or the one line that says why there is none. */
async function connectTo(host: HostRecord): Promise<RpcClient> {
  try {
    return await RpcClient.connect(host.control);
  } catch (e) {
    throw new CliError(`cannot reach host ${host.hostId}: ${(e as Error).message}`);
  }
}

/**
 * `kill <session>`: ends the session and its program, and returns once its host's discovery record
 * no longer lists it, so a `shared-pty list` right after does not show it.
 */
export async function killCommand(argv: string[]): Promise<number> {
  const args = parseArgs(argv, COMMAND_FLAGS.kill);
  const selector = needSession(args.positional, KILL_USAGE);
  const target = await findTarget(selector);
  await callOnTarget(target, 'pty/kill', {});
  const end = Date.now() + KILL_GONE_WAIT_MS;
  const id = target.session.id;
  const listed = async () => {
    if (target.local) return readLiveRecords().some((h) => h.hostId === target.local!.hostId && h.sessions.some((s) => s.id === id));
    const client = await target.connect();
    try {
      return (await client.call('session/list', {})).sessions.some((s) => s.id === id);
    } catch (e) {
      if (e instanceof RpcCallError) throw target.refused(e);
      throw e;
    }
  };
  while ((await listed()) && Date.now() < end) await new Promise((r) => setTimeout(r, KILL_POLL_MS));
  return 0;
}

/** `commands <session> [--limit N] [--json]`: the commands its shell ran, oldest first (shell integration). */
export async function commandsCommand(argv: string[]): Promise<number> {
  const args = parseArgs(argv, COMMAND_FLAGS.commands);
  const selector = needSession(args.positional, COMMANDS_USAGE);
  const limit = intFlag(args, '--limit', 1, MAX_COMMAND_RECORDS);
  const r = await callOn(selector, 'pty/commands', { ...(limit !== undefined ? { limit } : {}) });
  if (args.flags.has('--json')) {
    process.stdout.write(JSON.stringify(r, null, 2) + '\n');
    return 0;
  }
  // The records the shell made before an `exec` replaced it are still its history: shown, then why no more come.
  for (const c of r.commands) process.stdout.write(commandRow(c) + '\n');
  if (!r.integration) {
    const why =
      r.commands.length > 0
        ? 'the shell that reported these commands was replaced (exec): later commands are not known'
        : 'this session has no shell integration (bash, zsh or fish started by Shared PTY): its commands are not known';
    process.stderr.write(`shared-pty: ${why}\n`);
  }
  return 0;
}

/** `--cwd`'s folder exists and is one: else a usage error (the host would say so only once started). */
function checkFolder(dir: string): void {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(dir);
  } catch {
    throw new UsageError(`--cwd: no such folder: ${dir}; usage: ${OPEN_USAGE}`);
  }
  if (!stat.isDirectory()) throw new UsageError(`--cwd: not a folder: ${dir}; usage: ${OPEN_USAGE}`);
}

/** One command as a row: id, status, duration, cwd and the command line (its later lines indented). */
function commandRow(c: CommandRecord): string {
  const status = c.exitCode !== null ? `exit ${c.exitCode}` : c.endCursor === null ? 'running' : 'ended';
  const took = c.durationMs === null ? '' : ` ${c.durationMs} ms`;
  return `${c.id}\t${status}${took}\t${c.cwd}\t${c.command.replace(/\n/g, '\n\t\t\t')}`;
}
