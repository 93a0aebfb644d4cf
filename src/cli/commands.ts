import { readLiveRecords } from '../host/discovery';
import { ErrorCode } from '../core/base/errors';
import type { ControlParamsOf, MethodName, ResultOf } from '../core/methods/table';
import { ConnectionClosedError, RpcCallError, type CallParams } from '../transport/client/rpc-client';
import { intFlag, parseArgs, strFlag, UsageError, type ParsedArgs } from './args';
import { COMMAND_FLAGS } from './command-flags';
import { linkNote, parseDuration } from './token-commands';
import { CliError, findSession } from './find-session';
import type { SessionInfo } from '../core/methods/types';
import { chosenHost, findTarget, hostsConfigForLocal, localTarget, remoteHosts, remoteName, remoteRefusal, type SessionTarget } from './remote';
import { describedFully } from './remote-session-info';
import { cliMessage } from './host-error';
import { oneLine } from './one-line';
import { MAX_SCROLLBACK_PAGE, MAX_WAIT_MS } from '../core/base/param-limits';
import { answerWithin, stalledMessage } from './answer-bound';

/**
 * Calls one method on the session's host (this machine's, or a remote one through its bridge);
 * RPC errors become one-line CLI errors.
 */
export async function callOn<M extends MethodName>(selector: string, method: M, params: Omit<ControlParamsOf<M>, 'session'>): Promise<ResultOf<M>> {
  return callOnTarget(await findTarget(selector), method, params);
}

/** callOn for a session already found. */
export async function callOnTarget<M extends MethodName>(target: SessionTarget, method: M, params: Omit<ControlParamsOf<M>, 'session'>): Promise<ResultOf<M>> {
  const client = await target.connect();
  try {
    // A host (or a link to one) that stalls never answers, and nothing closes: the call's own wait,
    // and a margin, is as long as the command waits (docs/cli.md#errors).
    const who = target.remote !== undefined ? `host "${target.remote}"` : `the Shared PTY host ${target.local?.hostId ?? ''}`.trimEnd();
    // TypeScript cannot see that a generic Omit plus the field it omitted is the whole again.
    return await answerWithin(
      method,
      params as Record<string, unknown>,
      client.call(method, { session: target.session.id, ...params } as unknown as CallParams<M>),
      (ms, own) => new CliError(stalledMessage(who, ms, own)),
    );
  } catch (e) {
    // Params the host refuses (an invalid regex, an unknown key name) are the user's usage error: 2;
    // a method a remote host does not know (an older version there) is said with its name.
    if (e instanceof RpcCallError) throw target.refused(e);
    if (e instanceof ConnectionClosedError) throw new CliError(await target.goneMessage(e));
    throw e;
  } finally {
    target.release(client);
  }
}

/** The <session> argument, or a usage error that shows the usage line. */
export function needSession(positional: string[], usage: string): string {
  if (!positional[0]) throw new UsageError(`missing <session>; usage: ${usage}`);
  return positional[0];
}

/**
 * `list [--json]`: every session of every live host of this machine and of every remote host in
 * hosts.json (or of the one `--host` names), remote ones with `host`. A remote host that cannot be
 * reached is said in one line on stderr, the others are listed all the same, and the status is 1.
 */
export async function listCommand(argv: string[]): Promise<number> {
  const args = parseArgs(argv, COMMAND_FLAGS.list);
  const only = chosenHost();
  const remote = remoteName(only);
  // A record another version (or a hand) wrote may say less: what it does not say is not known.
  const local =
    only === undefined || remote === undefined
      ? readLiveRecords().flatMap((h) => (Array.isArray(h.sessions) ? h.sessions : []).map((s) => ({ ...describedFully(s), hostId: h.hostId })))
      : [];
  let failed = false;
  // A broken hosts.json is said like an unreachable host: this machine's sessions are listed all the same.
  const configured = () =>
    hostsConfigForLocal((message) => {
      failed = true;
      process.stderr.write(`shared-pty: ${oneLine(message)}\n`);
    });
  const names = only === undefined ? [...configured().hosts.keys()] : remote === undefined ? [] : [remote];
  const remoteLists = await Promise.all(
    names.map(async (name) => {
      try {
        const sessions = await remoteHosts().listSessions<SessionInfo & { hostId: string }>(name, async (c) => {
          const [info, list] = await Promise.all([c.call('host/info', {}), c.call('session/list', {})]);
          const listed = (list as { sessions?: unknown } | null)?.sessions;
          return { sessions: Array.isArray(listed) ? listed.map((s: SessionInfo) => ({ ...s, hostId: info?.hostId })) : listed };
        });
        // A host of an older version lists fewer fields: what it does not say is not known there.
        return sessions.map((s) => ({ ...describedFully(s), host: name }));
      } catch (e) {
        failed = true;
        process.stderr.write(`shared-pty: ${oneLine(await listFailure(name, e))}\n`);
        return [];
      }
    }),
  );
  const sessions: Array<SessionInfo & { hostId: string }> = [...local, ...remoteLists.flat()];
  const status = failed ? 1 : 0;
  if (args.flags.has('--json')) {
    process.stdout.write(JSON.stringify(sessions, null, 2) + '\n');
    return status;
  }
  if (sessions.length === 0) return status;
  const rows = sessions.map((s) => [
    s.host ? `${s.host}:${s.id}` : s.id,
    s.name,
    s.running ? (s.secretInput ? 'secret-input' : 'running') : `exited ${s.exitCode}`,
    `${s.cols}x${s.rows}`,
    String(s.clients),
    s.origin,
    // (No command: a remote host of an older version did not say it.)
    (s.command ? [s.command, ...s.args] : s.args).join(' '),
    s.address,
  ]);
  // A name or a command line may hold control characters (a remote host of another version, the
  // arguments an agent gave): shown, never run by the terminal of whoever lists.
  for (const r of rows) r.forEach((c, i) => (r[i] = c.replace(/[\u0000-\u001f\u007f-\u009f]/g, '?')));
  const header = ['ID', 'NAME', 'STATE', 'SIZE', 'CLIENTS', 'ORIGIN', 'COMMAND', 'ADDRESS'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  for (const r of [header, ...rows]) process.stdout.write(r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]))).join('  ') + '\n');
  return status;
}

/** The one line that says why remote host `name` is not listed: it names the host, never a JSON-RPC method. */
async function listFailure(name: string, e: unknown): Promise<string> {
  if (e instanceof ConnectionClosedError) return remoteHosts().dropMessage(name);
  if (!(e instanceof RpcCallError)) return (e as Error).message;
  if (e.code === ErrorCode.MethodNotFound) return remoteRefusal(name, e).message;
  return `host "${name}": ${cliMessage(e.message)}`;
}

const READ_USAGE = 'shared-pty read <session> [--top N | --bottom N | --start A --end B | --scrollback [--offset N] [--lines N]] [--json]';

/** `read <session> [...]`: the screen, part of it, or a page of scrollback. */
export async function readCommand(argv: string[]): Promise<number> {
  const args = parseArgs(argv, COMMAND_FLAGS.read);
  const selector = needSession(args.positional, READ_USAGE);
  checkReadFlags(args);
  if (args.flags.has('--scrollback')) {
    const r = await callOn(selector, 'pty/scrollback', {
      offset: intFlag(args, '--offset'),
      lines: intFlag(args, '--lines', 1, MAX_SCROLLBACK_PAGE),
    });
    process.stdout.write(args.flags.has('--json') ? JSON.stringify(r) + '\n' : r.text + (r.text ? '\n' : ''));
    return 0;
  }
  const r = await callOn(selector, 'pty/read', {
    top: intFlag(args, '--top'),
    bottom: intFlag(args, '--bottom'),
    start: intFlag(args, '--start', 1),
    end: intFlag(args, '--end', 1),
  });
  process.stdout.write(args.flags.has('--json') ? JSON.stringify(r) + '\n' : r.screen);
  return 0;
}

/**
 * `read`'s flags are alternatives (`--top N | --bottom N | --start A --end B | --scrollback
 * [--offset N] [--lines N]`): a combination the usage does not allow is a usage error naming the
 * flags, found here before any host is asked, never a flag silently ignored.
 */
function checkReadFlags(args: ParsedArgs): void {
  const given = (...names: string[]) => names.filter((n) => args.flags.has(n));
  const screenFlags = given('--top', '--bottom', '--start', '--end');
  if (args.flags.has('--scrollback')) {
    if (screenFlags.length) throw new UsageError(`--scrollback and ${screenFlags[0]} exclude each other`);
    return;
  }
  const pageFlags = given('--offset', '--lines');
  if (pageFlags.length) throw new UsageError(`${pageFlags[0]} goes with --scrollback`);
  // One of --top, --bottom and the --start/--end pair.
  const [first, second] = [...given('--top', '--bottom'), ...given('--start', '--end').slice(0, 1)];
  if (second) throw new UsageError(`${first} and ${second} exclude each other`);
  if (args.flags.has('--start') !== args.flags.has('--end')) throw new UsageError('--start and --end go together');
  const start = intFlag(args, '--start', 1);
  const end = intFlag(args, '--end', 1);
  if (start !== undefined && end !== undefined && start > end) throw new UsageError('--start must not be greater than --end');
}

/** `send`'s exit status when the wait timed out: what coreutils' `timeout` uses, so `send … && next` stops. */
export const SEND_TIMEOUT_EXIT = 124;

/**
 * `send <session> <text> [--no-submit] [--timeout MS]`: prints the output and the wait reason.
 * Its exit status: the command's exit code when the wait ended with the command (`command_done`,
 * shell integration), 124 when it timed out, else 0 (the program waits for input, the session exited…).
 */
export async function sendCommand(argv: string[]): Promise<number> {
  const args = parseArgs(argv, COMMAND_FLAGS.send);
  const usage = 'shared-pty send <session> <text> [--no-submit] [--timeout MS] [--idle MS] [--json]';
  const selector = needSession(args.positional, usage);
  const text = args.positional[1];
  if (text === undefined) throw new UsageError(`missing <text>; usage: ${usage}`);
  const r = await callOn(selector, 'pty/send', {
    text,
    submit: !args.flags.has('--no-submit'),
    timeout: intFlag(args, '--timeout', 1, MAX_WAIT_MS),
    idleMs: intFlag(args, '--idle', 1, MAX_WAIT_MS),
  });
  const exitCode = typeof r.exitCode === 'number' ? r.exitCode : undefined;
  if (args.flags.has('--json')) process.stdout.write(JSON.stringify(r) + '\n');
  else {
    if (r.output) process.stdout.write(r.output + '\n');
    const notes = [`wait reason: ${r.waitReason}`];
    if (exitCode !== undefined) notes.push(`exit code: ${exitCode}`);
    if (r.truncated) notes.push('output truncated');
    process.stdout.write(`[${notes.join(', ')}]\n`);
    if (r.waitReason === 'secret_input') process.stdout.write('[the program asks for a password: type it in the terminal, e.g. shared-pty attach]\n');
  }
  return sendExitStatus(r.waitReason, exitCode);
}

/** `send`'s exit status for its answer (see sendCommand). */
export function sendExitStatus(waitReason: string, exitCode: number | undefined): number {
  if (waitReason === 'timeout') return SEND_TIMEOUT_EXIT;
  // An exit status is a byte: what a shell would report for the same code.
  if (waitReason === 'command_done' && exitCode !== undefined) return exitCode & 0xff;
  return 0;
}

/** `keys <session> <Key>…`: named keys (Enter, Ctrl+C, ArrowUp, q, …). */
export async function keysCommand(argv: string[]): Promise<number> {
  const args = parseArgs(argv, COMMAND_FLAGS.keys);
  const selector = needSession(args.positional, 'shared-pty keys <session> <Key>…');
  const keys = args.positional.slice(1);
  if (keys.length === 0) throw new UsageError('missing <Key>; usage: shared-pty keys <session> <Key>…');
  await callOn(selector, 'pty/write', { action: keys.map((key) => ({ key })) });
  return 0;
}

/** `wait <session> <text> [--regex] [--timeout MS]`: exit 0 when it shows, 1 on timeout. */
export async function waitCommand(argv: string[]): Promise<number> {
  const args = parseArgs(argv, COMMAND_FLAGS.wait);
  const usage = 'shared-pty wait <session> <text> [--regex] [--timeout MS] [--json]';
  const selector = needSession(args.positional, usage);
  const text = args.positional[1];
  if (text === undefined) throw new UsageError(`missing <text>; usage: ${usage}`);
  const pattern = args.flags.has('--regex') ? { regex: text } : { match: text };
  const r = await callOn(selector, 'pty/wait', {
    ...pattern,
    timeout: intFlag(args, '--timeout', 0, MAX_WAIT_MS),
  });
  if (args.flags.has('--json')) process.stdout.write(JSON.stringify(r) + '\n');
  if (r.matched) return 0;
  process.stderr.write(`shared-pty: not seen before ${r.reason === 'session_exit' ? 'the session exited' : 'the timeout'}: ${oneLine(text)}\n`);
  return 1;
}

/**
 * `view <session> [--input | --read-only] [--expires 8h]`: prints a link that opens the session
 * live in a browser. The link holds a token of its own (view scope, input with `--input`), which a
 * browser trades once for a page cookie: the line is often printed into a shared terminal, and
 * whoever reads it there later gains nothing. Never the host's own token.
 */
export async function viewCommand(argv: string[]): Promise<number> {
  const args = parseArgs(argv, COMMAND_FLAGS.view);
  const selector = needSession(args.positional, VIEW_USAGE);
  // Every flag is checked before a host is looked for, as share does: a bad flag is the first thing to fix.
  if (args.flags.has('--read-only') && args.flags.has('--input')) throw new UsageError(`--read-only and --input exclude each other; usage: ${VIEW_USAGE}`);
  const expires = strFlag(args, '--expires');
  const expiresIn = expires === undefined ? undefined : parseDuration(expires);
  // A link opens on the machine of the session's host: this one only.
  const target = localTarget(findSession(selector, 'view'));
  const r = await callOnTarget(target, 'session/viewUrl', { input: args.flags.has('--input'), expiresIn });
  process.stdout.write(r.url + '\n');
  process.stderr.write(`(${linkNote(r.info)})\n`);
  return 0;
}

const VIEW_USAGE = 'shared-pty view <session> [--input | --read-only] [--expires 8h]';
