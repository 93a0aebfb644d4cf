import type { Terminal } from '@xterm/headless';
import { Disposable, toDisposable } from '../base/lifecycle';
import { eraseStepsOf } from '../base/internals/xterm';

/**
 * Erase above (ED 1, `CSI 1 J`, and its selective form `CSI ? 1 J`) with the cursor in the last
 * column, done as xterm means it: every row above the cursor and the cursor's row whole. xterm.js
 * 6.0 then clears the continuation mark of the row below the cursor, but looks that row up counted
 * from the top of the scrollback instead of the screen: on a screen without scrollback (the
 * alternate screen, or after `clear`) from the last row there is no such row and its parser
 * throws, which stopped the screen mirror for good (a program printing `ESC[24;80H ESC[1J`; found
 * by the tmux-oracle fuzzer); with scrollback it cleared the mark of a wrong row. The other cases
 * are xterm's own (the handler passes them on).
 */
export class EraseAboveAtLastColumn extends Disposable {
  constructor(term: Terminal) {
    super();
    const steps = eraseStepsOf(term);
    if (!steps) return; // another xterm: its own erase (test/unit/core/base/internals/xterm.test.ts says so)
    const eraseAbove = (params: (number | number[])[], respectProtect: boolean): boolean => {
      if (params[0] !== 1) return false;
      const { x, y, ybase } = steps.cursor();
      if (x + 1 < term.cols) return false;
      steps.markDirty(y);
      steps.eraseInLine(y, 0, x + 1, respectProtect);
      // The cursor's row is blank to its end now: the row below no longer continues it.
      const below = steps.row(ybase + y + 1);
      if (below && y + 1 < term.rows) below.isWrapped = false;
      for (let j = y - 1; j >= 0; j--) steps.resetLine(j, respectProtect);
      steps.markDirty(0);
      return true;
    };
    for (const d of [
      term.parser.registerCsiHandler({ final: 'J' }, (params) => eraseAbove(params, false)),
      term.parser.registerCsiHandler({ prefix: '?', final: 'J' }, (params) => eraseAbove(params, true)),
    ]) {
      this._register(toDisposable(() => d.dispose()));
    }
  }
}
