import type { Terminal } from '@xterm/headless';
import { Disposable, toDisposable } from '../base/lifecycle';
import { savedCursorRowOf } from '../base/internals/xterm';

/**
 * Makes the saved cursor (DECSC `ESC 7` / `CSI s`, restored by DECRC `ESC 8` / `CSI u`) a place on
 * the screen, as tmux and xterm keep it: xterm.js counts it from the top of its scrollback, so
 * output that scrolls the screen between the save and the restore sent the cursor back that many
 * rows higher than a real terminal does (found by the tmux-oracle fuzzer). The save records the
 * screen row; the restore points xterm's saved row at it before xterm's own handler runs.
 */
export class SavedCursorAsScreenRow extends Disposable {
  /**
   * The screen row and column saved per buffer (the normal and the alternate screen each keep
   * their own). The column too: entering the alternate screen saves the cursor in xterm's same
   * place, and a DECRC after it went to that column (tmux keeps the two apart).
   */
  private readonly _rows = new Map<string, { row: number; x: number }>();

  constructor(private readonly _term: Terminal) {
    super();
    const save = (): boolean => {
      const buf = this._term.buffer.active;
      this._rows.set(buf.type, { row: buf.cursorY, x: buf.cursorX });
      return false; // xterm saves the rest (column, attributes, charset)
    };
    const restore = (): boolean => {
      const buf = this._term.buffer.active;
      const saved = this._rows.get(buf.type);
      if (saved !== undefined) savedCursorRowOf(this._term)?.set(buf.baseY + saved.row, saved.x);
      return false; // xterm restores, from the corrected row
    };
    const parser = _term.parser;
    for (const d of [
      parser.registerEscHandler({ final: '7' }, save),
      parser.registerEscHandler({ final: '8' }, restore),
      parser.registerCsiHandler({ final: 's' }, save), // xterm.js has no DECSLRM: CSI s always saves
      parser.registerCsiHandler({ final: 'u' }, restore),
    ]) {
      this._register(toDisposable(() => d.dispose()));
    }
  }

  /** The screen row and column a save on this buffer recorded (undefined: none since the last reset). */
  savedOf(buffer: 'normal' | 'alternate'): { row: number; x: number } | undefined {
    return this._rows.get(buffer);
  }

  /** A reset (RIS) forgets what was saved, as xterm does. */
  forget(): void {
    this._rows.clear();
  }
}
