import * as fs from 'node:fs';
import { makeFolders } from '../core/base/private-files';
import { Disposable, Emitter } from '../core/base/lifecycle';
import { dirProblem } from './runtime-dir';

/** lstat errors that mean a directory is simply gone (a tmp cleaner): put back, not a takeover. */
const GONE = new Set(['ENOENT', 'ENOTDIR']);

/**
 * Keeps a host's writes inside directories that are its own (docs/architecture.md, Faults;
 * docs/protocol.md, "Runtime directory"): the runtime directory and the host's folder in it are
 * checked before every write after start-up — there, ours, mode 0700 — not only when one is
 * missing. Another local user who re-creates a deleted runtime directory first (mode 0777), or
 * anything else that makes one of them not ours, is a takeover: the guard says so once
 * (`onDidLose`, with one line that says why) and allows no write from then on.
 */
export class RuntimeDirGuard extends Disposable {
  private readonly _onDidLose = this._register(new Emitter<string>());
  /** The directory was taken over: the host must stop listening and writing there. Fires once. */
  readonly onDidLose = this._onDidLose.event;
  private _lost: string | undefined;

  constructor(
    readonly runtimeDir: string,
    /** The host's own folder in it (its sockets and command logs). */
    readonly hostDir: string,
  ) {
    super();
  }

  /** Why the directories are no longer the host's (one line), once taken over. */
  get lost(): string | undefined {
    return this._lost;
  }

  /**
   * Before a write: true when both directories are there, ours and mode 0700. False when one is
   * gone (`restore` puts it back) or was taken over (then for good).
   */
  check(): boolean {
    if (this._lost !== undefined) return false;
    for (const dir of [this.runtimeDir, this.hostDir]) {
      let problem: string | undefined;
      try {
        problem = dirProblem(dir, 'write');
      } catch (e) {
        if (GONE.has((e as NodeJS.ErrnoException).code ?? '')) return false;
        problem = `cannot be checked (${(e as Error).message})`;
      }
      if (problem !== undefined) {
        this._lose(dir, problem);
        return false;
      }
    }
    return true;
  }

  /**
   * Makes the directories again where they are gone (mode 0700), then checks them: true when both
   * are there and ours. A directory someone else made first is found by the check, never used.
   */
  restore(): boolean {
    if (this._lost !== undefined) return false;
    try {
      makeFolders(this.runtimeDir, 0o700);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') return false; // cannot be made now (a read-only disk): later
    }
    // The runtime directory first: never make our folder inside one that is not ours.
    if (!this._checkOne(this.runtimeDir)) return false;
    try {
      fs.mkdirSync(this.hostDir, { mode: 0o700 });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') return false;
    }
    return this.check();
  }

  private _checkOne(dir: string): boolean {
    try {
      const problem = dirProblem(dir, 'write');
      if (problem === undefined) return true;
      this._lose(dir, problem);
    } catch {
      // gone again meanwhile: not ours to write in now
    }
    return false;
  }

  private _lose(dir: string, problem: string): void {
    if (this._lost !== undefined) return;
    this._lost = `the runtime directory was taken over: ${dir} ${problem}`;
    this._onDidLose.fire(this._lost);
  }
}
