import * as fs from 'node:fs';
import * as path from 'node:path';

/** At most one look a second: SessionInfo is made for every change of the discovery record. */
const RECHECK_MS = 1000;

/**
 * Tells when the shell that reports its commands is gone from its process: `exec bash` or
 * `exec python3` replace the process's program (the pid stays), and the new one has no
 * integration of ours, so `integration` is no longer true (docs/protocol.md#ptycommands). The
 * program is known by its auxiliary vector (`/proc/<pid>/auxv`: where the kernel mapped it and its
 * stack), which every exec makes anew; read when the integration first speaks, compared when asked.
 * Before it has spoken, the process runs the shell or, for a moment before node-pty's exec, the
 * host's own program: anything else is what the user's start-up file exec'd (`exec tmux` in
 * .zshrc), which will never speak. Where /proc cannot be read (not Linux), the shell is taken to be
 * the one it was.
 */
export class ShellImage {
  private _first: Buffer | undefined;
  private _checkedAt = 0;
  private _replaced = false;
  private _told = false;

  /** @param _shell the shell's name (`bash`, `zsh`, `fish`): its program's file name starts with it */
  constructor(
    private readonly _pid: number,
    private readonly _shell: string,
  ) {}

  /** The integration spoke (a mark of ours): the program running now is the integrated shell. */
  noteIntegrationSpoke(): void {
    if (this._first === undefined && !this._replaced) this._first = auxvOf(this._pid);
  }

  /** Whether the integrated shell has been replaced since (for good, once seen). */
  replaced(now = Date.now()): boolean {
    if (this._replaced || now - this._checkedAt < RECHECK_MS) return this._replaced;
    this._checkedAt = now;
    if (this._first === undefined) {
      const exe = exeOf(this._pid);
      if (exe !== undefined && !path.basename(exe).startsWith(this._shell) && exe !== hostProgram()) this._replaced = true;
      return this._replaced;
    }
    const current = auxvOf(this._pid);
    if (current && !current.equals(this._first)) this._replaced = true;
    return this._replaced;
  }

  /** Whether the shell was found replaced already (nothing left to look at). */
  get foundReplaced(): boolean {
    return this._replaced;
  }

  /** True once, the first time `replaced` finds it so (looked at most once a second): the session's info changed. */
  justReplaced(now = Date.now()): boolean {
    if (this._told || !this.replaced(now)) return false;
    this._told = true;
    return true;
  }
}

let host: string | undefined;
/** The host's own program, as /proc names it (a forked child runs it until its exec). */
function hostProgram(): string {
  return (host ??= fs.realpathSync(process.execPath));
}

function exeOf(pid: number): string | undefined {
  try {
    return fs.readlinkSync(`/proc/${pid}/exe`);
  } catch {
    return undefined; // ended, or no /proc
  }
}

function auxvOf(pid: number): Buffer | undefined {
  try {
    return fs.readFileSync(`/proc/${pid}/auxv`);
  } catch {
    return undefined; // ended, or no /proc
  }
}
