import * as path from 'node:path';
import { ErrorCode } from '../core/base/errors';
import { MAX_PATH_CHARS } from '../core/base/param-limits';
import { paramsOf } from '../core/methods/notifications';
import { RpcCallError, type Notification } from '../transport/client/rpc-client';
import { parseArgs, UsageError } from './args';
import { COMMAND_FLAGS } from './command-flags';
import { CliError, connectHost, findSession } from './find-session';

export const RECORD_USAGE = 'shared-pty record <session> [file] [--input] [--detach | --stop]';

/**
 * `record <session> [file]`: starts an asciicast v3 recording of the session and prints its path,
 * then, as `asciinema rec` does, records until Ctrl+C (or SIGTERM, SIGHUP) or until the session
 * ends, and says where it was saved. `--detach` leaves it recording and returns at once (stop it
 * later with `--stop`, or it ends with the session); `--stop` stops the session's recording and
 * prints its path. A relative `file` is from the current directory; without one the host picks a
 * new file in ~/.local/share/shared-pty/recordings. `--input` keeps the text typed (never what the
 * terminal hides); without it the recording says who typed and how many bytes, never what.
 */
export async function recordCommand(argv: string[]): Promise<number> {
  const args = parseArgs(argv, COMMAND_FLAGS.record);
  const [selector, fileArg, ...extra] = args.positional;
  if (!selector) throw new UsageError(`missing <session>; usage: ${RECORD_USAGE}`);
  if (extra.length > 0) throw new UsageError(`too many arguments; usage: ${RECORD_USAGE}`);
  const stop = args.flags.has('--stop');
  if (stop && (fileArg !== undefined || args.flags.has('--detach') || args.flags.has('--input')))
    throw new UsageError(`--stop takes only <session>; usage: ${RECORD_USAGE}`);

  // A path the system takes is shorter than PATH_MAX (which counts the closing NUL); said here in
  // the command's words, not the method's.
  const file = fileArg === undefined ? undefined : path.resolve(fileArg);
  if (file !== undefined && file.length >= MAX_PATH_CHARS)
    throw new UsageError(`Cannot record to ${file}: the path is longer than ${MAX_PATH_CHARS - 1} characters`);

  const found = findSession(selector, 'record');
  const client = await connectHost(found);
  const session = found.session.id;
  const call = async (params: { path?: string; stop?: boolean; input?: boolean }) => {
    try {
      return await client.call('pty/record', { session, ...params });
    } catch (e) {
      if (e instanceof RpcCallError) throw new CliError(e.message, e.code === ErrorCode.InvalidParams ? 2 : 1);
      throw e;
    }
  };
  try {
    if (stop) {
      const r = await call({ stop: true });
      if (r.path === null) throw new CliError(`session ${found.session.name} is not being recorded`);
      process.stdout.write(r.path + '\n');
      return 0;
    }
    // Heard before the recording starts, so an exit right after it is not missed.
    const ended = new Promise<string>((resolve) => {
      client.onNotification((n: Notification) => {
        const event = paramsOf(n, 'pty/event');
        if (event?.session === session && event.type === 'exit') resolve('the session ended');
      });
      client.onClose(() => resolve('the host went away'));
    });
    await client.call('pty/events', { session });
    const input = args.flags.has('--input') ? { input: true } : {};
    const started = await call(file === undefined ? input : { path: file, ...input });
    process.stdout.write(started.path + '\n');
    if (args.flags.has('--detach')) return 0;
    process.stderr.write(`Recording ${found.session.name}; Ctrl+C stops.\n`);
    const why = await Promise.race([
      ended,
      ...(['SIGINT', 'SIGTERM', 'SIGHUP'] as const).map((sig) => new Promise<string>((r) => process.once(sig, () => r('stopped')))),
    ]);
    if (why === 'the host went away') throw new CliError(`the host went away; the recording so far is in ${started.path}`);
    // After an exit the host has closed the file itself; stopping then only confirms it.
    await call({ stop: true });
    process.stderr.write(`Saved ${started.path}${why === 'stopped' ? '' : ` (${why})`}.\n`);
    return 0;
  } finally {
    client.close();
  }
}
