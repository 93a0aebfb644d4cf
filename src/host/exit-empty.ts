import { toDisposable, type IDisposable } from '../core/base/lifecycle';

/** When a per-user host with nothing left ends by itself (like tmux's `exit-empty`). */
export const enum ExitEmpty {
  /**
   * Default time with no session and no client before the per-user host exits: long enough for an
   * editor to reload or a script to open its next session, short enough that a host left by an
   * update (its files gone) does not run for good.
   */
  DefaultMs = 10 * 60 * 1000,
  /** How often emptiness is looked at, at most (the exit comes up to this late). */
  MaxCheckMs = 30 * 1000,
  /** How often a per-user host looks whether a newer one took over (or an update removed its files). */
  OutdatedCheckMs = 30 * 1000,
}

/** What the watch needs to know of the host. */
export interface EmptyHost {
  /** Sessions listed (running, or exited and still readable). */
  readonly sessions: number;
  /** Clients connected (the editor, `attach`, `shared-pty mcp`, scripts). */
  readonly connections: number;
}

/**
 * Calls `onEmpty` once the host has had no session and no connected client for `idleMs` without a
 * break. The timer does not keep the process alive.
 */
export function exitWhenEmpty(host: EmptyHost, idleMs: number, onEmpty: () => void): IDisposable {
  let emptySince: number | undefined;
  const timer = setInterval(
    () => {
      if (host.sessions > 0 || host.connections > 0) return void (emptySince = undefined);
      emptySince ??= Date.now();
      if (Date.now() - emptySince >= idleMs) {
        clearInterval(timer);
        onEmpty();
      }
    },
    Math.max(10, Math.min(idleMs / 4, ExitEmpty.MaxCheckMs)),
  );
  timer.unref();
  return toDisposable(() => clearInterval(timer));
}

/**
 * The idle time from `--idle-exit-ms`, `--stay` and `SHARED_PTY_IDLE_EXIT_MS` (0 also means stay);
 * undefined when the host stays up for good.
 */
export function idleExitMs(flag: number | undefined, stay: boolean, env: NodeJS.ProcessEnv = process.env): number | undefined {
  if (stay) return undefined;
  const fromEnv = env.SHARED_PTY_IDLE_EXIT_MS;
  const ms = flag ?? (fromEnv !== undefined && /^\d+$/.test(fromEnv.trim()) ? Number(fromEnv) : ExitEmpty.DefaultMs);
  return ms > 0 ? ms : undefined;
}

/**
 * A per-user host that is outdated (`outdated()`: a host of another version started after it, or
 * its own files are gone) exits once its last session has ended, connected clients or not: the
 * editor of the new version stays connected to list it. Returns `check`, to call when a session
 * ends, so the exit follows at once; it is also looked at every OutdatedCheckMs.
 */
export function exitWhenOutdated(host: Pick<EmptyHost, 'sessions'>, outdated: () => boolean, onExit: () => void): IDisposable & { check(): void } {
  let done = false;
  const check = () => {
    if (done || host.sessions > 0 || !outdated()) return;
    done = true;
    clearInterval(timer);
    onExit();
  };
  const timer = setInterval(check, ExitEmpty.OutdatedCheckMs);
  timer.unref();
  return { check, dispose: () => clearInterval(timer) };
}
