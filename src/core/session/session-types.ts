import type { IDisposable } from '../base/lifecycle';

/** Timing and size constants of a session; each says why it is what it is. */
export const enum SessionTuning {
  /** After the process exits, output still in the kernel is read until this much silence… */
  ExitDrainQuietMs = 100,
  /** …or at most this long (a background job may hold the terminal open for ever). */
  ExitDrainMaxMs = 3000,
  /** Most bytes read synchronously from the PTY after libuv ended the stream early (the kernel holds ~14 KB). */
  EofDrainMaxBytes = 16 * 1024 * 1024,
  /** After SIGHUP on kill, a process group that ignores it gets SIGKILL after this grace. */
  KillGraceMs = 2000,
  /** Bells closer together than this are one `bell` event (a terminal flashes once for them too). */
  BellMinIntervalMs = 250,
  /**
   * Writes node-pty may hold (the program reads no input) before the answers to queries are
   * dropped: far more than any program that asks and waits leaves unread, a bound on memory when
   * output is full of queries nobody reads the answers to.
   */
  MaxQueuedWritesForAnswers = 64,
}

import type { Origin } from './input/input-kinds';

export type { Origin } from './input/input-kinds';
import type { RunAs } from './pty/run-as';

export interface SessionOptions {
  id: string;
  name: string;
  command: string;
  args: string[];
  cwd: string;
  env?: Record<string, string>;
  cols: number;
  rows: number;
  origin: Origin;
  workspace?: string | null;
  scrollbackLines?: number;
  ringBytes?: number;
  /** See Session.leaseSeconds. */
  leaseSeconds?: number;
  /** The session's own folder for its command logs (docs/protocol.md#ptycommandoutput); none: no logs are kept. */
  commandLogDir?: string;
  /** A private folder where the session hands its shell the integration's secret (a file, read and removed at start); none: an environment variable. */
  handoverDir?: string;
  /** Bytes of command logs kept over all the session's commands (default 64 MiB). */
  commandLogBytes?: number;
  /** Asked before each command log file or folder is made or removed (see CommandLogs). */
  commandLogWritable?: () => boolean;
  /**
   * The user the program runs as, for a host running as root (pty-session-mcp's uid/gid; see
   * pty/run-as.ts). Such a session has no shell integration: its files are the host's own.
   */
  runAs?: RunAs;
}

/** How the top-level process ended. */
export interface ExitInfo {
  exitCode: number;
  signal: string | null;
}

export type { SessionStatus } from './session-status';

/** One chunk of raw output and the byte cursor just after it. */
export interface OutputChunk {
  /** Valid while the event fires only: the bytes then move to the mirror thread (copy them to keep them). */
  data: Buffer;
  cursor: number;
}

/**
 * Something that may hold the PTY: a flow-controlled subscriber whose window is full. The session
 * asks each holder after every read and whenever one says its state changed (`reconsiderFlow`).
 */
export interface FlowHolder {
  /** Whether it holds the PTY now (a holder may start its own patience timer when it starts holding). */
  updateHold(): boolean;
}

/** Default terminal size when a client gives none (socket-pty's defaults). */
export const DEFAULT_COLS = 100;
export const DEFAULT_ROWS = 30;

/**
 * A recording of a session (`Session.recording`, docs/protocol.md#ptyrecord): what the session
 * and `pty/record` need of it, so the session does not depend on the recorder that depends on it.
 */
export interface SessionRecording extends IDisposable {
  /** The recording's file. */
  readonly path: string;
  /** True until the recording has been stopped or the session has ended. */
  readonly recording: boolean;
  /** Stops recording; resolves once the file is complete. */
  stop(): Promise<void>;
}
