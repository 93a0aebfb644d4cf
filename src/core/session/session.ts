import type { IPty } from 'node-pty';
import * as fs from 'node:fs';
import { Disposable, disposableTimeout, Emitter, MutableDisposable, toDisposable, type IDisposable } from '../base/lifecycle';
import { DEFAULT_SCROLLBACK_LINES } from '../mirror/screen';
import { loadNodePty } from './pty-loader';
import { destroyPty, onRawData, ptySlaveName } from '../base/internals/node-pty';
import { MirrorProxy } from '../mirror/mirror-proxy';
import { DEFAULT_RING_BYTES, RingBuffer } from './ring-buffer';
import type { AgentDecision, InputSource, LastInput, SessionInput } from './input/input-source';
import { HumanInput } from './input/human-input';
import { isOneKey, TypedLine } from './input/typed-line';
import { isUtf8Locale, lineEditorOf } from './input/line-editor';
import {
  type ExitInfo,
  type FlowHolder,
  type OutputChunk,
  type SessionOptions,
  type SessionRecording,
  type SessionStatus,
  SessionTuning,
} from './session-types';
import { probeInputWait } from '../process/input-wait';
import { changedEditingKeys } from '../process/terminal-mode';
import { foregroundProcessGroup } from '../process/proc/stat';
import { foregroundStateOf, GroupMembers } from '../process/proc-state';
import { unreadInputOf } from '../process/unread-input';
import { unreadOutputOf } from '../process/unread-output';
import { InputWatch } from './input/input-watch';
import { masterFdOf, ptyInputWriter, ptyQueuedWrites } from './input/pty-input';
import { guardEofDrain, guardExitDrain, type DrainTarget } from './pty/exit-drain';
import { hangUp } from './pty/hang-up';
import { closeMasterOnExec } from './pty/close-on-exec';
import { exitInfoOf } from './pty/exit-status';
import { killGroup, killLeftover } from './pty/kill';
import { buildEnv } from './pty/spawn-env';
import { spawnProblem } from './pty/spawn-check';
import { rootNames, runAsLaunch } from './pty/run-as';
import { invalidParams } from '../base/errors';
import { Utf8Joiner } from './pty/utf8-joiner';
import { FlowHolders, ReadPauses } from './flow/read-pauses';
import { HandleCount } from './handle-count';
import { judgement, SecretJudge } from './input/secret-judge';
import type { SessionEventBody } from './events/session-events';
import { OutputOrderedEvents } from './events/output-ordered-events';
import { CommandTracker } from '../commands/command-tracker';
import { ShellImage } from '../commands/shell-image';
import { CommandLogs } from '../commands/command-logs';
import { nonceHandover, shellIntegrationLaunch } from '../commands/shell-integration';
import type { OwnMark } from '../commands/own-marks';
import { ViewAnswers } from './input/view-answers';
import { CursorKeysMode } from './input/cursor-keys';

export { DEFAULT_COLS, DEFAULT_ROWS, SessionTuning } from './session-types';
export type { ExitInfo, FlowHolder, Origin, OutputChunk, SessionOptions, SessionRecording, SessionStatus } from './session-types';

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
  /** Each command's whole output, in a file of its own (docs/protocol.md#ptycommandoutput); undefined: not kept (or no shell integration, so no commands). */
  readonly commandLogs: CommandLogs | undefined;
  /** The integrated shell's program, to tell when `exec` replaced it (shell-image.ts); undefined without integration. */
  private readonly _shellImage: ShellImage | undefined;
  private readonly _pty: IPty;
  /** Writes to the program's input (at once when nothing is queued: ptyInputWriter); returns the bytes written at once. */
  private readonly _writeInput: (data: string) => number;
  /** Writes held by node-pty because the program is not reading its input (ptyQueuedWrites). */
  private readonly _queuedWrites: () => number;
  /** Whether the program asks for a secret, now or as a write reaches it (docs/protocol.md#secret-input, docs/guarantees.md#no-side-doors). */
  readonly secretJudge: SecretJudge;
  /** How many want writes judged as they reach the PTY (recordings with input text): see judgeInputs. */
  private readonly _inputJudges = new HandleCount();
  private _name: string;
  private _exit: ExitInfo | undefined;
  /** Every reason the PTY is paused for: the parser fell behind, a flow-controlled subscriber's window is full. */
  private readonly _pauses: ReadPauses;
  private readonly _flowHolders = new FlowHolders();
  private _draining = false;
  private readonly _utf8 = new Utf8Joiner();
  private _lastOutputAt = Date.now();
  private _exitedPromise: Promise<ExitInfo>;
  private _resolveExited!: (e: ExitInfo) => void;
  /** SIGKILL for a process group that ignored the SIGHUP of `kill()`. */
  private readonly _killTimer = this._register(new MutableDisposable());
  /** A look, a second after output without marks, at whether the shell was exec'd away. */
  private readonly _shellCheck = this._register(new MutableDisposable());
  /** `kill()` closed the PTY master: nothing is written to or read from its descriptor any more. */
  private _hungUp = false;
  /** The send that holds the session (one at a time, docs/guarantees.md#error-codes-beyond-json-rpc); undefined when none does. */
  sendOwner: object | undefined;
  /** True while a `pty/send` holds the session. */
  get sendInProgress(): boolean {
    return this.sendOwner !== undefined;
  }
  private readonly _clients = new HandleCount((_, added) => {
    if (added || !this.isDisposed) this._onDidChange.fire();
  });
  private readonly _calls = new HandleCount((count) => {
    if (count === 0 && !this.isDisposed) this._onCallsDone.fire();
  });
  /** The views' own answers to terminal queries, which the host answers instead (the mirror's). */
  private readonly _viewAnswers = new ViewAnswers();
  /** Whether the program turned on application cursor keys: how the arrows a client names are sent. */
  private readonly _cursorKeys = new CursorKeysMode();
  private _lastInput: LastInput | undefined;
  /** When the interrupt character (Ctrl+C) was last written, in Date.now() ms (see interruptedAt). */
  private _interruptedAt = Number.NEGATIVE_INFINITY;
  /** The user chose "Allow for this session" for agents' writes here (docs/protocol.md#agent-write-approval). */
  agentsAllowed = false;

  /** The program asked for application cursor keys (`CSI ? 1 h`): a named arrow key is sent as `ESC O A`. */
  get applicationCursorKeys(): boolean {
    return this._cursorKeys.application;
  }

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
  readonly typedLine: TypedLine;
  /** The asciicast recording of the session while one runs (`pty/record`, docs/protocol.md#ptyrecord); ends with the session. */
  readonly recording = this._register(new MutableDisposable<SessionRecording>());

  constructor(readonly options: SessionOptions) {
    super();
    // node-pty's spawn ends the whole host on an argument that is no string: refused before anything starts.
    const problem = spawnProblem(options);
    if (problem) {
      super.dispose();
      throw invalidParams(`Cannot start the session: ${problem}`);
    }
    this.id = options.id;
    this._name = options.name;
    this.ring = new RingBuffer(options.ringBytes ?? DEFAULT_RING_BYTES);
    this.mirror = this._register(new MirrorProxy(options.cols, options.rows, options.scrollbackLines ?? DEFAULT_SCROLLBACK_LINES, () => this.ring.retained()));
    this._exitedPromise = new Promise((r) => (this._resolveExited = r));
    const pty = loadNodePty();
    this.leaseSeconds = options.leaseSeconds;
    const runAs = options.runAs && runAsLaunch(options.runAs, options.command, options.args);
    const env = buildEnv({ ...(runAs ? runAs.names : rootNames()), ...options.env });
    this.typedLine = new TypedLine(lineEditorOf(options.command), !isUtf8Locale(env));
    // Another user could not read the integration's files, which the host keeps to itself.
    const integration = runAs ? undefined : shellIntegrationLaunch(options.command, options.args, env);
    const handover = integration && nonceHandover(integration.nonce, options.handoverDir, options.commandLogWritable);
    // The shell reads and removes it at once; one that never did (its start failed) leaves it to us.
    if (handover?.file) this._register(toDisposable(() => fs.rmSync(handover.file!, { force: true })));
    this.commands = this._register(new CommandTracker(options.cwd, integration?.nonce));
    this._register(this.commands.onDidChangeState(() => this._onDidChange.fire()));
    // Only a shell with the integration reports commands: any other session would keep an empty set of logs.
    this.commandLogs =
      options.commandLogDir && integration
        ? this._register(new CommandLogs(this.commands, options.commandLogDir, options.commandLogBytes, options.commandLogWritable))
        : undefined;
    // The shell's own account of its commands, as events (docs/protocol.md#events-ptyevents-and-ptywaitevent),
    // in output order with the bells and titles the parser finds (OutputOrderedEvents).
    this._register(this.commands.onDidStartCommand((r) => this._eventAt({ type: 'command_started', command: r.command }, r.startCursor)));
    // A command's end is told where it was found, not at its output's end read in an earlier chunk:
    // every event waits at a fence in output not handed to the parser yet, exactly where it is.
    this._register(
      this.commands.onDidFinishCommand((r) =>
        this._eventAt({ type: 'command_finished', command: r.command, exitCode: r.exitCode, durationMs: r.durationMs ?? 0 }, this.commands.lastEndFoundAt),
      ),
    );
    // What was typed while the command ran may reach the shell's line: deny rules no longer know it.
    this._register(this.commands.onDidFinishCommand(() => this.typedLine.commandEnded()));
    this._pty = pty.spawn(runAs?.command ?? options.command, runAs?.args ?? integration?.args ?? options.args, {
      name: 'xterm-256color',
      cols: options.cols,
      rows: options.rows,
      cwd: options.cwd,
      env: { ...env, ...integration?.env, ...handover?.env },
      encoding: null, // raw bytes: cursors count bytes, and split characters are reassembled here
    });
    // Before anything else is started: no later program may inherit this session's terminal.
    closeMasterOnExec(this._pty);
    this._shellImage = integration ? new ShellImage(this._pty.pid, integration.shell) : undefined;
    this._pauses = new ReadPauses(
      this._pty,
      () => this.running,
      (reason, paused) => {
        // Paused for the parser: output is still coming, so the input watch probes nothing until reading resumes.
        if (reason === 'parser') this.inputWatch.hold(paused);
      },
    );
    this._writeInput = ptyInputWriter(this._pty);
    this._queuedWrites = ptyQueuedWrites(this._pty);
    this.secretJudge = new SecretJudge(
      // Once hung up, the descriptor is closed and its number may be another file's.
      () => (this._hungUp ? undefined : masterFdOf(this._pty)),
      this.ttyPath,
      () => this.mirror.watch('lineBeforeCursor'),
      // The shell's own line editor reads keys without echo too; the integration says when it does.
      () => this.commands.integration && !this.commands.running,
    );
    const drain: DrainTarget = {
      over: () => this.isDisposed || this._hungUp,
      lastOutputAt: () => this._lastOutputAt,
      startDrain: () => {
        this._draining = true;
        this._pauses.clear();
      },
      data: (chunk) => this._handleData(chunk),
    };
    guardExitDrain(this._pty, drain);
    guardEofDrain(this._pty, drain);
    onRawData(this._pty, (d) => this._handleData(d));
    this._pty.onExit(({ exitCode, signal }) => this._handleExit(exitCode, signal));
    this._register(
      this.mirror.onParsed(() => {
        this._maybeResume();
        this._releaseParsed();
      }),
    );
    this._register(
      this.mirror.onSignalled(({ signals, fence }) => {
        // Events tied to places before the signals' fence come first; those at it or after, later.
        if (fence !== undefined) this._ordered.passed(fence, false);
        for (const s of signals) {
          if ('bell' in s) this._bell();
          else this.emitEvent({ type: 'title', title: s.title });
        }
        // The thread tells a fence once it has parsed up to it, maybe before its notice of that parse.
        if (fence !== undefined) this._releaseParsed(fence);
      }),
    );
    // The host is the terminal for the program's queries: one answer each, however many views there are.
    this._register(this.mirror.onAnswer((answer) => this._answer(answer)));
    this.inputWatch = this._register(
      new InputWatch(
        () => probeInputWait(this.pid, () => this.secretJudge.asksNow()),
        undefined,
        // Only while the host reads: output held back for a flow-controlled view may end in a prompt.
        () => !this._pauses.any && !this._hungUp && (unreadOutputOf(masterFdOf(this._pty)) ?? 0) > 0,
        // Which job waits: the prompt back after a program that read was left with Ctrl+C or `q` is a new wait.
        () => foregroundProcessGroup(this.pid) ?? undefined,
      ),
    );
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

  /** Events tied to places in the output, told once the parser has passed them (see `_eventAt`). */
  private readonly _ordered = new OutputOrderedEvents((body) => this.emitEvent(body));
  /** Cursors of the output being handed over (`_output`) that an event waits on: the mirror fences them. */
  private readonly _fencesDue: number[] = [];

  /**
   * Tells an event that happened at output cursor `cursor` once the screen's parser has passed it,
   * after the bells and titles in the output before it (OutputOrderedEvents, MirrorProxy.fence).
   */
  private _eventAt(body: SessionEventBody, cursor: number): void {
    if (!this._ordered.add(body, cursor, this.mirror.parsedCursor)) return;
    // Output not handed over yet (the chunk `_output` is passing on): fenced as it is handed over.
    if (cursor > this.mirror.handedOver) this._fencesDue.push(cursor);
    else this.mirror.fence();
  }

  /**
   * Tells the events the parser has passed, but not past a fence whose bells and titles the
   * thread has not told yet: those came before what waits there.
   */
  private _releaseParsed(parsedAtLeast = 0): void {
    const parsed = Math.max(this.mirror.parsedCursor, parsedAtLeast);
    const fence = this.mirror.pendingFence;
    if (parsed < fence) this._ordered.passed(parsed, true);
    else this._ordered.passed(fence, false);
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
    return ptySlaveName(this._pty);
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

  /**
   * Whether the shell reports its commands now: it was integrated, and no `exec` has replaced it
   * with a program that does not (SessionInfo.integration, pty/commands).
   */
  get integration(): boolean {
    if (this._shellImage?.justReplaced()) queueMicrotask(() => this.isDisposed || this._onDidChange.fire());
    return this.commands.integration && !this._shellImage?.replaced();
  }

  /** Tells the session's watchers (the discovery record) once the shell is found replaced. */
  private _noteShellReplaced(): void {
    this._shellCheck.clear();
    if (this._shellImage?.justReplaced()) this._onDidChange.fire();
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
    return this._clients.count;
  }

  /** Counts a client in until the returned handle is disposed. */
  addClient(): IDisposable {
    return this._clients.add();
  }

  /** Calls in progress on the session: a removed session is let go only once they have answered. */
  get callsInProgress(): number {
    return this._calls.count;
  }

  /** Marks a call in progress until the returned handle is disposed. */
  beginCall(): IDisposable {
    return this._calls.add();
  }

  /** Who wrote last, how, and when; undefined until something is written. */
  get lastInput(): LastInput | undefined {
    return this._lastInput;
  }

  /**
   * When a Ctrl+C was last written (Date.now() ms; -Infinity: never): a send right after it waits
   * for the program to have handled it (send.ts, settleAfterInterrupt).
   */
  get interruptedAt(): number {
    return this._interruptedAt;
  }

  /**
   * Writes text (UTF-8) to the program on behalf of `from`; returns the bytes written. Every
   * write names its caller, so the session knows who typed last (typing arbitration, approval
   * and recordings of docs/protocol.md#ptyrecord build on it).
   */
  write(data: string, from: InputSource): number {
    // A view (the user's, or a stream WebSocket whoever holds it: its terminal answers by itself)
    // answered a query by itself: the host has answered it already (ViewAnswers).
    if (from.origin === 'user' || from.transport === 'ws-stream') {
      const view = this._viewAnswers.take(data);
      if (view.colors) this.mirror.setColors(view.colors);
      data = view.text;
    }
    if (!this.running || this._hungUp || data.length === 0) return 0;
    // Read before the line is submitted below: Enter ends the secret, yet it is part of it.
    const secret = this.secretInput;
    // The terminal's mode the moment the bytes reach it (about 5 µs), only when someone keeps text.
    const verdict = this._inputJudges.count > 0 ? this.secretJudge.judgeWrite() : undefined;
    // Asked before the write: whether the key is the program's depends on what waited before it.
    const programsKey = this._foregroundReadsKey(data);
    const atOnce = this._writeInput(data);
    const bytes = Buffer.byteLength(data, 'utf8');
    this._lastInput = { origin: from.origin, transport: from.transport, at: Date.now(), approval: from.approval };
    if (data.includes('\x03')) this._interruptedAt = this._lastInput.at;
    const judged = verdict === undefined ? undefined : judgement(data, verdict, atOnce);
    const input: SessionInput = { data: secret ? '' : data, from, secret, bytes, judged };
    this.humanInput.observe(input);
    // A key the command reads is no shell line, as a secret is not.
    this.typedLine.observe(data, secret || programsKey, this.kernelEdits(data));
    if (this.typedLine.empty) this.humanInput.lineEmptied();
    // A key of the human's that leaves something on the line is a line they started, whatever it
    // was: a line recalled from history (ArrowUp, Ctrl+P, Ctrl+R), a literal ^U (Ctrl+V Ctrl+U).
    else if (from.origin === 'user' && !secret && !programsKey) this.humanInput.lineStarted = true;
    // Nobody was asked about it: the policy's decision is said with the write itself.
    if (from.approval === 'policy_allow') this._onAgentDecision.fire({ from, decision: 'policy_allow', text: data });
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
    return this._inputJudges.add();
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
   * Whether the terminal reads `data` as the kernel's lines (canonical mode: a command runs and
   * the keys are typed ahead), where its editing keys act otherwise than the shell's line editor's.
   * Read (about 5 µs) only when `data` has such a key.
   */
  kernelEdits(data: string): boolean {
    if (!EDITING_KEYS.test(data)) return false;
    return this.secretJudge.modeNow()?.canonical ?? false;
  }

  /**
   * The keys that act otherwise on this terminal than on a new one (`stty`: terminal-mode.ts), ''
   * when none do or it cannot be told: the host's model of a typed line assumes a new terminal's.
   */
  get changedEditingKeys(): string {
    return changedEditingKeys(this._hungUp ? undefined : masterFdOf(this._pty)) ?? '';
  }

  /**
   * Whether `data`, about to be written, is a key the command in the foreground reads, never a
   * character of the shell's next line (docs/protocol.md#agent-guards): one key (a character, or
   * one escape sequence) while shell integration says a command runs, the terminal is in
   * non-canonical mode, the foreground group is not the shell's, nothing typed before waits
   * unread, and every process of that group waits for input (a /proc look, its members scanned at
   * most once a second).
   * `q` in `less`: kept on the typed line, it left the line unknown once the command ended, and
   * every agent write after it was refused under deny rules. A key a program might not read (it
   * is busy, or keys are queued before it) is kept, as before: it may reach the shell.
   */
  private _foregroundReadsKey(data: string): boolean {
    if (!this.commands.integration || !this.commands.running || !isOneKey(data)) return false;
    if (this.secretJudge.modeNow()?.canonical !== false) return false;
    const group = foregroundProcessGroup(this.pid);
    if (group === null || group === this.pid) return false;
    if (unreadInputOf(this.ttyPath) !== 0) return false;
    return foregroundStateOf(this.pid, this._keyReaders.of) === 'waiting_for_input';
  }

  /** The foreground group's members for `_foregroundReadsKey`, scanned at most once a second while keys come. */
  private readonly _keyReaders = new GroupMembers(1000);

  /**
   * The shell's line editor reads the keys: shell integration says it waits at its prompt, or the
   * shell itself holds the terminal and reads keys one by one (its marks stopped coming: a
   * `PROMPT_COMMAND` replaced, `exec bash`; a `read -e`), which only a line editor does. Read from
   * /proc and the terminal's mode (tens of µs): asked for an agent's write under deny rules.
   */
  get atPrompt(): boolean {
    if (!this.commands.integration) return false;
    if (!this.commands.running) return true;
    return foregroundProcessGroup(this.pid) === this.pid && this.secretJudge.modeNow()?.canonical === false;
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
        if (this.running) killGroup(this.pid);
      },
      SessionTuning.KillGraceMs,
      { unref: true },
    );
  }

  /** Hangs the terminal up after the SIGHUP of `kill()` (pty/hang-up.ts); what the program wrote before is read first. */
  private _hangUp(): void {
    if (this._hungUp) return;
    hangUp(
      this._pty,
      (chunk) => this._handleData(chunk),
      () => (this._hungUp = true),
    );
  }

  private _handleData(chunk: Buffer): void {
    const data = this._utf8.join(chunk);
    if (data.length === 0) return;
    this._lastOutputAt = Date.now();
    this.inputWatch.activity();
    // The integration's marks leave with their nonce taken out: no copy of the output can forge one.
    const { output, marks } = this.commands.filter(data);
    this._output(output, marks);
    if (this._draining) return;
    // The parser fell behind: the program waits, so a screen read never waits long (MirrorProxy).
    if (!this._pauses.has('parser') && this.mirror.pendingBytes > this.mirror.backlogLimit) {
      this._pauses.set('parser', true);
      // Nothing more comes until the parser catches up: what is queued for it goes now.
      this.mirror.flush();
    }
    if (this._flowHolders.size > 0) this.reconsiderFlow();
  }

  /**
   * Output from before a subscriber joined was sent to it (OutputSubscription): the cursor queries
   * in it are answered again by a view (ViewAnswers.replayed), and those answers are taken out too.
   */
  replayedToSubscriber(text: string): void {
    this._viewAnswers.replayed(text);
  }

  /** Output to pass on: into the ring, the command records and logs, the subscribers, the mirror. */
  private _output(data: Buffer, marks: readonly OwnMark[]): void {
    if (data.length === 0) return;
    this.ring.append(data);
    this._viewAnswers.sawOutput(data);
    this._cursorKeys.sawOutput(data);
    this.commands.apply(marks, this.ring.end - data.length);
    if (marks.length > 0) this._shellImage?.noteIntegrationSpoke();
    // Output without our marks may be that of a program that replaced the shell (`exec tmux` in
    // .zshrc, `exec bash` typed): looked at a second later, and the discovery record told if so.
    else if (this._shellImage && !this._shellImage.foundReplaced && !this._shellCheck.value) {
      this._shellCheck.value = disposableTimeout(() => this._noteShellReplaced(), SHELL_RECHECK_MS, { unref: true });
    }
    this.commandLogs?.append(data, this.ring.end);
    this._onOutput.fire({ data, cursor: this.ring.end });
    if (this._fencesDue.length === 0) this.mirror.write(data, this.ring.end);
    else this._handOverFenced(data, this.ring.end);
  }

  /** Hands output ending at `end` to the mirror in pieces, with a fence at each place an event waits on. */
  private _handOverFenced(data: Buffer, end: number): void {
    const start = end - data.length;
    let from = 0;
    for (const cursor of this._fencesDue) {
      const at = Math.min(Math.max(cursor - start, from), data.length);
      if (at > from) this.mirror.write(data.subarray(from, at), start + at);
      this.mirror.fence();
      from = at;
    }
    this._fencesDue.length = 0;
    if (from < data.length) this.mirror.write(from === 0 ? data : data.subarray(from), end);
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
    this._pauses.set('flow', this._flowHolders.anyHolds());
  }

  private _maybeResume(): void {
    // Three quarters of the limit: the parser keeps work while the PTY refills, and the limit is
    // small (a few ms of parsing), so reading resumes at the first notice below it.
    if (this._pauses.has('parser') && this.mirror.pendingBytes <= (this.mirror.backlogLimit * 3) / 4) this._pauses.set('parser', false);
  }

  private _handleExit(exitCode: number, signal?: number): void {
    if (this._exit) return;
    // The program ended mid-character, or mid-sequence: keep the bytes rather than lose them.
    const tail = Buffer.concat([this.commands.release(), this._utf8.takeTail()]);
    this._output(tail, []);
    this._exit = exitInfoOf(exitCode, signal);
    this.commands.shellEnded(this._exit.exitCode, this.ring.end);
    this._killTimer.clear();
    this.inputWatch.stop();
    this._onExit.fire(this._exit);
    this._eventAt({ type: 'exit', exitCode: this._exit.exitCode, signal: this._exit.signal }, this.ring.end);
    this._resolveExited(this._exit);
    this._onDidChange.fire();
  }

  override dispose(): void {
    if (this.isDisposed) return;
    // What waited for the parser is told now: the parser goes with the session.
    this._ordered.flush();
    if (this.running) {
      this.kill();
      // The process is gone with the host; make sure it does not outlive us.
      const pid = this.pid;
      setTimeout(() => killLeftover(pid), SessionTuning.KillGraceMs).unref?.();
    }
    super.dispose();
    try {
      destroyPty(this._pty);
    } catch {
      // already closed
    }
  }
}

/** How long after output without marks the shell's program is looked at (ShellImage looks at most once a second). */
const SHELL_RECHECK_MS = 1000;

/** Keys the kernel's line editing and the shell's read otherwise (all but text, Enter and Ctrl+C). */
const EDITING_KEYS = /[\x00-\x02\x04-\x09\x0b\x0c\x0e-\x1f\x7f]/;
