/**
 * The line discipline's mode of a session's terminal. /proc does not show termios: it is read with
 * tcgetattr on the PTY's master side where the platform allows (tcgetattr.ts: synchronous, ~5 µs),
 * else with `stty` (about 1.5 ms of CPU and 3 ms of wall time, so only when /proc already says the
 * foreground job waits: input-wait.ts). A password prompt (getpass, sudo, ssh, passwd, `read -s`)
 * reads whole lines (ICANON) with ECHO off: "echo off, canonical" is the mark of a secret being
 * typed. Readline, vim, `npm login` and other programs that read keys turn off both, since they
 * draw what is typed themselves (or hide it): for them the line at the cursor tells (secret-prompt.ts).
 */
import { execFile } from 'node:child_process';
import { inputSettingsOf, localFlagsOf } from './tcgetattr';

/** Local-mode bits of Linux's termios (asm-generic/termbits.h), as `stty -g` prints them in hex. */
const LFLAG_ICANON = 0o2;
const LFLAG_ECHO = 0o10;
/** stty answers in milliseconds; one stuck on a wedged terminal must not hold a probe for long. */
const STTY_TIMEOUT_MS = 2000;
/** Where stty lives when the host runs with a PATH that lacks it (started by an editor). */
const FALLBACK_PATH = '/usr/bin:/bin';

/** Whether the terminal reads lines without echoing them. */
export interface LineMode {
  readonly echo: boolean;
  readonly canonical: boolean;
}

/** True for the mode a password prompt sets: lines are read (canonical) and nothing typed is shown. */
export function isSecretMode(mode: LineMode): boolean {
  return mode.canonical && !mode.echo;
}

/** True for a terminal that reads keys and echoes nothing itself: the program decides what is shown. */
export function isRawWithoutEcho(mode: LineMode): boolean {
  return !mode.canonical && !mode.echo;
}

/**
 * The mode of the terminal behind the PTY master `fd`, read synchronously (the moment a write
 * reaches the PTY), or null where it cannot be read so (not Linux, no koffi, the PTY closed).
 */
export function lineModeOfFd(fd: number | undefined): LineMode | null {
  const lflag = fd === undefined ? null : localFlagsOf(fd);
  return lflag === null ? null : modeOfLocalFlags(lflag);
}

/**
 * The mode of the terminal at `ttyPath` (the pty's slave, `/dev/pts/N`), or null when it cannot be
 * read (no stty, the terminal closed). Opening the slave from stty changes nothing for the session:
 * it is not a session leader, so the terminal does not become its controlling terminal.
 */
export function lineModeOf(ttyPath: string): Promise<LineMode | null> {
  return new Promise((resolve) => {
    const env = { PATH: `${process.env.PATH ?? ''}:${FALLBACK_PATH}`, LC_ALL: 'C' };
    execFile('stty', ['-F', ttyPath, '-g'], { env, timeout: STTY_TIMEOUT_MS, windowsHide: true }, (error, stdout) => {
      resolve(error ? null : parseSttySaved(String(stdout)));
    });
  });
}

/**
 * Reads the local flags out of `stty -g`'s "iflag:oflag:cflag:lflag:cc…" (hex fields, GNU and
 * BusyBox alike); null when the text is not that.
 */
export function parseSttySaved(text: string): LineMode | null {
  const fields = text.trim().split(':');
  if (fields.length < 4 || !/^[0-9a-f]+$/i.test(fields[3])) return null;
  return modeOfLocalFlags(Number.parseInt(fields[3], 16));
}

function modeOfLocalFlags(lflag: number): LineMode {
  return { echo: (lflag & LFLAG_ECHO) !== 0, canonical: (lflag & LFLAG_ICANON) !== 0 };
}

/**
 * The editing keys a new terminal has (`c_cc` index → the values it may hold): Ctrl+C interrupt,
 * Backspace erase, Ctrl+U kill, Ctrl+W word erase, Ctrl+V next literal (readline turns it off
 * while it reads), and no extra end of line (0, or 0xFF as node-pty sets it: no UTF-8 byte). readline
 * takes its Backspace, Ctrl+U, Ctrl+V and Ctrl+W from them, and the kernel edits typed-ahead lines
 * with them.
 */
const DEFAULT_KEYS: ReadonlyArray<[index: number, keys: readonly number[]]> = [
  [0, [0x03]], // VINTR
  [2, [0x7f]], // VERASE
  [3, [0x15]], // VKILL
  [14, [0x17]], // VWERASE
  [15, [0x16, 0]], // VLNEXT
  [11, [0, 0xff]], // VEOL
  [16, [0, 0xff]], // VEOL2
];
const IGNCR = 0o200;
const IXON = 0o2000;

/**
 * The keys that act otherwise on this terminal than on a new one (`stty erase '#'`: `#` and
 * Backspace; `stty -ixon`: Ctrl+Q and Ctrl+S become keys; `stty igncr`: Enter's CR is dropped), ''
 * when none do, null when the settings cannot be read (as lineModeOfFd).
 */
export function changedEditingKeys(fd: number | undefined): string | null {
  const settings = fd === undefined ? null : inputSettingsOf(fd);
  if (settings === null) return null;
  let keys = '';
  if ((settings.iflag & IXON) === 0) keys += '\x11\x13';
  if ((settings.iflag & IGNCR) !== 0) keys += '\r';
  for (const [index, defaults] of DEFAULT_KEYS) {
    const now = settings.cc[index]!;
    if (defaults.includes(now)) continue;
    keys += String.fromCharCode(now);
    if (defaults[0] !== 0) keys += String.fromCharCode(defaults[0]!);
  }
  return keys;
}
