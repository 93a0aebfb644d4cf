import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { RpcError, ErrorCode, invalidParams, limitReached } from '../base/errors';
import { Disposable, disposableTimeout, DisposableStore, Emitter, MutableDisposable } from '../base/lifecycle';
import { selectOrThrow } from './selector';
import { whenFirst } from '../base/when-first';
import { DEFAULT_COLS, DEFAULT_ROWS, Session, SessionTuning, type Origin } from './session';
import { EventLog } from './events/event-log';
import { spawnProblem } from './pty/spawn-check';
import { runAsOf, SWITCHER } from './pty/run-as';
import { MAX_SESSIONS, SESSION_NAME_CONTROL, SESSION_NAME_RULE } from '../base/limits';
import { MAX_COLS, MAX_ROWS, MIN_COLS, MIN_ROWS } from '../base/param-limits';

/** How long an exited session stays listed and readable when nobody closes it (docs/guarantees.md#exited-sessions). */
export const EXITED_SESSION_TTL_MS = 5 * 60 * 1000;

export interface CreateSessionParams {
  command?: string;
  args?: string[];
  cwd?: string;
  env?: Record<string, string>;
  cols?: number;
  rows?: number;
  name?: string;
  origin?: Origin;
  workspace?: string | null;
  leaseSeconds?: number;
  /** pty-session-mcp's: the user and group the program runs as, when the host runs as root (else ignored). */
  uid?: number;
  gid?: number;
  /** With no `name`, the session is named by its id (pty-session-mcp's REST), not `<command>-<n>`. */
  namedById?: boolean;
}

export interface RegistryOptions {
  scrollbackLines?: number;
  ringBytes?: number;
  /** Default working directory for new sessions. */
  defaultCwd?: string;
  /** How long an exited session is kept. */
  exitedTtlMs?: number;
  /** Where sessions keep their command logs, a folder per session (docs/protocol.md#ptycommandoutput); none: no logs. */
  commandLogDir?: string;
  /** Bytes of command logs each session keeps (default 64 MiB). */
  commandLogBytes?: number;
  /** Asked before each command log file or folder is made or removed: false while the folder is not safe to write in. */
  commandLogWritable?: () => boolean;
  /** Where sessions hand their shells the integration's secret (the host's private folder; see SessionOptions). */
  handoverDir?: string;
  /** Sessions listed at once (default MAX_SESSIONS). */
  maxSessions?: number;
}

/** The user's shell: $SHELL, else /bin/sh. */
export function defaultShell(): string {
  return process.env.SHELL || '/bin/sh';
}

/**
 * Every session of one host, by id. Resolves selectors (id, exact name, unique id prefix) and
 * removes exited sessions after a while, so a crashed program's last screen stays readable.
 */
export class SessionRegistry extends Disposable {
  private readonly _sessions = new Map<string, Session>();
  /** Each listed session's lease and expiry timers: they go when it leaves the list. */
  private readonly _timers = new Map<string, DisposableStore>();
  /** Removed sessions whose end has not reached everyone yet (see `remove`), with what waits for that. */
  private readonly _leaving = new Map<Session, DisposableStore>();
  private _counter = 0;

  private readonly _onDidAdd = this._register(new Emitter<Session>());
  readonly onDidAdd = this._onDidAdd.event;
  private readonly _onDidRemove = this._register(new Emitter<Session>());
  readonly onDidRemove = this._onDidRemove.event;
  private readonly _onDidChange = this._register(new Emitter<Session>());
  /** A session's name, size or running state changed. */
  readonly onDidChange = this._onDidChange.event;
  /** Every session's events, numbered for the whole host (docs/protocol.md#events-ptyevents-and-ptywaitevent). */
  readonly events = this._register(new EventLog());

  constructor(private readonly _options: RegistryOptions = {}) {
    super();
  }

  get size(): number {
    return this._sessions.size;
  }

  list(): Session[] {
    return [...this._sessions.values()];
  }

  get(id: string): Session | undefined {
    return this._sessions.get(id);
  }

  /** Finds a session by id, exact name, or unique id prefix (selector.ts); -32001 otherwise. */
  resolve(selector: string): Session {
    return selectOrThrow(
      this.list(),
      selector,
      (s) => s.id,
      (s) => s.name,
    );
  }

  create(params: CreateSessionParams = {}): Session {
    const max = this._options.maxSessions ?? MAX_SESSIONS;
    if (this._sessions.size >= max) {
      throw limitReached(
        `Too many sessions: this host has ${this._sessions.size}, the limit is ${max} (exited sessions count until closed); end some first (shared-pty kill <session>)`,
        'sessions',
        max,
      );
    }
    const command = params.command || defaultShell();
    const cols = params.cols ?? DEFAULT_COLS;
    const rows = params.rows ?? DEFAULT_ROWS;
    if (!Number.isInteger(cols) || cols < MIN_COLS || cols > MAX_COLS) throw invalidParams(`cols must be an integer from ${MIN_COLS} to ${MAX_COLS}`);
    if (!Number.isInteger(rows) || rows < MIN_ROWS || rows > MAX_ROWS) throw invalidParams(`rows must be an integer from ${MIN_ROWS} to ${MAX_ROWS}`);
    // A relative cwd is from the host's default directory (what a far host's caller can know of),
    // never from wherever the host process happened to start; an absolute one is kept as given.
    const home = this._options.defaultCwd || os.homedir();
    const cwd = !params.cwd ? home : path.isAbsolute(params.cwd) ? params.cwd : path.resolve(home, params.cwd);
    // What node-pty would take without a check (it dies on an argument that is no string): before any look at the disk.
    const problem = spawnProblem({ command, args: params.args ?? [], cwd, env: params.env });
    if (problem) throw invalidParams(`Cannot start the session: ${problem}`);
    // node-pty reports a missing program or folder only as an exit code 1 after the fact: check first.
    if (!isDirectory(cwd))
      throw new RpcError(ErrorCode.ServerError, `Cannot start "${command}": ${fs.existsSync(cwd) ? 'not a directory' : 'no such directory'}: ${cwd}`, { cwd });
    if (!findExecutable(command, params.env?.PATH ?? process.env.PATH ?? '', cwd)) {
      throw new RpcError(ErrorCode.ServerError, `Cannot start "${command}": command not found or not executable`, { command });
    }
    const runAs = runAsOf(params.uid, params.gid);
    if (runAs && !findExecutable(SWITCHER, process.env.PATH ?? '', cwd)) {
      throw new RpcError(ErrorCode.ServerError, `Cannot start "${command}" as uid ${runAs.uid}: ${SWITCHER} (util-linux) is not installed`, { command });
    }
    const id = this._newId();
    const name = params.name || (params.namedById ? id : this._defaultName(command));
    if (params.name && SESSION_NAME_CONTROL.test(params.name)) throw invalidParams(`${SESSION_NAME_RULE[0].toUpperCase()}${SESSION_NAME_RULE.slice(1)}`);
    if (params.name && this.list().some((s) => s.name === params.name)) {
      throw invalidParams(`A session named "${params.name}" already exists`);
    }
    // A selector names an id before a name: a name that is another session's id could never be selected by.
    if (params.name && this._sessions.has(params.name)) {
      throw invalidParams(`"${params.name}" is the id of another session: a name may not be another session's id`);
    }
    let session: Session;
    try {
      session = new Session({
        id,
        name,
        command,
        args: params.args ?? [],
        cwd,
        env: params.env,
        cols,
        rows,
        origin: params.origin ?? 'script',
        workspace: params.workspace ?? null,
        scrollbackLines: this._options.scrollbackLines,
        ringBytes: this._options.ringBytes,
        leaseSeconds: params.leaseSeconds,
        commandLogDir: this._options.commandLogDir && path.join(this._options.commandLogDir, id),
        commandLogBytes: this._options.commandLogBytes,
        commandLogWritable: this._options.commandLogWritable,
        handoverDir: this._options.handoverDir,
        runAs,
      });
    } catch (e) {
      if (e instanceof RpcError) throw e;
      // node-pty reports a bad command or cwd by throwing: that is the caller's input, not our crash.
      throw new RpcError(ErrorCode.ServerError, `Cannot start "${command}": ${(e as Error).message}`);
    }
    this._sessions.set(id, session);
    const timers = new DisposableStore();
    this._timers.set(id, timers);
    const lease = timers.add(new MutableDisposable());
    const checkLease = () => {
      // No client for leaseSeconds: the editor that owned it is gone for good.
      if (session.clients > 0 || session.leaseSeconds === undefined || !session.running) {
        lease.clear();
      } else if (!lease.value) {
        lease.value = disposableTimeout(() => this.remove(id), session.leaseSeconds * 1000, { unref: true });
      }
    };
    // These listeners live as long as the session: its events end with it.
    session.onDidChange(() => {
      checkLease();
      this._onDidChange.fire(session);
    });
    checkLease();
    session.onEvent((e) => this.events.append(session.id, e));
    session.onExit(() => {
      timers.add(disposableTimeout(() => this.remove(id), this._options.exitedTtlMs ?? EXITED_SESSION_TTL_MS, { unref: true }));
    });
    this._onDidAdd.fire(session);
    return session;
  }

  /**
   * Ends a session (if running) and forgets it. It leaves the list at once; a running program is
   * hung up, and the session is let go once its end has reached everyone: subscribers get
   * `pty/exit`, streams their exit message, and calls in progress (a `pty/wait`, a `pty/send`)
   * answer `session_exit`. A program that will not die is let go after the kill's grace.
   */
  remove(id: string): void {
    const session = this._sessions.get(id);
    if (!session) return;
    this._sessions.delete(id);
    this._timers.get(id)?.dispose();
    this._timers.delete(id);
    const leaving = new DisposableStore();
    this._leaving.set(session, leaving);
    session.kill();
    const letGo = () => {
      if (!session.running && session.callsInProgress === 0) this._forget(session);
    };
    leaving.add(disposableTimeout(() => this._forget(session), SessionTuning.KillGraceMs + 3000, { unref: true }));
    // After the event has reached every listener, and after the last call's answer is written.
    leaving.add(session.onExit(() => setImmediate(letGo)));
    leaving.add(session.onCallsDone(() => setImmediate(letGo)));
    letGo();
  }

  /**
   * Resolves once every removed session has been let go (its end reached everyone and its calls
   * answered, as `remove` waits for), or after `ms`: a stopping host waits for this before its
   * sockets close.
   */
  async whenAllLeft(ms: number): Promise<void> {
    const end = Date.now() + ms;
    while (this._leaving.size > 0) {
      const left = end - Date.now();
      if (left <= 0 || (await whenFirst(this.onDidRemove, left)).kind === 'timeout') return;
    }
  }

  private _forget(session: Session): void {
    this._leaving.get(session)?.dispose();
    this._leaving.delete(session);
    if (session.isDisposed) return;
    session.dispose();
    this._onDidRemove.fire(session);
  }

  /** The host is ending: sessions go at once (their processes are hung up and then killed). */
  override dispose(): void {
    const sessions = [...this._sessions.values(), ...this._leaving.keys()];
    this._sessions.clear();
    for (const t of this._timers.values()) t.dispose();
    this._timers.clear();
    for (const s of sessions) this._forget(s);
    super.dispose();
  }

  private _newId(): string {
    // 6 base-36 characters: short enough for socket paths, 2 billion values against collisions.
    for (;;) {
      const id = crypto.randomBytes(5).readUInt32BE(0).toString(36).padStart(6, '0').slice(-6);
      // Nor a session's name: its selector would then name the new session instead.
      if (!this._sessions.has(id) && /^[a-z]/.test(id) && !this.list().some((s) => s.name === id)) return id;
    }
  }

  private _defaultName(command: string): string {
    // A command's name may hold anything; the session's name holds no control character (SESSION_NAME_CONTROL).
    const base = path.basename(command).replace(new RegExp(SESSION_NAME_CONTROL.source, 'gu'), '?') || 'session';
    for (;;) {
      const name = `${base}-${++this._counter}`;
      if (!this.list().some((s) => s.name === name)) return name;
    }
  }
}

function isDirectory(p: string): boolean {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/** Resolves a command as execvp would: a path as is (relative to cwd), a bare name through PATH. */
function findExecutable(command: string, pathVar: string, cwd: string): string | undefined {
  const isExec = (p: string) => {
    try {
      fs.accessSync(p, fs.constants.X_OK);
      return fs.statSync(p).isFile();
    } catch {
      return false;
    }
  };
  if (command.includes('/')) {
    const full = path.resolve(cwd, command);
    return isExec(full) ? full : undefined;
  }
  for (const dir of pathVar.split(path.delimiter)) {
    if (!dir) continue;
    const full = path.join(dir, command);
    if (isExec(full)) return full;
  }
  return undefined;
}
