import { Disposable, Emitter } from '../base/lifecycle';
import { OwnMarkFilter, type FilteredOutput, type OwnMark } from './own-marks';
import { MAX_COMMAND_RECORDS } from '../base/param-limits';

import type { CommandRecord } from './command-record';

export type { CommandRecord } from './command-record';

/** The command that has started and not finished, with when it started. */
interface RunningCommand {
  record: CommandRecord;
  startedMs: number;
  /** Where its output ended, when a mark of the shell came before its end (`P;Cwd=`, `P;OutputEnd`). */
  outputEnd?: number;
}

/**
 * `P;OutputEnd`: the shell's own mark that the command's output ended here, sent before its end
 * when the shell prints something of its own in between (zsh's PROMPT_SP mark, printed before
 * any prompt hook can report the end: shell-integration/zsh/integration.zsh). A property VS Code's
 * terminal does not know, so it ignores it.
 */
const OUTPUT_END = 'OutputEnd';

/**
 * Follows the marks of the shell integration the session injected (VS Code's OSC 633: `E` the
 * command line, `C` executed, `D;<exit>` finished, `P;Cwd=`) and turns them into command records
 * whose cursors are exact output cursors. Only marks that carry the session's nonce count
 * (OwnMarkFilter): what a program prints is never a command, an exit code or a cwd, and a session
 * whose shell got no integration has no records. The prompt marks (`A`, `B`) carry no nonce: they
 * are for the editor's terminal and make nothing here.
 *
 * Records are flat, one command at a time, as VS Code's terminal reads the same marks.
 *
 * Seams for the events of docs/protocol.md#events-ptyevents-and-ptywaitevent: `onDidStartCommand` and `onDidFinishCommand`.
 */
export class CommandTracker extends Disposable {
  /** Undefined: the session injected no integration, so nothing in the output is a mark. */
  private readonly _filter: OwnMarkFilter | undefined;
  private readonly _records: CommandRecord[] = [];
  private _running: RunningCommand | undefined;
  /** The command line an `E` announced for the next `C`. */
  private _nextCommandLine: string | undefined;
  private _cwd: string | undefined;
  private _nextId = 1;

  private readonly _onDidStartCommand = this._register(new Emitter<CommandRecord>());
  /** A command started (its record, exitCode still null). */
  readonly onDidStartCommand = this._onDidStartCommand.event;
  private readonly _onDidEndOutput = this._register(new Emitter<{ id: number; cursor: number }>());
  /** The running command's output ended at `cursor` (its end, with its status, comes later: `onDidFinishCommand`). */
  readonly onDidEndOutput = this._onDidEndOutput.event;
  private readonly _onDidFinishCommand = this._register(new Emitter<CommandRecord>());
  /** A command finished (its record, complete). */
  readonly onDidFinishCommand = this._onDidFinishCommand.event;
  private readonly _onDidChangeState = this._register(new Emitter<void>());
  /** The shell's working directory changed. */
  readonly onDidChangeState = this._onDidChangeState.event;

  /**
   * @param _startCwd where the shell started (the cwd of commands before the shell reports one)
   * @param nonce the secret the injected integration ends its marks with; undefined: none injected
   */
  constructor(
    private readonly _startCwd: string,
    nonce: string | undefined,
  ) {
    super();
    this._filter = nonce === undefined ? undefined : new OwnMarkFilter(nonce);
  }

  /** True when the session injected its shell integration: its shell reports its commands. */
  get integration(): boolean {
    return this._filter !== undefined;
  }

  /** The shell's working directory as it last reported it; undefined until it does. */
  get cwd(): string | undefined {
    return this._cwd;
  }

  /** The id the next command will get: every record with this id or more started after now. */
  get nextId(): number {
    return this._nextId;
  }

  /** True while a command runs. */
  get running(): boolean {
    return this._running !== undefined;
  }

  /** The newest `limit` records, oldest first (copies). */
  list(limit: number): CommandRecord[] {
    return this._records.slice(Math.max(0, this._records.length - limit)).map((r) => ({ ...r }));
  }

  /** The newest record with an id of at least `id` (a copy), if any. */
  latestSince(id: number): CommandRecord | undefined {
    const last = this._records[this._records.length - 1];
    return last && last.id >= id ? { ...last } : undefined;
  }

  /** Names the log of command `id` (null: it has none, or it was dropped). */
  setLog(id: number, log: string | null): void {
    const record = this._record(id);
    if (record) record.log = log;
  }

  /** The record of command `id` (a copy), while the session remembers it. */
  get(id: number): CommandRecord | undefined {
    const record = this._record(id);
    return record && { ...record };
  }

  /** Ids are consecutive and records kept in order: the record's place follows from its id. */
  private _record(id: number): CommandRecord | undefined {
    const first = this._records[0];
    const record = first && Number.isInteger(id) ? this._records[id - first.id] : undefined;
    return record?.id === id ? record : undefined;
  }

  /**
   * Takes the integration's marks out of one chunk of output (whole UTF-8 characters): the output
   * to pass on (the marks' nonces removed; a mark not complete yet held back), and the marks, at
   * positions in it. Give them to `apply` once the output is in the ring.
   */
  filter(data: Buffer): FilteredOutput {
    return this._filter ? this._filter.filter(data) : { output: data, marks: [] };
  }

  /** The output ended: what `filter` held back is output after all (no mark ends it now). */
  release(): Buffer {
    return this._filter?.release() ?? Buffer.alloc(0);
  }

  /** Follows the marks `filter` found in output that starts at output cursor `start`. */
  apply(marks: readonly OwnMark[], start: number): void {
    for (const mark of marks) this._apply(mark.payload, start + mark.start, start + mark.end);
  }

  /** The shell ended: a command still running ends with it (`exit 3` ends with 3). */
  shellEnded(exitCode: number, cursor: number): void {
    this._finish(exitCode, cursor);
  }

  private _apply(payload: string, markStart: number, markEnd: number): void {
    const semi = payload.indexOf(';');
    const code = semi < 0 ? payload : payload.slice(0, semi);
    const rest = semi < 0 ? undefined : payload.slice(semi + 1);
    switch (code) {
      case 'E':
        this._commandLine(decodeValue(firstField(rest ?? '')));
        break;
      case 'C':
        this._start(markStart, markEnd);
        break;
      case 'D':
        this._finished(rest, markStart);
        break;
      case 'P':
        if (rest?.startsWith('Cwd=')) {
          this._setCwd(decodeValue(rest.slice(4)));
          // The integrations report the cwd from their prompt hooks only: after the command's output, just before its end.
          this._outputEnded(markStart);
        } else if (rest === OUTPUT_END) this._outputEnded(markStart);
        break;
    }
  }

  private _commandLine(reported: string): void {
    // Blanks before the line only keep it out of the history (HISTCONTROL=ignorespace, zsh's
    // HIST_IGNORE_SPACE, fish): bash's history-based text has none, zsh and fish report them.
    const line = reported.replace(LEADING_BLANKS, '');
    // Bash reports the line after `C` when its history could not tell it before: it belongs to
    // the command that has just started, if that one has none yet.
    const running = this._running?.record;
    if (running && running.command === '' && this._nextCommandLine === undefined) {
      running.command = line;
      return;
    }
    this._nextCommandLine = line;
  }

  private _start(markStart: number, cursor: number): void {
    // A start while a command runs: that one's end was never reported.
    this._finish(null, markStart);
    const now = Date.now();
    const record: CommandRecord = {
      id: this._nextId++,
      command: this._nextCommandLine ?? '',
      cwd: this._cwd ?? this._startCwd,
      exitCode: null,
      startCursor: cursor,
      endCursor: null,
      startedAt: new Date(now).toISOString(),
      durationMs: null,
      log: null,
    };
    this._nextCommandLine = undefined;
    this._running = { record, startedMs: now };
    this._records.push(record);
    if (this._records.length > MAX_COMMAND_RECORDS) this._records.shift();
    this._onDidStartCommand.fire({ ...record });
  }

  /** `D;<exit>`; a bare `D` is an empty line or Ctrl+C at the prompt, or a status not told. */
  private _finished(exit: string | undefined, cursor: number): void {
    const exitCode = exit !== undefined && /^-?\d+$/.test(exit.trim()) ? Number(exit.trim()) : null;
    this._finish(exitCode, cursor);
  }

  /**
   * The first mark counts: the command's log stops there as it is written. Only zsh's
   * PROMPT_EOL_MARK printed raw by the user (`print -r -- $PROMPT_EOL_MARK`; it is not exported,
   * so no program has it) ends the output sooner.
   */
  private _outputEnded(cursor: number): void {
    const running = this._running;
    if (!running || running.outputEnd !== undefined) return;
    running.outputEnd = cursor;
    this._onDidEndOutput.fire({ id: running.record.id, cursor });
  }

  /**
   * Output cursor of what ended the last command (its `D` mark, the next `C`, the shell's exit),
   * as read: at or after its `endCursor`, which a `P;Cwd` mark read earlier may have set.
   */
  get lastEndFoundAt(): number {
    return this._lastEndFoundAt;
  }
  private _lastEndFoundAt = 0;

  /** Ends the running command, if any. */
  private _finish(exitCode: number | null, cursor: number): void {
    if (!this._running) return;
    const { record, startedMs, outputEnd } = this._running;
    this._running = undefined;
    this._lastEndFoundAt = cursor;
    record.exitCode = exitCode;
    record.endCursor = outputEnd ?? cursor;
    record.durationMs = Date.now() - startedMs;
    this._onDidFinishCommand.fire({ ...record });
  }

  private _setCwd(cwd: string): void {
    if (cwd === '' || cwd === this._cwd) return;
    this._cwd = cwd;
    this._onDidChangeState.fire();
  }
}

/** Spaces and tabs before a command line (docs/protocol.md#ptycommands). */
const LEADING_BLANKS = /^[ \t]+/;

/** The first `;`-separated field (the command line of an `E`; a `;` in it travels as `\x3b`). */
function firstField(s: string): string {
  const semi = s.indexOf(';');
  return semi < 0 ? s : s.slice(0, semi);
}

/**
 * Undoes the escaping of an OSC 633 value: `\\` is a backslash, `\xNN` a byte (how `;`, newlines
 * and other control characters travel); the bytes are UTF-8.
 */
export function decodeValue(value: string): string {
  if (!value.includes('\\')) return value;
  const bytes: number[] = [];
  for (let i = 0; i < value.length; i++) {
    const ch = value[i];
    if (ch === '\\' && value[i + 1] === '\\') {
      bytes.push(0x5c);
      i++;
    } else if (ch === '\\' && value[i + 1] === 'x' && /^[0-9a-fA-F]{2}$/.test(value.slice(i + 2, i + 4))) {
      bytes.push(parseInt(value.slice(i + 2, i + 4), 16));
      i += 3;
    } else {
      const cp = value.codePointAt(i)!;
      if (cp > 0xffff) i++;
      for (const b of Buffer.from(String.fromCodePoint(cp), 'utf8')) bytes.push(b);
    }
  }
  return Buffer.from(bytes).toString('utf8');
}
