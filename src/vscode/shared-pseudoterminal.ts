import * as vscode from 'vscode';
import type { Origin } from '../core/session/session';
import type { SessionInfo } from '../core/methods/types';
import type { RpcClient } from '../transport/client/rpc-client';
import { SessionFollower, type FollowedExit } from '../transport/client/session-follower';

/** Timing constants of the terminal adapter; each says why. */
const enum Timing {
  /** Output is coalesced this long, so a burst of small PTY reads is one renderer write. */
  OutputFlushMs = 5,
}

/** Scrollback rows a re-attached terminal gets back (VS Code's own terminal keeps 1000 by default). */
const REATTACH_SCROLLBACK_ROWS = 1000;

/** Flush at once past this many buffered characters (a `cat` of a big file). */
const OUTPUT_FLUSH_NOW_CHARS = 256 * 1024;

/** Input that consists only of terminal reports (answers to queries), never typed by a person. */
const TERMINAL_REPORTS = /^(?:\x1b\[[?>]?[\d;]*[cnR]|\x1b\[\?[\d;]*\$y|\x1b\][\d;]*;?rgb:[0-9a-fA-F/]*(?:\x07|\x1b\\)|\x1bP[^\x1b]*\x1b\\|\x1b\[[IO])+$/;

/** What to connect to: a new session of the user's shell, or an existing session. */
export type PtyTarget = { kind: 'create'; params: () => Record<string, unknown>; remote?: string } | { kind: 'attach'; hostId: string; session: SessionInfo };

/** What the adapter needs from the extension. */
export interface PtyHooks {
  /** A connection for the target: the per-user host (started if needed) or the named host. */
  connect(target: PtyTarget): Promise<{ hostId: string; client: RpcClient; remote?: string }>;
  /** The adapter now shows this session. */
  bound(pty: SharedPseudoterminal): void;
  /** The editor closed the terminal (the user, or the window shutting down): decide what ends. */
  closed(pty: SharedPseudoterminal): void;
  /** The terminal ended after its session had exited: remove the exited session. */
  finished(pty: SharedPseudoterminal): void;
  /** A failure the user must hear about once. */
  error(what: string, e: unknown): void;
  log: vscode.LogOutputChannel;
}

type State = 'idle' | 'starting' | 'live' | 'exited' | 'closed';

/** What the terminal's name says while an agent's call writes or waits there (docs/editor.md#sharing-and-recording). */
export const AGENT_TYPING_SUFFIX = ' — agent typing';

/**
 * The terminal name for a session: its origin says who opened it (docs/guarantees.md#http-checks-and-shapes),
 * and a remote host's name comes first (`build:bash-1`), as the CLI names it.
 */
export function terminalName(origin: Origin, sessionName: string, agentTyping = false, host?: string): string {
  const shown = host ? `${host}:${sessionName}` : sessionName;
  const name = origin === 'user' ? `Shared PTY: ${shown}` : `Shared PTY (${origin}): ${shown}`;
  return agentTyping ? name + AGENT_TYPING_SUFFIX : name;
}

/**
 * An editor terminal that is a client of a session in a host: output arrives as `pty/output`
 * notifications (a new session's from its first byte; a re-attached one is first redrawn from a
 * `pty/snapshot`), keys go out as `pty/write`, the size follows the editor's panel.
 */
export class SharedPseudoterminal implements vscode.Pseudoterminal {
  private readonly _onDidWrite = new vscode.EventEmitter<string>();
  readonly onDidWrite = this._onDidWrite.event;
  private readonly _onDidClose = new vscode.EventEmitter<number | void>();
  readonly onDidClose = this._onDidClose.event;
  private readonly _onDidChangeName = new vscode.EventEmitter<string>();
  readonly onDidChangeName = this._onDidChangeName.event;

  private _state: State = 'idle';
  private _client: RpcClient | undefined;
  private _hostId: string | undefined;
  private _session: SessionInfo | undefined;
  private _name: string | undefined;
  private _agentTyping = false;
  private _hostLost = false;
  private _dims: vscode.TerminalDimensions | undefined;
  private _pendingInput: string[] = [];
  private _out: string[] = [];
  private _outChars = 0;
  private _flushTimer: NodeJS.Timeout | undefined;
  /** Resolved at the next flush: output handed to the editor is acknowledged to the host then. */
  private _flushed: { promise: Promise<void>; resolve(): void } | undefined;
  private _exitCode: number | undefined;
  private _follower: SessionFollower | undefined;
  private readonly _subscriptions: vscode.Disposable[] = [];

  constructor(
    readonly target: PtyTarget,
    private readonly _hooks: PtyHooks,
  ) {
    if (target.kind === 'attach') this._setSession(target.hostId, target.session);
  }

  get hostId(): string | undefined {
    return this._hostId;
  }
  get session(): SessionInfo | undefined {
    return this._session;
  }
  get state(): State {
    return this._state;
  }

  open(initialDimensions: vscode.TerminalDimensions | undefined): void {
    this._dims = initialDimensions;
    this._state = 'starting';
    void this._start();
  }

  handleInput(data: string): void {
    switch (this._state) {
      case 'starting':
        this._pendingInput.push(data);
        return;
      case 'live':
        this._write(data);
        return;
      case 'exited':
        // "[process exited…]" is on screen: any key closes the terminal, like a finished task
        // (a focus or cursor report the editor sends by itself is not a key).
        if (!TERMINAL_REPORTS.test(data)) this._finish();
        return;
      default:
        return;
    }
  }

  setDimensions(dims: vscode.TerminalDimensions): void {
    this._dims = dims;
    if (this._state === 'live') this._resize();
  }

  close(): void {
    if (this._state === 'closed') return;
    const wasExited = this._state === 'exited';
    this._release();
    if (wasExited) this._hooks.finished(this);
    else this._hooks.closed(this);
  }

  /** The session got a new name. */
  rename(info: SessionInfo): void {
    if (!this._session || info.name === this._session.name) return;
    this._session = { ...this._session, name: info.name };
    this._fireName();
  }

  /** The connection to the host broke while the terminal showed its session (the host died). */
  get hostLost(): boolean {
    return this._hostLost;
  }

  /** An agent's call writes or waits in this session (true), or no longer (false): the name says so. */
  setAgentTyping(typing: boolean): void {
    if (typing === this._agentTyping) return;
    this._agentTyping = typing;
    this._fireName();
  }

  /** The session is gone from its host (killed elsewhere, or the host ended): close the terminal. */
  sessionGone(): void {
    if (this._state === 'closed') return;
    this._flush();
    this._release();
    this._onDidClose.fire(this._exitCode);
  }

  private async _start(): Promise<void> {
    try {
      const { hostId, client, remote } = await this._hooks.connect(this.target);
      if (this._state !== 'starting') return; // closed while connecting
      this._client = client;
      this._subscriptions.push(toVsDisposable(client.onClose(() => this._onConnectionLost())));
      if (this.target.kind === 'create') {
        const params = { ...this.target.params(), ...(this._dims ? clampDims(this._dims) : {}) };
        const info = await client.call('session/create', params);
        this._setSession(hostId, remote ? { ...info, host: remote } : info);
        if (this._state !== 'starting') {
          // The terminal closed while the session was being created: it must not outlive it.
          this._hooks.closed(this);
          return;
        }
      }
      this._hooks.bound(this);
      const sessionId = this._session!.id;
      this._follower = new SessionFollower(client, sessionId, {
        snapshot: (data) => void this._enqueue(data),
        // Acknowledged once written to the editor's terminal, so a flood waits for the editor.
        output: (data) => this._enqueue(data),
        exit: (exit) => this._onExit(exit),
      });
      // A re-attached terminal (a reloaded window) gets the session's picture from the host's
      // mirror (screen, scrollback, colours, a full-screen program) and follows from that point;
      // a new session is followed from its first byte. A host without `pty/snapshot` replays raw output.
      await this._follower.start(
        this.target.kind === 'attach'
          ? {
              snapshotScrollback: REATTACH_SCROLLBACK_ROWS,
              onSnapshotError: (e) => this._hooks.log.warn(`pty/snapshot of ${sessionId}: ${e.message}; replaying raw output instead`),
            }
          : {},
      );
      if ((this._state as State) !== 'starting') return;
      this._state = 'live';
      if (this._dims) this._resize();
      for (const data of this._pendingInput.splice(0)) this._write(data);
    } catch (e) {
      if (this._state === 'closed') return;
      this._hooks.error(this.target.kind === 'create' ? 'Cannot open a shared terminal' : 'Cannot attach to the shared session', e);
      this._release();
      this._onDidClose.fire();
    }
  }

  private _setSession(hostId: string, info: SessionInfo): void {
    this._hostId = hostId;
    this._session = info;
    this._fireName();
  }

  private _fireName(): void {
    if (!this._session) return;
    const name = terminalName(this._session.origin, this._session.name, this._agentTyping, this._session.host);
    if (name === this._name) return;
    this._name = name;
    this._onDidChangeName.fire(name);
  }

  private _onExit(exit: FollowedExit): void {
    if (this._state === 'closed') return;
    const { exitCode: code, signal } = exit;
    this._exitCode = code;
    this._enqueue(`\r\n\x1b[0m[process exited with ${signal && !code ? `signal ${signal}` : `code ${code ?? '?'}`}]\r\n`);
    this._flush();
    this._state = 'exited';
  }

  private _onConnectionLost(): void {
    if (this._state !== 'live' && this._state !== 'starting') return;
    this._hostLost = true;
    // A remote host's session runs on over there: only this window's bridge to it dropped.
    const host = this._session?.host;
    this._enqueue(
      host
        ? `\r\n\x1b[0m[the connection to host ${host} dropped; the session runs on there: open it again from the session list]\r\n`
        : '\r\n\x1b[0m[the Shared PTY host went away]\r\n',
    );
    this._flush();
    this._state = 'exited';
  }

  private _write(data: string): void {
    if (!this._client || !this._session) return;
    this._client.call('pty/write', { session: this._session.id, action: { text: data } }).catch((e: unknown) => {
      this._hooks.log.warn(`pty/write to ${this._session?.id}: ${(e as Error).message}`);
    });
  }

  private _resize(): void {
    if (!this._client || !this._session || !this._dims) return;
    this._client.call('pty/resize', { session: this._session.id, ...clampDims(this._dims) }).catch((e: unknown) => {
      this._hooks.log.warn(`pty/resize of ${this._session?.id}: ${(e as Error).message}`);
    });
  }

  /** Queues output for the editor; resolves once it has been written there. */
  private _enqueue(data: string): Promise<void> {
    this._out.push(data);
    this._outChars += data.length;
    let resolve!: () => void;
    this._flushed ??= { promise: new Promise<void>((r) => (resolve = r)), resolve: () => resolve() };
    const written = this._flushed.promise;
    if (this._outChars >= OUTPUT_FLUSH_NOW_CHARS) this._flush();
    else this._flushTimer ??= setTimeout(() => this._flush(), Timing.OutputFlushMs);
    return written;
  }

  private _flush(): void {
    clearTimeout(this._flushTimer);
    this._flushTimer = undefined;
    if (this._out.length === 0) return;
    const data = this._out.join('');
    this._out = [];
    this._outChars = 0;
    const flushed = this._flushed;
    this._flushed = undefined;
    this._onDidWrite.fire(data);
    flushed?.resolve();
  }

  /** Ends the terminal after its process exited (a key was pressed on "[process exited…]"). */
  private _finish(): void {
    this._release();
    this._hooks.finished(this);
    // No code: the terminal showed it, and the user closed it; with one VS Code says it again, as an error.
    this._onDidClose.fire();
  }

  /** Stops following the session; the connection itself is shared and stays open. */
  private _release(): void {
    this._state = 'closed';
    clearTimeout(this._flushTimer);
    this._flushTimer = undefined;
    for (const d of this._subscriptions.splice(0)) d.dispose();
    this._follower?.dispose();
    this._follower = undefined;
  }
}

function clampDims(d: vscode.TerminalDimensions): { cols: number; rows: number } {
  return { cols: Math.min(1000, Math.max(2, d.columns)), rows: Math.min(500, Math.max(1, d.rows)) };
}

function toVsDisposable(d: { dispose(): void }): vscode.Disposable {
  return new vscode.Disposable(() => d.dispose());
}
