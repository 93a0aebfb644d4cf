import { Disposable } from '../../base/lifecycle';
import type { SessionInput } from './input-source';

/** Keys that end or abandon the line the human was typing: Enter, Ctrl+C, Ctrl+U, Ctrl+D. */
const LINE_ENDS = /[\r\n\x03\x15\x04]/g;
const ENDS_A_LINE = /[\r\n\x03\x15\x04]/;
/** Cursor and function keys (CSI and SS3 sequences): moving about is not typing text. */
const KEY_SEQUENCES = /\x1b(?:\[[0-9;?]*[ -/]*[@-~]|O[@-~])/g;

/**
 * What the human's views (editor terminal, `attach`, browser view) have typed into a session
 * lately: when, and whether they have started a line they have not submitted yet. Typing
 * arbitration (docs/protocol.md#typing-arbitration) makes an agent's write wait while the user is at it.
 */
export class HumanInput extends Disposable {
  /** When the human last typed (ms since the epoch; 0: never). */
  lastAt = 0;
  /** The human has typed part of a line and not submitted (nor abandoned) it. */
  lineStarted = false;

  observe(input: SessionInput): void {
    if (input.from.origin !== 'user') {
      // Someone else ended or cleared the line (a script's Enter or Ctrl+U): there is none left
      // for the human to finish, and their last keys still count as typing for the pause.
      if (this.lineStarted && ENDS_A_LINE.test(input.data)) this.lineStarted = false;
      return;
    }
    this.lastAt = Date.now();
    // What follows the last Enter (or Ctrl+C…) decides; a write without one adds to the line.
    const text = input.data;
    let after = text;
    let ended = false;
    for (const m of text.matchAll(LINE_ENDS)) {
      after = text.slice(m.index! + 1);
      ended = true;
    }
    const typed = /[^\x00-\x1f\x7f]/.test(after.replace(KEY_SEQUENCES, ''));
    if (typed) this.lineStarted = true;
    else if (ended) this.lineStarted = false;
  }

  /**
   * After a write, the line at the terminal is empty as the shell's line editor has it (the
   * session's typed line: what was typed is erased, Backspace by Backspace): no line is started.
   */
  lineEmptied(): void {
    this.lineStarted = false;
  }
}
