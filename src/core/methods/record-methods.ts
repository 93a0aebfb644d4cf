import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { forbidden, invalidParams, serverError, sessionExited } from '../base/errors';
import { MAX_PATH_CHARS } from '../base/param-limits';
import { isAgentCall } from '../session/input/input-source';
import { CastFormatError, readCastFile } from '../session/recording/cast-file';
import { Recorder } from '../session/recording/recorder';
import { defaultRecordingPath } from '../session/recording/recording-path';
import { byDefault, byDefaultSays } from './schemas';
import { method } from './spec';
import { requireSession } from './context';

export const recordMethod = method({
  name: 'pty/record',
  target: 'session',
  // It writes a file on the host's machine, of everything shown and typed: the strongest scope.
  scope: 'control',
  summary:
    'Start an asciicast v3 recording of the session (output, who typed and how many bytes, resizes, commands with their exit codes, the exit) into a new 0600 file; stop: true stops it. The text typed is kept only with input: true, and never what the terminal hides (secret input).',
  params: z.object({
    path: byDefaultSays(
      'a new file in `$XDG_DATA_HOME/shared-pty/recordings`',
      z
        .string()
        .min(1)
        .max(MAX_PATH_CHARS)
        .optional()
        .describe(
          "The file to create (never overwritten; relative paths are from the session's cwd). Default: a new file in $XDG_DATA_HOME/shared-pty/recordings (~/.local/share/shared-pty/recordings).",
        ),
    ),
    stop: byDefault(false, z.boolean().optional().describe('Stop the recording instead (answers recording: false, and the path of the one stopped, or null).')),
    input: byDefault(
      false,
      z
        .boolean()
        .optional()
        .describe(
          'Keep the text typed (i events), judged as it reaches the terminal: what is typed while echo is off at a password prompt, and what a write holds after its first Enter (typed ahead), are withheld with a marker. Default false: an m marker per write says who typed and how many bytes, never what.',
        ),
    ),
  }),
  result: z.object({
    recording: z.boolean().describe('Whether a recording runs now.'),
    input: z.boolean().optional().describe('Starting: whether it keeps the text typed (the input parameter).'),
    path: z.string().nullable().describe("The recording's file: the one started, or the one stopped (null when none ran)."),
    cursor: z
      .number()
      .describe('Output cursor where the recording starts (starting) or where it ended (stopping): its `o` events are pty/output from the start cursor.'),
  }),
  async handler(ctx, p) {
    const s = requireSession(ctx);
    const current = s.recording.value;
    if (p.stop) {
      if (p.path !== undefined) throw invalidParams('Invalid params for pty/record: path is for starting a recording, not with stop');
      if (p.input !== undefined) throw invalidParams('Invalid params for pty/record: input is for starting a recording, not with stop');
      if (!current) return { recording: false, path: null, cursor: s.cursor };
      await current.stop();
      s.recording.clear();
      return { recording: false, path: current.path, cursor: s.cursor };
    }
    if (current?.recording)
      throw serverError(`Session ${s.name} is already being recorded to ${current.path}; stop that first (shared-pty record ${s.name} --stop)`, {
        path: current.path,
      });
    if (!s.running) throw sessionExited(s.id, 'The session has exited: there is nothing left to record');
    // A path of the caller's choosing is for the host's user alone (the host's own token, the
    // sockets). A session's token, given to someone to type into that session, or an agent past
    // its guards, would otherwise create a file anywhere the host may write: a ~/.bash_profile
    // whose recorded output runs at the next login.
    if (p.path !== undefined && (ctx.caller.onlySession !== undefined || ctx.caller.everySession === true || isAgentCall(ctx.caller)))
      throw forbidden(`a recording's path is chosen only with the host's own token or sockets; leave path out to record into the recordings folder`);
    let file = p.path === undefined ? undefined : path.resolve(s.cwd, p.path);
    let recorder: Recorder;
    try {
      file ??= defaultRecordingPath(s.name);
      recorder = Recorder.start(s, file, { input: p.input === true });
    } catch (e) {
      const err = e as NodeJS.ErrnoException;
      throw serverError(`Cannot record to ${file ?? 'the recordings folder'}: ${whyNotCreated(err, file)}`, { path: file ?? null });
    }
    s.recording.value = recorder;
    return { recording: true, path: recorder.path, cursor: recorder.startCursor, input: recorder.keepsInput };
  },
});

export const replayMethod = method({
  name: 'host/replay',
  target: 'host',
  // The host reads a file of the caller's choosing and serves it: only the host's own token.
  scope: 'control',
  summary:
    "A browser link that replays a recording (an asciicast v3 file on the host's machine) in asciinema-player: play, pause, speed, seeking, markers. The link opens that file only, and expires.",
  params: z.object({
    path: z.string().min(1).max(MAX_PATH_CHARS).describe('Absolute path of the recording (a .cast file, as pty/record writes).'),
  }),
  result: z.object({
    id: z.string().describe("The link's id: it is part of the URL and opens nothing else."),
    url: z
      .string()
      .describe(
        'The replay page, opened with a one-time token of its own that reaches this recording and nothing else (a browser trades it for a page cookie on first use; then the link opens nothing).',
      ),
    path: z.string().describe('The file it replays (its real path).'),
    expiresAt: z.string().describe('ISO time after which the link opens nothing.'),
    tokenId: z.string().describe("The id of the link's token: host/tokens lists it, host/revoke ends it."),
  }),
  async handler(ctx, p) {
    if (!path.isAbsolute(p.path)) throw invalidParams(`Invalid params for host/replay: path must be absolute, got ${p.path}`);
    const replays = ctx.services.replays;
    if (!replays) throw serverError('This host serves no HTTP (started with --no-http): there is no browser view to replay in');
    let real: string;
    try {
      real = await fs.promises.realpath(p.path);
      await readCastFile(real, 'all');
    } catch (e) {
      const err = e as NodeJS.ErrnoException;
      const why = e instanceof CastFormatError ? e.message : `cannot read ${p.path}: ${err.code === 'ENOENT' ? 'no such file' : err.message}`;
      throw serverError(`Cannot replay: ${why}`, { path: p.path });
    }
    return replays.open(real);
  },
});

/** Why a recording's file could not be made, in words (the system's own message past the common cases). */
function whyNotCreated(err: NodeJS.ErrnoException, file: string | undefined): string {
  switch (err.code) {
    case 'EEXIST':
      // Made with O_EXCL, a folder there is told as "exists" before it could be told as a folder.
      return file !== undefined && isFolder(file) ? 'it is a folder' : 'the file exists (a recording never overwrites one)';
    case 'ENOENT':
      return 'its folder does not exist';
    case 'ENOTDIR':
      return 'a part of its path is not a folder';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'ENAMETOOLONG':
      return 'its path, or a name in it, is too long';
    case 'EISDIR':
      return 'it is a folder';
    default:
      return err.message;
  }
}

function isFolder(file: string): boolean {
  try {
    return fs.lstatSync(file).isDirectory();
  } catch {
    return false;
  }
}
