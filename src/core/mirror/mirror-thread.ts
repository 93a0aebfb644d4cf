import * as fs from 'node:fs';
import * as path from 'node:path';
import * as v8 from 'node:v8';
import { Worker } from 'node:worker_threads';
import type { FromMirrorThread, MirrorThreadStats, ProgramSignal, ToMirrorThread } from './mirror-protocol';

/** What the thread needs from each mirror handle (MirrorProxy). */
export interface MirrorEndpoint {
  /** Sends this mirror's queued output (called by the thread's batch timer). */
  flush(): void;
  /** Everything up to `cursor` is parsed; `rate`, when measured: the parse speed, bytes per ms. */
  onParsedUpTo(cursor: number, rate?: number): void;
  /**
   * The program rang the bell or set a new title in output parsed since the last notice, in
   * output order; `fence`: in output before that fence (see MirrorProxy.fence).
   */
  onSignals(signals: readonly ProgramSignal[], fence?: number): void;
  /** The terminal's answers to queries in output parsed since the last notice, in order. */
  onAnswers(data: string): void;
  /** The thread was restarted: open the mirror again, rebuilt from the output its session still holds. */
  reopen(): void;
}

const sharedKey = Symbol.for('shared-pty.mirrorThread');

/**
 * How soon queued output goes to the thread (`MirrorThread.markDirty`): `prompt` within a
 * millisecond; `relaxed` while the thread has plenty of that session's output to parse; `trickle`
 * for a little output that nothing but a read waits on. The soonest pace asked for wins.
 */
export type BatchPace = 'prompt' | 'relaxed' | 'trickle';

const enum ThreadTuning {
  /** Output waits at most this long to be sent to the thread (one message per session per batch)… */
  BatchMs = 1,
  /**
   * …or this long while the thread still has plenty of that session's output to parse: the batch
   * then gathers more (a message cost 30-80 us a side on these VMs: 8-14 % of both threads during a
   * flood sent every millisecond, bench/README.md).
   */
  RelaxedBatchMs = 4,
  /**
   * A trickle (MirrorProxy: a little output with no escape sequence and no bell, such as the echo
   * of a key) is sent once it pauses this long… Nothing waits on a trickle being parsed but a
   * read, and a read sends the queued output first. Each message wakes the thread, and its
   * "parsed" notice wakes the main thread: a fast typist's keys (5 ms apart) go in one message
   * every TrickleMaxMs instead of one each. Measured (bench/README.md, "Issue 25: the echo
   * beside a raw node-pty host, and a typist's keys"): with a 2 ms pause and 16 ms at most, keys
   * 5 ms apart cost the host ~0.7 ms of CPU each (0.2 of it the mirror thread's) and their echo's
   * median was behind tmux's; with these, ~0.2-0.35 ms and at tmux's.
   */
  TrickleQuietMs = 50,
  /** …or once it has waited this long, however steadily it comes. */
  TrickleMaxMs = 200,
  /** With no session left, the thread (a V8 isolate, ~5-10 MB) is stopped after this long. */
  IdleStopMs = 10_000,
}

/**
 * The one worker thread of this process that parses every session's output into its headless
 * terminal. Output crosses as transferred bytes, in batches per session; reads are queries
 * answered on the screen exactly as of the output sent before them.
 */
export class MirrorThread {
  /**
   * The process's mirror thread, started on first use. Kept on globalThis: a process that loads
   * this module twice (tsx serves it to ES-module and CommonJS importers separately) still has one.
   */
  static shared(): MirrorThread {
    const g = globalThis as { [sharedKey]?: MirrorThread };
    return (g[sharedKey] ??= new MirrorThread());
  }

  private _worker: Worker | undefined;
  /** Resolves once the newest thread runs (see whenStarted). */
  private _started: Promise<void> | undefined;
  private _nextId = 1;
  private _nextReq = 1;
  private readonly _endpoints = new Map<number, MirrorEndpoint>();
  private readonly _requests = new Map<number, { resolve: (v: { value: unknown; cursor: number }) => void; reject: (e: Error) => void }>();
  private readonly _dirty = new Set<MirrorEndpoint>();
  private _flushTimer: NodeJS.Timeout | undefined;
  private _idleTimer: NodeJS.Timeout | undefined;

  register(endpoint: MirrorEndpoint): number {
    const id = this._nextId++;
    this._endpoints.set(id, endpoint);
    clearTimeout(this._idleTimer);
    return id;
  }

  unregister(id: number): void {
    this._endpoints.delete(id);
    // No thread, nothing to close: do not start one for that.
    if (this._worker) this.post({ t: 'close', id });
    if (this._endpoints.size === 0 && this._worker) {
      clearTimeout(this._idleTimer);
      this._idleTimer = setTimeout(() => this._stopWorker(), ThreadTuning.IdleStopMs);
      this._idleTimer.unref();
    }
  }

  /**
   * Asks for `endpoint.flush()` shortly (`relaxed`: the thread has plenty to parse meanwhile, so
   * later): output is sent in batches, since a message costs about as
   * much as parsing a few KB and a PTY read gives at most 4 KB (measured: 6 ms/MB of postMessage
   * when sent once per read; a build that sent at the end of each event-loop turn whenever the
   * parser had caught up spent 18 % of both threads in postMessage during a flood). A read
   * never waits for the batch: a query sends the queued output first.
   */
  markDirty(endpoint: MirrorEndpoint, pace: BatchPace = 'prompt'): void {
    this._dirty.add(endpoint);
    const now = performance.now();
    if (pace === 'trickle') return this._trickle(now);
    this._trickleOnly = false;
    const delay = pace === 'relaxed' ? ThreadTuning.RelaxedBatchMs : ThreadTuning.BatchMs;
    const due = now + delay;
    if (this._flushTimer && this._flushDue <= due) return;
    clearTimeout(this._flushTimer);
    this._flushDue = due;
    this._flushTimer = setTimeout(this._flushDirty, delay);
  }

  /** A trickle waits for a pause (TrickleQuietMs), at most TrickleMaxMs from its start; a sooner batch takes it along. */
  private _trickle(now: number): void {
    if (!this._flushTimer) {
      this._trickleOnly = true;
      this._trickleSince = now;
      this._flushDue = now + ThreadTuning.TrickleQuietMs;
      this._flushTimer = setTimeout(this._flushDirty, ThreadTuning.TrickleQuietMs);
      return;
    }
    if (!this._trickleOnly || now + ThreadTuning.TrickleQuietMs > this._trickleSince + ThreadTuning.TrickleMaxMs) return;
    this._flushDue = now + ThreadTuning.TrickleQuietMs;
    this._flushTimer.refresh(); // the same timer, due a pause from now
  }

  /** When the batch timer fires (performance.now()). */
  private _flushDue = 0;
  /** The pending batch is a trickle's alone (it may wait for a pause), since `_trickleSince`. */
  private _trickleOnly = false;
  private _trickleSince = 0;

  private readonly _flushDirty = (): void => {
    this._flushTimer = undefined;
    for (const e of this._dirty) e.flush();
    this._dirty.clear();
  };

  post(msg: ToMirrorThread, transfer?: ArrayBuffer[]): void {
    this._ensureWorker().postMessage(msg, transfer);
  }

  request(msg: { t: 'query'; id: number; op: string; args: unknown[] } | { t: 'stats' }): Promise<{ value: unknown; cursor: number }> {
    const req = this._nextReq++;
    return new Promise((resolve, reject) => {
      this._requests.set(req, { resolve, reject });
      this.post({ ...msg, req } as ToMirrorThread);
    });
  }

  /** Heap figures of the mirror thread (benchmarks). */
  async stats(): Promise<MirrorThreadStats> {
    return (await this.request({ t: 'stats' })).value as MirrorThreadStats;
  }

  /**
   * Starts the thread if none runs, and resolves once it runs (or failed to start). V8 reads
   * /proc/self/maps while it makes the thread's heap, through a descriptor that is not
   * close-on-exec: a program started meanwhile (node-pty forks) would keep it open for its life.
   * So a session's program is started only after this.
   */
  whenStarted(): Promise<void> {
    this._ensureWorker();
    return this._started!;
  }

  private _ensureWorker(): Worker {
    if (this._worker) return this._worker;
    const worker = startWorker();
    this._started = new Promise<void>((resolve) => {
      worker.once('online', () => resolve());
      worker.once('error', () => resolve());
      worker.once('exit', () => resolve());
    });
    worker.on('message', (msg: FromMirrorThread) => this._onMessage(msg));
    worker.on('error', (err) => this._onWorkerGone(worker, err));
    worker.on('exit', (code) => this._onWorkerGone(worker, new Error(`exit code ${code}`)));
    // The thread never keeps the process alive: sessions and servers do. After the listeners: a
    // 'message' listener refs the worker's port again (every process with a mirror used to
    // linger until the thread's idle stop, 10 s).
    worker.unref();
    this._worker = worker;
    return worker;
  }

  private _onMessage(msg: FromMirrorThread): void {
    if (msg.t === 'parsed') {
      this._endpoints.get(msg.id)?.onParsedUpTo(msg.cursor, msg.rate);
      return;
    }
    if (msg.t === 'signals') {
      this._endpoints.get(msg.id)?.onSignals(msg.signals, msg.fence);
      return;
    }
    if (msg.t === 'answers') {
      this._endpoints.get(msg.id)?.onAnswers(msg.data);
      return;
    }
    if (msg.t === 'spent') return; // dropped here: freed at this thread's next collection
    const r = this._requests.get(msg.req);
    if (!r) return;
    this._requests.delete(msg.req);
    if (msg.ok) r.resolve({ value: msg.value, cursor: msg.cursor });
    else r.reject(new Error(msg.error));
  }

  /**
   * The thread died (a bug in parsing, out of memory). Sessions keep running: their mirrors start
   * again in a new thread, each rebuilt from the output its session's ring still holds.
   */
  private _onWorkerGone(worker: Worker, err: Error): void {
    if (this._worker !== worker) return;
    this._worker = undefined;
    const stopping = this._stoppingIdle;
    this._stoppingIdle = false;
    for (const r of this._requests.values()) r.reject(new Error(`The screen mirror thread stopped (${err.message})`));
    this._requests.clear();
    if (!stopping && this._endpoints.size > 0) process.stderr.write(`shared-pty: the screen mirror thread stopped (${err.message}); restarting it\n`);
    // Also after an idle stop: a session created while the thread was ending must get its mirror.
    for (const e of this._endpoints.values()) e.reopen();
  }

  private _stoppingIdle = false;
  private _stopWorker(): void {
    if (!this._worker || this._endpoints.size > 0) return;
    this._stoppingIdle = true;
    void this._worker.terminate();
  }
}

/**
 * The thread's young generation (V8's new space): at most this many MiB (both halves and its
 * large objects: halves of 4 MiB)… Left alone, V8 doubles it up to 32 MiB when many objects
 * outlive its collections, as each new terminal's do (~180 KiB each), and keeps it for good: 100
 * sessions that printed at once left 30 MiB behind (bench/README.md, issue 25: memory).
 */
const YOUNG_GENERATION_MB = 12;
/**
 * …and each half starts at this many MiB. A host run by `serve` or `daemon` stops every new space
 * from growing (host/young-generation.ts), and halves of V8's starting 1 MiB cost the thread ~20 %
 * more CPU while parsing a flood (alternating runs, same bench section); this start is read when the
 * thread's heap is made, and only heaps made later (mirror threads) see it.
 */
const YOUNG_START_HALF_MB = 4;

/**
 * The worker's entry: the bundle's `mirror-worker.js` next to this file, or, when running from
 * the TypeScript sources (tests, benchmarks), `mirror-worker.ts` with the TypeScript loader the
 * process preloaded into its threads (npm test's compiled files, docs/testing.md#how-long-a-run-takes),
 * else with tsx's.
 */
function startWorker(): Worker {
  v8.setFlagsFromString(`--min-semi-space-size=${YOUNG_START_HALF_MB}`);
  const resourceLimits = { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB };
  // __filename, not __dirname: tsx gives ES-module importers of this file only the former.
  const here = path.dirname(__filename);
  const js = path.join(here, 'mirror-worker.js');
  if (fs.existsSync(js)) return new Worker(js, { resourceLimits });
  const ts = path.join(here, 'mirror-worker.ts');
  return new Worker(`if (!require.extensions['.ts']) require('tsx/cjs'); require(${JSON.stringify(ts)});`, { eval: true, resourceLimits });
}
