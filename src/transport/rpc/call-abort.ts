/**
 * The abort of one call a peer runs, made only when the call looks at it. An AbortController and
 * its signal cost a request more than its validation does here (bench/README.md, "Issue 25: echo,
 * this round"), and most calls (a key's `pty/write`, a `pty/status`) never look: they answer in
 * the turn they start. Aborted before its signal was asked for, the call gets a signal that is
 * aborted already.
 */
export class CallAbort {
  private _controller: AbortController | undefined;
  private _aborted = false;
  private _reason: unknown;
  /** The request's id as its client wrote it, when the number lost digits in parsing (raw-id.ts). */
  rawId: string | undefined;

  /** The call's signal (made now on first use). */
  get signal(): AbortSignal {
    if (!this._controller) {
      this._controller = new AbortController();
      if (this._aborted) this._controller.abort(this._reason);
    }
    return this._controller.signal;
  }

  /** `reason`: CALLER_GONE when the connection is gone (nobody reads an answer), else a cancel. */
  abort(reason?: unknown): void {
    this._aborted = true;
    this._reason = reason;
    this._controller?.abort(reason);
  }
}
