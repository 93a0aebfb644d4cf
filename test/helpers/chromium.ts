// The Chromium the end-to-end suites drive (Debian's package, through playwright-core): one path,
// one set of flags, one skip reason, for the browser view, the replayer and the MCP Apps view.
import * as fs from 'node:fs';
import type { Browser } from 'playwright-core';

/** Debian's Chromium; SHARED_PTY_CHROMIUM names another (or a missing one, to check that npm test then fails). */
export const CHROMIUM = process.env.SHARED_PTY_CHROMIUM || '/usr/bin/chromium';

/** Why a test that needs Chromium is skipped (npm test then fails: test/allowed-skips.json allows no such skip), or false when it can run. */
export function chromiumSkip(what: string): string | false {
  return fs.existsSync(CHROMIUM) ? false : `${CHROMIUM} is not installed (apt-get install chromium); ${what} needs it`;
}

/** Headless Chromium as the suites run it: no sandbox (root in CI), no GPU, nothing fetched by itself. */
export async function launchChromium(): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
