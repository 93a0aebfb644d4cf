import * as fs from 'node:fs';
import { parseArgs, strFlag, UsageError } from './args';
import { CliError } from './find-session';

export const PLAY_USAGE = 'shared-pty play <file> [--speed N] [--idle-limit SECONDS]';

/** Pauses longer than this are cut to it when neither the file nor the user says otherwise (seconds). */
export const DEFAULT_IDLE_LIMIT = 2;
/** Delays shorter than this are added up rather than slept one by one (timers are not finer). */
const MIN_SLEEP_MS = 4;

/** One event of an asciicast v3 file: seconds since the event before, its code, its data. */
export type CastEvent = [interval: number, code: string, data: string];

/** A parsed asciicast v3 recording. */
export interface Cast {
  header: { version: 3; term: { cols: number; rows: number }; idle_time_limit?: number; [k: string]: unknown };
  events: CastEvent[];
}

/** Parses an asciicast v3 file (newline-delimited JSON; `#` lines are comments); a clear error otherwise. */
export function parseCast(text: string, name = 'the file'): Cast {
  const lines = text.split('\n');
  let header: Cast['header'] | undefined;
  try {
    header = JSON.parse(lines[0]);
  } catch {
    // reported below
  }
  const term = header?.term;
  if (!header || typeof header !== 'object' || header.version !== 3 || typeof term?.cols !== 'number' || typeof term?.rows !== 'number') {
    throw new CliError(`${name} is not an asciicast v3 recording (its first line must be a header like {"version": 3, "term": {"cols": 80, "rows": 24}})`);
  }
  const events: CastEvent[] = [];
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i];
    if (line.trim() === '' || line.startsWith('#')) continue;
    let e: unknown;
    try {
      e = JSON.parse(line);
    } catch {
      e = undefined;
    }
    if (!Array.isArray(e) || e.length !== 3 || typeof e[0] !== 'number' || !(e[0] >= 0) || typeof e[1] !== 'string' || typeof e[2] !== 'string') {
      throw new CliError(`${name}, line ${i + 1}: not an asciicast event [interval, code, data]`);
    }
    events.push(e as CastEvent);
  }
  return { header, events };
}

function positiveNumber(value: string | undefined, flag: string, allowZero: boolean): number | undefined {
  if (value === undefined) return undefined;
  const n = /^\d+(\.\d+)?$/.test(value) ? Number(value) : NaN;
  if (!Number.isFinite(n) || n < 0 || (!allowZero && n === 0)) throw new UsageError(`${flag} needs a ${allowZero ? 'non-negative' : 'positive'} number, got "${value}"`);
  return n;
}

/**
 * `play <file> [--speed N] [--idle-limit S]`: replays a recording's output to this terminal with
 * its timing, `--speed` times faster (default 1). Pauses are cut to the idle limit as asciinema
 * does: `--idle-limit`, else the file's `idle_time_limit`, else 2 s; `--idle-limit 0` keeps them
 * whole. Input, markers and resizes are not replayed (they are in the file for players and readers).
 */
export async function playCommand(argv: string[]): Promise<number> {
  const args = parseArgs(argv, { values: ['--speed', '--idle-limit'] });
  const [file, ...extra] = args.positional;
  if (!file) throw new UsageError(`missing <file>; usage: ${PLAY_USAGE}`);
  if (extra.length > 0) throw new UsageError(`too many arguments; usage: ${PLAY_USAGE}`);
  const speed = positiveNumber(strFlag(args, '--speed'), '--speed', false) ?? 1;
  const idleFlag = positiveNumber(strFlag(args, '--idle-limit'), '--idle-limit', true);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    throw new CliError(`cannot read ${file}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (e as Error).message}`);
  }
  const cast = parseCast(text, file);
  const fileLimit = typeof cast.header.idle_time_limit === 'number' && cast.header.idle_time_limit > 0 ? cast.header.idle_time_limit : undefined;
  const idleLimit = idleFlag ?? fileLimit ?? DEFAULT_IDLE_LIMIT;

  let owedMs = 0;
  for (const [interval, code, data] of cast.events) {
    owedMs += (idleLimit > 0 ? Math.min(interval, idleLimit) : interval) * 1000 / speed;
    if (code !== 'o') continue;
    if (owedMs >= MIN_SLEEP_MS) {
      await new Promise((r) => setTimeout(r, owedMs));
      owedMs = 0;
    }
    if (!process.stdout.write(data)) await new Promise((r) => process.stdout.once('drain', r));
  }
  return 0;
}
