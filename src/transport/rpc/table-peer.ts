import { dispatch, type DispatchMode, type DispatchOptions } from '../../core/methods/dispatch';
import { ClientLink, type ClientLinkOptions } from '../../core/io/client-link';
import type { HostServices } from '../../core/methods/types';
import { JsonRpcPeer, type JsonRpcPeerOptions, type MessageWire, type PeerAnswer } from './json-rpc-peer';

export interface TablePeerOptions extends JsonRpcPeerOptions {
  /** A per-session socket (the session implied) or a control endpoint. */
  mode: DispatchMode;
  services: HostServices;
  /** Who the client is and what its token reaches; the peer is where its notifications go. */
  link: Omit<ClientLinkOptions, 'sink'>;
}

/**
 * The host's end of a JSON-RPC connection: every request runs against the method table as the
 * connection's one ClientLink, which holds what the client subscribed to and is released with the
 * peer (when the connection closes).
 */
export class TablePeer extends JsonRpcPeer {
  /** The caller this connection carries (a script until it says otherwise). */
  readonly link: ClientLink;

  constructor(
    wire: MessageWire,
    private readonly _table: TablePeerOptions,
  ) {
    super(wire, _table);
    this.link = this._register(new ClientLink({ ..._table.link, sink: this }));
  }

  protected override _serve(message: unknown, call: { readonly signal: AbortSignal }): PeerAnswer | Promise<PeerAnswer> {
    return dispatch(message, new PeerCall(this._table.mode, this._table.services, this.link, call));
  }

  protected override _hasMoreToSend(): boolean {
    return this.link.streaming;
  }

  /**
   * An answer the method said may leave with a session's output (a key's `pty/write`), to a client
   * that follows that session on this connection: it may wait for the echo (JsonRpcPeer).
   */
  protected override _answerMayWaitForOutput(answer: PeerAnswer): boolean {
    const sub = answer.ridesWith === undefined ? undefined : this.link.subscription(answer.ridesWith);
    return sub !== undefined && !sub.finished;
  }
}

/**
 * One request's dispatch options. `signal` is a getter of the prototype, so the call's
 * AbortController is made only if the method looks at it; a getter in an object literal would
 * keep the request's objects alive into the old generation (dispatch.ts, DispatchedCall).
 */
class PeerCall implements DispatchOptions {
  constructor(
    readonly mode: DispatchMode,
    readonly services: HostServices,
    readonly caller: ClientLink,
    private readonly _call: { readonly signal: AbortSignal },
  ) {}

  get signal(): AbortSignal {
    return this._call.signal;
  }
}
