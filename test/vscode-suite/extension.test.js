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
  const record = daemonRecord(dir);
  assert.ok(record, `a per-user host record in ${dir}`);
  return rpcCall(record.control, method, params);
}

/**
 * The per-user host's discovery record in `dir`, if one is there.
 * @param {string} dir
 * @returns {any}
 */
function daemonRecord(dir) {
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .map((f) => JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')))
    .find((r) => r.kind === 'daemon');
}

/**
 * One JSON-RPC call on a socket address (`unix:/path` or `tcp:127.0.0.1:PORT`).
 * @param {string} address
 * @param {string} method
 * @param {Record<string, unknown>} [params]
 * @returns {Promise<any>}
 */
function rpcCall(address, method, params = {}) {
  const tcp = /^tcp:([^:]+):(\d+)$/.exec(address);
  return new Promise((resolve, reject) => {
    const socket = tcp ? net.connect(Number(tcp[2]), tcp[1]) : net.connect(address.replace(/^unix:/, ''));
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

const G = vscode.ConfigurationTarget.Global;

/**
 * Runs `fn` with `sharedPty.*` settings set (user level), then puts back what was there.
 * @template T
 * @param {Record<string, unknown>} values
 * @param {() => Promise<T>} fn
 * @returns {Promise<T>}
 */
async function withSettings(values, fn) {
  const config = vscode.workspace.getConfiguration('sharedPty');
  /** @type {Record<string, unknown>} */
  const saved = {};
  for (const key of Object.keys(values)) saved[key] = config.inspect(key)?.globalValue;
  try {
    for (const [key, value] of Object.entries(values)) await config.update(key, value, G);
    return await fn();
  } finally {
    for (const [key, value] of Object.entries(saved)) await config.update(key, value, G);
  }
}

/**
 * A loopback port free now (the host then listens there; it says so when the port is taken).
 * @returns {Promise<number>}
 */
function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = /** @type {net.AddressInfo} */ (server.address());
      server.close(() => resolve(port));
    });
  });
}

/** @param {number} pid */
function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Opens a Shared PTY terminal and waits for its session; returns both.
 * @returns {Promise<{ terminal: vscode.Terminal, ref: { hostId: string, id: string } }>}
 */
async function openTerminal(/** @type {any} */ api) {
  const terminal = /** @type {vscode.Terminal} */ (await vscode.commands.executeCommand('sharedPty.open'));
  const ref = await until(() => api.sessionOf(terminal), 20000, 'the terminal to get a session');
  return { terminal, ref };
}

/**
 * Closes the terminal, stops the host the test started in `dir` (hosts are detached: they outlive
 * the window) and removes `dir`.
 * @param {vscode.Terminal | undefined} terminal
 * @param {string} dir
 */
async function closeAndStopHost(terminal, dir) {
  terminal?.dispose();
  const record = fs.existsSync(dir) ? daemonRecord(dir) : undefined;
  if (record && alive(record.pid)) {
    process.kill(record.pid, 'SIGTERM');
    await until(() => !alive(record.pid), 10000, `the host in ${dir} to stop`);
  }
  fs.rmSync(dir, { recursive: true, force: true });
}

/**
 * The status of a POST to the host's /mcp (an MCP initialize) sent with this Origin, as a browser page would.
 * @param {{ url: string, token: string }} http
 * @param {string} origin
 * @returns {Promise<number>}
 */
function mcpPostStatus(http, origin) {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'suite', version: '1.0.0' } },
  });
  return new Promise((resolve, reject) => {
    const req = require('node:http').request(
      `${http.url}/mcp`,
      {
        method: 'POST',
        headers: {
          authorization: `Bearer ${http.token}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          origin,
          'content-length': Buffer.byteLength(body),
        },
      },
      (/** @type {import('node:http').IncomingMessage} */ res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** The Shared PTY MCP tools the editor knows now (vscode.lm.tools: what agent chat can call). */
function sharedPtyTools() {
  return vscode.lm.tools.map((t) => t.name).filter((n) => /list_sessions|open_session/.test(n));
}

/**
 * Processes running the stdio MCP server (`dist/cli.js mcp`) with SHARED_PTY_DIR=dir.
 * @param {string} dir
 * @returns {number[]}
 */
function stdioMcpServers(dir) {
  const found = [];
  for (const pid of fs.readdirSync('/proc').filter((f) => /^\d+$/.test(f))) {
    try {
      const argv = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
      if (!(argv.at(-1) === 'mcp' && argv.some((a) => a.endsWith(path.join('dist', 'cli.js'))))) continue;
      if (fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(`SHARED_PTY_DIR=${dir}`)) found.push(Number(pid));
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return found;
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

  test("a shared bash terminal has VS Code's shell integration: its commands and exit codes reach the editor (the decorations)", async function () {
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
      const e = /** @type {vscode.TerminalShellExecutionEndEvent} */ (
        await Promise.race([ended, new Promise((_, reject) => setTimeout(() => reject(new Error('no end of the command within 20 s')), 20000))])
      );
      assert.equal(e.exitCode, 1, "VS Code has the command's exit code (the red decoration)");
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
      const argv = await until(() => (cmdline()[0] === shell ? cmdline() : undefined), 10000, "the shell to be exec'd");
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
      const now = await until(
        async () => {
          const p = await controlCall('host/agentPolicy');
          return p.approval === 'deny' && p.denyCommands.length === 1 ? p : undefined;
        },
        10000,
        'the host to take the changed settings',
      );
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
    assert.ok(
      stdio.args.slice(0, -1).every((a) => require('node:path').isAbsolute(a)),
      JSON.stringify(stdio.args),
    );
    // It names the runtime directory, for an agent whose environment does not (started by a service).
    assert.equal(stdio.env.SHARED_PTY_DIR, process.env.SHARED_PTY_DIR);
    // Nothing copied holds the host's own token (README "Security"): the stdio server needs none.
    assert.deepEqual(Object.keys(config.mcpServers), ['shared-pty']);
    const dir = process.env.SHARED_PTY_DIR;
    const tokens = fs
      .readdirSync(dir)
      .filter((f) => f.endsWith('.json'))
      .map((f) => JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')).http?.token)
      .filter(Boolean);
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
    // The chat reaches /mcp with an agent's token the window minted (docs/editor.md#mcp-registration),
    // never the host's own: the host lists it, and listing the tools used it.
    const { tokens } = await controlCall('host/tokens');
    const chat = tokens.filter((t) => t.agent === true);
    assert.equal(chat.length, 1, JSON.stringify(tokens));
    assert.ok(chat[0].lastUsedAt !== null, "the chat's MCP server used its agent's token");
    assert.equal(chat[0].chat, true, 'minted for a chat host: the terminal view in the chat types as the person');
  });

  test('sharedPty.mcp.enabled off: the editor is offered no Shared PTY MCP server, and on again, it is', async () => {
    await vscode.commands.executeCommand('workbench.mcp.startServer', '*', { waitForLiveTools: true });
    await until(() => sharedPtyTools().length >= 2, 30000, 'the Shared PTY MCP tools before the setting changes');
    await withSettings({ 'mcp.enabled': false }, async () => {
      await until(() => sharedPtyTools().length === 0, 30000, `the Shared PTY MCP tools to go (have: ${sharedPtyTools().join(', ')})`);
      await vscode.commands.executeCommand('workbench.mcp.startServer', '*', { waitForLiveTools: true });
      assert.deepEqual(sharedPtyTools(), [], 'starting every MCP server the editor knows starts none of Shared PTY');
    });
    await vscode.commands.executeCommand('workbench.mcp.startServer', '*', { waitForLiveTools: true });
    await until(() => sharedPtyTools().length >= 2, 30000, 'the Shared PTY MCP tools back once the setting is on');
  });

  test('the host settings reach the per-user host the editor starts: runtimeDirectory, http.port, allowedOrigins, sessionTcp, scrollbackLines', async () => {
    // docs/editor.md#settings: these apply when the editor starts the per-user host. A runtime
    // directory of its own makes this window start one, with these settings, beside the suite's.
    const dir = fs.mkdtempSync(path.join(require('node:os').tmpdir(), 'spty-rt-'));
    const port = await freePort();
    const ALLOWED = 'http://allowed.example:8080';
    const SCROLLBACK = 150;
    /** @type {vscode.Terminal | undefined} */
    let terminal;
    try {
      await withSettings({ runtimeDirectory: dir, 'http.port': port, allowedOrigins: [ALLOWED], sessionTcp: true, scrollbackLines: SCROLLBACK }, async () => {
        const opened = await openTerminal(api);
        terminal = opened.terminal;
        // runtimeDirectory: the host's record, its control socket and the session's socket are there.
        const record = await until(() => daemonRecord(dir), 10000, `the host's record in ${dir}`);
        assert.equal(record.hostId, opened.ref.hostId, "the terminal's session is on the host in that directory");
        assert.ok(record.control.startsWith(`unix:${dir}/`), `the control socket is in it: ${record.control}`);
        const { sessions } = await rpcCall(record.control, 'session/list');
        const info = sessions.find((/** @type {any} */ s) => s.id === opened.ref.id);
        assert.ok(info, 'the session is listed by that host');
        assert.ok(info.address.startsWith(`unix:${dir}/`), `the session's socket is in it: ${info.address}`);
        assert.ok(fs.existsSync(info.address.slice('unix:'.length)), 'the session socket exists');
        // http.port: the host listens there.
        assert.ok(record.http, 'the host serves HTTP');
        assert.equal(new URL(record.http.url).port, String(port), `the host listens on the port set: ${record.http.url}`);
        // allowedOrigins: a page of that origin may use /mcp (with the token); another origin may not.
        assert.equal(await mcpPostStatus(record.http, ALLOWED), 200, 'an allowed origin is accepted on /mcp');
        assert.equal(await mcpPostStatus(record.http, 'http://other.example:8080'), 403, 'another origin is refused');
        // sessionTcp: the session has a loopback TCP port, which speaks JSON-RPC to that session.
        assert.match(info.tcp ?? '', /^tcp:127\.0\.0\.1:\d+$/, 'SessionInfo has a TCP port');
        const overTcp = await rpcCall(info.tcp, 'pty/info');
        assert.equal(overTcp.id, info.id, 'the TCP port reaches that session');
        // scrollbackLines: the session keeps that many rows besides its screen, no more.
        opened.terminal.sendText('seq 1 400');
        await until(async () => /^400$/m.test((await rpcCall(record.control, 'pty/read', { session: info.id })).screen), 15000, 'seq to finish');
        const page = await rpcCall(record.control, 'pty/scrollback', { session: info.id, offset: 0, lines: 1000 });
        assert.ok(
          page.totalLines <= SCROLLBACK + info.rows,
          `at most ${SCROLLBACK} rows of scrollback besides the ${info.rows} of the screen, kept ${page.totalLines}`,
        );
        assert.ok(page.totalLines > info.rows, `the scrollback keeps rows (${page.totalLines})`);
        assert.doesNotMatch(page.text, /^1$/m, 'the oldest rows are gone');
      });
    } finally {
      await closeAndStopHost(terminal, dir);
    }
  });

  test('sharedPty.http.enabled off: the host the editor starts serves no HTTP, and the editor registers the stdio MCP server', async () => {
    const dir = fs.mkdtempSync(path.join(require('node:os').tmpdir(), 'spty-rt-'));
    /** @type {vscode.Terminal | undefined} */
    let terminal;
    try {
      await withSettings({ runtimeDirectory: dir, 'http.enabled': false }, async () => {
        terminal = (await openTerminal(api)).terminal;
        const record = await until(() => daemonRecord(dir), 10000, `the host's record in ${dir}`);
        assert.equal(record.http, null, "the host's record has no HTTP server");
        // The definition the editor gets is the stdio server (`shared-pty mcp`) for that directory:
        // agent chat starts it as a process of its own.
        await vscode.commands.executeCommand('workbench.mcp.startServer', '*', { waitForLiveTools: true });
        await until(() => stdioMcpServers(dir).length > 0, 30000, 'the editor to run the stdio MCP server for that host');
        await until(() => sharedPtyTools().length >= 2, 30000, 'its tools in vscode.lm.tools');
      });
    } finally {
      await closeAndStopHost(terminal, dir);
    }
    await vscode.commands.executeCommand('workbench.mcp.startServer', '*', { waitForLiveTools: true });
    await until(() => stdioMcpServers(dir).length === 0, 30000, 'the stdio MCP server to stop once HTTP is on again');
  });

  test("sharedPty.shellIntegration off: a new terminal's shell reports no commands", async function () {
    if (process.platform !== 'linux') this.skip();
    /** @type {vscode.Terminal | undefined} */
    let terminal;
    /** @type {string | undefined} */
    let id;
    try {
      // No --norc: with the setting on, bash would get the integration (the test above).
      await withSettings({ shellIntegration: false, shell: '/bin/bash', shellArgs: [] }, async () => {
        const opened = await openTerminal(api);
        terminal = opened.terminal;
        id = opened.ref.id;
        opened.terminal.sendText('echo si-off-$((6*7))');
        await until(async () => /^si-off-42$/m.test((await controlCall('pty/read', { session: id })).screen), 15000, "the command's output");
        assert.deepEqual(await controlCall('pty/commands', { session: id }), { integration: false, commands: [] }, 'the host knows no command');
        assert.equal(opened.terminal.shellIntegration, undefined, 'VS Code sees no shell integration');
      });
    } finally {
      terminal?.dispose();
      if (id) await until(() => !api.sessions().some((/** @type {any} */ s) => s.info.id === id), 10000, 'the session to end after its terminal closed');
    }
  });

  test('sharedPty.reattachSeconds: a terminal left open when the window goes (the runner checks its session outlives the window that long, not longer)', async function () {
    const handoff = process.env.SHARED_PTY_SUITE_HANDOFF;
    if (!handoff) this.skip(); // only the code-server runner (test/e2e/editor.test.ts) watches the host after the window
    const seconds = Number(process.env.SHARED_PTY_SUITE_REATTACH_SECONDS);
    assert.ok(seconds > 0, 'the runner says which grace period to set');
    await withSettings({ reattachSeconds: seconds }, async () => {
      const { ref } = await openTerminal(api);
      fs.writeFileSync(/** @type {string} */ (handoff), JSON.stringify({ session: ref.id, reattachSeconds: seconds }));
    });
  });
});
