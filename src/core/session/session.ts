import * as fs from 'node:fs';
import * as os from 'node:os';
import type * as tty from 'node:tty';
import type { IPty } from 'node-pty';
import { Disposable, disposableTimeout, Emitter, MutableDisposable, toDisposable, type IDisposable } from '../base/lifecycle';
import { DEFAULT_SCROLLBACK_LINES } from '../mirror/screen';
import { loadNodePty } from './pty-loader';
import { MirrorProxy } from '../mirror/mirror-proxy';
import { DEFAULT_RING_BYTES, RingBuffer } from './ring-buffer';
import { completeUtf8Length } from '../base/utf8';
import type { AgentDecision, InputSource, LastInput, SessionInput } from './input-source';
import { HumanInput } from './human-input';
import { TypedLine } from './typed-line';
import type { Recorder } from './recorder';
import { probeInputWait } from '../process/input-wait';
import { terminalOf } from '../process/proc-state';
import { InputWatch } from './input-watch';
import { masterFdOf, ptyInputWriter, ptyQueuedWrites } from './pty-input';
import { judgement, SecretJudge } from './secret-judge';
import type { SessionEventBody } from './session-events';
import type { Origin } from './input-kinds';
import { CommandTracker } from '../commands/command-tracker';
import { CommandLogs } from '../commands/command-logs';
import { shellIntegrationLaunch } from '../commands/shell-integration';
import type { OwnMark } from '../commands/own-marks';
import { ViewAnswers } from './view-answers';

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

export type { Origin } from './input-kinds';

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
  /** Bytes of command logs kept over all the session's commands (default 64 MiB). */
  commandLogBytes?: number;
  /** Asked before each command log file or folder is made or removed (see CommandLogs). */
  commandLogWritable?: () => boolean;
}

/** How the top-level process ended. */
export interface ExitInfo {
  exitCode: number;
  signal: string | null;
}

/** A send's view of the session status (docs/protocol.md#ptysend). */
export type SessionStatus = { kind: 'running' } | { kind: 'exited'; exitCode: number | null; signal: string | null };

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

/** Why node-pty is not being read; reading resumes only once no reason is left. */
type PauseReason = 'parser' | 'flow';

/** Default terminal size when a client gives none (socket-pty's defaults). */
export const DEFAULT_COLS = 100;
export const DEFAULT_ROWS = 30;

/**
 * One program in a real PTY, mirrored into a headless terminal, with its raw output in a ring.
 *
 * Raw bytes reach the ring and the subscribers as soon as node-pty delivers them; the mirror
 * parses behind, and the PTY is paused only when the parser falls too far behind.
 */
export class Session extends Disposable {
  readonly id: string;
  readonly createdAt = new Date();
  readonly mirror: MirrorProxy;
  readonly ring: RingBuffer;
  /**
   * The commands the shell reports (docs/guarantees.md#shell-integration): bash, zsh and fish run interactively get
   * shell integration injected, whose marks carry the session's nonce; no other marks count.
   */
  readonly commands: CommandTracker;
  /** Each command's whole output, in a file of its own (docs/protocol.md#ptycommandoutput); undefined: not kept. */
  readonly commandLogs: CommandLogs | undefined;
  private readonly _pty: IPty;
  /** Writes to the program's input (at once when nothing is queued: ptyInputWriter); returns the bytes written at once. */
  private readonly _writeInput: (data: string) => number;
  /** Writes held by node-pty because the program is not reading its input (ptyQueuedWrites). */
  private readonly _queuedWrites: () => number;
  /** Whether the program asks for a secret, now or as a write reaches it (docs/protocol.md#secret-input, docs/guarantees.md#no-side-doors). */
  readonly secretJudge: SecretJudge;
  /** How many want writes judged as they reach the PTY (recordings with input text): see judgeInputs. */
  private _inputJudges = 0;
  private _name: string;
  private _exit: ExitInfo | undefined;
  /** Every reason the PTY is paused for: the parser fell behind, a flow-controlled subscriber's window is full. */
  private readonly _pauses = new Set<PauseReason>();
  private readonly _flowHolders = new Set<FlowHolder>();
  private _draining = false;
  private _utf8Tail: Buffer | undefined;
  private _lastOutputAt = Date.now();
  private _exitedPromise: Promise<ExitInfo>;
  private _resolveExited!: (e: ExitInfo) => void;
  /** SIGKILL for a process group that ignored the SIGHUP of `kill()`. */
  private readonly _killTimer = this._register(new MutableDisposable());
  /** `kill()` closed the PTY master: nothing is written to or read from its descriptor any more. */
  private _hungUp = false;
  /** The send that holds the session (one at a time, docs/guarantees.md#error-codes-beyond-json-rpc); undefined when none does. */
  sendOwner: object | undefined;
  /** True while a `pty/send` holds the session. */
  get sendInProgress(): boolean {
    return this.sendOwner !== undefined;
  }
  private _clients = 0;
  private _calls = 0;
  /** The views' own answers to terminal queries, which the host answers instead (the mirror's). */
  private readonly _viewAnswers = new ViewAnswers();
  private _lastInput: LastInput | undefined;
  /** The user chose "Allow for this session" for agents' writes here (docs/protocol.md#agent-write-approval). */
  agentsAllowed = false;

  private readonly _onOutput = this._register(new Emitter<OutputChunk>());
  /** Raw output, in order, as soon as it is read from the PTY. */
  readonly onOutput = this._onOutput.event;
  private readonly _onExit = this._register(new Emitter<ExitInfo>());
  /** The process ended and all of its output has been read. */
  readonly onExit = this._onExit.event;
  private readonly _onCallsDone = this._register(new Emitter<void>());
  /** The last call in progress on the session finished (see `beginCall`). */
  readonly onCallsDone = this._onCallsDone.event;
  private readonly _onDidChange = this._register(new Emitter<void>());
  /** Name, size or state changed (discovery records are rewritten). */
  readonly onDidChange = this._onDidChange.event;
  private readonly _onEvent = this._register(new Emitter<SessionEventBody>());
  /** Something a client may want to hear about happened (docs/protocol.md#events-ptyevents-and-ptywaitevent; the host's EventLog numbers it). */
  readonly onEvent = this._onEvent.event;
  /** Whether the foreground job waits for input, or for a secret (docs/protocol.md#secret-input). */
  readonly inputWatch: InputWatch;
  private readonly _onInput = this._register(new Emitter<SessionInput>());
  /** Something was written to the program, by whom; a secret's text is never given out (docs/protocol.md#secret-input). */
  readonly onInput = this._onInput.event;
  private readonly _onAgentDecision = this._register(new Emitter<AgentDecision>());
  /** A decision about an agent's write was made (allowed or refused; recordings mark it). */
  readonly onAgentDecision = this._onAgentDecision.event;
  /** What the human's views typed lately (typing arbitration, docs/protocol.md#typing-arbitration). */
  readonly humanInput = this._register(new HumanInput());
  /** The line typed since the last Enter, by anyone: what deny rules judge (docs/protocol.md "Agent guards"). */
  readonly typedLine = new TypedLine();
  /** The asciicast recording of the session while one runs (`pty/record`, docs/protocol.md#ptyrecord); ends with the session. */
  readonly recording = this._register(new MutableDisposable<Recorder>());

  constructor(readonly options: SessionOptions) {
    super();
    this.id = options.id;
    this._name = options.name;
    this.ring = new RingBuffer(options.ringBytes ?? DEFAULT_RING_BYTES);
    this.mirror = this._register(new MirrorProxy(options.cols, options.rows, options.scrollbackLines ?? DEFAULT_SCROLLBACK_LINES, () => this.ring.retained()));
    this._exitedPromise = new Promise((r) => (this._resolveExited = r));
    const pty = loadNodePty();
    this.leaseSeconds = options.leaseSeconds;
    const env = buildEnv(options.env);
    const integration = shellIntegrationLaunch(options.command, options.args, env);
    this.commands = this._register(new CommandTracker(options.cwd, integration?.nonce));
    this._register(this.commands.onDidChangeState(() => this._onDidChange.fire()));
    this.commandLogs = options.commandLogDir ? this._register(new CommandLogs(this.commands, options.commandLogDir, options.commandLogBytes, options.commandLogWritable)) : undefined;
    // The shell's own account of its commands, as events (docs/protocol.md#events-ptyevents-and-ptywaitevent).
    this._register(this.commands.onDidStartCommand((r) => this.emitEvent({ type: 'command_started', command: r.command })));
    this._register(
      this.commands.onDidFinishCommand((r) => this.emitEvent({ type: 'command_finished', command: r.command, exitCode: r.exitCode, durationMs: r.durationMs ?? 0 })),
    );
    this._pty = pty.spawn(options.command, integration?.args ?? options.args, {
      name: 'xterm-256color',
      cols: options.cols,
      rows: options.rows,
      cwd: options.cwd,
      env: { ...env, ...integration?.env },
      encoding: null, // raw bytes: cursors count bytes, and split characters are reassembled here
    });
    this._writeInput = ptyInputWriter(this._pty);
    this._queuedWrites = ptyQueuedWrites(this._pty);
    this.secretJudge = new SecretJudge(
      // Once hung up, the descriptor is closed and its number may be another file's.
      () => (this._hungUp ? undefined : masterFdOf(this._pty)),
      this.ttyPath,
      () => this.mirror.query('lineBeforeCursor'),
      // The shell's own line editor reads keys without echo too; the integration says when it does.
      () => this.commands.integration && !this.commands.running,
    );
    this._guardExitDrain();
    this._guardEofDrain();
    this._pty.onData((d) => this._handleData(d as unknown as Buffer));
    this._pty.onExit(({ exitCode, signal }) => this._handleExit(exitCode, signal));
    this._register(this.mirror.onParsed(() => this._maybeResume()));
    this._register(this.mirror.onBell(() => this._bell()));
    // The host is the terminal for the program's queries: one answer each, however many views there are.
    this._register(this.mirror.onAnswer((answer) => this._answer(answer)));
    this._register(this.mirror.onTitle((title) => this.emitEvent({ type: 'title', title })));
    this.inputWatch = this._register(new InputWatch(() => probeInputWait(this.pid, () => this.secretJudge.asksNow())));
    this._register(
      this.inputWatch.onDidChange((state) => {
        if (state === 'input') this.emitEvent({ type: 'input_wait' });
        if (state === 'secret') this.emitEvent({ type: 'secret_input' });
        if (state === 'secret' || this._secretShown) this._onDidChange.fire(); // SessionInfo.secretInput
        this._secretShown = state === 'secret';
      }),
    );
  }

  private _lastBellAt = 0;

  /**
   * Writes the terminal's answers to the program's queries. Not while many writes wait for the
   * program to read its input: output full of queries (a binary file on the screen) would pile up
   * answers in memory for a program that reads none of them.
   */
  private _answer(answer: string): void {
    if (this.running && !this._hungUp && this._queuedWrites() < SessionTuning.MaxQueuedWritesForAnswers) this._writeInput(answer);
  }

  /** One `bell` event per burst of bells: `yes $'\a'` must not flood the event log. */
  private _bell(): void {
    const now = Date.now();
    if (now - this._lastBellAt < SessionTuning.BellMinIntervalMs) return;
    this._lastBellAt = now;
    this.emitEvent({ type: 'bell' });
  }

  /** What SessionInfo.secretInput last said (a change of it rewrites the discovery record). */
  private _secretShown = false;

  /** The pty's slave device (`/dev/pts/N`); undefined where node-pty does not say (Windows). */
  get ttyPath(): string | undefined {
    return (this._pty as unknown as { ptsName?: string }).ptsName || undefined;
  }

  /** The program waits for a secret the user must type: echo is off and it reads the terminal (docs/protocol.md#secret-input). */
  get secretInput(): boolean {
    return this.inputWatch.state === 'secret';
  }

  /**
   * Tells every event listener (the host's log, `pty/events` subscribers, `wait_event`). Besides
   * the session's own events (input waits, bell, title, resize, exit), the shell integration's
   * command tracker reports `command_started` and `command_finished` here.
   */
  emitEvent(body: SessionEventBody): void {
    if (!this.isDisposed) this._onEvent.fire(body);
  }

  get name(): string {
    return this._name;
  }
  set name(v: string) {
    this._name = v;
    this._onDidChange.fire();
  }
  get pid(): number {
    return this._pty.pid;
  }
  get running(): boolean {
    return this._exit === undefined;
  }
  get exitInfo(): ExitInfo | undefined {
    return this._exit;
  }
  get exitCode(): number | null {
    return this._exit ? this._exit.exitCode : null;
  }
  /** The shell's working directory when its integration reports it, else the one it started in. */
  get cwd(): string {
    return this.commands.cwd ?? this.options.cwd;
  }
  get cols(): number {
    return this.mirror.size.cols;
  }
  get rows(): number {
    return this.mirror.size.rows;
  }
  /** Byte cursor just after the newest output. */
  get cursor(): number {
    return this.ring.end;
  }
  /** When output last arrived (ms since epoch), for idle detection. */
  get lastOutputAt(): number {
    return this._lastOutputAt;
  }
  get status(): SessionStatus {
    return this._exit ? { kind: 'exited', exitCode: this._exit.exitCode, signal: this._exit.signal } : { kind: 'running' };
  }
  /** Resolves when the process has ended and its output is drained. */
  get exited(): Promise<ExitInfo> {
    return this._exitedPromise;
  }

  /**
   * Seconds the session may stay with no client before it ends (an editor window that closed
   * for good); undefined keeps it running regardless ("Keep running", a detach as in tmux).
   */
  leaseSeconds: number | undefined;

  /** Connected clients (socket connections, subscribers, streams, editor terminals). */
  get clients(): number {
    return this._clients;
  }

  /** Counts a client in until the returned handle is disposed. */
  addClient(): IDisposable {
    this._clients++;
    this._onDidChange.fire();
    return toDisposable(() => {
      this._clients--;
      if (!this.isDisposed) this._onDidChange.fire();
    });
  }

  /** Calls in progress on the session: a removed session is let go only once they have answered. */
  get callsInProgress(): number {
    return this._calls;
  }

  /** Marks a call in progress until the returned handle is disposed. */
  beginCall(): IDisposable {
    this._calls++;
    return toDisposable(() => {
      if (--this._calls === 0 && !this.isDisposed) this._onCallsDone.fire();
    });
  }

  /** Who wrote last, how, and when; undefined until something is written. */
  get lastInput(): LastInput | undefined {
    return this._lastInput;
  }

  /**
   * Writes text (UTF-8) to the program on behalf of `from`; returns the bytes written. Every
   * write names its caller, so the session knows who typed last (typing arbitration, approval
   * and recordings of docs/protocol.md#ptyrecord build on it).
   */
  write(data: string, from: InputSource): number {
    if (from.origin === 'user') {
      // A view answered a query by itself: the host has answered it already (ViewAnswers).
      const view = this._viewAnswers.take(data);
      if (view.colors) this.mirror.setColors(view.colors);
      data = view.text;
    }
    if (!this.running || this._hungUp || data.length === 0) return 0;
    // Read before the line is submitted below: Enter ends the secret, yet it is part of it.
    const secret = this.secretInput;
    // The terminal's mode the moment the bytes reach it (about 5 µs), only when someone keeps text.
    const verdict = this._inputJudges > 0 ? this.secretJudge.judgeWrite() : undefined;
    const atOnce = this._writeInput(data);
    const bytes = Buffer.byteLength(data, 'utf8');
    this._lastInput = { origin: from.origin, transport: from.transport, at: Date.now(), approval: from.approval };
    const judged = verdict === undefined ? undefined : judgement(data, verdict, atOnce);
    const input: SessionInput = { data: secret ? '' : data, from, secret, bytes, judged };
    this.humanInput.observe(input);
    this.typedLine.observe(data, secret);
    this._onInput.fire(input);
    // A line reaches the program: what it waited for (a prompt, a password) is answered.
    if (data.includes('\r') || data.includes('\n')) this.inputWatch.submitted();
    return bytes;
  }

  /**
   * Has every write judged as it reaches the PTY (SessionInput.judged) until the handle is
   * disposed: a recording that keeps input text needs it; nobody else pays for it.
   */
  judgeInputs(): IDisposable {
    this._inputJudges++;
    let done = false;
    return toDisposable(() => {
      if (!done) this._inputJudges--;
      done = true;
    });
  }

  /**
   * Notes a decision about an agent's write (docs/protocol.md#ptyinfo: every decision is in `lastInput` and
   * in recordings). A refusal writes nothing, yet `lastInput` says the agent tried and what decided.
   */
  noteAgentDecision(from: InputSource, decision: AgentDecision['decision'], text: string): void {
    this._lastInput = { origin: from.origin, transport: from.transport, at: Date.now(), approval: decision };
    this._onAgentDecision.fire({ from, decision, text });
  }

  resize(cols: number, rows: number): void {
    if (cols === this.cols && rows === this.rows) return;
    this.mirror.resize(cols, rows);
    if (this.running && !this._hungUp) this._pty.resize(cols, rows);
    this._onDidChange.fire();
    this.emitEvent({ type: 'resize', cols, rows });
  }

  /**
   * Ends the program as a terminal that closes does: SIGHUP, and the terminal hangs up
   * (`_hangUp`); SIGKILL to its group if it lingers (a program that ignores the hang-up).
   */
  kill(): void {
    if (!this.running) return;
    try {
      this._pty.kill('SIGHUP');
    } catch {
      // already gone
    }
    this._hangUp();
    // A second kill() within the grace keeps the first deadline.
    if (this._killTimer.value) return;
    this._killTimer.value = disposableTimeout(
      () => {
        this._killTimer.clear();
        if (!this.running) return;
        try {
          process.kill(-this.pid, 'SIGKILL');
        } catch {
          try {
            process.kill(this.pid, 'SIGKILL');
          } catch {
            // already gone
          }
        }
      },
      SessionTuning.KillGraceMs,
      { unref: true },
    );
  }

  /**
   * Closes the PTY master after the SIGHUP, so the kernel hangs the terminal up: a program asleep
   * reading it wakes (EIO) and acts on the signal. The signal alone is not enough: a SIGHUP that
   * reaches bash while it starts, before readline has put in its own handler, only sets bash's
   * flag, which bash looks at again when readline returns, and readline then waits for a key for
   * ever (docs/architecture.md, "Ending a session"). What the program wrote before is read first.
   */
  private _hangUp(): void {
    if (this._hungUp) return;
    const socket = (this._pty as unknown as { _socket?: tty.ReadStream })._socket;
    const fd = masterFdOf(this._pty);
    if (!socket || typeof socket.destroy !== 'function' || fd === undefined) return;
    // On Linux, node-pty's child holds every signal until it has made the terminal its own (forkpty);
    // a hang-up before that fails it (exit 1), while the SIGHUP it holds ends it once it lets them in.
    if (process.platform === 'linux' && terminalOf(this.pid) === null) return;
    // What the stream holds (it may be paused), then what the kernel holds: the program's last output.
    // read() hands what it returns to the 'data' listeners, as reading on would have.
    while (socket.readableLength > 0) if (socket.read() === null) break;
    this._readPending(fd);
    this._hungUp = true;
    socket.destroy();
  }

  /** Reads what the kernel holds for the PTY master, without waiting (it is non-blocking), into the session. */
  private _readPending(fd: number): void {
    const buf = Buffer.allocUnsafe(64 * 1024);
    for (let total = 0; total < SessionTuning.EofDrainMaxBytes; ) {
      let n: number;
      try {
        n = fs.readSync(fd, buf, 0, buf.length, null);
      } catch {
        break; // EIO: nothing left; EAGAIN: nothing now
      }
      if (n <= 0) break;
      total += n;
      this._handleData(Buffer.from(buf.subarray(0, n))); // a copy: the ring, subscribers and the parser keep it
    }
  }

  private _handleData(chunk: Buffer): void {
    let data = chunk;
    if (this._utf8Tail) {
      data = Buffer.concat([this._utf8Tail, chunk]);
      this._utf8Tail = undefined;
    }
    const complete = completeUtf8Length(data);
    if (complete < data.length) {
      this._utf8Tail = Buffer.from(data.subarray(complete));
      data = data.subarray(0, complete);
    }
    if (data.length === 0) return;
    this._lastOutputAt = Date.now();
    this.inputWatch.activity();
    // The integration's marks leave with their nonce taken out: no copy of the output can forge one.
    const { output, marks } = this.commands.filter(data);
    this._output(output, marks);
    if (this._draining) return;
    // The parser fell behind: the program waits, so a screen read never waits long (MirrorProxy).
    if (!this._pauses.has('parser') && this.mirror.pendingBytes > this.mirror.backlogLimit) this._setPaused('parser', true);
    if (this._flowHolders.size > 0) this.reconsiderFlow();
  }

  /** Output to pass on: into the ring, the command records and logs, the subscribers, the mirror. */
  private _output(data: Buffer, marks: readonly OwnMark[]): void {
    if (data.length === 0) return;
    this.ring.append(data);
    this._viewAnswers.sawOutput(data);
    this.commands.apply(marks, this.ring.end - data.length);
    this.commandLogs?.append(data, this.ring.end);
    this._onOutput.fire({ data, cursor: this.ring.end });
    this.mirror.write(data, this.ring.end);
  }

  /**
   * Lets a flow-controlled subscriber hold the PTY while its window is full (docs/protocol.md#flow-control-ptyack-and-ptyflow): the
   * program then waits as it would for a slow terminal. Disposing the handle lets go of it.
   */
  addFlowHolder(holder: FlowHolder): IDisposable {
    this._flowHolders.add(holder);
    this.reconsiderFlow();
    return toDisposable(() => {
      if (this._flowHolders.delete(holder)) this.reconsiderFlow();
    });
  }

  /** A holder's state changed (an acknowledgement, a demotion): read again once no holder holds. */
  reconsiderFlow(): void {
    if (this._draining || this.isDisposed) return;
    let held = false;
    // Every holder is asked (no short cut), so each one that holds knows it and can run its timer.
    for (const h of this._flowHolders) if (h.updateHold()) held = true;
    this._setPaused('flow', held);
  }

  /** Pauses or resumes reading for one reason; the PTY is read only while no reason holds it. */
  private _setPaused(reason: PauseReason, paused: boolean): void {
    const before = this._pauses.size > 0;
    if (paused) this._pauses.add(reason);
    else this._pauses.delete(reason);
    if (reason === 'parser') this.inputWatch.hold(paused);
    const after = this._pauses.size > 0;
    if (before === after || !this.running) return;
    if (after) this._pty.pause();
    else this._pty.resume();
  }

  private _maybeResume(): void {
    // Three quarters of the limit: the parser keeps work while the PTY refills, and the limit is
    // small (a few ms of parsing), so reading resumes at the first notice below it.
    if (this._pauses.has('parser') && this.mirror.pendingBytes <= (this.mirror.backlogLimit * 3) / 4) this._setPaused('parser', false);
  }

  /**
   * node-pty reports the exit before the last output is read and, 200 ms later, destroys its
   * read stream, losing whatever the kernel still holds (kilobytes, when the stream was paused).
   * We take over that destroy: resume reading, and destroy only after the output has gone quiet.
   */
  private _guardExitDrain(): void {
    const socket = (this._pty as unknown as { _socket?: tty.ReadStream })._socket;
    if (!socket || typeof socket.destroy !== 'function') return;
    const realDestroy = socket.destroy.bind(socket);
    let drainStarted = false;
    socket.destroy = ((err?: Error) => {
      // After a hang-up (kill) there is nothing left to drain: the master is closed at once.
      if (this.isDisposed || drainStarted || this._hungUp) return realDestroy(err);
      drainStarted = true;
      this._draining = true;
      // The program is gone: whatever holds the PTY, what the kernel still has must be read now.
      this._pauses.clear();
      socket.resume();
      const started = Date.now();
      const check = () => {
        const quiet = Date.now() - this._lastOutputAt >= SessionTuning.ExitDrainQuietMs;
        if (socket.destroyed) return;
        if (quiet || Date.now() - started >= SessionTuning.ExitDrainMaxMs) realDestroy(err);
        else setTimeout(check, SessionTuning.ExitDrainQuietMs / 2);
      };
      setTimeout(check, SessionTuning.ExitDrainQuietMs);
      return socket;
    }) as typeof socket.destroy;
  }

  /**
   * When the program exits, the PTY master reports POLLHUP, and libuv, seeing it after a short read
   * (a PTY read never fills libuv's buffer), ends the stream at once although the kernel still holds
   * output: measured on Linux, 2-14 KB of the last output of `cat` of a large file, lost in about
   * half of the runs. At that 'end' the descriptor is still open, so read what is left
   * synchronously (non-blocking; EIO once the kernel's buffer is empty) before it is closed.
   */
  private _guardEofDrain(): void {
    const socket = (this._pty as unknown as { _socket?: tty.ReadStream })._socket;
    const fd = (this._pty as unknown as { _fd?: number })._fd;
    if (!socket || typeof socket.prependListener !== 'function' || typeof fd !== 'number') return;
    socket.prependListener('end', () => {
      // Hung up: the descriptor is closed, and its number may already be another file's.
      if (this.isDisposed || this._hungUp) return;
      this._readPending(fd);
    });
  }

  private _handleExit(exitCode: number, signal?: number): void {
    if (this._exit) return;
    // The program ended mid-character, or mid-sequence: keep the bytes rather than lose them.
    const tail = Buffer.concat([this.commands.release(), this._utf8Tail ?? Buffer.alloc(0)]);
    this._utf8Tail = undefined;
    this._output(tail, []);
    const signalName = signal ? (signalNames.get(signal) ?? String(signal)) : null;
    this._exit = { exitCode: signal ? 128 + signal : exitCode, signal: signalName };
    this.commands.shellEnded(this._exit.exitCode, this.ring.end);
    this._killTimer.clear();
    this.inputWatch.stop();
    this._onExit.fire(this._exit);
    this.emitEvent({ type: 'exit', exitCode: this._exit.exitCode, signal: this._exit.signal });
    this._resolveExited(this._exit);
    this._onDidChange.fire();
  }

  override dispose(): void {
    if (this.isDisposed) return;
    if (this.running) {
      this.kill();
      // The process is gone with the host; make sure it does not outlive us.
      const pid = this.pid;
      setTimeout(() => {
        try {
          process.kill(pid, 0);
          process.kill(-pid, 'SIGKILL');
        } catch {
          // gone
        }
      }, SessionTuning.KillGraceMs).unref?.();
    }
    super.dispose();
    try {
      (this._pty as unknown as { destroy?: () => void }).destroy?.();
    } catch {
      // already closed
    }
  }
}

const signalNames = new Map<number, string>(Object.entries(os.constants.signals).map(([name, num]) => [num, name]));

/** Environment for a new session: the caller's, a colour-capable TERM, and a UTF-8 locale if none is set. */
function buildEnv(extra?: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
  Object.assign(env, extra ?? {});
  env.TERM = 'xterm-256color';
  env.COLORTERM ??= 'truecolor';
  if (!env.LC_ALL && !env.LC_CTYPE && !env.LANG) env.LANG = 'C.UTF-8';
  // Never leak our own host's secrets into the shell's environment.
  delete env.SHARED_PTY_TOKEN;
  // The editor starts the host with these; a user's shell must not inherit them (Electron apps break).
  delete env.ELECTRON_RUN_AS_NODE;
  delete env.SHARED_PTY_NODE_PTY_FALLBACK;
  return env;
}
