// What the editor says about recordings (docs/editor.md#sharing-and-recording, `pty/record`, `host/replay`) and what it
// remembers of them: plain text and a map, no vscode import, so both are unit-tested in Node.

/** The notification's button that replays a stopped recording in the browser. */
export const REPLAY_IN_BROWSER = 'Replay in Browser';
/** The notification's button that copies a recording's path. */
export const COPY_PATH = 'Copy Path';
/** The warning's button that stops a recording this window did not start. */
export const STOP_RECORDING = 'Stop Recording';

/** What the open dialog of "Replay a Recording…" lists: the files `pty/record` writes. */
export const CAST_FILTERS: Readonly<Record<string, string[]>> = { 'Terminal recordings (asciicast)': ['cast'] };

/**
 * The sessions this window started recording, and the file of each. `pty/info` does not say
 * whether a session is being recorded and `pty/record` cannot be asked without starting one, so
 * the session list offers "Stop Recording" from this memory; a recording started elsewhere (the
 * CLI, another window, before a reload) is found when starting one is refused, and can be stopped
 * from there.
 */
export class RecordingMemory {
  private readonly _files = new Map<string, string>();

  /** The file being recorded for the session, as far as this window knows. */
  fileOf(hostId: string, sessionId: string): string | undefined {
    return this._files.get(key(hostId, sessionId));
  }

  remember(hostId: string, sessionId: string, file: string): void {
    this._files.set(key(hostId, sessionId), file);
  }

  forget(hostId: string, sessionId: string): void {
    this._files.delete(key(hostId, sessionId));
  }

  /** Drops the sessions that no longer run: their recording ended with them (the host closes the file). */
  keepOnly(running: Iterable<{ hostId: string; sessionId: string }>): void {
    const live = new Set([...running].map((r) => key(r.hostId, r.sessionId)));
    for (const k of [...this._files.keys()]) if (!live.has(k)) this._files.delete(k);
  }
}

function key(hostId: string, sessionId: string): string {
  return `${hostId}\0${sessionId}`;
}

/** After "Start Recording". */
export function recordingStartedNotice(sessionName: string, file: string): string {
  return `Recording ${sessionName} to ${file}: everything it shows, and who typed when (not what). Stop it from the session list.`;
}

/** After "Stop Recording" stopped one. */
export function recordingStoppedNotice(sessionName: string, file: string): string {
  return `Stopped recording ${sessionName}. The recording is ${file}.`;
}

/** After "Stop Recording" when the host had no recording running (stopped elsewhere, meanwhile). */
export function notRecordingNotice(sessionName: string): string {
  return `${sessionName} was not being recorded any more: the recording was stopped elsewhere.`;
}

/** When "Start Recording" is refused because one already runs (started from the CLI or another window). */
export function alreadyRecordingNotice(sessionName: string, file: string): string {
  return `${sessionName} is already being recorded to ${file}.`;
}

/**
 * The file of the recording that made `pty/record` refuse to start another, from the error's data
 * (`{ path }`); undefined for any other refusal.
 */
export function runningRecordingOf(e: unknown): string | undefined {
  const err = e as { message?: unknown; data?: unknown } | null;
  if (!err || typeof err.message !== 'string' || !/is already being recorded to /.test(err.message)) return undefined;
  const data = err.data as { path?: unknown } | undefined;
  return typeof data?.path === 'string' ? data.path : undefined;
}
