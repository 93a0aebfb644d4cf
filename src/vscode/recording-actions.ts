import * as vscode from 'vscode';
import { makeFolders } from '../core/base/private-files';
import { defaultRecordingDir } from '../core/session/recording/recording-path';
import type { HostRecord } from '../host/discovery';
import type { RpcClient } from '../transport/client/rpc-client';
import { Commands } from './commands';
import { externalLink } from './external-link';
import type { HostClients } from './host-clients';
import {
  alreadyRecordingNotice,
  CAST_FILTERS,
  COPY_PATH,
  notRecordingNotice,
  recordingStartedNotice,
  recordingStoppedNotice,
  REPLAY_IN_BROWSER,
  runningRecordingOf,
  STOP_RECORDING,
  type RecordingMemory,
} from './recording-notices';
import { whenText } from './share-links';

/** A host's control connection: the recording's file is on that host's machine. */
export interface HostConnection {
  record: HostRecord;
  client: RpcClient;
}

/** The session a recording is about, on its host. */
export interface RecordTarget extends HostConnection {
  name: string;
  sessionId: string;
}

/** The label of the notification's button that copies the replay link after opening it. */
export const COPY_LINK = 'Copy Link';

/**
 * "Start Recording": a new file in the recordings folder (`pty/record` with no path: never in the
 * workspace, where it could be committed by accident). When one already runs (started from the CLI
 * or another window), says where, with a button that stops it.
 */
export async function startRecording(t: RecordTarget, memory: RecordingMemory): Promise<void> {
  let file: string | null;
  try {
    ({ path: file } = await t.client.call('pty/record', { session: t.sessionId }));
  } catch (e) {
    const running = runningRecordingOf(e);
    if (running === undefined) throw e;
    memory.remember(t.record.hostId, t.sessionId, running);
    const answer = await vscode.window.showWarningMessage(alreadyRecordingNotice(t.name, running), STOP_RECORDING);
    if (answer === STOP_RECORDING) await stopRecording(t, memory);
    return;
  }
  if (file) memory.remember(t.record.hostId, t.sessionId, file);
  void vscode.window.showInformationMessage(recordingStartedNotice(t.name, file ?? 'the recordings folder'));
}

/** "Stop Recording": stops it and names the file, with "Replay in Browser" and "Copy Path". */
export async function stopRecording(t: RecordTarget, memory: RecordingMemory): Promise<void> {
  const { path: file } = await t.client.call('pty/record', { session: t.sessionId, stop: true });
  memory.forget(t.record.hostId, t.sessionId);
  if (!file) {
    void vscode.window.showInformationMessage(notRecordingNotice(t.name));
    return;
  }
  const answer = await vscode.window.showInformationMessage(recordingStoppedNotice(t.name, file), REPLAY_IN_BROWSER, COPY_PATH);
  if (answer === REPLAY_IN_BROWSER) await replayInBrowser(t, file);
  else if (answer === COPY_PATH) {
    await vscode.env.clipboard.writeText(file);
    void vscode.window.showInformationMessage(`Copied the path of the recording: ${file}`);
  }
}

/**
 * A replay link for `file` from the host (`host/replay`: it checks the file is a recording and
 * serves that file only), opened in the user's browser: in an editor that runs in a browser
 * (code-server, Codespaces), through its port proxy (externalLink). Then says until when the link
 * works, with a button that copies it.
 */
export async function replayInBrowser(host: HostConnection, file: string): Promise<void> {
  const link = await host.client.call('host/replay', { path: file });
  const until = whenText(link.expiresAt, new Date());
  const url = await externalLink(link.url);
  await vscode.env.openExternal(vscode.Uri.parse(url));
  const answer = await vscode.window.showInformationMessage(`Opened the replay of ${link.path} in the browser; the link works until ${until}.`, COPY_LINK);
  if (answer === COPY_LINK) await vscode.env.clipboard.writeText(url);
}

export interface ReplayCommandDeps {
  hosts: HostClients;
  error(what: string, e: unknown): void;
}

/** `sharedPty.replayRecording`: "Replay a Recording…" from the palette or the session list. */
export function registerReplayCommand(context: vscode.ExtensionContext, deps: ReplayCommandDeps): void {
  context.subscriptions.push(vscode.commands.registerCommand(Commands.replayRecording, () => replayRecording(deps)));
}

/** Asks for a `.cast` file, starting in the recordings folder, and replays it from the per-user host. */
async function replayRecording(deps: ReplayCommandDeps): Promise<void> {
  try {
    const picked = await vscode.window.showOpenDialog({
      title: 'Replay a recording in the browser',
      openLabel: 'Replay',
      canSelectMany: false,
      canSelectFolders: false,
      defaultUri: vscode.Uri.file(recordingsFolder()),
      filters: { ...CAST_FILTERS },
    });
    const file = picked?.[0];
    if (!file) return;
    await replayInBrowser(await deps.hosts.daemon(), file.fsPath);
  } catch (e) {
    deps.error('Cannot replay the recording', e);
  }
}

/** Where `pty/record` puts recordings (the per-user host gets this window's environment); made so the dialog can open it. */
function recordingsFolder(): string {
  const dir = defaultRecordingDir();
  try {
    makeFolders(dir, 0o700);
  } catch {
    // The dialog then starts where the editor chooses.
  }
  return dir;
}
