import type { IMarker, Terminal } from '@xterm/headless';
import type { IDisposable } from '../base/lifecycle';
import { normalRowListOf, type RowListEvents } from '../base/internals/xterm';

/**
 * The first row of xterm's normal buffer not yet moved into the compact store (mirror.ts): a row
 * index that follows the rows as xterm trims the top of its short scrollback, or inserts and
 * deletes rows when it re-wraps them on a resize.
 */
export interface Boundary extends IDisposable {
  /** The row's index in the normal buffer; undefined when none is placed or the row is gone. */
  readonly line: number | undefined;
  /** True when it can be placed while the alternate screen is active (false: only on the normal one). */
  readonly anyScreen: boolean;
  /** Points at row `line` of the normal buffer (which must be the active one). */
  place(line: number): void;
  /** Forgets the row (a reset replaces the buffers). */
  clear(): void;
}

/**
 * A boundary for `term`. `onGone` runs when its row leaves the buffer before it was moved: the
 * program cleared the scrollback (ED 3), and the store follows.
 *
 * One row index, kept up to date by listening to the row list once, as xterm's markers do for
 * themselves. A marker per move (every 32 rows) was most of what the mirror thread allocated during
 * a flood: 100 sessions of `yes` left ~60 MiB of dead markers in its old generation in 5 s
 * (bench/README.md, issue 25: memory per session). It also does not die when the row it sits on
 * is erased (ED 2), which cleared the whole scrollback of a marker that sat on the screen's top row.
 * Where this xterm keeps its rows elsewhere, a marker per move as before.
 */
export function boundaryOf(term: Terminal, onGone: () => void): Boundary {
  const rows = normalRowListOf(term);
  return rows ? new TrackedRow(rows, onGone) : new MarkerRow(term, onGone);
}

/** The row index, adjusted on each trim, insertion and deletion of the normal buffer's row list. */
class TrackedRow implements Boundary {
  readonly anyScreen = true;
  private _line = -1;
  private _list: RowListEvents | undefined;
  private _subscriptions: IDisposable[] = [];

  constructor(
    private readonly _rows: () => RowListEvents | undefined,
    private readonly _onGone: () => void,
  ) {}

  get line(): number | undefined {
    // A reset replaced the buffer: the index says nothing about the new one.
    return this._line >= 0 && this._list === this._rows() ? this._line : undefined;
  }

  place(line: number): void {
    const list = this._rows();
    if (list !== this._list) this._follow(list);
    this._line = line;
  }

  clear(): void {
    this._line = -1;
  }

  dispose(): void {
    this._follow(undefined);
  }

  private _follow(list: RowListEvents | undefined): void {
    for (const s of this._subscriptions) s.dispose();
    this._list = list;
    this._subscriptions = list
      ? [
          list.onTrim((amount) => this._trimmed(amount)),
          // A row inserted where the row is (a scroll down or an inserted line at the screen's top
          // row) is a new row not moved yet: the row stays where it is, the new one in its place.
          list.onInsert(({ index, amount }) => {
            if (this._line > index) this._line += amount;
          }),
          list.onDelete(({ index, amount }) => this._deleted(index, amount)),
        ]
      : [];
  }

  /**
   * `amount` rows left the top of the list (the scrollback was full, or ED 3): the row moves up past
   * them, or goes with them, and so did rows not moved yet (onGone).
   */
  private _trimmed(amount: number): void {
    if (this._line < amount) {
      this._line = -1;
      this._onGone();
    } else {
      this._line -= amount;
    }
  }

  /**
   * `amount` rows from `index` were deleted: a scroll up or a deleted line on the screen, a re-wrap.
   * The row moves up past them; deleted itself (a screen row, not moved yet), the row after the
   * deleted ones takes its place. Deleting the screen's top row right after the rows above it were
   * moved used to read as the row gone, and emptied the store as ED 3 does.
   */
  private _deleted(index: number, amount: number): void {
    if (this._line < index) return;
    this._line = this._line < index + amount ? index : this._line - amount;
  }
}

/** xterm's public markers: a new one at each place. */
class MarkerRow implements Boundary {
  /** A marker is placed relative to the active screen's cursor. */
  readonly anyScreen = false;
  private _marker: IMarker | undefined;

  constructor(
    private readonly _term: Terminal,
    private readonly _onGone: () => void,
  ) {}

  get line(): number | undefined {
    const m = this._marker;
    return m && !m.isDisposed && m.line >= 0 ? m.line : undefined;
  }

  place(line: number): void {
    const buf = this._term.buffer.normal;
    const marker = this._term.registerMarker(line - (buf.baseY + buf.cursorY));
    const old = this._marker;
    this._marker = marker;
    old?.dispose();
    marker?.onDispose(() => {
      if (this._marker !== marker) return;
      this._marker = undefined;
      this._onGone();
    });
  }

  clear(): void {
    const old = this._marker;
    this._marker = undefined;
    old?.dispose();
  }

  dispose(): void {
    this.clear();
  }
}
