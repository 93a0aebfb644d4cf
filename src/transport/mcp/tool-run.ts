import { randomBytes, randomUUID } from 'node:crypto';
import { ErrorCode } from '../../core/base/errors';
import { disposableTimeout, MutableDisposable, type IDisposable } from '../../core/base/lifecycle';
import type { Choice, ElicitAction, PersonPrompt } from './mcp-elicit';

/**
 * A tool call that runs on its own, apart from the request that started it, and asks the person
 * through requests the client fetches and answers later (docs/protocol.md#tasks-and-input-rounds):
 * the 2026-07-28 revision's multi-round-trip requests (`input_required`, answered by a retry with
 * `inputResponses`) and the Tasks extension (`tasks/get`, answered by `tasks/update`).
 */

/** Where a run stands: the Tasks extension's statuses. */
export type RunStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

/** One question to the client, as `inputRequests` carries it. */
export interface InputRequest {
  method: 'elicitation/create';
  params: Record<string, unknown>;
}

/** A tool result as MCP carries it. */
export interface ToolCallResult {
  content: Array<{ type: 'text'; text: string }>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  [key: string]: unknown;
}

/** What a run's work can ask the person: what every PersonPrompt can, and a line of input for the program. */
export interface RunPrompt extends Required<PersonPrompt> {
  /** A line of text for the program (form mode, one text field); undefined when declined or dismissed. */
  askText(message: string, signal?: AbortSignal): Promise<string | undefined>;
  /**
   * Says the run waits for input that is given elsewhere (typed into the terminal by the agent's
   * next call or the person), not asked of the client: `input_required` with `message` and no
   * question, until the returned function is called.
   */
  awaitInput(message: string): () => void;
}

/** The field of the form that asks for a line of input. */
export const INPUT_FIELD = 'input';
/** The field of the one-question choice form (as the 2025-11-25 elicitation's, src/transport/mcp/mcp-elicit.ts). */
const ANSWER_FIELD = 'answer';

/**
 * How long a run is kept after it was created, when the client asks for nothing else (a 2026-07-28
 * task or round, a 2025-11-25 task without `ttl`): long enough for a build and a person's answer
 * (docs/protocol.md#tasks-and-input-rounds).
 */
export const RUN_TTL_MS = 30 * 60_000;
/**
 * The shortest ttl granted: the poll interval the tasks suggest (1 s). A task gone before its
 * client could poll it once would be of no use to it.
 */
export const MIN_RUN_TTL_MS = 1000;
/**
 * The longest ttl granted: a day. A task follows its program until it ends, so a long ttl keeps a
 * forgotten task waiting that long; a day covers any build or test run worth waiting for, and the
 * client is told the ttl it got.
 */
export const MAX_RUN_TTL_MS = 24 * 60 * 60_000;

/** The ttl a run gets for the one its client asked for (none, or not a number: the default), within the bounds, in whole ms. */
export function grantedTtl(requested: unknown): number {
  if (typeof requested !== 'number' || !Number.isFinite(requested)) return RUN_TTL_MS;
  return Math.min(MAX_RUN_TTL_MS, Math.max(MIN_RUN_TTL_MS, Math.round(requested)));
}
/**
 * Most runs one store keeps before it drops finished ones early: a result is at most a send's
 * budget (~20 000 characters of text, twice with the structured copy), so this bounds a store to
 * some tens of MB however busy its agents are; running ones are never dropped early.
 */
const MAX_RUNS = 500;

/** A tool call running apart from its request. Its id is random (122 bits): it is the only key to it. */
export class ToolRun {
  readonly id = randomUUID();
  readonly createdAt = new Date();
  lastUpdatedAt = new Date();
  status: RunStatus = 'working';
  statusMessage?: string;
  result?: ToolCallResult;
  error?: { code: number; message: string };
  /** Aborts the work: on cancel, and when the run is dropped. */
  readonly abort = new AbortController();
  private readonly _pending = new Map<string, { request: InputRequest; answer: (response: Record<string, unknown>) => void }>();
  private _seq = 0;
  private _listeners = new Set<() => void>();
  /** Waits for input given elsewhere (awaitInput): input_required with no question, until it is given. */
  private _awaiting = false;

  /**
   * `work` runs at once, asking through the prompt it is handed. The run is kept `ttlMs` after it
   * was created (grantedTtl: within the bounds), then dropped by its store.
   */
  constructor(
    work: (prompt: RunPrompt, signal: AbortSignal) => Promise<ToolCallResult>,
    readonly ttlMs: number = RUN_TTL_MS,
  ) {
    void work(this._prompt(), this.abort.signal).then(
      (result) => this._finish('completed', { result }),
      (e: unknown) => {
        const err = e as { code?: unknown; message?: unknown };
        this._finish('failed', { error: { code: typeof err?.code === 'number' ? err.code : -32603, message: String(err?.message ?? e) } });
      },
    );
  }

  /** Whether the run is over (completed, failed or cancelled). */
  get terminal(): boolean {
    return this.status === 'completed' || this.status === 'failed' || this.status === 'cancelled';
  }

  /** The questions not answered yet, by their keys (each key is used once in the run's life). */
  get inputRequests(): Record<string, InputRequest> {
    return Object.fromEntries([...this._pending].map(([k, v]) => [k, v.request]));
  }

  /** Answers questions by key; keys not outstanding are ignored, as the specification says. */
  answer(responses: Record<string, unknown> | undefined): void {
    for (const [key, response] of Object.entries(responses ?? {})) {
      const p = this._pending.get(key);
      if (!p || typeof response !== 'object' || response === null) continue;
      this._pending.delete(key);
      p.answer(response as Record<string, unknown>);
    }
    this._backToWork();
  }

  /** Stops waiting for the program (it goes on running in the terminal) and ends the run as cancelled. */
  cancel(): void {
    if (this.terminal) return;
    this._finish('cancelled', {});
    this.abort.abort();
  }

  /** When its ttl has passed (ms since the epoch). */
  get expiresAt(): number {
    return this.createdAt.getTime() + this.ttlMs;
  }

  /**
   * Its ttl passed: a run still going stops waiting for the program (it goes on in the terminal)
   * and ends `failed` with -32602, as the specification answers an expired task.
   */
  expire(): void {
    this._finish('failed', {
      error: { code: ErrorCode.InvalidParams, message: `Failed to retrieve task: Task has expired (kept ${this.ttlMs} ms after it was created)` },
    });
    this.abort.abort();
  }

  /** Resolves once the run asks something or is over (at once when it already does or is). */
  settled(signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const check = () => {
        if (this.status === 'working' && !signal?.aborted) return;
        this._listeners.delete(check);
        signal?.removeEventListener('abort', check);
        resolve();
      };
      this._listeners.add(check);
      signal?.addEventListener('abort', check, { once: true });
      check();
    });
  }

  /** Calls `listener` on every change of status or questions; returns how to stop. */
  onChange(listener: () => void): () => void {
    this._listeners.add(listener);
    return () => this._listeners.delete(listener);
  }

  private _finish(status: 'completed' | 'failed' | 'cancelled', what: { result?: ToolCallResult; error?: { code: number; message: string } }): void {
    if (this.terminal) return;
    this._pending.clear();
    this.result = what.result;
    this.error = what.error;
    const message = status === 'cancelled' ? 'Cancelled: the program was left running in the terminal.' : status === 'failed' ? what.error?.message : undefined;
    this._set(status, message);
  }

  /** `working` again once nothing is asked and no input is awaited. */
  private _backToWork(): void {
    if (this._pending.size === 0 && !this._awaiting && this.status === 'input_required') this._set('working', undefined);
  }

  private _set(status: RunStatus, message: string | undefined): void {
    this.status = status;
    this.statusMessage = message;
    this.lastUpdatedAt = new Date();
    for (const l of [...this._listeners]) l();
  }

  /** Puts one question to the client; resolves with its answer (a cancel for a run that ends first). */
  private _ask(kind: string, params: Record<string, unknown>, signal?: AbortSignal): Promise<Record<string, unknown>> {
    if (this.terminal || signal?.aborted) return Promise.resolve({ action: 'cancel' });
    const key = `${kind}-${++this._seq}`;
    return new Promise((resolve) => {
      const gone = () => {
        if (this._pending.delete(key)) resolve({ action: 'cancel' });
        this._backToWork();
      };
      signal?.addEventListener('abort', gone, { once: true });
      this.abort.signal.addEventListener('abort', gone, { once: true });
      this._pending.set(key, {
        request: { method: 'elicitation/create', params },
        answer: (r) => {
          signal?.removeEventListener('abort', gone);
          resolve(r);
        },
      });
      this._set('input_required', String(params.message));
    });
  }

  private _prompt(): RunPrompt {
    return {
      // The question carries its elicitationId (random: unique within the server, as URL mode requires).
      openUrl: async (message, url, elicitationId) => actionOf(await this._ask('secret', { mode: 'url', message, url, elicitationId })),
      choose: async <T extends string>(message: string, choices: readonly Choice<T>[], signal?: AbortSignal) => {
        const requestedSchema = {
          type: 'object',
          properties: { [ANSWER_FIELD]: { type: 'string', title: 'Answer', oneOf: choices.map((c) => ({ const: c.value, title: c.title })) } },
          required: [ANSWER_FIELD],
        };
        const r = await this._ask('approval', { mode: 'form', message, requestedSchema }, signal);
        const value = r.action === 'accept' ? (r.content as Record<string, unknown> | undefined)?.[ANSWER_FIELD] : undefined;
        return choices.find((c) => c.value === value)?.value;
      },
      askText: async (message, signal) => {
        const requestedSchema = {
          type: 'object',
          properties: { [INPUT_FIELD]: { type: 'string', title: 'Input', description: 'What to type (Enter is pressed after it).' } },
          required: [INPUT_FIELD],
        };
        const r = await this._ask('input', { mode: 'form', message, requestedSchema }, signal);
        const value = r.action === 'accept' ? (r.content as Record<string, unknown> | undefined)?.[INPUT_FIELD] : undefined;
        return typeof value === 'string' ? value : undefined;
      },
      awaitInput: (message) => {
        if (this.terminal) return () => undefined;
        this._awaiting = true;
        this._set('input_required', message);
        return () => {
          if (!this._awaiting) return;
          this._awaiting = false;
          this._backToWork();
        };
      },
    };
  }
}

function actionOf(r: Record<string, unknown>): ElicitAction {
  return r.action === 'accept' || r.action === 'decline' ? r.action : 'cancel';
}

/**
 * Most tasks one page of `tasks/list` carries: an agent has a handful, so nearly always one page;
 * a full store (MAX_RUNS) is ten pages of some 15 KB each.
 */
export const TASKS_PAGE_SIZE = 50;

/** One page of a caller's runs, and the cursor of the next page when there are more. */
export interface RunPage {
  runs: ToolRun[];
  nextCursor?: string;
}

/**
 * The runs of one server (a host's `/mcp`, or one `shared-pty mcp`), by id. Each is kept its ttl
 * after it was created for the client to fetch, then dropped (one timer for the whole store, armed
 * for the soonest expiry and unref'd, so it neither keeps the process alive nor grows with the
 * runs). Disposing the store ends every run and the timer.
 */
export class RunStore implements IDisposable {
  private readonly _runs = new Map<string, { run: ToolRun; owner: object; seq: number }>();
  /** Numbers the runs in the order they were added: a cursor says the last one its page held. */
  private _seq = 0;
  /** Names this store in its cursors, so a cursor of another store (a restarted server) is refused, not misread. */
  private readonly _nonce = randomBytes(6).toString('base64url');
  /** The one expiry timer, and when it fires (ms since the epoch). */
  private readonly _timer = new MutableDisposable<IDisposable>();
  private _timerAt = Infinity;
  private _disposed = false;

  /** Keeps `run` for `owner` (whoever may call: a token's holder, the host's own grant). */
  add(run: ToolRun, owner: object): ToolRun {
    if (this._disposed) {
      run.cancel();
      return run;
    }
    this._sweep();
    this._runs.set(run.id, { run, owner, seq: ++this._seq });
    this._arm();
    return run;
  }

  /** Drops a run whose result its client has (a call's last round). */
  delete(run: ToolRun): void {
    this._runs.delete(run.id);
  }

  /** The run `id` names, if `owner` started it: another token's run is as unknown as none. */
  get(id: unknown, owner: object): ToolRun | undefined {
    this._sweep();
    const kept = typeof id === 'string' ? this._runs.get(id) : undefined;
    return kept?.owner === owner ? kept.run : undefined;
  }

  /**
   * One page of `owner`'s runs, oldest first: the first page without a cursor, the next with the
   * page's `nextCursor`. A cursor names the place after the last run of its page, so runs dropped
   * meanwhile skip nothing and repeat nothing, and runs added meanwhile come on a later page.
   * Undefined for a cursor this store did not give.
   */
  page(owner: object, cursor: string | undefined, size = TASKS_PAGE_SIZE): RunPage | undefined {
    let after = 0;
    if (cursor !== undefined) {
      const at = this._placeOf(cursor);
      if (at === undefined) return undefined;
      after = at;
    }
    this._sweep();
    const runs: ToolRun[] = [];
    let last = after;
    for (const kept of this._runs.values()) {
      if (kept.seq <= after || kept.owner !== owner) continue;
      if (runs.length === size) return { runs, nextCursor: this._cursorAt(last) };
      runs.push(kept.run);
      last = kept.seq;
    }
    return { runs };
  }

  /** Ends `owner`'s runs (its token ended: what was started with it must not act later). */
  cancelOwnedBy(owner: object): void {
    for (const { run, owner: o } of this._runs.values()) if (o === owner) run.cancel();
  }

  /** Ends every run (their waits stop; the programs go on) and the timer. */
  dispose(): void {
    if (this._disposed) return;
    this._disposed = true;
    this._timer.dispose();
    for (const { run } of this._runs.values()) run.cancel();
    this._runs.clear();
  }

  private _cursorAt(seq: number): string {
    return Buffer.from(`${this._nonce}:${seq}`).toString('base64url');
  }

  /** The place a cursor of this store names; undefined for any other string. */
  private _placeOf(cursor: string): number | undefined {
    const m = /^([\w-]+):([1-9]\d{0,15})$/.exec(Buffer.from(cursor, 'base64url').toString());
    if (!m || m[1] !== this._nonce || this._cursorAt(Number(m[2])) !== cursor || Number(m[2]) > this._seq) return undefined;
    return Number(m[2]);
  }

  private _sweep(): void {
    const now = Date.now();
    for (const [id, { run }] of this._runs) {
      if (now < run.expiresAt) continue;
      run.expire();
      this._runs.delete(id);
    }
    // Past the bound, the oldest finished runs go first (their results are what takes room).
    for (const [id, { run }] of this._runs) {
      if (this._runs.size <= MAX_RUNS) break;
      if (run.terminal) this._runs.delete(id);
    }
  }

  /** Sets the timer for the soonest expiry, unless it is already set no later (none while the store is empty). */
  private _arm(): void {
    let soonest = Infinity;
    for (const { run } of this._runs.values()) soonest = Math.min(soonest, run.expiresAt);
    if (soonest === Infinity) {
      this._timer.clear();
      this._timerAt = Infinity;
      return;
    }
    if (this._timer.value && this._timerAt <= soonest) return;
    this._timerAt = soonest;
    // At least 1 ms: a run whose expiry is due now is swept by the timer, not in a loop here.
    this._timer.value = disposableTimeout(
      () => {
        this._timerAt = Infinity;
        this._timer.clear();
        this._sweep();
        this._arm();
      },
      Math.max(1, soonest - Date.now()),
      { unref: true },
    );
  }
}
