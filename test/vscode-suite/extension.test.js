// @ts-check
// API-level tests of the Shared PTY extension inside a real editor (mocha, tdd ui).
'use strict';
const assert = require('node:assert/strict');
const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');
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

/**
 * One JSON-RPC call on the per-user host's control socket (docs/protocol.md#per-session-socket-and-control-socket), found through its
 * discovery record in $SHARED_PTY_DIR: what the host says, not what the extension believes.
 * @param {string} method
 * @param {Record<string, unknown>} [params]
 * @returns {Promise<any>}
 */
function controlCall(method, params = {}) {
  const dir = process.env.SHARED_PTY_DIR;
  assert.ok(dir, 'the runner sets SHARED_PTY_DIR for the suite');
  const record = fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .map((f) => JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')))
    .find((r) => r.kind === 'daemon');
  assert.ok(record, `a per-user host record in ${dir}`);
  return new Promise((resolve, reject) => {
    const socket = net.connect(record.control.replace(/^unix:/, ''));
    let buf = '';
    socket.setEncoding('utf8');
    socket.on('error', reject);
    socket.on('data', (d) => {
      buf += d;
      const nl = buf.indexOf('\n');
      if (nl < 0) return;
      socket.end();
      const msg = JSON.parse(buf.slice(0, nl));
      if (msg.error) reject(new Error(`${method}: ${msg.error.message}`));
      else resolve(msg.result);
    });
    socket.write(JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) + '\n');
  });
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
    for (const id of ['sharedPty.open', 'sharedPty.listSessions', 'sharedPty.copyMcpConfig', 'sharedPty.replayRecording']) {
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

  test('a shared bash terminal has VS Code\'s shell integration: its commands and exit codes reach the editor (the decorations)', async function () {
    if (process.platform !== 'linux') this.skip();
    const G = vscode.ConfigurationTarget.Global;
    const shared = vscode.workspace.getConfiguration('sharedPty');
    const saved = { shell: shared.inspect('shell')?.globalValue, args: shared.inspect('shellArgs')?.globalValue };
    /** @type {vscode.Terminal | undefined} */
    let terminal;
    try {
      await shared.update('shell', '/bin/bash', G);
      await shared.update('shellArgs', [], G);
      terminal = /** @type {vscode.Terminal} */ (await vscode.commands.executeCommand('sharedPty.open'));
      const t = terminal;
      // The host injects the integration; VS Code sees it from the OSC 633 marks in the output.
      const integration = await until(() => t.shellIntegration, 20000, 'VS Code to see the shell integration of a Shared PTY terminal');
      const ended = new Promise((resolve) => {
        const sub = vscode.window.onDidEndTerminalShellExecution((e) => {
          if (e.terminal !== t) return;
          sub.dispose();
          resolve(e);
        });
      });
      integration.executeCommand('false');
      const e = /** @type {vscode.TerminalShellExecutionEndEvent} */ (await Promise.race([ended, new Promise((_, reject) => setTimeout(() => reject(new Error('no end of the command within 20 s')), 20000))]));
      assert.equal(e.exitCode, 1, 'VS Code has the command\'s exit code (the red decoration)');
      assert.match(e.execution.commandLine.value, /false/);
    } finally {
      terminal?.dispose();
      await shared.update('shell', saved.shell, G);
      await shared.update('shellArgs', saved.args, G);
    }
  });

  test('with sharedPty.shell empty, a new terminal runs the shell of the default terminal profile', async function () {
    if (process.platform !== 'linux') this.skip(); // the profile keys below are Linux's
    const PROFILE = 'spty-suite-profile';
    // /bin/sh with -i: neither sharedPty.shellArgs nor the $SHELL fallback (which has no args) gives
    // this. A list of paths is a list of candidates, as in VS Code: the first that exists is the shell.
    const shell = '/bin/sh';
    const profile = { path: ['/nonexistent/spty-shell', shell], args: ['-i'] };
    const G = vscode.ConfigurationTarget.Global;
    const shared = vscode.workspace.getConfiguration('sharedPty');
    const term = vscode.workspace.getConfiguration('terminal.integrated');
    const saved = {
      shell: shared.inspect('shell')?.globalValue,
      profiles: term.inspect('profiles.linux')?.globalValue,
      defaultProfile: term.inspect('defaultProfile.linux')?.globalValue,
    };
    /** @type {vscode.Terminal | undefined} */
    let terminal;
    /** @type {{ hostId: string, id: string } | undefined} */
    let ref;
    try {
      await shared.update('shell', '', G);
      await term.update('profiles.linux', { .../** @type {object} */ (saved.profiles ?? {}), [PROFILE]: profile }, G);
      await term.update('defaultProfile.linux', PROFILE, G);
      assert.equal(vscode.workspace.getConfiguration('sharedPty').get('shell'), '', 'sharedPty.shell is empty');
      assert.equal(vscode.workspace.getConfiguration('terminal.integrated').get('defaultProfile.linux'), PROFILE, 'the default profile is set');

      terminal = /** @type {vscode.Terminal} */ (await vscode.commands.executeCommand('sharedPty.open'));
      const r = await until(() => api.sessionOf(terminal), 20000, 'the terminal to get a session');
      ref = r;
      const { sessions } = await controlCall('session/list');
      const info = sessions.find((/** @type {any} */ s) => s.id === r.id);
      assert.ok(info, `session ${r.id} in session/list`);
      assert.equal(info.command, shell, `the session runs the profile's shell (SHELL=${process.env.SHELL})`);
      assert.deepEqual(info.args, profile.args);
      assert.equal(info.running, true);
      // The process behind the PTY is that program with those arguments (node-pty forks, then
      // execs: until then /proc shows the host's own command line).
      const cmdline = () => fs.readFileSync(`/proc/${info.pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
      const argv = await until(() => (cmdline()[0] === shell ? cmdline() : undefined), 10000, 'the shell to be exec\'d');
      assert.deepEqual(argv, [shell, ...profile.args]);
    } finally {
      terminal?.dispose();
      if (ref) {
        const id = ref.id;
        await until(() => !api.sessions().some((/** @type {any} */ s) => s.info.id === id), 10000, 'the session to end after its terminal closed');
      }
      await shared.update('shell', saved.shell, G);
      await term.update('profiles.linux', saved.profiles, G);
      await term.update('defaultProfile.linux', saved.defaultProfile, G);
    }
  });

  test('the agent settings apply to the per-user host at once (sharedPty.agent.approval, denyCommands)', async () => {
    const agent = vscode.workspace.getConfiguration('sharedPty.agent');
    const G = vscode.ConfigurationTarget.Global;
    // The window watches the host (for approval questions) and sets its policy from the settings.
    await until(async () => (await controlCall('host/agentPolicy')).approval === 'ask', 15000, 'the host to follow the default (ask)');
    try {
      await agent.update('approval', 'deny', G);
      await agent.update('denyCommands', ['^git push'], G);
      const now = await until(async () => {
        const p = await controlCall('host/agentPolicy');
        return p.approval === 'deny' && p.denyCommands.length === 1 ? p : undefined;
      }, 10000, 'the host to take the changed settings');
      assert.deepEqual(now, { approval: 'deny', denyCommands: ['^git push'], canAsk: true });
    } finally {
      await agent.update('approval', undefined, G);
      await agent.update('denyCommands', undefined, G);
    }
    await until(async () => (await controlCall('host/agentPolicy')).approval === 'ask', 10000, 'the host back to ask');
  });

  test('sharedPty.copyMcpConfig copies a configuration for external agents', async () => {
    await vscode.env.clipboard.writeText('');
    await vscode.commands.executeCommand('sharedPty.copyMcpConfig');
    const text = await until(() => vscode.env.clipboard.readText(), 10000, 'the clipboard to be written');
    const config = JSON.parse(text);
    // Absolute paths that work from any folder (the launcher when installed), never npx.
    const stdio = config.mcpServers['shared-pty'];
    assert.ok(require('node:path').isAbsolute(stdio.command), stdio.command);
    assert.equal(stdio.args[stdio.args.length - 1], 'mcp');
    assert.ok(stdio.args.slice(0, -1).every((a) => require('node:path').isAbsolute(a)), JSON.stringify(stdio.args));
    // Nothing copied holds the host's own token (README "Security"): the stdio server needs none.
    assert.deepEqual(Object.keys(config.mcpServers), ['shared-pty']);
    const dir = process.env.SHARED_PTY_DIR;
    const tokens = fs.readdirSync(dir).filter((f) => f.endsWith('.json')).map((f) => JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')).http?.token).filter(Boolean);
    assert.ok(tokens.length > 0, 'a host with HTTP runs');
    for (const token of tokens) assert.ok(!text.includes(token), 'the host token is not in the copied configuration');
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
