import { limitReached, type RpcError } from '../base/errors';

/**
 * How much regex time a client may spend on the host's one thread (docs/protocol.md "Limits").
 * A regex runs on the main thread, bounded per test (REGEX_BUDGET_MS), but a client that sends
 * costly test after costly test (40 `pty/wait`s with `^(a+)+$` froze everyone else for 10 s) must
 * also run out. Each connection and each scoped token has a bucket of regex time that refills.
 */
export const enum RegexBudgetTuning {
  /**
   * Regex time a client may spend at once: two tests at the per-test cap, so a burst of costly
   * calls holds everyone else for half a second at most (40 `pty/wait`s with `^(a+)+$` from one
   * view token: 10.2 s before, measured). A real client's patterns never come near it: a
   * `pty/wait` regex over a whole 1 MiB ring takes 0.2–0.6 ms (measured on build-log-like text).
   */
  CapacityMs = 500,
  /**
   * Regex time regained per second: a tenth of the host's thread at most, so a client that
   * keeps spending leaves nine tenths to everyone else. A wait on the whole ring during a flood
   * (one test per 10 ms at most, 0.6 ms each) spends 60 ms a second: within it.
   */
  RefillMsPerSecond = 100,
  /**
   * What all connections to the host's sockets share (they hold no token, so opening more of
   * them must not buy more time): a second at once, a quarter of the thread regained per second,
   * room for a few clients waiting on regexes during floods side by side.
   */
  SocketsCapacityMs = 1000,
  SocketsRefillMsPerSecond = 250,
}

/** The regex time every connection to one host's sockets shares. */
export function socketsRegexBudget(): RegexBudget {
  return new RegexBudget(RegexBudgetTuning.SocketsCapacityMs, RegexBudgetTuning.SocketsRefillMsPerSecond);
}

/**
 * A token bucket of regex time (milliseconds on the host's thread) for one connection or one
 * scoped token. `available()` says how long the next test may run; `charge()` takes what it took.
 */
export class RegexBudget {
  private _left: number;
  private _at: number;

  constructor(
    readonly capacityMs: number = RegexBudgetTuning.CapacityMs,
    readonly refillPerSecond: number = RegexBudgetTuning.RefillMsPerSecond,
    private readonly _now: () => number = () => performance.now(),
  ) {
    this._left = capacityMs;
    this._at = this._now();
  }

  /** Milliseconds of regex time left now. */
  available(): number {
    const now = this._now();
    this._left = Math.min(this.capacityMs, this._left + ((now - this._at) / 1000) * this.refillPerSecond);
    this._at = now;
    return this._left;
  }

  /** A test took `ms`. */
  charge(ms: number): void {
    this.available();
    this._left = Math.max(0, this._left - ms);
  }

  /** How long until `ms` of regex time is available again. */
  secondsUntil(ms: number): number {
    return Math.max(0, Math.ceil((ms - this.available()) / this.refillPerSecond));
  }
}

/** The refusal of a test when the caller's regex time is spent (-32000 with `limit: "regexTime"`: REST 429). */
export function regexBudgetSpent(budget: RegexBudget, minimumMs: number): RpcError {
  return limitReached(
    `Regex time spent: this connection, its token or the host's sockets together ran regexes for ${budget.capacityMs} ms lately, the most they may; ` +
      `they regain ${budget.refillPerSecond} ms per second (try again in about ${Math.max(1, budget.secondsUntil(minimumMs))} s), or use a simpler regex or match`,
    'regexTime',
    budget.capacityMs,
  );
}
