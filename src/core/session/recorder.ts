import * as fs from 'node:fs';
import { performance } from 'node:perf_hooks';
import { Disposable, disposableTimeout, MutableDisposable } from '../base/lifecycle';
import { onUnexpectedError } from '../base/unexpected-error';
import type { CommandRecord } from '../commands/command-tracker';
import type { AgentDecision, InputSource, SessionInput } from './input-source';
import type { Session } from './session';

/** How a recording writes; each number says why. */
export const enum RecorderTuning {
  /** Events are written at most this often: one write per batch, never one per PTY read. */
  FlushMs = 200,
  /** A batch this large is written at once (a flood would otherwise hold a lot in memory). */
  FlushBytes = 64 * 1024,
}

/** Event codes of asciicast v3: output, input, resize, marker, exit. */
export type CastCode = 'o' | 'i' | 'r' | 'm' | 'x';

/** The asciicast v3 header line (docs.asciinema.org/manual/asciicast/v3). */
export interface CastHeader {
  version: 3;
  term: { cols: number; rows: number; type?: string };
  timestamp?: number;
  idle_time_limit?: number;
  command?: string;
  title?: string;
  env?: Record<string, string>;
}

/** One event waiting to be written; `input` marks what a secret prompt may still take back. */
interface PendingEvent {
  at: number;
  code: CastCode;
  data: string;
  input?: InputSource;
}

/** The marker a recording has where input was typed at a secret prompt (docs/protocol.md#secret-input). */
export function withheldLabel(from: InputSource): string {
  return `secret input withheld (typed by ${from.origin})`;
}

/** The marker before input from a new source: who typed, and how it came (docs/protocol.md#ptyrecord). */
export function sourceLabel(from: InputSource): string {
  return `input from ${from.origin} via ${from.transport}`;
}

/** The marker for a decision about an agent's write (docs/protocol.md#ptyrecord): what decided, and the text it was for. */
export function decisionLabel(d: AgentDecision): string {
  const text = JSON.stringify(d.text.length > 200 ? d.text.slice(0, 200) + '…' : d.text);
  return `agent write ${d.decision.replace(/_/g, ' ')} (${d.from.transport}): ${text}`;
}

/** The marker for a finished command (shell integration, docs/protocol.md#ptycommands). */
export function commandLabel(r: CommandRecord): string {
  return r.exitCode === null ? `command ended: ${r.command}` : `command exited ${r.exitCode}: ${r.command}`;
}

/**
 * An asciicast v3 recording of one session, from the moment it starts: output (`o`), input (`i`,
 * each change of who types marked with an `m`), resizes (`r`), finished commands with their exit
 * codes (`m`), and the exit (`x`). Input typed at a secret prompt is never written: a marker says
 * it was withheld. Events are batched and written asynchronously, one write at a time, at
 * explicit file positions.
 */
export class Recorder extends Disposable {
  /** The output cursor the recording starts at: its `o` events are `pty/output` from here. */
  readonly startCursor: number;
  private _fd: number | undefined;
  private _position = 0;
  private _pending: PendingEvent[] = [];
  private _pendingBytes = 0;
  private _lastAt: number;
  private _lastSource: string | undefined;
  private _lastWithheld = false;
  /** Commands finished in the chunk of output being read (see the constructor). */
  private _commandMarks: string[] = [];
  private _writing = false;
  private _ended = false;
  private readonly _timer = this._register(new MutableDisposable());
  private readonly _done: Promise<void>;
  private _resolveDone!: () => void;

  /** Creates the file (0600; an existing file is never overwritten: EEXIST) and starts recording into it. */
  static start(session: Session, path: string): Recorder {
    const fd = fs.openSync(path, 'wx', 0o600);
    try {
      return new Recorder(session, path, fd);
    } catch (e) {
      fs.closeSync(fd);
      throw e;
    }
  }

  private constructor(
    private readonly _session: Session,
    readonly path: string,
    fd: number,
  ) {
    super();
    this._done = new Promise((r) => (this._resolveDone = r));
    this._fd = fd;
    const o = _session.options;
    const header: CastHeader = {
      version: 3,
      term: { cols: _session.cols, rows: _session.rows, type: 'xterm-256color' },
      timestamp: Math.floor(Date.now() / 1000),
      command: [o.command, ...o.args].join(' '),
      title: _session.name,
    };
    this._position = fs.writeSync(this._fd, JSON.stringify(header) + '\n', 0);
    this.startCursor = _session.cursor;
    this._lastAt = performance.now();
    this._register(
      _session.onOutput((c) => {
        this._add('o', c.data.toString('utf8'));
        this._addCommandMarks();
      }),
    );
    this._register(_session.onInput((i) => this._input(i)));
    this._register(_session.onAgentDecision((d) => this._add('m', decisionLabel(d))));
    this._register(_session.onEvent((e) => e.type === 'resize' && this._add('r', `${e.cols}x${e.rows}`)));
    // The shell's mark is read before its chunk of output is passed on: the marker follows that chunk.
    this._register(_session.commands.onDidFinishCommand((r) => this._commandMarks.push(commandLabel(r))));
    this._register(_session.inputWatch.onDidChange((state) => state === 'secret' && this._withholdTail()));
    this._register(
      _session.onExit((e) => {
        this._addCommandMarks();
        this._add('x', String(e.exitCode));
        void this.stop();
      }),
    );
  }

  /** True until the recording has been stopped or the session has ended. */
  get recording(): boolean {
    return !this._ended;
  }

  /** Writes what is left and closes the file; resolves once it is closed (idempotent). */
  stop(): Promise<void> {
    if (!this._ended) {
      this._ended = true;
      this._timer.clear();
      this._flush(true);
    }
    return this._done;
  }

  private _addCommandMarks(): void {
    for (const label of this._commandMarks.splice(0)) this._add('m', label);
  }

  private _input(i: SessionInput): void {
    if (i.secret) return this._withheld(i.from);
    const key = `${i.from.origin}/${i.from.transport}`;
    if (key !== this._lastSource) this._add('m', sourceLabel(i.from), i.from);
    this._lastSource = key;
    this._add('i', i.data, i.from);
  }

  private _withheld(from: InputSource): void {
    if (this._lastWithheld) return;
    this._add('m', withheldLabel(from));
    this._lastWithheld = true;
    // Whoever types after the secret is named again.
    this._lastSource = undefined;
  }

  /**
   * The program turned out to read a secret: input typed since its last output (the prompt) was
   * typed into it before the session knew, and is taken back while still pending. Echo is off at
   * such a prompt, so what was typed there produced no output after it.
   */
  private _withholdTail(): void {
    let i = this._pending.length;
    while (i > 0 && this._pending[i - 1].input) i--;
    const tail = this._pending.splice(i);
    const typed = tail.find((e) => e.code === 'i');
    for (const e of tail) this._pendingBytes -= e.data.length;
    if (typed?.input) this._withheld(typed.input);
  }

  private _add(code: CastCode, data: string, input?: InputSource): void {
    if (this._ended || this.isDisposed) return;
    this._pending.push({ at: performance.now(), code, data, input });
    this._pendingBytes += data.length;
    this._lastWithheld = false;
    if (this._pendingBytes >= RecorderTuning.FlushBytes) this._flush(false);
    else if (!this._timer.value) this._timer.value = disposableTimeout(() => this._onTimer(), RecorderTuning.FlushMs, { unref: true });
  }

  private _onTimer(): void {
    this._timer.clear();
    this._flush(false);
  }

  /**
   * Writes the pending events. Input after the last output is held back while the session is
   * about to look at its foreground job (it may be a secret prompt), unless this is the end.
   */
  private _flush(final: boolean): void {
    if (this._writing || this._fd === undefined) return;
    let count = this._pending.length;
    if (!final && !this._session.inputWatch.quiet) while (count > 0 && this._pending[count - 1].input) count--;
    const batch = this._pending.splice(0, count);
    for (const e of batch) this._pendingBytes -= e.data.length;
    if (this._pending.length > 0 && !this._ended && !this._timer.value) {
      this._timer.value = disposableTimeout(() => this._onTimer(), RecorderTuning.FlushMs, { unref: true });
    }
    if (batch.length === 0) return this._afterWrite();
    const buf = Buffer.from(this._encode(batch), 'utf8');
    const position = this._position;
    this._position += buf.length;
    this._writing = true;
    fs.write(this._fd, buf, 0, buf.length, position, (err) => {
      this._writing = false;
      if (err) {
        onUnexpectedError(new Error(`recording ${this.path}: ${err.message}`));
        this._ended = true;
        this._pending = [];
      }
      this._afterWrite();
    });
  }

  /** Event lines, each `[interval, code, data]` with the interval in seconds since the event before. */
  private _encode(events: readonly PendingEvent[]): string {
    let text = '';
    for (const e of events) {
      const interval = Math.max(0, e.at - this._lastAt) / 1000;
      this._lastAt = e.at;
      text += JSON.stringify([Number(interval.toFixed(6)), e.code, e.data]) + '\n';
    }
    return text;
  }

  /** After a write: more to write, or (once ended) close the file. */
  private _afterWrite(): void {
    if (this._pending.length > 0 && (this._ended || this._pendingBytes >= RecorderTuning.FlushBytes)) return this._flush(this._ended);
    if (!this._ended || this._writing || this._fd === undefined) return;
    const fd = this._fd;
    this._fd = undefined;
    fs.close(fd, () => this._resolveDone());
  }

  /** The host goes away: what is pending is written now, synchronously, and the file closed. */
  override dispose(): void {
    if (this.isDisposed) return;
    this._ended = true;
    if (!this._writing && this._fd !== undefined) {
      // No write in flight: finish synchronously, so nothing is lost when the process ends next.
      const fd = this._fd;
      this._fd = undefined;
      try {
        const text = this._encode(this._pending);
        if (text) fs.writeSync(fd, text, this._position);
      } catch {
        // the disk is gone; nothing better to do while shutting down
      }
      this._pending = [];
      fs.closeSync(fd);
      this._resolveDone();
    }
    // A write in flight closes the file when it completes (_afterWrite).
    super.dispose();
  }
}
