// The mirror thread: owns every session's headless terminal, so that parsing output never
// competes with reading the PTYs and serving clients on the main thread (issue #2: node-pty reads
// 2-4x faster than xterm.js parses). Started by MirrorThread; the main side is MirrorProxy.
import * as v8 from 'node:v8';
import { parentPort } from 'node:worker_threads';
import { Mirror } from './mirror';
import { MIRROR_QUERIES } from './mirror-queries';
import type { FromMirrorThread, MirrorThreadStats, ProgramSignal, ToMirrorThread } from './mirror-protocol';
import type { ReportedColors } from './query-answers';

interface Entry {
  /**
   * The session's terminal, made on its first output, query or resize (mirrorOf): an xterm
   * Terminal costs ~180 KiB even empty, and a session that never printed (an idle `cat`, a
   * program waiting for input) needs none; until then `spec` and `colors` say how to make it.
   */
  mirror: Mirror | undefined;
  spec: { cols: number; rows: number; scrollback: number };
  /** The colours views reported before the terminal was made, in order. */
  colors: ReportedColors[];
  /** Cursor at the end of the newest output received. */
  received: number;
  /** Cursor at the end of the newest output parsed. */
  parsed: number;
  /** Work that must see the screen exactly at a cursor, oldest first. */
  due: Array<{ cursor: number; run: () => void }>;
  /** Output up to this cursor is a replay (the thread restarted): its bells and titles were told before. */
  quietUntil: number;
  /** Output not parsed yet, oldest first, each chunk with the cursor at its end. */
  backlog: Array<{ data: Uint8Array; end: number }>;
  /**
   * Cursors the session tied an event to (its command marks), oldest first: parsing stops at each,
   * and the bells and titles before it are told with it (see passFences).
   */
  fences: number[];
  /**
   * The parse speed as a read sees it: bytes parsed over the time output waited here (the backlog
   * not empty), other sessions' turns and the thread's own messages included, but not the time
   * the thread waited for output. Measured on the main thread instead, from notices, it also counted
   * the hand-over's delays, and the backlog bound it sets (mirror-proxy.ts) then starved the parser,
   * which lowered the figure further: a flood of plain text settled at ~2.5 KB/ms, a tenth of the speed.
   */
  spanBytes: number;
  spanMs: number;
  /** When the backlog last became non-empty (performance.now()), or -1 while it is empty. */
  busyFrom: number;
}

/** A parse-speed figure is sent once this much waiting time is behind it (shorter spans are noise: a GC, one message). */
const RATE_SPAN_MS = 10;

/** How the thread shares its time between parsing and everything else. */
const enum Pump {
  /**
   * Longest run of parsing before the thread looks at its messages again (queries of other
   * sessions, more output) and tells the main thread how far it got, which lets a paused PTY be
   * read again: short, so a read waits little and the backlog bound can be small (mirror-proxy.ts).
   */
  SliceMs = 4,
  /** Most bytes parsed in one go for one session before the next session's turn. */
  StepBytes = 32 * 1024,
}

/**
 * Most answer text sent for one mirror per turn of the loop. A program asks a few queries at a
 * time and waits; output that holds queries by the thousand (a binary file on the screen) would
 * otherwise pile answers into the program's input faster than anything reads it.
 */
const MAX_ANSWER_CHARS_PER_TURN = 16 * 1024;

const port = parentPort;
if (!port) throw new Error('mirror-worker runs only as a worker thread');

const entries = new Map<number, Entry>();
const post = (msg: FromMirrorThread, transfer?: ArrayBuffer[]) => port.postMessage(msg, transfer);

// "parsed" notices are coalesced to one per mirror per turn: a flood parses thousands of chunks.
const unacked = new Set<number>();
let ackScheduled = false;
function ack(id: number): void {
  unacked.add(id);
  scheduleNotices();
}

function scheduleNotices(): void {
  if (ackScheduled) return;
  ackScheduled = true;
  setImmediate(sendNotices);
}

/**
 * The memory of output chunks parsed since the last notices, to hand back. A chunk's memory comes
 * from the main thread (transferred) and is freed here only when a collection finds it dead. This
 * thread allocates little per byte parsed, so its collections are rare: in a flood of 100 sessions
 * ~30 MB of parsed output waited for one (bench/README.md, issue 25: memory per session). The main
 * thread collects within milliseconds while output flows.
 */
let spent: ArrayBuffer[] = [];

/** A chunk is parsed: its memory goes back with the next notices when the chunk had it all to itself. */
function parsedChunk(data: Uint8Array): void {
  const memory = data.buffer;
  if (data.byteOffset === 0 && data.byteLength === memory.byteLength && memory instanceof ArrayBuffer) spent.push(memory);
}

/**
 * Sends what was gathered: answers first (see postAnswers), then signals, then how far each mirror
 * got. Signals before the parse notice: each message is its own turn on the main thread, and a
 * command's end read from the pty between the two would find its place parsed and be told before a
 * bell that rang before it (see postSignals).
 */
function sendNotices(): void {
  ackScheduled = false;
  if (spent.length > 0) {
    post({ t: 'spent', buffers: spent }, spent);
    spent = [];
  }
  postAnswers();
  postSignals();
  for (const m of unacked) {
    const e = entries.get(m);
    if (e) post({ t: 'parsed', id: m, cursor: e.parsed, rate: takeRate(e) });
  }
  unacked.clear();
}

// Bells and titles, in output order, gathered per mirror per turn: `yes $'\a'` must not become a
// message per byte, so a run of bells is one, and a turn tells at most MAX_SIGNALS_PER_TURN.
const MAX_SIGNALS_PER_TURN = 16;
const signalled = new Map<number, ProgramSignal[]>();
function signal(id: number, what: ProgramSignal): void {
  const e = entries.get(id);
  // `parsed` is the end of the previous batch while a batch is parsed: below quietUntil, it is the replay's.
  if (e && e.parsed < e.quietUntil) return;
  let list = signalled.get(id);
  if (!list) signalled.set(id, (list = []));
  const last = list[list.length - 1];
  if ('bell' in what && last && 'bell' in last) return;
  // Past the bound, the newest replaces the last told: the title the program left is still the one told last.
  if (list.length >= MAX_SIGNALS_PER_TURN) list[list.length - 1] = what;
  else list.push(what);
  scheduleNotices();
}

/**
 * Tells the signals gathered so far. Before anything that tells how far the parser got (a notice, a
 * reply's cursor): once the session knows a place is parsed, the bells before it must be known too.
 */
function postSignals(): void {
  for (const [m, signals] of signalled) post({ t: 'signals', id: m, signals });
  signalled.clear();
}

/**
 * Tells the signals gathered before each fence the parser has reached, with that fence: the session
 * orders its events by output position, and a command's end (a mark it found as the output was
 * read) must come after the bell that rang before it, and before the one after it.
 */
function passFences(id: number, e: Entry): void {
  while (e.fences.length > 0 && e.fences[0] <= e.parsed) {
    const fence = e.fences.shift()!;
    // Told even with nothing before it: the session holds what waits at the fence until then (a
    // bell told apart, in a notice that left before the fence came, must not be overtaken).
    const signals = signalled.get(id) ?? [];
    signalled.delete(id);
    post({ t: 'signals', id, signals, fence });
  }
}

// The terminal's answers to the program's queries, gathered per mirror per turn, in order.
const answers = new Map<number, string>();

/**
 * Sends the answers gathered so far. Before any notice or reply about the output they answer: a
 * client that saw the screen after a query (a prompt drawn with its cursor query) and then types
 * must find the answer in the program's input before its keys.
 */
function postAnswers(): void {
  for (const [m, data] of answers) post({ t: 'answers', id: m, data });
  answers.clear();
}
function queueAnswer(id: number, data: string): void {
  const e = entries.get(id);
  // Output below quietUntil is a replay: its queries were answered when it was first parsed.
  if (!e || e.parsed < e.quietUntil) return;
  const queued = answers.get(id) ?? '';
  if (queued.length + data.length > MAX_ANSWER_CHARS_PER_TURN) return;
  answers.set(id, queued + data);
  scheduleNotices();
}

/** Listens to what a mirror's program signals, and to the terminal's answers (the listeners go with the mirror). */
function watchSignals(id: number, mirror: Mirror): void {
  mirror.onAnswer((data) => queueAnswer(id, data));
  let lastTitle = '';
  mirror.onBell(() => signal(id, { bell: true }));
  mirror.onTitle((title) => {
    if (title === lastTitle) return; // shells that set the title at every prompt change nothing
    lastTitle = title;
    signal(id, { title });
  });
}

/** The parse speed measured since the last figure, once RATE_SPAN_MS of waiting is behind it (see Entry.spanBytes). */
function takeRate(e: Entry): number | undefined {
  if (e.busyFrom >= 0) {
    const now = performance.now();
    e.spanMs += now - e.busyFrom;
    e.busyFrom = now;
  }
  if (e.spanMs < RATE_SPAN_MS) return undefined;
  const rate = e.spanBytes / e.spanMs;
  e.spanBytes = e.spanMs = 0;
  return rate;
}

/** The entry's terminal, made now if it has none yet (see Entry.mirror). */
function mirrorOf(id: number, e: Entry): Mirror {
  if (e.mirror) return e.mirror;
  const mirror = new Mirror(e.spec.cols, e.spec.rows, e.spec.scrollback);
  watchSignals(id, mirror);
  for (const colors of e.colors.splice(0)) mirror.setColors(colors);
  e.mirror = mirror;
  return mirror;
}

/** Runs `run` on the screen as it is right after the output received so far is parsed. */
function whenCaughtUp(id: number, e: Entry, run: () => void): void {
  if (e.parsed >= e.received) return run();
  e.due.push({ cursor: e.received, run });
  awaited.add(id);
}

// Sessions with output waiting to be parsed, served in turn.
const busy = new Set<number>();
// Sessions a read (or a resize) waits on: served before the others, up to exactly its cursor.
const awaited = new Set<number>();
let pumpScheduled = false;
function schedulePump(): void {
  if (pumpScheduled) return;
  pumpScheduled = true;
  setImmediate(pump);
}

/**
 * Parses waiting output, each busy session a step at a time, for up to Pump.SliceMs; then the
 * notices go out at once (the main thread resumes paused PTYs on them) and the thread takes its
 * messages before the next slice. xterm's own write() would schedule each slice with a timer of at
 * least 1 ms and parse up to 12 ms between them (profile in bench/README.md).
 */
function pump(): void {
  pumpScheduled = false;
  const deadline = performance.now() + Pump.SliceMs;
  do {
    // A read is answered as soon as the output before it is parsed, before other sessions' turns.
    for (const id of awaited) {
      const e = entries.get(id);
      while (e && e.due.length > 0 && e.backlog.length > 0 && e.mirror?.parsesNow) step(id, e);
      awaited.delete(id);
    }
    for (const id of busy) {
      const e = entries.get(id);
      if (!e || e.backlog.length === 0 || !e.mirror?.parsesNow) {
        busy.delete(id);
        continue;
      }
      step(id, e);
      if (e.backlog.length === 0) busy.delete(id);
    }
  } while (busy.size > 0 && performance.now() < deadline);
  sendNotices();
  if (busy.size > 0) schedulePump();
}

/**
 * Parses up to Pump.StepBytes of one session's backlog; never past the cursor a read waits for,
 * so the read is answered right after its output, not after the rest of the step.
 */
function step(id: number, e: Entry): void {
  passFences(id, e);
  // Never past the cursor a read waits for, nor past a fence: the signals before it go first.
  const stop = Math.min(e.due.length > 0 ? e.due[0].cursor : Infinity, e.fences.length > 0 ? e.fences[0] : Infinity) - e.parsed;
  for (let budget = Math.min(Pump.StepBytes, stop); budget > 0 && e.backlog.length > 0;) {
    const joined = joinedChunks(mirrorOf(id, e), e, budget);
    if (joined > 0) {
      budget -= joined;
      continue;
    }
    const head = e.backlog[0];
    let data = head.data;
    if (data.length > budget) {
      // Split a large chunk (a replay): xterm keeps a character split across writes.
      head.data = data.subarray(budget);
      data = data.subarray(0, budget);
    } else e.backlog.shift();
    budget -= data.length;
    mirrorOf(id, e).write(data);
    if (data === head.data) parsedChunk(data);
    e.parsed = head.data === data ? head.end : head.end - head.data.length;
    e.spanBytes += data.length;
  }
  passFences(id, e);
  if (e.backlog.length === 0 && e.busyFrom >= 0) {
    e.spanMs += performance.now() - e.busyFrom;
    e.busyFrom = -1;
  }
  runDue(e);
  unacked.add(id);
}

/** Chunks are parsed in one piece up to this many bytes, copied into it (see joinedChunks). */
let joinRoom = Buffer.allocUnsafeSlow(Pump.StepBytes);

/**
 * Parses the first chunks of the backlog that fit in `budget` whole, when there are at least two,
 * as one piece: a PTY read is ~4 KiB, and only runs of plain lines longer than that skip xterm
 * (Mirror's plain runs, docs/architecture.md#plain-runs). Not while a replay's quiet part is
 * parsed: its signals are told apart by the chunk they came in. The bytes parsed, or 0.
 */
function joinedChunks(mirror: Mirror, e: Entry, budget: number): number {
  if (e.parsed < e.quietUntil) return 0;
  let n = 0;
  let size = 0;
  while (n < e.backlog.length && size + e.backlog[n].data.length <= budget) size += e.backlog[n++].data.length;
  if (n < 2) return 0;
  if (joinRoom.length < size) joinRoom = Buffer.allocUnsafeSlow(size);
  let at = 0;
  for (let k = 0; k < n; k++) {
    const data = e.backlog[k].data;
    joinRoom.set(data, at);
    at += data.length;
    parsedChunk(data);
  }
  const end = e.backlog[n - 1].end;
  e.backlog.splice(0, n);
  mirror.write(joinRoom.subarray(0, size));
  e.parsed = end;
  e.spanBytes += size;
  return size;
}

/** Gives output to an engine that parses on its own schedule (see Mirror.parsesNow): it calls back per chunk. */
function feedLater(id: number, e: Entry): void {
  const mirror = mirrorOf(id, e);
  for (const { data, end } of e.backlog.splice(0)) {
    mirror.write(data, () => {
      e.parsed = end;
      passFences(id, e);
      runDue(e);
      ack(id);
    });
  }
}

function runDue(e: Entry): void {
  while (e.due.length > 0 && e.due[0].cursor <= e.parsed) e.due.shift()!.run();
}

function answer(req: number, e: Entry, compute: () => unknown): void {
  postAnswers();
  postSignals();
  try {
    post({ t: 'reply', req, ok: true, value: compute(), cursor: e.parsed });
  } catch (err) {
    post({ t: 'reply', req, ok: false, error: (err as Error).message });
  }
}

function handle(msg: ToMirrorThread): void {
  if (msg.t === 'stats') return void post({ t: 'reply', req: msg.req, ok: true, value: stats(), cursor: 0 });
  if (msg.t === 'open') {
    entries.get(msg.id)?.mirror?.dispose();
    const spec = { cols: msg.cols, rows: msg.rows, scrollback: msg.scrollback };
    entries.set(msg.id, {
      mirror: undefined,
      spec,
      colors: [],
      received: msg.cursor,
      parsed: msg.cursor,
      quietUntil: msg.quietUntil,
      due: [],
      backlog: [],
      fences: [],
      spanBytes: 0,
      spanMs: 0,
      busyFrom: -1,
    });
    return;
  }
  const e = entries.get(msg.id);
  if (!e) {
    if (msg.t === 'query') post({ t: 'reply', req: msg.req, ok: false, error: 'The session has closed' });
    return;
  }
  switch (msg.t) {
    case 'write': {
      if (e.backlog.length === 0 && e.busyFrom < 0) e.busyFrom = performance.now();
      let at = msg.cursor - msg.chunks.reduce((n, c) => n + c.length, 0);
      for (const data of msg.chunks) e.backlog.push({ data, end: (at += data.length) });
      e.received = msg.cursor;
      if (msg.fence) e.fences.push(msg.cursor);
      if (!mirrorOf(msg.id, e).parsesNow) return feedLater(msg.id, e);
      busy.add(msg.id);
      return schedulePump();
    }
    case 'fence':
      e.fences.push(e.received);
      return passFences(msg.id, e);
    case 'resize':
      // No terminal yet means no output yet: the terminal is simply made at the new size.
      if (!e.mirror) return void Object.assign(e.spec, { cols: msg.cols, rows: msg.rows });
      return whenCaughtUp(msg.id, e, () => e.mirror!.resize(msg.cols, msg.rows));
    case 'colors':
      if (e.mirror) return e.mirror.setColors(msg.colors);
      return void e.colors.push(msg.colors);
    case 'query': {
      const fn = MIRROR_QUERIES[msg.op] as ((m: Mirror, ...a: unknown[]) => unknown) | undefined;
      if (!fn) return void post({ t: 'reply', req: msg.req, ok: false, error: `Unknown mirror query ${String(msg.op)}` });
      return whenCaughtUp(msg.id, e, () => answer(msg.req, e, () => fn(mirrorOf(msg.id, e), ...msg.args)));
    }
    case 'close':
      entries.delete(msg.id);
      busy.delete(msg.id);
      awaited.delete(msg.id);
      signalled.delete(msg.id);
      answers.delete(msg.id);
      e.mirror?.dispose();
      // Queries still waiting for output that will now never be parsed: answer them anyway.
      for (const d of e.due.splice(0)) {
        try {
          d.run();
        } catch {
          // a resize of a closed mirror: nothing to do
        }
      }
      return;
  }
}

function stats(): MirrorThreadStats {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc) for (let i = 0; i < 3; i++) gc();
  // This isolate's own figures (process.memoryUsage() mixes in the whole process).
  const h = v8.getHeapStatistics() as v8.HeapInfo & { external_memory?: number };
  let terminals = 0;
  for (const e of entries.values()) if (e.mirror) terminals++;
  return { heapUsed: h.used_heap_size, external: h.external_memory ?? 0, mirrors: entries.size, terminals };
}

port.on('message', (msg: ToMirrorThread) => {
  try {
    handle(msg);
  } catch (err) {
    // One bad message must not take every session's screen down with it.
    if (msg.t === 'query') post({ t: 'reply', req: msg.req, ok: false, error: (err as Error).message });
  }
});
