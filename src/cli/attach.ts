import { ConnectionClosedError, RpcCallError } from '../transport/client/rpc-client';
import { SessionFollower } from '../transport/client/session-follower';
import { parseArgs, UsageError } from './args';
import { COMMAND_FLAGS } from './command-flags';
import { CliError } from './find-session';
import { findTarget } from './remote';
import { endBySignal } from './end-on-signal';

/** Ctrl+] detaches, as in telnet: rarely needed by programs, easy to type. */
const DETACH_BYTE = 0x1d;
const DETACH_NAME = 'Ctrl+]';
/** Scrollback rows drawn on attach, so the outer terminal can scroll back a little. */
const SCROLLBACK_ROWS = 200;

/**
 * What the outer terminal is put back to on leaving: the modes a program in the session may have
 * set in it (and a snapshot sets again): its own screen back from the alternate one, the cursor
 * and keypad keys, mouse reports and their encodings, bracketed paste, focus reports, the cursor
 * shown in its default shape, the whole screen scrolling (and as any origin mode's region), no
 * insert mode, wrapping on, the default pen and character set. As tmux does on a detach, so the
 * shell is not left reading mouse reports or drawn over a program's picture.
 */
const OUTER_TERMINAL_BACK =
  '\x1b[?1049l\x1b[?1l\x1b>' +
  '\x1b[?9l\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1005l\x1b[?1006l\x1b[?1015l\x1b[?1016l' +
  // (Resetting the scroll region and origin mode homes the cursor: a save and a restore around
  // them keep it below the picture. The restore brings back origin mode as it was, harmless with
  // the whole screen as the region.)
  '\x1b[?2004l\x1b[?1004l\x1b[?25h\x1b[0 q\x1b7\x1b[r\x1b[?6l\x1b8\x1b[4l\x1b[?7h\x1b[0m\x1b(B\x0f';

/**
 * The attach notice, then a blank screen for the picture: the notice and the screen above it are
 * scrolled up into the outer terminal's scrollback (the picture is drawn on a fresh screen from
 * its top left: written at the cursor, the notice shifted every row of it).
 */
function noticeThenBlankScreen(notice: string, rows: number | undefined): string {
  return `${notice}\r\n${'\r\n'.repeat(Math.max(0, (rows ?? 24) - 1))}\x1b[H\x1b[2J`;
}

/**
 * `attach <session>`: an interactive terminal on a shared session from any terminal. The screen is
 * drawn first, then output streams live; keys go to the program; the session follows our size.
 */
export async function attachCommand(argv: string[]): Promise<number> {
  const args = parseArgs(argv, COMMAND_FLAGS.attach);
  const selector = args.positional[0];
  if (!selector) throw new UsageError('missing <session>; usage: shared-pty attach <session> [--no-resize]');
  const target = await findTarget(selector);
  const client = await target.connect();
  const session = target.session.id;
  const call = <T>(method: string, params: Record<string, unknown> = {}) => client.request<T>(method, { session, ...params });
  const stdin = process.stdin;
  const stdout = process.stdout;

  let resolveDone!: (code: number) => void;
  const done = new Promise<number>((r) => (resolveDone = r));
  let finished = false;
  /** Sets the terminal's raw mode; false when the terminal hung up (EIO). */
  const rawMode = (on: boolean): boolean => {
    try {
      stdin.setRawMode(on);
      return true;
    } catch {
      return false;
    }
  };
  /** The outer terminal is gone (a read or write of it failed): nothing more is written to it. */
  let terminalGone = false;
  const finish = (message: string, code: number) => {
    if (finished) return;
    finished = true;
    // A terminal that went away (its window closed, its ssh link dropped) has no mode to restore:
    // setRawMode then fails with EIO.
    if (stdin.isTTY && !terminalGone && !rawMode(false)) terminalGone = true;
    stdin.pause();
    if (!terminalGone) stdout.write(`${stdout.isTTY ? OUTER_TERMINAL_BACK : ''}\r\n[shared-pty] ${message}\r\n`);
    follower.dispose();
    target.release(client);
    resolveDone(code);
  };

  // The picture as everyone sees it (colours, scrollback, a full-screen program), then the
  // output from exactly that point: nothing missed, nothing twice.
  const notice = `[shared-pty] attached to ${target.session.name} (${target.label}); detach with ${DETACH_NAME}`;
  let noticeDue = true;
  const follower = new SessionFollower(client, session, {
    // The first picture comes after the notice (a resync's alone: the notice was said).
    snapshot: (data) => {
      const before = noticeDue ? noticeThenBlankScreen(notice, stdout.rows) : '\x1b[H\x1b[2J';
      noticeDue = false;
      stdout.write(before + data);
    },
    // Acknowledged once the outer terminal has taken it: a slow terminal slows the program, as with ssh.
    output: (data) => new Promise<void>((resolve) => stdout.write(data, () => resolve())),
    exit: (exit) => finish(`process exited with code ${exit.exitCode}`, 0),
  });
  client.onClose(() => {
    // Our own close (a detach, the end) needs no word; else the host went away under us.
    if (!finished) void target.goneMessage().then((message) => finish(message, 1));
  });

  // The session takes this terminal's size first: the picture is drawn for the size it is shown at
  // (drawn for the old size, the cursor and what was typed landed on other rows).
  const resize = () => {
    if (!args.flags.has('--no-resize') && stdout.columns && stdout.rows) {
      return call('pty/resize', { cols: stdout.columns, rows: stdout.rows }).catch(() => {});
    }
  };
  try {
    await resize();
    await follower.start({ snapshotScrollback: SCROLLBACK_ROWS });
  } catch (e) {
    // Said once, as the command's error: the connection's close that follows adds nothing.
    finished = true;
    follower.dispose();
    target.release(client);
    if (e instanceof RpcCallError) throw target.refused(e);
    if (e instanceof ConnectionClosedError) throw new CliError(await target.goneMessage(e));
    throw e;
  }
  // The session had ended (its exit came with the picture), or the host went away meanwhile: done,
  // before the terminal goes raw and stdin flows (which would keep the process, raw, for good).
  if (finished) return done;
  const onResize = () => void resize();
  stdout.on('resize', onResize);

  // The terminal may have hung up already (closed as the picture was drawn): a hang-up, as below.
  if (stdin.isTTY && !rawMode(true)) {
    terminalGone = true;
    finish('terminal closed; detached', 0);
    stdout.off('resize', onResize);
    return endBySignal('SIGHUP');
  }
  stdin.on('data', (chunk: Buffer) => {
    const i = chunk.indexOf(DETACH_BYTE);
    const data = i === -1 ? chunk : chunk.subarray(0, i);
    if (data.length) call('pty/write', { action: { text: data.toString('utf8') } }).catch(() => {});
    if (i !== -1) finish('detached; the session keeps running', 0);
  });
  // The terminal hung up under us (EIO): the session is left as a detach leaves it, and the command
  // ends as a hang-up ends it (below), not with an unhandled error.
  const hungUp = () => {
    terminalGone = true;
    finish('terminal closed; detached', 0);
  };
  // A terminal in raw mode has no end of input but its hang-up (Ctrl+D is a key then); a pipe's end
  // is the input's. Said at the end itself, not at the failed restore that may or may not follow.
  stdin.on('end', () => (stdin.isTTY ? hungUp() : finish('input closed; detached', 0)));
  stdin.on('error', hungUp);
  stdout.on('error', hungUp);
  stdin.resume();
  const code = await done;
  stdout.off('resize', onResize);
  // As a hang-up ends a command (status 129), and without Node's restore of a terminal that is gone.
  if (terminalGone) return endBySignal('SIGHUP');
  return code;
}
