import { after } from 'node:test';
import type * as pty from 'node-pty';

/**
 * A list for the raw node-pty processes a suite spawns (tests of the /proc and termios readers,
 * which need a PTY without a host): each is SIGKILLed once the suite is over, whatever its tests did.
 */
export function ptysKilledAfterSuite(): pty.IPty[] {
  const open: pty.IPty[] = [];
  after(() => {
    for (const p of open) {
      try {
        p.kill('SIGKILL');
      } catch {
        // already gone
      }
    }
  });
  return open;
}
