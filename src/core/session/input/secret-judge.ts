import { asksForSecret } from '../../process/secret-prompt';
import type { InputJudgement, InputVerdict } from './input-source';
import { isRawWithoutEcho, isSecretMode, lineModeOf, lineModeOfFd, type LineMode } from '../../process/terminal-mode';

/** The line at the cursor as the mirror has it (lineBeforeCursor), asked for now. */
export type CursorLineQuery = () => Promise<{ text: string; alternate: boolean }>;

/**
 * Decides whether a session's program asks for a secret (docs/protocol.md#secret-input, docs/protocol.md "Secret
 * input"): the terminal reads lines without echo (getpass, sudo, `read -s`), or it reads keys
 * without echo (raw or cbreak mode) and the line at the cursor asks for a password, passphrase,
 * PIN, token or secret (`npm login`, inquirer and prompts password questions). Readline at the
 * shell's own prompt (known from the shell integration), a REPL and a full-screen program (the
 * alternate screen: an editor showing a file that mentions a password) read keys without echo too,
 * and are not asked for a secret.
 */
export class SecretJudge {
  /**
   * @param _fd the PTY's master side now (the mode is read there synchronously); undefined when
   *   unknown or closed (a session that was closed hangs its terminal up)
   * @param _ttyPath the slave (stty reads it where the mode cannot be read synchronously)
   * @param _cursorLine the line at the cursor, answered for the output read up to the call
   * @param _atShellPrompt the shell integration says the shell itself edits a command line
   */
  constructor(
    private readonly _fd: () => number | undefined,
    private readonly _ttyPath: string | undefined,
    private readonly _cursorLine: CursorLineQuery,
    private readonly _atShellPrompt: () => boolean,
  ) {}

  /** The terminal's mode now, read synchronously; null where it cannot be read so. */
  modeNow(): LineMode | null {
    return lineModeOfFd(this._fd());
  }

  /** Whether the program asks for a secret now (probes, `pty/send`, the agents' guard). */
  async asksNow(): Promise<boolean> {
    const mode = this.modeNow() ?? (this._ttyPath ? await lineModeOf(this._ttyPath) : null);
    if (mode === null) return false;
    return (await this._verdictFor(mode)) === 'secret';
  }

  /**
   * The verdict on text written now, from the mode read at this moment; a prompt that reads keys
   * is decided by the line at the cursor as the output up to now left it (asked now, answered
   * later: the promise). Call it just before the bytes are written.
   */
  judgeWrite(): InputVerdict | Promise<InputVerdict> {
    const mode = this.modeNow();
    return mode === null ? 'unknown' : this._verdictFor(mode);
  }

  private _verdictFor(mode: LineMode): InputVerdict | Promise<InputVerdict> {
    if (isSecretMode(mode)) return 'secret';
    if (!isRawWithoutEcho(mode) || this._atShellPrompt()) return 'shown';
    return this._cursorLine().then(
      (line) => (!line.alternate && asksForSecret(line.text) ? 'secret' : 'shown'),
      // The mirror is gone (the session closed): nothing is known, so nothing is kept.
      (): InputVerdict => 'unknown',
    );
  }
}

/** A line ends at CR or LF; CR LF is one end. */
const LINE_END = /\r\n?|\n/;

/** The text up to and including its first line end (all of it when it has none), and the bytes after it. */
export function splitFirstLine(text: string): { head: string; aheadBytes: number } {
  const end = LINE_END.exec(text);
  const head = end ? text.slice(0, end.index + end[0].length) : text;
  return { head, aheadBytes: Buffer.byteLength(text, 'utf8') - Buffer.byteLength(head, 'utf8') };
}

/**
 * A write's judgement: the part the program reading now gets (up to the first line end) with the
 * verdict on it, and the size of what is typed ahead. A first part that did not reach the PTY at
 * once (node-pty queued some of it) reached it later, in a mode no one read: unknown.
 */
export function judgement(data: string, verdict: InputVerdict | Promise<InputVerdict>, bytesAtOnce: number): InputJudgement {
  const { head, aheadBytes } = splitFirstLine(data);
  return { head, aheadBytes, verdict: bytesAtOnce < Buffer.byteLength(head, 'utf8') ? 'unknown' : verdict };
}
