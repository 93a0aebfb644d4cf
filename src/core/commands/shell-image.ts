import * as fs from 'node:fs';

/** At most one look a second: SessionInfo is made for every change of the discovery record. */
const RECHECK_MS = 1000;

/**
 * Tells when the shell that reports its commands is gone from its process: `exec bash` or
 * `exec python3` replace the process's program (the pid stays), and the new one has no
 * integration of ours, so `integration` is no longer true (docs/protocol.md#ptycommands). The
 * program is known by its auxiliary vector (`/proc/<pid>/auxv`: where the kernel mapped it and its
 * stack), which every exec makes anew; read when the integration first speaks, compared when asked.
 * Where it cannot be read (not Linux), the shell is taken to be the one it was.
 */
export class ShellImage {
  private _first: Buffer | undefined;
  private _checkedAt = 0;
  private _replaced = false;

  constructor(private readonly _pid: number) {}

  /** The integration spoke (a mark of ours): the program running now is the integrated shell. */
  noteIntegrationSpoke(): void {
    if (this._first === undefined && !this._replaced) this._first = auxvOf(this._pid);
  }

  /** Whether the integrated shell has been replaced since (for good, once seen). */
  replaced(now = Date.now()): boolean {
    if (this._replaced || this._first === undefined || now - this._checkedAt < RECHECK_MS) return this._replaced;
    this._checkedAt = now;
    const current = auxvOf(this._pid);
    if (current && !current.equals(this._first)) this._replaced = true;
    return this._replaced;
  }
}

function auxvOf(pid: number): Buffer | undefined {
  try {
    return fs.readFileSync(`/proc/${pid}/auxv`);
  } catch {
    return undefined; // ended, or no /proc
  }
}
