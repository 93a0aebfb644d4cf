import * as fs from 'node:fs';
import { performance } from 'node:perf_hooks';
import { Disposable, disposableTimeout, MutableDisposable } from '../../base/lifecycle';
import { onUnexpectedError } from '../../base/unexpected-error';
import type { CommandRecord } from '../../commands/command-tracker';
import type { AgentDecision, InputSource, InputVerdict, SessionInput } from '../input/input-source';
import { splitFirstLine } from '../input/secret-judge';
import type { Session } from '../session';

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

/** One event waiting to be written; `judging` holds the place of input whose verdict is still to come. */
interface PendingEvent {
  at: number;
  code: CastCode;
  data: string;
  judging?: boolean;
}

/** What a recording keeps (`pty/record`'s options). */
export interface RecordOptions {
  /**
   * Keep the text of what is typed (`i` events), except what the terminal would not show: secret
   * input, and text typed ahead of its reader. Default false: an `m` marker per write says who
   * typed and how many bytes, never what.
   */
  input?: boolean;
}

/** The marker a recording has where input was typed at a secret prompt (docs/protocol.md#secret-input). */
export function withheldLabel(from: InputSource): string {
  return `secret input withheld (typed by ${from.origin})`;
}

/** The marker where the terminal's mode could not be read as the input reached it: kept as a secret would be. */
export function unjudgedLabel(from: InputSource): string {
  return `input withheld: the terminal's mode was not known when it arrived (typed by ${from.origin})`;
}

/** The marker for text after a write's first line end: typed ahead for a reader not known yet. */
export function typedAheadLabel(from: InputSource, bytes: number): string {
  return `${bytes} ${bytes === 1 ? 'byte' : 'bytes'} typed ahead withheld (typed by ${from.origin})`;
}

/** The marker before input from a new source: who typed, and how it came (docs/protocol.md#ptyrecord). */
export function sourceLabel(from: InputSource): string {
  return `input from ${from.origin} via ${from.transport}`;
}

/** The marker of one write when input text is not kept (the default): who typed, how, and how many bytes. */
export function writeLabel(from: InputSource, bytes: number): string {
  return `${sourceLabel(from)}: ${bytes} ${bytes === 1 ? 'byte' : 'bytes'}`;
}

/** Most characters of an agent's text a decision marker quotes. */
const DECISION_TEXT_CHARS = 200;

/**
 * The marker for a decision about an agent's write (docs/protocol.md#ptyrecord): what decided, and for what.
 * The text is quoted only when the recording keeps input text, and then only its first line (what
 * follows would be typed ahead); otherwise its size.
 */
export function decisionLabel(d: AgentDecision, keepText: boolean): string {
  const what = `agent write ${d.decision.replace(/_/g, ' ')} (${d.from.transport})`;
  const bytes = Buffer.byteLength(d.text, 'utf8');
  if (!keepText) return `${what}: ${bytes} ${bytes === 1 ? 'byte' : 'bytes'}`;
  const { head, aheadBytes: rest } = splitFirstLine(d.text);
  const quoted = JSON.stringify(head.length > DECISION_TEXT_CHARS ? head.slice(0, DECISION_TEXT_CHARS) + '…' : head);
  return rest > 0 ? `${what}: ${quoted} and ${rest} more ${rest === 1 ? 'byte' : 'bytes'}` : `${what}: ${quoted}`;
}

/** The marker for a finished command (shell integration, docs/protocol.md#ptycommands). */
export function commandLabel(r: CommandRecord): string {
  return r.exitCode === null ? `command ended: ${r.command}` : `command exited ${r.exitCode}: ${r.command}`;
}

/** Markers said once for a run of them (a password typed key by key is one withheld marker). */
function collapses(label: string): boolean {
  return label.startsWith('secret input withheld') || label.startsWith('input withheld:');
}

/**
 * An asciicast v3 recording of one session, from the moment it starts: output (`o`), who typed
 * (`m`: by default one marker per write with its size, never the text), resizes (`r`), finished
 * commands with their exit codes (`m`), and the exit (`x`). With `input: true` the text typed is
 * kept too (`i`, each change of who types marked with an `m`), judged as it reached the PTY:
 * input at a secret prompt, input whose terminal mode could not be read, and text typed ahead of
 * its reader are never written, a marker says so. Events are batched and written asynchronously,
 * one write at a time, at explicit file positions.
 */
export class Recorder extends Disposable {
  /** The output cursor the recording starts at: its `o` events are `pty/output` from here. */
  readonly startCursor: number;
  /** Whether input text is kept (`pty/record`'s `input`). */
  readonly keepsInput: boolean;
  private _fd: number | undefined;
  private _position = 0;
  private _pending: PendingEvent[] = [];
  private _pendingBytes = 0;
  private _lastAt: number;
  private _lastSource: string | undefined;
  /** The last marker written, so a run of withheld markers is written once. */
  private _lastMarker: string | undefined;
  /** Commands finished in the chunk of output being read (see the constructor). */
  private _commandMarks: string[] = [];
  private _writing = false;
  private _ended = false;
  private readonly _timer = this._register(new MutableDisposable());
  private readonly _done: Promise<void>;
  private _resolveDone!: () => void;

  /** Creates the file (0600; an existing file is never overwritten: EEXIST) and starts recording into it. */
  static start(session: Session, path: string, options: RecordOptions = {}): Recorder {
    const fd = fs.openSync(path, 'wx', 0o600);
    try {
      return new Recorder(session, path, fd, options.input === true);
    } catch (e) {
      fs.closeSync(fd);
      throw e;
    }
  }

  private constructor(
    session: Session,
    readonly path: string,
    fd: number,
    keepsInput: boolean,
  ) {
    super();
    this.keepsInput = keepsInput;
    this._done = new Promise((r) => (this._resolveDone = r));
    this._fd = fd;
    const o = session.options;
    const header: CastHeader = {
      version: 3,
      term: { cols: session.cols, rows: session.rows, type: 'xterm-256color' },
      timestamp: Math.floor(Date.now() / 1000),
      command: [o.command, ...o.args].join(' '),
      title: session.name,
    };
    this._position = fs.writeSync(this._fd, JSON.stringify(header) + '\n', 0);
    this.startCursor = session.cursor;
    this._lastAt = performance.now();
    if (keepsInput) this._register(session.judgeInputs());
    this._register(
      session.onOutput((c) => {
        this._add('o', c.data.toString('utf8'));
        this._addCommandMarks();
      }),
    );
    this._register(session.onInput((i) => this._input(i)));
    this._register(session.onAgentDecision((d) => this._add('m', decisionLabel(d, keepsInput))));
    this._register(session.onEvent((e) => e.type === 'resize' && this._add('r', `${e.cols}x${e.rows}`)));
    // The shell's mark is read before its chunk of output is passed on: the marker follows that chunk.
    this._register(session.commands.onDidFinishCommand((r) => this._commandMarks.push(commandLabel(r))));
    this._register(
      session.onExit((e) => {
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
    if (!this.keepsInput) {
      // Who typed, how and how many bytes, for every write, a secret's too (never what: no text is kept).
      this._add('m', writeLabel(i.from, i.bytes));
      return;
    }
    const key = `${i.from.origin}/${i.from.transport}`;
    if (key !== this._lastSource) this._add('m', sourceLabel(i.from));
    this._lastSource = key;
    const judged = i.judged;
    if (!judged) {
      this._add('m', unjudgedLabel(i.from));
      return;
    }
    const events = (verdict: InputVerdict): Array<[CastCode, string]> => {
      const out: Array<[CastCode, string]> = [];
      if (verdict === 'shown' && !i.secret) out.push(['i', judged.head]);
      else out.push(['m', verdict === 'unknown' ? unjudgedLabel(i.from) : withheldLabel(i.from)]);
      if (judged.aheadBytes > 0) out.push(['m', typedAheadLabel(i.from, judged.aheadBytes)]);
      return out;
    };
    if (typeof judged.verdict === 'string') {
      for (const [code, data] of events(judged.verdict)) this._add(code, data);
      return;
    }
    // A prompt that reads keys: its place is kept until the line at the cursor has said what it asks.
    const slot = this._add('i', '', true);
    if (!slot) return;
    void judged.verdict.then(
      (verdict) => this._settle(slot, events(verdict)),
      () => this._settle(slot, events('unknown')),
    );
  }

  /** Puts the judged events in the place held for them, and writes what can be written now. */
  private _settle(slot: PendingEvent, events: Array<[CastCode, string]>): void {
    const at = this._pending.indexOf(slot);
    if (at < 0 || !slot.judging) return; // withheld already: the recording ended first
    const filled = events.map(([code, data]): PendingEvent => ({ at: slot.at, code, data }));
    this._pending.splice(at, 1, ...filled);
    for (const e of filled) this._pendingBytes += e.data.length;
    if (!this._timer.value) this._timer.value = disposableTimeout(() => this._onTimer(), RecorderTuning.FlushMs, { unref: true });
  }

  private _add(code: CastCode, data: string, judging = false): PendingEvent | undefined {
    if (this._ended || this.isDisposed) return undefined;
    const event: PendingEvent = { at: performance.now(), code, data, judging };
    this._pending.push(event);
    this._pendingBytes += data.length;
    if (this._pendingBytes >= RecorderTuning.FlushBytes) this._flush(false);
    else if (!this._timer.value) this._timer.value = disposableTimeout(() => this._onTimer(), RecorderTuning.FlushMs, { unref: true });
    return event;
  }

  private _onTimer(): void {
    this._timer.clear();
    this._flush(false);
  }

  /**
   * Writes the pending events, up to the first input still being judged (its verdict comes from
   * the mirror within milliseconds); at the end, such input is written as withheld.
   */
  private _flush(final: boolean): void {
    if (this._writing || this._fd === undefined) return;
    if (final) this._withholdUnjudged();
    let count = this._pending.findIndex((e) => e.judging);
    if (count < 0) count = this._pending.length;
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

  /** Input whose verdict has not come when the recording ends is kept as a secret would be. */
  private _withholdUnjudged(): void {
    for (const e of this._pending) {
      if (!e.judging) continue;
      e.judging = false;
      e.code = 'm';
      e.data = 'input withheld: the recording ended before it was judged';
    }
  }

  /** Event lines, each `[interval, code, data]` with the interval in seconds since the event before. */
  private _encode(events: readonly PendingEvent[]): string {
    let text = '';
    for (const e of events) {
      if (e.code === 'm' && collapses(e.data) && e.data === this._lastMarker) continue;
      this._lastMarker = e.code === 'm' ? e.data : undefined;
      const interval = Math.max(0, e.at - this._lastAt) / 1000;
      this._lastAt = e.at;
      text += JSON.stringify([Number(interval.toFixed(6)), e.code, e.data]) + '\n';
    }
    return text;
  }

  /** After a write: more to write, or (once ended) close the file. */
  private _afterWrite(): void {
    const writable = this._pending.length > 0 && !this._pending[0].judging;
    if (writable && (this._ended || this._pendingBytes >= RecorderTuning.FlushBytes)) return this._flush(this._ended);
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
        this._withholdUnjudged();
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
