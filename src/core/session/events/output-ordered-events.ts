import type { SessionEventBody } from './session-events';

/**
 * Keeps a session's events in the order of the output they come from. A command's start and
 * end are found on the main thread as the output is read (the shell integration's marks), while
 * a bell or a new title is found by the screen's parser, later, in the mirror thread: told as
 * they were found, `printf '\a'; false` would report the command finished before the bell it rang.
 *
 * So an event tied to a place in the output (`add`) waits until the parser has passed that place;
 * the parser tells the bells and titles before that place first (MirrorProxy.fence), and the
 * session lets the waiting events go as the parser's notices come (`passed`). The wait is the
 * parser's: a millisecond or two, a few more in a flood.
 * docs/protocol.md#events-ptyevents-and-ptywaitevent
 */
export class OutputOrderedEvents {
  private readonly _waiting: Array<{ body: SessionEventBody; cursor: number }> = [];

  constructor(private readonly _emit: (body: SessionEventBody) => void) {}

  /**
   * `body` happened at output cursor `cursor`. Told now when the parser has passed it (`parsed`)
   * and nothing waits before it; else it waits (returns true: the caller fences that place).
   */
  add(body: SessionEventBody, cursor: number, parsed: number): boolean {
    if (this._waiting.length === 0 && cursor <= parsed) {
      this._emit(body);
      return false;
    }
    this._waiting.push({ body, cursor });
    return true;
  }

  /**
   * The parser has passed `cursor`: the events tied to places up to it are told, oldest first.
   * `inclusive` false: only those before it (the signals the parser tells at a fence came before
   * the fence, so the events at the fence itself come after them).
   */
  passed(cursor: number, inclusive: boolean): void {
    while (this._waiting.length > 0) {
      const head = this._waiting[0];
      if (inclusive ? head.cursor > cursor : head.cursor >= cursor) return;
      this._waiting.shift();
      this._emit(head.body);
    }
  }

  /** Tells everything still waiting (the session is going, and its parser with it). */
  flush(): void {
    this.passed(Infinity, true);
  }
}
