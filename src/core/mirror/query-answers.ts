import type { Terminal } from '@xterm/headless';
import type { IDisposable } from '../base/lifecycle';
import { VERSION } from '../../version';

/** The dynamic colours a program may ask for: OSC 10 foreground, 11 background, 12 cursor. */
export type ColorSlot = 10 | 11 | 12;

/** Colours as a terminal reports them (`rgb:rrrr/gggg/bbbb`), by slot. */
export type ReportedColors = Partial<Record<ColorSlot, string>>;

/** What the mirror answers before any view has reported its colours: xterm.js's own defaults. */
const DEFAULT_COLORS: Record<ColorSlot, string> = { 10: 'rgb:ffff/ffff/ffff', 11: 'rgb:0000/0000/0000', 12: 'rgb:ffff/ffff/ffff' };

/** The product name in the XTVERSION answer, as tmux and other terminals give theirs: `name(version)`. */
const XTVERSION_NAME = 'shared-pty';

/**
 * Makes the mirror answer the terminal queries xterm.js leaves to its renderer (docs/architecture.md,
 * "Terminal queries"): XTVERSION (`CSI > q`) and the colour queries `OSC 10/11/12 ;?`. Both answer
 * through `term.input`, so they come out of `onData` in the order the parser met the queries, with
 * the answers xterm.js gives itself (device attributes, status and cursor reports, DECRQM, DECRQSS).
 */
export class QueryAnswers implements IDisposable {
  private readonly _colors: Record<ColorSlot, string> = { ...DEFAULT_COLORS };
  private readonly _handlers: IDisposable[];

  constructor(private readonly _term: Terminal) {
    this._handlers = [
      _term.parser.registerCsiHandler({ prefix: '>', final: 'q' }, (params) => {
        if ((params[0] ?? 0) !== 0) return false;
        this._answer(`\x1bP>|${XTVERSION_NAME}(${VERSION})\x1b\\`);
        return true;
      }),
      ...([10, 11, 12] as const).map((slot) => _term.parser.registerOscHandler(slot, (data) => this._colorQuery(slot, data))),
    ];
  }

  /** The colours a view reported (its answers to these queries): later queries get them. */
  setColors(colors: ReportedColors): void {
    for (const slot of [10, 11, 12] as const) {
      const c = colors[slot];
      if (c !== undefined) this._colors[slot] = c;
    }
  }

  /**
   * `OSC 10 ; ? ST` asks for the foreground; as in xterm, each further `;`-separated item is the
   * next slot (`OSC 10;?;? ST` asks for foreground and background). Items that set a colour
   * change nothing here: the mirror keeps text, not colours of its own.
   */
  private _colorQuery(first: ColorSlot, data: string): boolean {
    const items = data.split(';');
    for (let i = 0; i < items.length && first + i <= 12; i++) {
      const slot = (first + i) as ColorSlot;
      if (items[i] === '?') this._answer(`\x1b]${slot};${this._colors[slot]}\x1b\\`);
    }
    return true;
  }

  private _answer(text: string): void {
    this._term.input(text, false);
  }

  dispose(): void {
    for (const h of this._handlers) h.dispose();
  }
}
