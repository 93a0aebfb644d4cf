// What the replay page needs to know about a recording before the player gets it: whether it is
// one at all (so a wrong file gets a sentence, not a blank player), its idle limit and its markers.

/** Pauses longer than this are cut to it unless the file says otherwise (seconds), as `shared-pty play` does. */
export const DEFAULT_IDLE_LIMIT = 2;

/** A marker of a recording: when the player reaches it (seconds, pauses cut) and what it says. */
export interface OutlineMarker {
  time: number;
  label: string;
}

export interface CastOutline {
  version: 2 | 3;
  /** The idle limit the player is given: the file's, else DEFAULT_IDLE_LIMIT. */
  idleTimeLimit: number;
  /** The `m` events: who typed, each command's exit code (asciicast v3 as pty/record writes it). */
  markers: OutlineMarker[];
  /** Whether the last event is a marker (the exit code of the last command, when a recording stops right after it). */
  endsWithMarker: boolean;
  /** The last event's own time in the file (v2: absolute; v3: its interval counts from the one before). */
  lastFileTime: number;
}

/** The pause added after a final marker (seconds): long enough to see, short enough not to wait for. */
export const MARKER_TAIL = 0.5;

/**
 * Checks that `text` is an asciicast v2 or v3 recording and outlines it; throws an Error whose
 * message says what is wrong otherwise. Marker times follow the player's own clock: each pause
 * counts at most the idle limit.
 */
export function outlineCast(text: string, name: string): CastOutline {
  const lines = text.split('\n');
  let header: { version?: unknown; idle_time_limit?: unknown } | undefined;
  try {
    header = JSON.parse(lines[0]) as typeof header;
  } catch {
    header = undefined;
  }
  const version = header && typeof header === 'object' ? header.version : undefined;
  if (version !== 2 && version !== 3) {
    throw new Error(`${name} is not an asciicast recording (its first line must be a header like {"version": 3, "term": {"cols": 80, "rows": 24}})`);
  }
  const limit = typeof header?.idle_time_limit === 'number' && header.idle_time_limit > 0 ? header.idle_time_limit : DEFAULT_IDLE_LIMIT;
  const markers: OutlineMarker[] = [];
  let time = 0;
  let previous = 0;
  let lastCode = '';
  for (let i = 1; i < lines.length; i++) {
    if (!lines[i].startsWith('[')) continue;
    let e: unknown;
    try {
      e = JSON.parse(lines[i]);
    } catch {
      throw new Error(`${name}, line ${i + 1}: not an asciicast event [time, code, data]`);
    }
    if (!Array.isArray(e) || typeof e[0] !== 'number' || typeof e[1] !== 'string')
      throw new Error(`${name}, line ${i + 1}: not an asciicast event [time, code, data]`);
    // v3 times are intervals; v2 times are absolute.
    const interval = version === 3 ? e[0] : e[0] - previous;
    previous = e[0];
    time += Math.min(Math.max(0, interval), limit);
    if (e[1] === 'm') markers.push({ time, label: typeof e[2] === 'string' ? e[2] : '' });
    lastCode = e[1];
  }
  return { version, idleTimeLimit: limit, markers, endsWithMarker: lastCode === 'm', lastFileTime: previous };
}

/**
 * The text the player gets. asciinema-player draws on its progress bar only the markers before the
 * recording's end, so a recording whose last event is a marker gets an empty output event
 * MARKER_TAIL later: the last command's exit code shows like the others. The file is not changed.
 */
export function forPlayer(text: string, outline: CastOutline): string {
  if (!outline.endsWithMarker) return text;
  const at = outline.version === 3 ? MARKER_TAIL : outline.lastFileTime + MARKER_TAIL;
  return `${text.endsWith('\n') ? text : `${text}\n`}${JSON.stringify([Number(at.toFixed(6)), 'o', ''])}\n`;
}

/** `m:ss` (or `h:mm:ss`) of a time in seconds. */
export function clock(seconds: number): string {
  const s = Math.floor(seconds);
  const hh = Math.floor(s / 3600);
  const mm = Math.floor((s % 3600) / 60);
  const ss = String(s % 60).padStart(2, '0');
  return hh > 0 ? `${hh}:${String(mm).padStart(2, '0')}:${ss}` : `${mm}:${ss}`;
}
