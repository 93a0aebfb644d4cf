// @ts-check
// Runs the in-editor suite in desktop VS Code through @vscode/test-electron, which DOWNLOADS
// VS Code: for machines with internet access (`npm run test:electron`). On machines without it,
// test/e2e/editor.test.ts runs the same suite in code-server.
'use strict';
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

async function main() {
  /** @type {any} */
  let testElectron;
  try {
    testElectron = require('@vscode/test-electron');
  } catch {
    process.stderr.write('run-electron: @vscode/test-electron is not installed (npm install --save-dev @vscode/test-electron)\n');
    return 1;
  }
  const root = path.resolve(__dirname, '..', '..');
  // A private runtime directory: the suite's per-user host must not meet the developer's own.
  const runtimeDir = fs.mkdtempSync(path.join(os.tmpdir(), 'spty-electron-'));
  const workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'spty-ws-'));
  try {
    await testElectron.runTests({
      extensionDevelopmentPath: root,
      extensionTestsPath: path.join(__dirname, 'index.js'),
      launchArgs: [workspace, '--disable-extensions', '--disable-workspace-trust'],
      extensionTestsEnv: { SHARED_PTY_DIR: runtimeDir },
    });
    return 0;
  } catch (e) {
    process.stderr.write(`run-electron: ${e instanceof Error ? e.message : e}\n`);
    return 1;
  } finally {
    await stopHosts(runtimeDir);
    fs.rmSync(workspace, { recursive: true, force: true });
  }
}

/**
 * The suite's per-user host is detached (like a tmux server): stop it by the pid in its record.
 * @param {string} runtimeDir
 */
async function stopHosts(runtimeDir) {
  for (const name of fs.existsSync(runtimeDir) ? fs.readdirSync(runtimeDir) : []) {
    if (!name.endsWith('.json')) continue;
    try {
      process.kill(JSON.parse(fs.readFileSync(path.join(runtimeDir, name), 'utf8')).pid, 'SIGTERM');
    } catch {
      // gone already, or not a record
    }
  }
  await new Promise((r) => setTimeout(r, 1000)); // the host removes its sockets and record as it ends
  fs.rmSync(runtimeDir, { recursive: true, force: true });
}

main().then((code) => {
  process.exitCode = code;
});
