import * as fs from 'node:fs';
import { NEW_FILE_FLAGS, PRIVATE_FILE_MODE } from '../base/private-files';
import { StrippedText } from '../base/stripped-text';

/** Timing of a command log's writes: the output path never waits for the disk. */
export const enum CommandLogTuning {
  /** Output gathered this long goes out in one write (a flood then writes what piled up meanwhile). */
  FlushDelayMs = 20,
  /** Gathered output this large goes out at once, without waiting for the delay. */
  FlushBytes = 256 * 1024,
  /**
   * A checkpoint of the log's text (a line start outside any escape sequence) at least this far
   * from the one before: a budget's tail is stripped from the last checkpoint before it, so it
   * reads at most this much more than it shows; a 64 MiB log keeps ~1000 of them (24 KB).
   */
  CheckpointBytes = 64 * 1024,
  /**
   * Past the session's bound, the output's last bytes kept in memory (a budget's tail is the
   * command's end, however long it ran; the file keeps its start). One ring's worth.
   */
  KeptEndBytes = 1024 * 1024,
}

/**
 * One command's whole output in a file of its own (0600), written behind the output path: bytes
 * are gathered in memory and written with one `fs.writev` at a time, so a PTY read never waits
 * for the disk. Reads see every byte appended, written or not yet.
 */
export class CommandLog {
  /** Bytes appended (the log's length once every write is done). */
  private _size = 0;
  /** Bytes on disk. */
  private _written = 0;
  private _pending: Buffer[] = [];
  private _fd: number | undefined;
  private _opening = false;
  private _writing = false;
  private _timer: NodeJS.Timeout | undefined;
  private _finished = false;
  private _closed = false;
  private _failed: Error | undefined;
  private _waiters: Array<{ bytes: number; resolve: () => void }> = [];
  /** The log stopped growing: the session's budget was spent (it keeps the command's first bytes). */
  truncated = false;
  /** Bytes of output past the bound: counted in `text`, never written; the last of them in `_end`. */
  private _beyond = 0;
  private _end: Buffer[] = [];
  private _endBytes = 0;
  /**
   * The log's text, counted as it is appended: characters and lines with escape sequences removed
   * (an output budget's exact totals, docs/protocol.md "Output budget"), and checkpoints to strip a
   * part of it from.
   */
  readonly text = new StrippedText(CommandLogTuning.CheckpointBytes);

  constructor(
    readonly id: number,
    readonly path: string,
    /** Asked before the file is made, written or removed: false when its folder is no longer safe to write in. */
    private readonly _canWrite: () => boolean = () => true,
  ) {}

  get size(): number {
    return this._size;
  }

  /** The command ended: no more bytes come. */
  get finished(): boolean {
    return this._finished;
  }

  /** Appends a copy of `data`; written soon, in a batch. */
  append(data: Uint8Array): void {
    if (this._closed || this._finished || data.length === 0) return;
    this._pending.push(Buffer.from(data)); // a copy: the chunk moves on to the mirror thread
    this._size += data.length;
    this.text.feed(data);
    this._schedule();
  }

  /** Bytes of the command's whole output: the file's, and those past the bound. */
  get totalBytes(): number {
    return this._size + this._beyond;
  }

  /**
   * Output past the session's bound: not written, but counted as the rest is (a budget's totals
   * stay exact) and its last `KeptEndBytes` kept, for a budget's tail.
   */
  appendBeyond(data: Uint8Array): void {
    if (this._closed || this._finished || data.length === 0) return;
    // The first line that starts past the bound is a place its tail may be stripped from.
    if (this._beyond === 0) this.text.checkpointSoon();
    this.truncated = true;
    this._beyond += data.length;
    this.text.feed(data);
    this._end.push(Buffer.from(data));
    this._endBytes += data.length;
    while (this._endBytes - this._end[0].length >= CommandLogTuning.KeptEndBytes) this._endBytes -= this._end.shift()!.length;
  }

  /** The last bytes kept of output past the bound, and where they start in the whole output. */
  keptEnd(): { offset: number; bytes: Buffer } {
    const bytes = this._end.length === 1 ? this._end[0] : Buffer.concat(this._end);
    if (this._end.length > 1) this._end = [bytes];
    return { offset: this.totalBytes - bytes.length, bytes };
  }

  /** No more output comes: what is gathered is written, then the file is closed. */
  finish(): void {
    if (this._finished) return;
    this._finished = true;
    this._flushSoon();
  }

  /**
   * Reads `length` bytes from `offset` (clamped to the log's size), once they are on disk.
   * Rejects when the log was removed or could not be written.
   */
  async read(offset: number, length: number): Promise<Buffer> {
    const from = Math.min(offset, this._size);
    const to = Math.min(this._size, from + length);
    if (to <= from) return Buffer.alloc(0);
    await this._writtenUpTo(to);
    const fh = await fs.promises.open(this.path, fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0)); // a link put in its place is not read through
    try {
      const buf = Buffer.allocUnsafe(to - from);
      const { bytesRead } = await fh.read(buf, 0, buf.length, from);
      return buf.subarray(0, bytesRead);
    } finally {
      await fh.close();
    }
  }

  /** Stops writing and removes the file (the log was dropped). */
  remove(): void {
    this._removed = true;
    this.close();
    // A file still being opened is removed once it is (see `_open`).
    if (!this._opening && this._canWrite()) fs.rm(this.path, { force: true }, () => {});
  }

  private _removed = false;

  /** Stops writing and closes the file. */
  close(): void {
    this._closed = true;
    this._pending = [];
    this._end = [];
    this._endBytes = 0;
    clearTimeout(this._timer);
    this._closeFd();
    for (const w of this._waiters.splice(0)) w.resolve();
  }

  private _schedule(): void {
    if (this._pendingBytes() >= CommandLogTuning.FlushBytes) this._flushSoon();
    else this._timer ??= setTimeout(() => this._flushSoon(), CommandLogTuning.FlushDelayMs);
  }

  private _pendingBytes(): number {
    return this._size - this._written - this._inFlight;
  }

  private _inFlight = 0;

  private _flushSoon(): void {
    clearTimeout(this._timer);
    this._timer = undefined;
    if (this._closed || this._writing || this._opening) return;
    if (this._fd === undefined) {
      // Opened once: the file is created then, and never truncated again.
      if (!this._opened) this._open();
      return;
    }
    if (this._pending.length === 0) {
      if (this._finished) this._closeFd();
      return;
    }
    // The folder is checked before every write, appends included: a runtime directory taken over
    // while a command prints gets not one byte more (docs/protocol.md, "Runtime directory").
    if (!this._canWrite()) return this._fail(new Error('the folder of the command logs is no longer safe to write in'));
    const batch = this._pending;
    this._pending = [];
    const bytes = batch.reduce((n, b) => n + b.length, 0);
    this._writing = true;
    this._inFlight = bytes;
    fs.writev(this._fd, batch, this._written, (err) => {
      this._writing = false;
      this._inFlight = 0;
      if (err) return this._fail(err);
      this._written += bytes;
      this._wake();
      if (this._closed) return this._closeFd();
      // What came meanwhile is gathered as any output is (FlushBytes or FlushDelayMs), not written
      // a PTY read at a time: a flood makes a few hundred writes, not one per read (and one check
      // of the folder each); a reader waiting, or the command's end, has it written at once.
      if (this._finished || this._waiters.length > 0) this._flushSoon();
      else if (this._pending.length > 0) this._schedule();
    });
  }

  private _opened = false;

  private _open(): void {
    this._opened = true;
    if (!this._canWrite()) return this._fail(new Error('the folder of the command logs is no longer safe to write in'));
    this._opening = true;
    // A new file only: a link planted at its name is refused, never written through.
    fs.open(this.path, NEW_FILE_FLAGS, PRIVATE_FILE_MODE, (err, fd) => {
      this._opening = false;
      if (err) return this._fail(err);
      if (this._closed) {
        fs.close(fd, () => {});
        if (this._removed && this._canWrite()) fs.rm(this.path, { force: true }, () => {});
        return;
      }
      this._fd = fd;
      this._flushSoon();
    });
  }

  private _fail(err: Error): void {
    // A full disk or a removed folder: the log ends here; reads say so.
    this._failed = err;
    this.close();
  }

  private _closeFd(): void {
    if (this._fd === undefined || this._writing) return;
    const fd = this._fd;
    this._fd = undefined;
    fs.close(fd, () => {});
  }

  private _writtenUpTo(bytes: number): Promise<void> {
    if (this._failed) return Promise.reject(this._failed);
    if (this._written >= bytes || this._closed) return Promise.resolve();
    return new Promise((resolve, reject) => {
      this._waiters.push({ bytes, resolve: () => (this._failed ? reject(this._failed) : resolve()) });
      this._flushSoon(); // a reader waits: no need to gather more
    });
  }

  private _wake(): void {
    const ready = this._waiters.filter((w) => this._written >= w.bytes);
    this._waiters = this._waiters.filter((w) => this._written < w.bytes);
    for (const w of ready) w.resolve();
  }
}
