import type { ColorSlot, ReportedColors } from '../mirror/query-answers';

/**
 * How long after the program asked for the cursor position (`CSI 6 n`) a view's answer may still
 * arrive: a browser view behind a slow link answers late. A cursor report (`CSI row ; col R`) looks
 * like Ctrl+F3 and its kin (`CSI 1 ; mod R`), so it is taken for an answer only in this window.
 */
const CURSOR_ANSWER_WINDOW_MS = 5000;

/** The program asks for the cursor position: `CSI 6 n`, or DEC's `CSI ? 6 n`. */
const CURSOR_QUERIES = [Buffer.from('\x1b[6n'), Buffer.from('\x1b[?6n')];
/** Bytes of output kept to find a query cut between two reads. */
const QUERY_TAIL = 4;

/**
 * The answers a terminal gives by itself to the queries the host answers (docs/architecture.md,
 * "Terminal queries"): device attributes (`CSI ? … c`, `CSI > … c`), status (`CSI 0 n`, `CSI 3 n`),
 * DEC cursor reports (`CSI ? r ; c R`), mode reports (`CSI ? … $ y`, `CSI … $ y`), XTVERSION and
 * status strings (`DCS > | … ST`, `DCS 0/1 $ r … ST`) and colours (`OSC 10/11/12 ; … ST`). No key
 * sends any of these.
 */
const VIEW_ANSWER =
  /\x1b\[[?>][\d;]*c|\x1b\[[03]n|\x1b\[\?\d+;\d+(?:;\d+)?R|\x1b\[\??\d+;\d+\$y|\x1bP(?:>\||[01]\$r)[^\x1b\x07]*(?:\x1b\\|\x07)|\x1b\](1[012]);([^\x1b\x07]*)(?:\x1b\\|\x07)/g;
/** A cursor position report, which some keys look like (see CURSOR_ANSWER_WINDOW_MS). */
const CURSOR_ANSWER = /\x1b\[\d+;\d+R/g;
/** A colour as terminals report it: `rgb:` and one to four hex digits per channel. */
const COLOR = /^rgb:[0-9a-fA-F]{1,4}\/[0-9a-fA-F]{1,4}\/[0-9a-fA-F]{1,4}$/;

/** What is left of a view's write once its automatic answers are taken out. */
export interface ViewWrite {
  /** The rest, to write to the program ('' when the write was only answers). */
  text: string;
  /** Colours the view reported in its answers, if any. */
  colors?: ReportedColors;
}

/**
 * The host is the terminal for queries: the mirror answers each one once (QueryAnswers), and the
 * views (the editor's terminal, `attach` in another terminal, the browser view), which are
 * terminals too and answer by themselves, have those answers taken out of what they write.
 * Without this, a program asking with two views attached got two answers, the second typed into
 * whatever read next. The colours views report are kept: they are the user's real colours.
 */
export class ViewAnswers {
  private _cursorAskedAt = Number.NEGATIVE_INFINITY;
  private _tail: Buffer = Buffer.alloc(0);

  /** Notes the program's output: a cursor position query makes views' cursor reports expected. */
  sawOutput(data: Buffer): void {
    const head = this._tail.length > 0 ? Buffer.concat([this._tail, data.subarray(0, QUERY_TAIL)]) : undefined;
    if (CURSOR_QUERIES.some((q) => data.includes(q) || head?.includes(q))) this._cursorAskedAt = Date.now();
    this._tail = Buffer.from(data.subarray(Math.max(0, data.length - QUERY_TAIL)));
  }

  /** A view's write without its automatic answers, and the colours those reported. */
  take(text: string): ViewWrite {
    if (!text.includes('\x1b')) return { text };
    let colors: ReportedColors | undefined;
    let rest = text.replace(VIEW_ANSWER, (_all, slot: string | undefined, value: string | undefined) => {
      if (slot !== undefined && value !== undefined && COLOR.test(value)) (colors ??= {})[Number(slot) as ColorSlot] = value;
      return '';
    });
    if (Date.now() - this._cursorAskedAt <= CURSOR_ANSWER_WINDOW_MS) rest = rest.replace(CURSOR_ANSWER, '');
    return colors ? { text: rest, colors } : { text: rest };
  }
}
