import { dialectOf, dispatch, type DispatchMode } from '../../core/methods/dispatch';
import { ClientLink, type ClientLinkOptions } from '../../core/io/client-link';
import type { HostServices } from '../../core/methods/types';
import type { JsonRpcResponse } from '../../core/base/errors';
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
    super(wire, { ..._table, dialect: _table.dialect ?? dialectOf(_table.mode) });
    this.link = this._register(new ClientLink({ ..._table.link, sink: this }));
  }

  protected override _serve(message: unknown, call: { readonly signal: AbortSignal }): Promise<PeerAnswer> {
    const { mode, services } = this._table;
    // A getter: the call's AbortController is made only if the method looks at its signal.
    return dispatch(message, {
      mode,
      services,
      caller: this.link,
      get signal() {
        return call.signal;
      },
    });
  }

  protected override _hasMoreToSend(): boolean {
    return this.link.streaming;
  }

  /**
   * A `pty/write` that wrote something and waits for nothing, from a client that follows that
   * session's output on this connection (the session socket's own session, or the one a control
   * client names by id): its answer may go with the echo (JsonRpcPeer). A write with `wait`
   * answers once the output it waited for has come, so it has nothing to wait for.
   */
  protected override _answerMayWaitForOutput(message: unknown, response: JsonRpcResponse): boolean {
    // Any JSON value may come (`null`, a number): only a request object can be a write.
    if (typeof message !== 'object' || message === null) return false;
    const m = message as { method?: unknown; params?: { wait?: unknown; session?: unknown } };
    if (m.method !== 'pty/write' || m.params?.wait === true || !('result' in response)) return false;
    if (!(((response.result as { written?: unknown }).written as number) > 0)) return false;
    const { mode } = this._table;
    const id = mode.kind === 'session' ? mode.session.id : m.params?.session;
    const sub = typeof id === 'string' ? this.link.subscription(id) : undefined;
    return sub !== undefined && !sub.finished;
  }
}
