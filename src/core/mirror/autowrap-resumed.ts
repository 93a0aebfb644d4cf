import type { Terminal } from '@xterm/headless';
import { Disposable, toDisposable } from '../base/lifecycle';
import { cursorColumnOf } from '../base/internals/xterm';

/**
 * Autowrap turned back on (DECSET 7, `CSI ? 7 h`) after text was written past the right edge with
 * it off: xterm and tmux have no wrap pending then, the cursor is on the last column and the next
 * character takes its place. xterm.js keeps its cursor one past the edge, so the next character
 * went to the next row (found by an outside audit against tmux). The handler puts the cursor on
 * the last column before xterm's own turns autowrap on.
 */
export class AutowrapResumed extends Disposable {
  constructor(term: Terminal) {
    super();
    const column = cursorColumnOf(term);
    if (!column) return; // another xterm: its own behaviour (test/unit/core/base/internals/xterm.test.ts says so)
    const resume = (params: (number | number[])[]): boolean => {
      // The modes last: `term.modes` makes an object each call, and `CSI ? h` is common (?25h, ?2004h).
      if (params.includes(7) && column.get() >= term.cols && !term.modes.wraparoundMode) column.set(term.cols - 1);
      return false; // xterm sets the mode
    };
    const d = term.parser.registerCsiHandler({ prefix: '?', final: 'h' }, resume);
    this._register(toDisposable(() => d.dispose()));
  }
}
