import * as fs from 'node:fs';
import * as path from 'node:path';
import { readLiveRecords } from '../host/discovery';
import { onHost } from './token-commands';
import { parseArgs, strFlag, UsageError } from './args';
import { COMMAND_FLAGS } from './command-flags';
import { CliError } from './find-session';
import { CastFormatError, parseCast, type Cast } from '../core/session/recording/cast-file';
import { stdoutClosed, whenStdoutCloses } from './stdout-closed';

export const PLAY_USAGE = 'shared-pty play <file> [--speed N] [--idle-limit SECONDS] [--browser]';

/** Pauses longer than this are cut to it when neither the file nor the user says otherwise (seconds). */
export const DEFAULT_IDLE_LIMIT = 2;
/** Delays shorter than this are added up rather than slept one by one (timers are not finer). */
const MIN_SLEEP_MS = 4;

function positiveNumber(value: string | undefined, flag: string, allowZero: boolean): number | undefined {
  if (value === undefined) return undefined;
  const n = /^\d+(\.\d+)?$/.test(value) ? Number(value) : NaN;
  if (!Number.isFinite(n) || n < 0 || (!allowZero && n === 0))
    throw new UsageError(`${flag} needs a ${allowZero ? 'non-negative' : 'positive'} number, got "${value}"`);
  return n;
}

/**
 * `play <file> --browser`: asks a running host (the per-user one if it runs, else the newest that
 * serves HTTP) for a link that replays the file in asciinema-player, and prints it. The host
 * checks the file and serves that file only, under a random id, until the link expires.
 */
async function playInBrowser(file: string): Promise<number> {
  const hosts = readLiveRecords().filter((h) => h.http);
  const host = hosts.find((h) => h.kind === 'daemon') ?? hosts[hosts.length - 1];
  if (!host) throw new CliError('no running Shared PTY host serves HTTP, so nothing can show the replay (start one with: shared-pty serve)');
  const r = await onHost(host, (c) => c.call('host/replay', { path: path.resolve(file) }));
  process.stdout.write(`${r.url}\n`);
  process.stderr.write(
    `(the link replays ${r.path} until ${r.expiresAt}, and opens nothing else; it opens once, in the first browser that opens it; end it with: shared-pty revoke ${r.tokenId})\n`,
  );
  return 0;
}

/**
 * `play <file> [--speed N] [--idle-limit S]`: replays a recording's output to this terminal with
 * its timing, `--speed` times faster (default 1). Pauses are cut to the idle limit as asciinema
 * does: `--idle-limit`, else the file's `idle_time_limit`, else 2 s; `--idle-limit 0` keeps them
 * whole. Input, markers and resizes are not replayed (they are in the file for players and readers).
 */
export async function playCommand(argv: string[]): Promise<number> {
  const args = parseArgs(argv, COMMAND_FLAGS.play);
  const [file, ...extra] = args.positional;
  if (!file) throw new UsageError(`missing <file>; usage: ${PLAY_USAGE}`);
  if (extra.length > 0) throw new UsageError(`too many arguments; usage: ${PLAY_USAGE}`);
  if (args.flags.has('--browser')) {
    if (args.flags.has('--speed') || args.flags.has('--idle-limit'))
      throw new UsageError('--speed and --idle-limit are for replaying here; the browser page has its own speed choice');
    return playInBrowser(file);
  }
  const speed = positiveNumber(strFlag(args, '--speed'), '--speed', false) ?? 1;
  const idleFlag = positiveNumber(strFlag(args, '--idle-limit'), '--idle-limit', true);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    throw new CliError(`cannot read ${file}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (e as Error).message}`);
  }
  let cast: Cast;
  try {
    cast = parseCast(text, file);
  } catch (e) {
    throw e instanceof CastFormatError ? new CliError(e.message) : e;
  }
  const fileLimit = typeof cast.header.idle_time_limit === 'number' && cast.header.idle_time_limit > 0 ? cast.header.idle_time_limit : undefined;
  const idleLimit = idleFlag ?? fileLimit ?? DEFAULT_IDLE_LIMIT;

  let owedMs = 0;
  for (const [interval, code, data] of cast.events) {
    owedMs += ((idleLimit > 0 ? Math.min(interval, idleLimit) : interval) * 1000) / speed;
    if (code !== 'o') continue;
    if (owedMs >= MIN_SLEEP_MS) {
      await new Promise((r) => setTimeout(r, owedMs));
      owedMs = 0;
    }
    // Its reader gone (`| head`), the replay has nowhere to go: it ends.
    if (stdoutClosed()) break;
    if (!process.stdout.write(data)) await Promise.race([new Promise((r) => process.stdout.once('drain', r)), whenStdoutCloses()]);
  }
  return 0;
}
