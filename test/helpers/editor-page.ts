// What the editor end-to-end suites (test/e2e/editor*.test.ts) read off a code-server page and its
// run directory: the status bar item, the active terminal's lines and tabs, notification buttons,
// the extension's log, and stopping the per-user hosts a test's editor started.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Page } from 'playwright-core';
import { readLiveRecords } from '../../src/host/discovery';
import { until } from './host';

/**
 * The built-in extensions the editor suites keep (code-server's `keepBuiltins`, scripts/sandbox.mjs):
 * the default themes, so the README's pictures look as a user's editor does, and terminal
 * suggestions, the one built-in that works inside terminals. The other 92 (languages, git, GitHub,
 * Copilot Chat, …) have nothing to do with terminals, yet made each workbench load about twice as
 * long: git's start with the window and ours waits for them (onStartupFinished), JSON's and
 * TypeScript's start a language server for the settings file, and the server scans them all for
 * every window (docs/testing.md#how-long-a-run-takes).
 */
export const EDITOR_BUILTINS = ['vscode.theme-defaults', 'vscode.theme-seti', 'vscode.terminal-suggest'];

/** How long a line is awaited in a terminal by default (a browser on a loaded machine is slow). */
const SCREEN_WAIT_MS = 20_000;

/** Stops the hosts of a runtime directory by their recorded pids (they are detached, like tmux servers). */
export async function stopHosts(runtimeDir: string): Promise<void> {
  for (const r of readLiveRecords(runtimeDir)) {
    try {
      process.kill(r.pid, 'SIGTERM');
    } catch {
      // already gone
    }
  }
  await until(() => readLiveRecords(runtimeDir).length === 0, 5000, 'the hosts to stop').catch(() => undefined);
  fs.rmSync(runtimeDir, { recursive: true, force: true });
}

/** The status bar item's text, e.g. "Shared: 1". */
export function statusItem(page: Page) {
  return page.locator('.statusbar-item', { hasText: 'Shared:' }).first();
}

/** The lines of the active terminal's buffer (scrollback and screen), via the xterm on its wrapper (e2e-recipe §4). */
export function terminalLines(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const term = (document.querySelector('.terminal-wrapper.active') as (Element & { xterm?: import('@xterm/xterm').Terminal }) | null)?.xterm;
    if (!term) return [];
    const buf = term.buffer.active;
    const out: string[] = [];
    for (let y = 0; y < buf.length; y++) out.push(buf.getLine(y)?.translateToString(true) ?? '');
    return out;
  });
}

/** Waits until a line of the active terminal fits `pred`; returns the lines. A failure shows the terminal's last lines. */
export async function waitTerminalLine(page: Page, pred: (line: string) => boolean, what: string, ms = SCREEN_WAIT_MS): Promise<string[]> {
  let last: string[] = [];
  try {
    return await until(
      async () => {
        last = await terminalLines(page);
        return last.some(pred) ? last : undefined;
      },
      ms,
      what,
    );
  } catch (e) {
    throw new Error(`${(e as Error).message}; active terminal: ${JSON.stringify(last.filter(Boolean).slice(-10))}`, { cause: e });
  }
}

/** Names on the terminal tabs (one terminal: the single tab; several: the tab list). */
export function terminalTabs(page: Page): Promise<string[]> {
  return page.evaluate(() =>
    Array.from(document.querySelectorAll('.terminal-tabs-entry, .single-terminal-tab')).map((e) => (e.textContent ?? '').replace(/\u00a0/g, ' ').trim()),
  );
}

/** The button `label` of the notification toast holding `text`. */
export function notificationButton(page: Page, text: string, label: string) {
  return page.locator('.notification-toast', { hasText: text }).first().locator('.monaco-button', { hasText: label }).first();
}

/** The extension's own log lines (its LogOutputChannel), for failure messages. */
export function extensionLog(runDir: string): string {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (/Shared PTY\.log$/.test(e.name)) found.push(fs.readFileSync(p, 'utf8'));
    }
  };
  try {
    walk(path.join(runDir, 'ud', 'logs'));
  } catch {
    // no logs yet
  }
  return found.join('\n---\n').split('\n').slice(-60).join('\n');
}
