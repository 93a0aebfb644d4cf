// @ts-check
// API-level tests of the Shared PTY extension inside a real editor (mocha, tdd ui).
'use strict';
const assert = require('node:assert/strict');
const vscode = require('vscode');

const EXTENSION_ID = 'shared-pty.shared-pty';

/**
 * Polls `fn` until it returns a truthy value.
 * @template T
 * @param {() => T | undefined | Promise<T | undefined>} fn
 * @param {number} ms
 * @param {string} what
 * @returns {Promise<T>}
 */
async function until(fn, ms, what) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

suite('Shared PTY in the editor', () => {
  /** @type {any} */
  let api;

  suiteSetup(async () => {
    const ext = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(ext, `${EXTENSION_ID} is installed`);
    api = await ext.activate();
  });

  test('the extension is active and exports its API', () => {
    assert.equal(vscode.extensions.getExtension(EXTENSION_ID)?.isActive, true);
    assert.equal(typeof api.sessions, 'function');
    assert.ok(Array.isArray(api.sessions()));
  });

  test('its commands are registered', async () => {
    const all = await vscode.commands.getCommands(true);
    for (const id of ['sharedPty.open', 'sharedPty.listSessions', 'sharedPty.copyMcpConfig']) {
      assert.ok(all.includes(id), `${id} is registered`);
    }
  });

  test('sharedPty.open creates a terminal whose session is listed, and closing it ends the session', async () => {
    /** @type {vscode.Terminal} */
    const terminal = await vscode.commands.executeCommand('sharedPty.open');
    assert.ok(terminal, 'the command returns the terminal');
    const ref = await until(() => api.sessionOf(terminal), 20000, 'the terminal to get a session');
    const listed = await until(
      () => api.sessions().find((/** @type {any} */ s) => s.hostId === ref.hostId && s.info.id === ref.id),
      10000,
      'the session in the host listing',
    );
    assert.equal(listed.info.origin, 'user');
    assert.equal(listed.hostKind, 'daemon');
    assert.ok(listed.info.running);
    await until(() => terminal.name === `Shared PTY: ${listed.info.name}`, 10000, `the terminal name to follow the session (is "${terminal.name}")`);
    terminal.dispose();
    await until(() => !api.sessions().some((/** @type {any} */ s) => s.info.id === ref.id), 10000, 'the session to end after its terminal closed');
  });

  test('the "Shared PTY" terminal profile opens a shared terminal', async () => {
    const opened = new Promise((resolve) => {
      const sub = vscode.window.onDidOpenTerminal((t) => {
        sub.dispose();
        resolve(t);
      });
    });
    // What the "+" menu does for an extension's profile (by name, only built-in profiles are found).
    await vscode.commands.executeCommand('workbench.action.terminal.newWithProfile', {
      config: { extensionIdentifier: EXTENSION_ID, id: 'sharedPty.profile', title: 'Shared PTY' },
    });
    /** @type {vscode.Terminal} */
    const terminal = /** @type {any} */ (await opened);
    const ref = await until(() => api.sessionOf(terminal), 20000, 'the profile terminal to get a session');
    const listed = await until(() => api.sessions().find((/** @type {any} */ s) => s.info.id === ref.id), 10000, 'its session in the listing');
    assert.equal(listed.info.origin, 'user');
    terminal.dispose();
    await until(() => !api.sessions().some((/** @type {any} */ s) => s.info.id === ref.id), 10000, 'the session to end after its terminal closed');
  });

  test('sharedPty.copyMcpConfig copies a configuration for external agents', async () => {
    await vscode.env.clipboard.writeText('');
    await vscode.commands.executeCommand('sharedPty.copyMcpConfig');
    const text = await until(() => vscode.env.clipboard.readText(), 10000, 'the clipboard to be written');
    const config = JSON.parse(text);
    assert.deepEqual(config.mcpServers['shared-pty'], { command: 'npx', args: ['shared-pty', 'mcp'] });
    const http = config.mcpServers['shared-pty-http'];
    assert.match(http.url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    assert.match(http.headers.Authorization, /^Bearer \S+$/);
  });

  test('the MCP server definition provider is registered and its server starts', async () => {
    await vscode.commands.executeCommand('workbench.mcp.startServer', '*', { waitForLiveTools: true });
    const names = await until(
      () => {
        const n = vscode.lm.tools.map((t) => t.name).filter((n) => /list_sessions|open_session/.test(n));
        return n.length >= 2 ? n : undefined;
      },
      30000,
      `the Shared PTY MCP tools in vscode.lm.tools (have: ${vscode.lm.tools.map((t) => t.name).join(', ')})`,
    );
    assert.ok(names.length >= 2);
  });
});
