// Remote hosts in a real VS Code (docs/editor.md#remote-hosts): code-server + Debian's Chromium
// driven by playwright-core, as in editor.test.ts. The "other machine" is a second runtime
// directory with its own per-user host, reached by a `sh -c` command in hosts.json standing in for
// `ssh box shared-pty bridge` (the ssh way itself is test/unit/cli/remote-hosts.test.ts's). Steps:
// the session list grouped by host, a remote session opened as an editor terminal (typing reaches
// it, a flood arrives whole, it follows the far session live), an agent's write into a remote
// session the person opened, asked in this editor window, the remote terminal back after a
// reload, and a session an agent opens there shown here. Needs `npm run build` first.
/// <reference lib="dom" />
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { SessionInfo } from '../../src/core/methods/types';
import { readLiveRecords } from '../../src/host/discovery';
import { RpcClient } from '../../src/transport/client/rpc-client';
import { tempRuntimeDir, until } from '../helpers/host';
import {
  EDITOR_BUILTINS,
  extensionLog,
  notificationButton,
  statusItem,
  stopHosts,
  terminalLines,
  terminalTabs,
  waitTerminalLine,
} from '../helpers/editor-page';

const ROOT = path.join(__dirname, '..', '..');
const CLI = path.join(ROOT, 'dist', 'cli.js');
const SETTINGS = { 'sharedPty.shell': '/bin/bash', 'sharedPty.shellArgs': ['--norc', '--noprofile'] };

/** Bounds on waits; generous, since a workbench on a loaded 2-core machine is slow to start. */
const enum Wait {
  /** goto → our status bar item (e2e-recipe §7: typically 22–27 s, up to 34 s seen). */
  Activation = 90_000,
  Ui = 20_000,
  Screen = 20_000,
  /** A flood through the bridge into the editor's terminal, on a loaded machine. */
  Flood = 90_000,
}

/** Lines the remote terminal is flooded with (`seq`): several MB through the bridge, paced by the editor. */
const FLOOD_LINES = 300_000;

interface CodeServer {
  url: string;
  runDir: string;
  workspace: string;
  stop(): Promise<void>;
}
interface Sandbox {
  ensureSandbox(opts?: { log?: (m: string) => void }): Promise<unknown>;
  startCodeServer(opts: {
    extensionDir?: string;
    env?: Record<string, string>;
    settings?: Record<string, unknown>;
    keepBuiltins?: string[];
  }): Promise<CodeServer>;
  launchBrowser(opts?: Record<string, unknown>): Promise<Browser>;
}

const log = (msg: string) => process.stderr.write(`[editor-remote e2e] ${msg}\n`);
let sandbox: Sandbox | undefined;
let skipReason: string | undefined;
const cleanups: Array<() => Promise<void> | void> = [];

before(async () => {
  if (!fs.existsSync(path.join(ROOT, 'dist', 'extension.js')) || !fs.existsSync(CLI)) throw new Error('dist/ is missing: run `npm run build` first');
  try {
    sandbox = (await import(path.join(ROOT, 'scripts', 'sandbox.mjs'))) as Sandbox;
    await sandbox.ensureSandbox({ log });
  } catch (e) {
    skipReason = `the code-server sandbox cannot be installed here (${(e as Error).message.split('\n')[0]})`;
  }
});

after(async () => {
  for (const fn of cleanups.reverse()) {
    try {
      await fn();
    } catch (e) {
      log(`cleanup: ${(e as Error).message}`);
    }
  }
});

function tempDir(prefix: string): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  cleanups.push(() => fs.rmSync(d, { recursive: true, force: true }));
  return d;
}

/**
 * The open quick pick's rows by group: a separator's label shows on the first row after it
 * (its own element there), and the rows after it up to the next separator are its group.
 */
async function pickGroups(page: Page): Promise<Array<{ group: string; rows: string[] }>> {
  const rows = await page.evaluate(() =>
    [...document.querySelectorAll('.quick-input-widget .monaco-list-row')]
      .sort((a, b) => a.getBoundingClientRect().top - b.getBoundingClientRect().top)
      .map((e) => {
        const sep = e.querySelector('.quick-input-list-separator')?.textContent?.trim() || undefined;
        const label = e.querySelector('.quick-input-list-label, .monaco-icon-label')?.textContent ?? e.textContent ?? '';
        return { sep, label: label.replace(/\u00a0/g, ' ').trim() };
      }),
  );
  const groups: Array<{ group: string; rows: string[] }> = [];
  for (const r of rows) {
    if (r.sep !== undefined || groups.length === 0) groups.push({ group: r.sep ?? '', rows: [] });
    groups[groups.length - 1].rows.push(r.label);
  }
  return groups;
}

/** Opens the session list (status bar) and waits until `row` shows in it. */
async function openList(page: Page, row: string): Promise<void> {
  await statusItem(page).click();
  const picker = page.locator('.quick-input-widget');
  await picker.locator('.quick-input-title', { hasText: 'Shared PTY sessions' }).waitFor({ timeout: Wait.Ui });
  await picker.locator('.monaco-list-row', { hasText: row }).first().waitFor({ timeout: Wait.Ui });
}

/**
 * Picks the list's row holding `text` by typing it into the list's filter and pressing Enter: the
 * list redraws while hosts connect, and a click could land on the row that took its place.
 */
async function pickRow(page: Page, text: string): Promise<void> {
  const picker = page.locator('.quick-input-widget');
  await picker.locator('.quick-input-box input').fill(text);
  await picker.locator('.monaco-list-row.focused', { hasText: text }).first().waitFor({ timeout: Wait.Ui });
  await page.keyboard.press('Enter');
}

/** Processes running `cli.js bridge` whose parent is not a `shared-pty mcp` (the editor window's bridge). */
function editorBridges(): number[] {
  const cmdline = (pid: string) => {
    try {
      return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    } catch {
      return [];
    }
  };
  const parent = (pid: string) => {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1];
    } catch {
      return '';
    }
  };
  return fs
    .readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      const c = cmdline(p);
      return c[1] === CLI && c[2] === 'bridge' && !cmdline(parent(p)).includes('mcp');
    })
    .map(Number);
}

describe('remote hosts in a real editor (code-server)', () => {
  it("groups sessions by host, opens a remote session as a live terminal, asks about an agent's write into a remote session", async (t) => {
    if (skipReason) return t.skip(skipReason);
    // The far machine: its own runtime directory, home and per-user host, reached by a command.
    const far = tempRuntimeDir();
    cleanups.push(() => stopHosts(far));
    const farHome = tempDir('spt-farhome-');
    const farEnv = { ...process.env, SHARED_PTY_DIR: far, HOME: farHome, SHELL: '/bin/bash' };
    const opened = spawnSync(process.execPath, [CLI, 'open', '--name', 'far-work', '--json', '--', '/bin/bash', '--norc', '--noprofile'], {
      env: farEnv,
      encoding: 'utf8',
      timeout: 60_000,
    });
    assert.equal(opened.status, 0, `open on the far side: ${opened.stderr}`);
    const farWork = JSON.parse(opened.stdout) as SessionInfo;
    const [farRecord] = readLiveRecords(far);
    const farClient = await RpcClient.connect(farRecord.control);
    cleanups.push(() => farClient.close());
    const config = tempDir('spt-config-');
    fs.mkdirSync(path.join(config, 'shared-pty'));
    const bridge = `SHARED_PTY_DIR=${far} HOME=${farHome} SHELL=/bin/bash exec ${process.execPath} ${CLI} bridge`;
    // "off": a host whose command fails, as an ssh to a machine that is down does.
    const off = 'echo "ssh: connect to host off-box port 22: Connection refused" >&2; exit 255';
    fs.writeFileSync(path.join(config, 'shared-pty', 'hosts.json'), JSON.stringify({ hosts: { far: bridge, off } }));

    // This machine: the editor, with its own runtime directory; hosts.json found through XDG_CONFIG_HOME.
    const local = tempRuntimeDir();
    cleanups.push(() => stopHosts(local));
    const home = tempDir('spt-home-');
    const server = await sandbox!.startCodeServer({
      extensionDir: ROOT,
      settings: SETTINGS,
      env: { SHARED_PTY_DIR: local, XDG_CONFIG_HOME: config, HOME: home },
      keepBuiltins: EDITOR_BUILTINS,
    });
    cleanups.push(() => server.stop());
    const browser = await sandbox!.launchBrowser();
    cleanups.push(() => browser.close());
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    let failedStep: string | undefined;
    const step = (name: string, fn: () => Promise<void>) =>
      t.test(name, async (st) => {
        if (failedStep) return st.skip(`an earlier step failed: ${failedStep}`);
        try {
          await fn();
        } catch (e) {
          failedStep = name;
          await page.screenshot({ path: path.join(os.tmpdir(), 'shared-pty-editor-remote-failure.png') }).catch(() => undefined);
          throw new Error(`${(e as Error).message}\n--- extension log:\n${extensionLog(server.runDir)}`, { cause: e });
        }
      });

    await step('1. activation makes no bridge: the far host sees no connection before the list is opened', async () => {
      await page.goto(`${server.url}/?folder=${encodeURIComponent(server.workspace)}`, { timeout: Wait.Activation });
      await statusItem(page).waitFor({ timeout: Wait.Activation });
      const info = await farClient.request<{ clients: number }>('pty/info', { session: farWork.id });
      assert.equal(info.clients, 0, 'no editor follows the far session yet');
    });

    await step(
      '2. the session list groups sessions by host: this machine, "far" with its session and "Open Shared PTY on far", "off" with why it cannot be reached',
      async () => {
        await openList(page, 'far-work');
        const groups = await until(
          async () => {
            const g = await pickGroups(page);
            return g.some((x) => x.rows.some((r) => r.includes('Open Shared PTY on far'))) ? g : undefined;
          },
          Wait.Ui,
          'the far group complete',
        );
        const said = JSON.stringify(groups);
        assert.deepEqual(groups.map((g) => g.group).slice(0, 3), ['this machine', 'far', 'off'], `this machine first, then far, then off: ${said}`);
        assert.ok(
          groups[0].rows.some((r) => /^Open Shared PTY(?! on )/.test(r)),
          `this machine's group opens a terminal here: ${said}`,
        );
        assert.ok(!groups[0].rows.some((r) => r.includes('far-work')), `the far session is not in this machine's group: ${said}`);
        assert.ok(
          groups[1].rows.some((r) => r.includes('far-work')),
          `far's group holds its session: ${said}`,
        );
        assert.ok(
          groups[1].rows.some((r) => r.includes('Open Shared PTY on far')),
          `far's group opens a terminal there: ${said}`,
        );
        // The host that cannot be reached says so in its group, with what its command said.
        const offRow = page.locator('.quick-input-widget .monaco-list-row', { hasText: 'off: not connected' }).first();
        await offRow.waitFor({ timeout: Wait.Ui });
        assert.match(
          (await offRow.textContent()) ?? '',
          /cannot reach host "off" with: .*\(it exited with status 255: ssh: connect to host off-box port 22: Connection refused\)/,
          'the reason, in one line',
        );
        const detail = await page.locator('.quick-input-widget .monaco-list-row', { hasText: 'far-work' }).first().textContent();
        assert.match(detail ?? '', new RegExp(`far:${farWork.id}`), 'the row names the session as the CLI does');
        await page.screenshot({ path: path.join(os.tmpdir(), 'shared-pty-remote-list.png') });
        await page.keyboard.press('Escape');
      },
    );

    await step('3. a remote session opens as an editor terminal: keys reach it, it follows the far session live, a flood arrives whole', async () => {
      await openList(page, 'far-work');
      const picker = page.locator('.quick-input-widget');
      await pickRow(page, 'far-work');
      await picker.locator('.quick-input-title', { hasText: 'Shared PTY sessions: far:far-work' }).waitFor({ timeout: Wait.Ui });
      await picker.locator('.monaco-list-row', { hasText: 'Show in This Window' }).first().click();
      await until(async () => (await terminalTabs(page)).some((n) => n.includes('far:far-work')), Wait.Ui, 'the terminal tab named far:far-work');
      await waitTerminalLine(page, (l) => /[$#]\s*$/.test(l), 'the far prompt in the editor terminal');
      await page.keyboard.type('echo typed-$((6*7))');
      await page.keyboard.press('Enter');
      await waitTerminalLine(page, (l) => l.trim() === 'typed-42', "the far shell's answer in the editor terminal");
      const screen = (await farClient.request<{ screen: string }>('pty/read', { session: farWork.id })).screen;
      assert.match(screen, /^typed-42$/m, "the person's keys ran on the far host");
      // Someone on the far machine types: the editor follows.
      await farClient.request('pty/write', { session: farWork.id, action: { text: 'echo from-far-$((2*3))\r' } });
      await waitTerminalLine(page, (l) => l.trim() === 'from-far-6', "the far machine's own input, shown live");
      // A flood: every line arrives, in order, paced by the editor (the far host waits for its acknowledgements).
      await farClient.request('pty/write', { session: farWork.id, action: { text: `seq 1 ${FLOOD_LINES}; echo flood-done\r` } });
      await waitTerminalLine(page, (l) => l.trim() === 'flood-done', 'the end of the flood in the editor terminal', Wait.Flood);
      const lines = (await terminalLines(page)).map((l) => l.trim());
      const done = lines.lastIndexOf('flood-done');
      assert.equal(lines[done - 1], String(FLOOD_LINES), 'the last line of the flood just above its end mark');
      for (let i = done - 200; i < done - 1; i++)
        assert.equal(Number(lines[i]) + 1, Number(lines[i + 1]), `no line lost in the editor's scrollback near ${lines[i]}`);
    });

    await step("4. an agent's write into a remote session the person opened is asked in this window: Deny types nothing, Allow Once runs it", async () => {
      await openList(page, 'Open Shared PTY on far');
      // Through the filter, not a click: the list redraws each time the unreachable host fails again.
      await pickRow(page, 'Open Shared PTY on far');
      const mine = await until(
        async () => {
          const { sessions } = await farClient.request<{ sessions: SessionInfo[] }>('session/list', {});
          return sessions.find((s) => s.id !== farWork.id && s.origin === 'user');
        },
        Wait.Ui,
        'the session the editor opened on the far host',
      );
      await until(async () => (await terminalTabs(page)).some((n) => n.includes(`far:${mine.name}`)), Wait.Ui, `the terminal tab far:${mine.name}`);
      // The window registered as the far host's approver through the bridge, and set its policy there.
      const policy = await until(
        async () => {
          const p = await farClient.request<{ approval: string; canAsk: boolean }>('host/agentPolicy', {});
          return p.canAsk && p.approval === 'ask' ? p : undefined;
        },
        Wait.Ui,
        'the far host to have this window as its approver, with policy ask',
      );
      assert.equal(policy.approval, 'ask');
      // The agent: `shared-pty mcp` on this machine, reaching the far host through its own bridge.
      const mcp = new Client({ name: 'remote-e2e-agent', version: '0.0.0' });
      await mcp.connect(
        new StdioClientTransport({
          command: process.execPath,
          args: [CLI, 'mcp'],
          env: { PATH: process.env.PATH ?? '', HOME: home, SHARED_PTY_DIR: local, XDG_CONFIG_HOME: config },
          stderr: 'pipe',
        }),
      );
      cleanups.push(() => mcp.close());
      type ToolResult = { isError?: boolean; content: Array<{ text?: string }> };
      const send = (text: string) =>
        (
          mcp.callTool({ name: 'send', arguments: { session: `far:${mine.id}`, text, timeout: 30_000 } }, undefined, {
            timeout: 120_000,
          }) as Promise<ToolResult>
        ).then((r) => r.content.map((c) => c.text ?? '').join(''));
      const denied = send('echo agent-denied');
      await notificationButton(page, 'echo agent-denied', 'Deny').waitFor({ state: 'visible', timeout: Wait.Ui });
      const question = ((await page.locator('.notification-toast', { hasText: 'echo agent-denied' }).first().textContent()) ?? '').replace(/\u00a0/g, ' ');
      assert.match(question, new RegExp(`wants to type into the terminal "far:${mine.name}"`), `the question names the remote terminal: ${question}`);
      await page.screenshot({ path: path.join(os.tmpdir(), 'shared-pty-remote-approval.png') });
      await notificationButton(page, 'echo agent-denied', 'Deny').click();
      assert.match(await denied, /declined/, 'the agent hears the person declined');
      assert.doesNotMatch((await farClient.request<{ screen: string }>('pty/read', { session: mine.id })).screen, /agent-denied/);
      const allowed = send('echo agent-allowed-$((5*5))');
      await notificationButton(page, 'agent-allowed', 'Allow Once').click({ timeout: Wait.Ui });
      assert.match(await allowed, /agent-allowed-25/, 'the allowed command ran and the agent got its output');
      await waitTerminalLine(page, (l) => l.trim() === 'agent-allowed-25', "the agent's command in the person's remote terminal");
      const who = await farClient.request<{ lastInput: { origin: string; approval?: string } }>('pty/info', { session: mine.id });
      assert.deepEqual([who.lastInput.origin, who.lastInput.approval], ['agent', 'allowed_once'], "the far host recorded the person's answer");
    });

    await step('5. the bridge killed under the terminal: said once, the session runs on, the list connects again and the terminal follows it', async () => {
      const [bridgePid, ...more] = editorBridges();
      assert.ok(bridgePid && more.length === 0, `one bridge for the window, however many terminals: ${[bridgePid, ...more]}`);
      process.kill(bridgePid, 'SIGKILL');
      await waitTerminalLine(
        page,
        (l) => l.includes('[the connection to host far dropped; the session runs on there'),
        'the terminal saying its bridge dropped',
      );
      await page.locator('.notification-toast', { hasText: 'the connection to host "far"' }).first().waitFor({ timeout: Wait.Ui });
      const info = await farClient.request<{ running: boolean }>('pty/info', { session: farWork.id });
      assert.equal(info.running, true, 'the far session runs on');
      await openList(page, 'far-work');
      const picker = page.locator('.quick-input-widget');
      await pickRow(page, 'far-work');
      await picker.locator('.quick-input-title', { hasText: 'Shared PTY sessions: far:far-work' }).waitFor({ timeout: Wait.Ui });
      await picker
        .locator('.monaco-list-row', { hasText: /Show in This Window|Focus Terminal/ })
        .first()
        .click();
      await waitTerminalLine(page, (l) => l.trim() === 'flood-done', 'far-work redrawn from the far screen in the new terminal');
      // Keys go where the focus is: into the terminal on screen (the old one, whose bridge dropped,
      // would take a key as "close me", as a finished terminal does).
      await page.locator('.terminal-wrapper.active .xterm-screen').click();
      await page.keyboard.type('echo back-$((7*7))');
      await page.keyboard.press('Enter');
      await waitTerminalLine(page, (l) => l.trim() === 'back-49', 'typing reaches the far session through the new bridge');
      assert.notEqual(editorBridges()[0], bridgePid, 'a new bridge');
    });

    await step('6. a reload brings the remote terminal back: one terminal, through a new bridge, following the same far session', async () => {
      const before = editorBridges();
      await page.reload();
      await statusItem(page).waitFor({ timeout: Wait.Activation });
      await until(
        async () => (await terminalTabs(page)).some((n) => n.includes('far:far-work')),
        Wait.Activation,
        'the remote terminal re-opened after the reload',
      );
      // Shown if it is not the active one (a terminal whose bridge had dropped may come back too):
      // with several terminals the tab list is there (the wait above saw it), with one it is not.
      const farTab = page.locator('.terminal-tabs-entry', { hasText: 'far:far-work' }).first();
      if ((await farTab.count()) > 0) await farTab.click();
      await waitTerminalLine(page, (l) => l.trim() === 'back-49', 'far-work redrawn from the far screen after the reload');
      // No duplicates: one terminal here, one editor client of the far session, one bridge for the window.
      await until(
        async () => (await farClient.request<{ clients: number }>('pty/info', { session: farWork.id })).clients === 1,
        Wait.Ui,
        'one client of the far session (the re-opened terminal)',
      );
      // The terminal whose bridge had dropped may come back with the reload until the extension has
      // settled which terminal follows the session: one is left.
      let tabs: string[] = [];
      await until(
        async () => (tabs = await terminalTabs(page)).filter((n) => n.includes('far:far-work')).length === 1,
        Wait.Ui,
        'one far:far-work terminal',
      ).catch(() => assert.fail(`one far:far-work terminal: ${JSON.stringify(tabs)}`));
      const bridges = await until(
        () => {
          const b = editorBridges();
          return b.length === 1 ? b : undefined;
        },
        Wait.Ui,
        'one bridge for the reloaded window',
      );
      assert.ok(!before.includes(bridges[0]), 'the bridge was made again by the reloaded window');
      await page.locator('.terminal-wrapper.active .xterm-screen').click();
      await page.keyboard.type('echo reloaded-$((8*8))');
      await page.keyboard.press('Enter');
      await waitTerminalLine(page, (l) => l.trim() === 'reloaded-64', 'typing reaches the far session after the reload');
      const screen = (await farClient.request<{ screen: string }>('pty/read', { session: farWork.id })).screen;
      assert.match(screen, /^reloaded-64$/m, 'the keys ran in the same far session');
    });

    await step('7. a session an agent opens on the remote host shows as an editor terminal here, without taking focus', async () => {
      const mcp = new Client({ name: 'remote-e2e-opener', version: '0.0.0' });
      await mcp.connect(
        new StdioClientTransport({
          command: process.execPath,
          args: [CLI, 'mcp'],
          env: { PATH: process.env.PATH ?? '', HOME: home, SHARED_PTY_DIR: local, XDG_CONFIG_HOME: config },
          stderr: 'pipe',
        }),
      );
      cleanups.push(() => mcp.close());
      const opened = (await mcp.callTool({
        name: 'open_session',
        arguments: { host: 'far', command: '/bin/bash', args: ['--norc', '--noprofile', '-i'], name: 'agent-far' },
      })) as { isError?: boolean; structuredContent?: { id: string; host?: string }; content: Array<{ text?: string }> };
      assert.ok(!opened.isError, JSON.stringify(opened.content));
      const id = opened.structuredContent!.id;
      await until(async () => (await terminalTabs(page)).some((n) => n.includes('far:agent-far')), Wait.Ui, 'the agent session as an editor terminal');
      await until(
        async () => (await farClient.request<{ clients: number }>('pty/info', { session: id })).clients === 1,
        Wait.Ui,
        'the editor to follow the agent session on the far host',
      );
      const focused = await page.evaluate(() => document.activeElement?.getAttribute('aria-label') ?? '');
      assert.ok(!focused.includes('agent-far'), `the agent terminal did not take focus (focus is on "${focused}")`);
      // What the agent runs there shows in the person's terminal.
      const sent = (await mcp.callTool({ name: 'send', arguments: { session: `far:${id}`, text: 'echo agent-far-$((9*9))', timeout: 30_000 } })) as {
        content: Array<{ text?: string }>;
      };
      assert.match(sent.content.map((c) => c.text ?? '').join(''), /agent-far-81/);
      const tab = page.locator('.terminal-tabs-entry', { hasText: 'far:agent-far' }).first();
      await tab.click();
      await waitTerminalLine(page, (l) => l.trim() === 'agent-far-81', "the agent's command in its editor terminal");
      assert.equal((await terminalTabs(page)).filter((n) => n.includes('far:agent-far')).length, 1, 'one terminal for the agent session');
    });
  });
});
