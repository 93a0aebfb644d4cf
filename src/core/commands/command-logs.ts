import * as fs from 'node:fs';
import * as path from 'node:path';
import { Disposable } from '../base/lifecycle';
import { makeFolders } from '../base/private-files';
import { CommandLog } from './command-log';
import type { CommandRecord, CommandTracker } from './command-tracker';
import { MAX_COMMAND_RECORDS } from '../base/param-limits';

/** Bytes of command logs a session keeps by default, over all its commands (docs/protocol.md#ptycommandoutput). */
export const DEFAULT_COMMAND_LOG_BYTES = 64 * 1024 * 1024;

/**
 * Each command's whole output in a log of its own (docs/protocol.md#ptycommandoutput): files 0600 in a folder 0700 of
 * the session, bounded over all of them (the oldest commands' logs go first; a single command
 * larger than the bound keeps its first bytes in the file, and its last in memory) and removed with the session.
 *
 * Fed by the session with every chunk of output right after the tracker has read it, so the
 * commands the chunk starts and ends are known, and each log gets exactly the bytes between its
 * command's start and end cursors. Input is never logged: only what the program printed.
 */
export class CommandLogs extends Disposable {
  /** Live logs, oldest first. */
  private readonly _logs: CommandLog[] = [];
  /** The logs whose command has not ended (one, but for a chunk that ends one and starts the next). */
  private _growing: CommandLog[] = [];
  private readonly _records = new Map<number, CommandRecord>();
  /** Commands that got no log, and why (as many as there are records); a dropped log is not here. */
  private readonly _unlogged = new Map<number, string>();
  private _total = 0;
  /** The output cursor up to which output has gone to the logs. */
  private _cursor = 0;
  private _folderMade = false;

  constructor(
    private readonly _tracker: CommandTracker,
    /** The session's own folder (made when its first command starts). */
    readonly folder: string,
    readonly budget = DEFAULT_COMMAND_LOG_BYTES,
    /**
     * Asked before each file or folder of the logs is made or removed: false while the folder
     * is not safe to write in (gone, or the host's runtime directory was taken over).
     */
    private readonly _canWrite: () => boolean = () => true,
  ) {
    super();
    this._register(_tracker.onDidStartCommand((r) => this._begin(r)));
    // The output ended before the command did (the shell's cwd, or zsh's PROMPT_SP mark, came first): the log ends there.
    this._register(
      _tracker.onDidEndOutput(({ id, cursor }) => {
        const record = this._records.get(id);
        if (record) this._records.set(id, { ...record, endCursor: cursor });
      }),
    );
    this._register(
      _tracker.onDidFinishCommand((r) => {
        if (!this._records.has(r.id)) return;
        this._records.set(r.id, r);
        // Ended by the shell's exit, after its last output: nothing more comes.
        if (r.endCursor !== null && r.endCursor <= this._cursor) this._finish(r.id);
      }),
    );
  }

  /** The live log of command `id`, if it has one. */
  get(id: number): CommandLog | undefined {
    return this._logs.find((l) => l.id === id);
  }

  /** One chunk of output; `cursor` is the output cursor just after it. */
  append(data: Uint8Array, cursor: number): void {
    // Marks reach the output whole (the tracker holds a mark's beginning back until it ends).
    this._cursor = cursor;
    this._feed(data, cursor - data.length, cursor);
  }

  /** Hands the bytes of `bytes` (which starts at cursor `start`) before `upTo` to the logs they belong to. */
  private _feed(bytes: Uint8Array, start: number, upTo: number): void {
    if (this._growing.length === 0) return;
    for (const log of this._growing) {
      const record = this._records.get(log.id);
      if (!record) continue; // dropped while this chunk was written (to make room)
      const from = Math.max(start, record.startCursor);
      const to = Math.min(upTo, record.endCursor ?? upTo);
      if (to > from) this._write(log, bytes.subarray(from - start, to - start));
      if (record.endCursor !== null && record.endCursor <= upTo) log.finish();
    }
    if (this._growing.some((l) => l.finished)) this._growing = this._growing.filter((l) => !l.finished);
  }

  /** Why command `id` has no log, when it never had one (undefined for a log dropped to make room, or one it has). */
  whyUnlogged(id: number): string | undefined {
    return this._unlogged.get(id);
  }

  private _begin(record: CommandRecord): void {
    if (this.isDisposed) return;
    // No log for this command (the command still works); what the caller is told when it asks for one.
    const unlogged = (why: string) => {
      this._unlogged.set(record.id, why);
      if (this._unlogged.size > MAX_COMMAND_RECORDS) this._unlogged.delete(this._unlogged.keys().next().value!);
    };
    if (!this._canWrite()) return unlogged("the host's runtime folder is not safe to write in");
    if (!this._folderMade) {
      try {
        makeFolders(this.folder, 0o700);
      } catch (e) {
        return unlogged(`its folder ${this.folder} cannot be made (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
      }
      // A folder there already that is a link (to anywhere), or not ours: never written through.
      if (!isOwnRealFolder(this.folder) || !isOwnRealFolder(path.dirname(this.folder)))
        return unlogged(`its folder ${this.folder} is a link or not the host user's, and is never written through`);
      this._folderMade = true;
    }
    const log = new CommandLog(record.id, path.join(this.folder, `${record.id}.log`), this._canWrite);
    this._logs.push(log);
    this._growing.push(log);
    this._records.set(record.id, record);
    this._tracker.setLog(record.id, log.path);
    // As many logs as records: a log whose record is forgotten could not be asked for.
    if (this._logs.length > MAX_COMMAND_RECORDS) this._drop(this._logs[0]);
  }

  private _finish(id: number): void {
    this.get(id)?.finish(); // (a no-op for a log already finished)
    this._growing = this._growing.filter((l) => l.id !== id);
  }

  private _write(log: CommandLog, bytes: Uint8Array): void {
    // Room is made by dropping the oldest finished logs; the running one keeps its first bytes.
    while (this._total + bytes.length > this.budget && this._logs[0] !== log && this._logs[0]) this._drop(this._logs[0]);
    const room = Math.max(0, this.budget - this._total);
    const part = bytes.length > room ? bytes.subarray(0, room) : bytes;
    log.append(part);
    this._total += part.length;
    // Past the bound: counted, and its end kept, so a budget still shows how the command ended.
    if (part.length < bytes.length) log.appendBeyond(bytes.subarray(part.length));
  }

  private _drop(log: CommandLog): void {
    this._logs.splice(this._logs.indexOf(log), 1);
    this._growing = this._growing.filter((l) => l !== log);
    this._records.delete(log.id);
    this._total -= log.size;
    log.remove();
    this._tracker.setLog(log.id, null);
  }

  /** The session ends: every log goes, and the folder with them. */
  override dispose(): void {
    if (this.isDisposed) return;
    for (const log of this._logs) log.close();
    this._logs.length = 0;
    this._growing = [];
    if (this._folderMade && this._canWrite()) fs.rmSync(this.folder, { recursive: true, force: true });
    super.dispose();
  }
}

/** Whether `dir` is a folder itself (not a symbolic link to one) of this process's user. */
function isOwnRealFolder(dir: string): boolean {
  try {
    const st = fs.lstatSync(dir);
    return st.isDirectory() && (process.getuid === undefined || st.uid === process.getuid());
  } catch {
    return false;
  }
}
