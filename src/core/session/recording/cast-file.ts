import * as fs from 'node:fs';

/** One event of an asciicast v3 file: seconds since the event before, its code, its data. */
export type CastEvent = [interval: number, code: string, data: string];

/** A parsed asciicast v3 recording. */
export interface Cast {
  header: { version: 3; term: { cols: number; rows: number }; idle_time_limit?: number; title?: string; [k: string]: unknown };
  events: CastEvent[];
}

/** A file that is not an asciicast v3 recording; the message says where and why. */
export class CastFormatError extends Error {}

/** Parses an asciicast v3 file (newline-delimited JSON; `#` lines are comments); a CastFormatError otherwise. */
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
    throw new CastFormatError(
      `${name} is not an asciicast v3 recording (its first line must be a header like {"version": 3, "term": {"cols": 80, "rows": 24}})`,
    );
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
      throw new CastFormatError(`${name}, line ${i + 1}: not an asciicast event [interval, code, data]`);
    }
    events.push(e as CastEvent);
  }
  return { header, events };
}

/** The largest recording the host reads for a browser (the player holds all of it in memory). */
export const MAX_CAST_BYTES = 64 * 1024 * 1024;

/**
 * Reads and checks a recording the host is asked to serve: a regular file of at most
 * MAX_CAST_BYTES that parses as asciicast v3, every event (`all`) or its header line only
 * (`header`: the file was checked whole when its link was made). Resolves to its text; every
 * failure is a CastFormatError that says why (no such file, a folder, too large, unreadable, not
 * asciicast v3). Asynchronous: a large file does not hold up the host's sessions while it loads.
 */
export async function readCastFile(file: string, check: 'all' | 'header'): Promise<string> {
  let text: string;
  try {
    const st = await fs.promises.stat(file);
    if (!st.isFile()) throw new CastFormatError(`${file} is not a regular file`);
    if (st.size > MAX_CAST_BYTES) throw new CastFormatError(`${file} is larger than ${MAX_CAST_BYTES / (1024 * 1024)} MiB (${st.size} bytes)`);
    text = await fs.promises.readFile(file, 'utf8');
  } catch (e) {
    if (e instanceof CastFormatError) throw e;
    const err = e as NodeJS.ErrnoException;
    throw new CastFormatError(`cannot read ${file}: ${err.code === 'ENOENT' ? 'no such file' : err.code === 'EACCES' ? 'permission denied' : err.message}`);
  }
  const newline = text.indexOf('\n');
  parseCast(check === 'all' || newline === -1 ? text : text.slice(0, newline), file);
  return text;
}
