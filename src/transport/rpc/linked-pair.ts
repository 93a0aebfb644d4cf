import { Disposable, toDisposable, type IDisposable } from '../../core/base/lifecycle';
import type { JsonRpcPeer, MessageWire } from './json-rpc-peer';

/**
 * One end of an in-memory connection. What it sends waits in the other end's inbox until a later
 * turn of the event loop, and stays there while the other end has paused its input: so the
 * sender's unsent bytes grow for a reader that does not read, and drain when it reads again, as on
 * a socket.
 */
export class MemoryWire implements MessageWire {
  private _other!: MemoryWire;
  private _peer: JsonRpcPeer | undefined;
  private readonly _inbox: string[] = [];
  private _inboxBytes = 0;
  private _paused = false;
  private _delivery: NodeJS.Immediate | undefined;
  private readonly _drainListeners = new Set<() => void>();
  private _closed = false;

  /** Connects two ends (what `linkedPair` does). */
  static pair(): [MemoryWire, MemoryWire] {
    const a = new MemoryWire();
    const b = new MemoryWire();
    a._other = b;
    b._other = a;
    return [a, b];
  }

  /** The peer that reads what arrives at this end. */
  attach(peer: JsonRpcPeer): void {
    this._peer = peer;
    this._schedule();
  }

  /** Whether this end has stopped reading (its peer holds requests back, or a test made it a slow reader). */
  get inputPaused(): boolean {
    return this._paused;
  }

  get writable(): boolean {
    return !this._closed;
  }

  get unsentBytes(): number {
    return this._other._inboxBytes;
  }

  send(text: string): void {
    if (this._closed) return;
    this._other._arrive(text);
  }

  cork(): void {}

  uncork(): void {}

  whenDrained(fn: () => void): IDisposable {
    const listeners = this._drainListeners;
    const once = () => {
      listeners.delete(once);
      fn();
    };
    listeners.add(once);
    return toDisposable(() => listeners.delete(once));
  }

  pauseInput(): void {
    this._paused = true;
  }

  resumeInput(): void {
    this._paused = false;
    this._schedule();
  }

  /** Both ends close a turn later: the other end first gets what was sent before (unless it has paused its input). */
  end(): void {
    setImmediate(() => this.close());
  }

  /** Closes both ends at once (a connection dropped): their peers are disposed. */
  close(): void {
    if (this._closed) return;
    this._closed = true;
    clearImmediate(this._delivery);
    this._fireDrain();
    this._peer?.dispose();
    this._other.close();
  }

  private _arrive(text: string): void {
    if (this._closed) return;
    this._inbox.push(text);
    this._inboxBytes += Buffer.byteLength(text);
    this._schedule();
  }

  private _schedule(): void {
    if (this._delivery || this._paused || this._closed || !this._peer || this._inbox.length === 0) return;
    this._delivery = setImmediate(() => {
      this._delivery = undefined;
      this._deliver();
    });
  }

  /** Hands what arrived to the peer, one message at a time, until it pauses its input. */
  private _deliver(): void {
    while (!this._paused && !this._closed && this._peer && this._inbox.length > 0) {
      const text = this._inbox.shift()!;
      this._inboxBytes -= Buffer.byteLength(text);
      this._peer.receive(text);
    }
    if (this._inbox.length === 0) this._other._fireDrain();
  }

  private _fireDrain(): void {
    for (const fn of [...this._drainListeners]) fn();
  }
}

/** Two peers connected in memory; disposing the pair closes the connection (both peers go). */
export class LinkedPair<A extends JsonRpcPeer, B extends JsonRpcPeer> extends Disposable {
  readonly a: A;
  readonly b: B;
  /** The ends' wires, for a test that plays a slow reader (`pauseInput`) or looks at what is unsent. */
  readonly wires: readonly [MemoryWire, MemoryWire];

  constructor(makeA: (wire: MessageWire) => A, makeB: (wire: MessageWire) => B) {
    super();
    const [wa, wb] = MemoryWire.pair();
    this.wires = [wa, wb];
    this.a = makeA(wa);
    this.b = makeB(wb);
    wa.attach(this.a);
    wb.attach(this.b);
    this._register(toDisposable(() => wa.close()));
  }
}

/**
 * Two JSON-RPC peers connected in-process, with no socket: the method table's tests run over it
 * (`a`: the host's TablePeer, `b`: a client peer that calls `request`), as the MCP SDK tests its
 * protocol over an in-memory pair.
 */
export function linkedPair<A extends JsonRpcPeer, B extends JsonRpcPeer>(makeA: (wire: MessageWire) => A, makeB: (wire: MessageWire) => B): LinkedPair<A, B> {
  return new LinkedPair(makeA, makeB);
}
