import type { ColorSlot, ReportedColors } from '../../mirror/query-answers';

/**
 * How long after the program asked for the cursor position (`CSI 6 n`) a view's answer may still
 * arrive: a browser view behind a slow link answers late. A cursor report (`CSI row ; col R`) looks
 * like Ctrl+F3 and its kin (`CSI 1 ; mod R`), so it is taken for an answer only in this window.
 */
const CURSOR_ANSWER_WINDOW_MS = 5000;

/** Bytes of output kept to find a query cut between two reads. */
const QUERY_TAIL = 4;
const ESC = 0x1b;
const LEFT_BRACKET = 0x5b;
const QUESTION_MARK = 0x3f;
/**
 * How both cursor position queries end. Searched for first: rare in any output, where an ESC is
 * not (coloured text has one every few bytes, and searching for the whole query from each of them
 * cost the main thread 3-5 ms per MB of coloured output, bench/README.md).
 */
const QUERY_END = Buffer.from('6n');

/** Whether `data` holds a cursor position query: `CSI 6 n`, or DEC's `CSI ? 6 n`. */
function asksCursor(data: Buffer): boolean {
  for (let i = data.indexOf(QUERY_END); i >= 0; i = data.indexOf(QUERY_END, i + 1)) {
    if (data[i - 1] === LEFT_BRACKET && data[i - 2] === ESC) return true;
    if (data[i - 1] === QUESTION_MARK && data[i - 2] === LEFT_BRACKET && data[i - 3] === ESC) return true;
  }
  return false;
}

/**
 * The answers a terminal gives by itself to the queries the host answers (docs/architecture.md,
 * "Terminal queries"): device attributes (`CSI ? … c`, `CSI > … c`), status (`CSI 0 n`, `CSI 3 n`),
 * DEC cursor reports (`CSI ? r ; c R`), mode reports (`CSI ? … $ y`, `CSI … $ y`), XTVERSION and
 * status strings (`DCS > | … ST`, `DCS 0/1 $ r … ST`) and colours (`OSC 10/11/12 ; … ST`). No key
 * sends any of these.
 */
const VIEW_ANSWER =
  /\x1b\[[?>][\d;]*c|\x1b\[[03]n|\x1b\[\?\d+;\d+(?:;\d+)?R|\x1b\[\??\d+;\d+\$y|\x1bP(?:>\||[01]\$r)[^\x1b\x07]*(?:\x1b\\|\x07)|\x1b\](1[012]);([^\x1b\x07]*)(?:\x1b\\|\x07)/g;
/** Either cursor position query, in text sent to a view (see `replayed`). */
const CURSOR_QUERY = /\x1b\[\??6n/;
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
  /** The last chunk from an ESC among its last QUERY_TAIL bytes (a query may begin there), else undefined. */
  private _tail: Buffer | undefined;

  /**
   * Notes the program's output: a cursor position query makes views' cursor reports expected.
   * Runs for every PTY read: output with no ESC costs one scan, other output a search for the
   * query's rare end, and nothing is allocated unless a chunk ends within a query's length of an ESC.
   */
  sawOutput(data: Buffer): void {
    const joined = this._tail === undefined ? undefined : Buffer.concat([this._tail, data.subarray(0, QUERY_TAIL)]);
    const cutQuery = joined !== undefined && asksCursor(joined);
    if (cutQuery || (data.includes(ESC) && asksCursor(data))) this._cursorAskedAt = Date.now();
    // A query cut between reads begins with an ESC among the output's last bytes: those of this
    // read, or, after a read shorter than a query (`ESC`, `[`, `6`, `n` written one by one), of
    // the reads before it too.
    const recent = joined !== undefined && data.length < QUERY_TAIL ? joined : data;
    const cut = recent.indexOf(ESC, Math.max(0, recent.length - QUERY_TAIL));
    this._tail = cut < 0 ? undefined : Buffer.from(recent.subarray(cut));
  }

  /**
   * A subscriber was sent output from before it joined (a stream's replay, `pty/subscribe` with
   * `since`): a view answers the cursor queries in it as if they were new, long after the host
   * answered them, so its cursor reports are expected again (CURSOR_ANSWER_WINDOW_MS from now).
   */
  replayed(text: string): void {
    if (text.includes('\x1b') && CURSOR_QUERY.test(text)) this._cursorAskedAt = Date.now();
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
