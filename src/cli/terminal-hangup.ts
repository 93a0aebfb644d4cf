import * as fs from 'node:fs';
import * as tty from 'node:tty';

/**
 * The standard streams that were a terminal when the command started. Node restores each one's
 * mode as the process exits, and aborts (SIGABRT, a native stack trace) when that fails: it does
 * once the terminal has hung up (its window closed, its ssh link dropped).
 */
const startedOnTerminal = [0, 1, 2].filter((fd) => tty.isatty(fd));

/**
 * Whether a terminal the command started on has hung up. Linux answers no terminal request on a
 * hung-up terminal (EIO), so it is no longer a tty, though still open as a device (a closed
 * descriptor is not a hang-up).
 */
export function terminalHungUp(): boolean {
  return startedOnTerminal.some((fd) => {
    if (tty.isatty(fd)) return false;
    try {
      return fs.fstatSync(fd).isCharacterDevice();
    } catch {
      return false;
    }
  });
}

/**
 * However the command ends (its own `process.exit`, as `serve`, `record` and `mcp` end on a
 * signal, or an empty event loop), a terminal that hung up makes it end by SIGHUP instead, before
 * Node's exit-time restore of the terminal's mode, which aborts there. Installed once, at start.
 */
export function endByHangUpWhenTerminalGone(): void {
  if (startedOnTerminal.length === 0 || process.listeners('exit').includes(onExit)) return;
  process.on('exit', onExit);
}

function onExit(): void {
  if (!terminalHungUp()) return;
  // The default action (end) from here on: a listener would only be run after the exit.
  process.removeAllListeners('SIGHUP');
  process.kill(process.pid, 'SIGHUP');
}
