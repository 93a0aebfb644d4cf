// Installed as a user installs it (README "Install", docs/editor.md#install-the-command-in-path), then used from /tmp with a
// fresh HOME and only the packed artifacts, never the clone:
// - the tarball (`npm pack`), installed with the README's `npm install -g --allow-scripts=…` (and
//   `--prefix <tmp>`; node-pty compiles from the registry's source), gives `shared-pty` on PATH;
// - the VSIX (`vsce package`), unpacked where an editor puts extensions, with the launcher written
//   by the extension's installer (src/vscode/cli-launcher.ts, run here in plain Node as the editor
//   command runs it), which keeps working when an update replaces the extension's folder.
// Each runs `list`, `open`, `send`, and its MCP configuration reaches the host through the
// official SDK client (StdioClientTransport).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { readLiveRecords } from '../../../src/host/discovery';
import { installLauncher, launcherPath, LAUNCHER_MARK, refreshLauncher } from '../../../src/vscode/cli-launcher';
import { stdioLaunch } from '../../../src/vscode/mcp-config';
import { stopPid } from '../../helpers/cli';
import { buildCli, REPO_ROOT } from '../../helpers/protocol';

/**
 * Bounds, not expectations: packing and installing (node-pty compiles) take 15–30 s each on a quiet
 * machine (the whole file about a minute), several times that on a loaded one; finite so a hang fails.
 */
const enum Bound {
  Pack = 240_000,
  Install = 420_000,
  Run = 60_000,
  Suite = 900_000,
}

/** The flag README's "Without an editor" puts on `npm install -g`: the dependencies whose install scripts run. */
const README_ALLOW_SCRIPTS = ['--allow-scripts=node-pty,koffi'];

const temps: string[] = [];
function tempDir(prefix: string): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  temps.push(d);
  return d;
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a program to its end (bounded), as a user's shell would. */
function run(command: string, args: string[], opts: { env: NodeJS.ProcessEnv; cwd: string; timeoutMs?: number }): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: opts.env, cwd: opts.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${command} ${args.join(' ')} did not finish within ${opts.timeoutMs ?? Bound.Run} ms; stdout: ${stdout}; stderr: ${stderr}`));
    }, opts.timeoutMs ?? Bound.Run);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/**
 * The environment of a new user of this machine: a fresh HOME, PATH with Node and the system's
 * tools only, and the machine's npm settings (its CA file, its Node headers) that npm would read
 * from the system's configuration. Nothing names the clone.
 */
function userEnv(home: string, runtimeDir: string, extraPath: string[] = []): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    HOME: home,
    USER: os.userInfo().username,
    SHELL: '/bin/bash',
    LANG: 'C.UTF-8',
    TERM: 'xterm-256color',
    PATH: [...extraPath, path.dirname(process.execPath), '/usr/local/bin', '/usr/bin', '/bin'].join(path.delimiter),
    // A private runtime directory, so the test's per-user host is its own (a user has one anyway).
    SHARED_PTY_DIR: runtimeDir,
  };
  for (const key of [
    'NODE_EXTRA_CA_CERTS',
    'SSL_CERT_FILE',
    'SSL_CERT_DIR',
    'HTTPS_PROXY',
    'HTTP_PROXY',
    'NO_PROXY',
    'https_proxy',
    'http_proxy',
    'no_proxy',
  ]) {
    if (process.env[key]) env[key] = process.env[key];
  }
  return env;
}

/** The machine's npm settings a fresh HOME would lose (set in the invoking user's npmrc here). */
function machineNpmConfig(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const key of ['cafile', 'nodedir', 'registry']) {
    const r = spawnSync('npm', ['config', 'get', key], { encoding: 'utf8', cwd: os.tmpdir() });
    const value = r.stdout.trim();
    if (r.status === 0 && value && value !== 'null' && value !== 'undefined') env[`npm_config_${key}`] = value;
  }
  return env;
}

/**
 * A user's round: `list`, `open`, `send` with the installed `shared-pty`, then its MCP
 * configuration through the SDK client. Returns the per-user host it started (to stop it).
 */
async function useAsAUser(
  shared: string,
  env: NodeJS.ProcessEnv,
  cwd: string,
  installedIn: string,
  mcp: { command: string; args: string[]; env?: Record<string, string> },
): Promise<void> {
  const list = await run(shared, ['list'], { env, cwd });
  assert.equal(list.code, 0, `list: ${list.stderr}`);
  assert.equal(list.stdout, '', 'no sessions yet');

  const open = await run(shared, ['open', '--name', 'work'], { env, cwd, timeoutMs: Bound.Run });
  assert.equal(open.code, 0, `open: ${open.stderr}`);
  const id = open.stdout.trim();
  assert.match(id, /^[a-z0-9]+$/);
  const host = readLiveRecords(env.SHARED_PTY_DIR).find((r) => r.kind === 'daemon');
  assert.ok(host, 'open started the per-user host');
  try {
    // The host runs the installed files, not the clone's.
    assert.ok(host.entry?.startsWith(installedIn), `the host runs ${host.entry}, inside ${installedIn}`);
    const sent = await run(shared, ['send', 'work', 'echo installed-$((6*7))'], { env, cwd });
    assert.equal(sent.code, 0, `send: ${sent.stderr}`);
    assert.match(sent.stdout, /^installed-42$/m);
    assert.match(sent.stdout, /\[wait reason: command_done, exit code: 0\]/);

    const transport = new StdioClientTransport({
      command: mcp.command,
      args: mcp.args,
      env: { ...(env as Record<string, string>), ...mcp.env },
      cwd,
      stderr: 'pipe',
    });
    const client = new Client({ name: 'install-test', version: '1.0.0' });
    await client.connect(transport);
    try {
      const listed = (await client.callTool({ name: 'list_sessions', arguments: {} })) as { content: Array<{ text: string }> };
      assert.match(listed.content[0].text, new RegExp(`^${id}\\s+work\\b`, 'm'), 'the MCP server sees the session');
      const echoed = (await client.callTool({ name: 'send', arguments: { session: 'work', text: 'echo over-mcp-$((2+2))' } })) as {
        content: Array<{ text: string }>;
      };
      assert.match(echoed.content.map((c) => c.text).join('\n'), /over-mcp-4/);
    } finally {
      await client.close();
    }
    const killed = await run(shared, ['kill', 'work'], { env, cwd });
    assert.equal(killed.code, 0, `kill: ${killed.stderr}`);
  } finally {
    await stopPid(host.pid);
  }
}

/**
 * The packages under `modules` (nested and scoped ones too) that npm would run an install script
 * of: `preinstall`, `install` or `postinstall`, or a `binding.gyp` (npm runs node-gyp for it).
 */
function packagesWithInstallScripts(modules: string): string[] {
  const found = new Set<string>();
  const visit = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      if (!entry.isDirectory() || entry.name.startsWith('.')) continue;
      const at = path.join(dir, entry.name);
      if (entry.name.startsWith('@')) {
        visit(at);
        continue;
      }
      const manifest = path.join(at, 'package.json');
      if (fs.existsSync(manifest)) {
        const p = JSON.parse(fs.readFileSync(manifest, 'utf8')) as { name?: string; scripts?: Record<string, string>; gypfile?: boolean };
        const scripts = p.scripts ?? {};
        const gyp = p.gypfile !== false && fs.existsSync(path.join(at, 'binding.gyp'));
        if (p.name && (scripts.preinstall || scripts.install || scripts.postinstall || gyp)) found.add(p.name);
      }
      if (fs.existsSync(path.join(at, 'node_modules'))) visit(path.join(at, 'node_modules'));
    }
  };
  visit(modules);
  return [...found].sort();
}

describe('install scripts: which dependencies may run one is decided in the checkout, not left to npm', () => {
  test("package.json's allowScripts reviews every installed dependency's install script, and the README installs with the same flags", async () => {
    // An unreviewed one is what npm 12 skips without asking: node-pty would be left uncompiled.
    // Read from the installed packages themselves, so an npm without `npm install-scripts` (10) checks the same.
    const pkg = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { allowScripts?: Record<string, boolean> };
    const unreviewed = packagesWithInstallScripts(path.join(REPO_ROOT, 'node_modules')).filter((name) => !(name in (pkg.allowScripts ?? {})));
    assert.deepEqual(unreviewed, [], 'every dependency with an install script is named in allowScripts');
    // Where npm has it, its own account agrees.
    const pending = await run('npm', ['install-scripts', 'ls', '--json'], { env: process.env, cwd: REPO_ROOT });
    if (pending.code === 0) assert.deepEqual((JSON.parse(pending.stdout) as { allowScripts: unknown[] }).allowScripts, [], 'npm finds none unreviewed');
    const review = pkg.allowScripts ?? {};
    const allowed = Object.keys(review).filter((name) => review[name]);
    assert.ok(allowed.includes('node-pty') && allowed.includes('koffi'), `node-pty and koffi run their scripts: ${allowed.join(', ')}`);
    const readme = fs.readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
    assert.ok(readme.includes(`npm install -g ${README_ALLOW_SCRIPTS.join(' ')} ./shared-pty-0.1.0.tgz`), 'the README installs the tarball with these flags');
  });
});

describe('installed from the packed artifacts, used from /tmp with a fresh HOME', { timeout: Bound.Suite }, () => {
  let artifacts: string;
  let tarball: string;
  let vsix: string;

  before(async () => {
    buildCli();
    artifacts = tempDir('spt-artifacts-');
    // Both packed at once (each takes a while); dist/ is built already, so no script rebuilds it under other suites.
    const [pack, vsce] = await Promise.all([
      run('npm', ['pack', '--ignore-scripts', '--pack-destination', artifacts], { env: process.env, cwd: REPO_ROOT, timeoutMs: Bound.Pack }),
      run(
        path.join(REPO_ROOT, 'node_modules', '.bin', 'vsce'),
        [
          'package',
          '--out',
          path.join(artifacts, 'shared-pty.vsix'),
          '--baseContentUrl',
          'https://example.invalid/shared-pty/blob/HEAD',
          '--baseImagesUrl',
          'https://example.invalid/shared-pty/raw/HEAD',
        ],
        { env: process.env, cwd: REPO_ROOT, timeoutMs: Bound.Pack },
      ),
    ]);
    assert.equal(pack.code, 0, `npm pack: ${pack.stderr}`);
    assert.equal(vsce.code, 0, `vsce package: ${vsce.stderr}${vsce.stdout}`);
    tarball = path.join(artifacts, pack.stdout.trim().split('\n').pop()!);
    vsix = path.join(artifacts, 'shared-pty.vsix');
    assert.ok(fs.existsSync(tarball) && fs.existsSync(vsix));
  });

  after(() => {
    for (const d of temps) fs.rmSync(d, { recursive: true, force: true });
  });

  test(
    'the tarball: npm install -g gives shared-pty on PATH; list, open, send and the MCP configuration work',
    { timeout: Bound.Install + 4 * Bound.Run },
    async () => {
      const home = tempDir('spt-home-');
      const prefix = path.join(home, 'prefix');
      const cwd = tempDir('spt-cwd-');
      const env = { ...userEnv(home, tempDir('spt-run-'), [path.join(prefix, 'bin')]) };
      // npm 12 skips every install script package.json's allowScripts (or, for -g, --allow-scripts)
      // does not name; --strict-allow-scripts makes today's npm refuse them instead, so a list that
      // misses node-pty fails here rather than leave it uncompiled. (npm's check lstats
      // <prefix>/lib/node_modules, which an ordinary global prefix has; a fresh one needs it made.)
      fs.mkdirSync(path.join(prefix, 'lib', 'node_modules'), { recursive: true });
      const install = await run('npm', ['install', '-g', ...README_ALLOW_SCRIPTS, '--strict-allow-scripts', '--prefix', prefix, tarball], {
        env: { ...env, ...machineNpmConfig() },
        cwd,
        timeoutMs: Bound.Install,
      });
      assert.equal(install.code, 0, `npm install -g: ${install.stderr}`);
      const shared = path.join(prefix, 'bin', 'shared-pty');
      assert.ok(fs.existsSync(shared), 'npm put shared-pty in <prefix>/bin');
      const which = await run('sh', ['-c', 'command -v shared-pty'], { env, cwd });
      assert.equal(which.stdout.trim(), shared, 'shared-pty is found on PATH');
      assert.match(
        fs.readFileSync(path.join(prefix, 'lib', 'node_modules', 'shared-pty', 'LICENSE'), 'utf8'),
        /^MIT License/,
        'the license ships with it (vsce names it LICENSE.txt)',
      );
      // The README's MCP configuration for an npm install: the command by name, from any folder.
      await useAsAUser('shared-pty', env, cwd, path.join(prefix, 'lib', 'node_modules', 'shared-pty'), { command: 'shared-pty', args: ['mcp'] });
    },
  );

  test("the VSIX: the extension's installer puts a launcher in ~/.local/bin that runs it and survives an update", { timeout: 6 * Bound.Run }, async () => {
    const home = tempDir('spt-home-');
    const cwd = tempDir('spt-cwd-');
    const env = userEnv(home, tempDir('spt-run-'), [path.join(home, '.local', 'bin')]);
    // Where an editor unpacks it (VS Code: ~/.vscode/extensions/<publisher>.<name>-<version>).
    const extensions = path.join(home, '.vscode', 'extensions');
    const unpacked = tempDir('spt-vsix-');
    const unzip = spawnSync('unzip', ['-q', vsix, 'extension/*', '-d', unpacked], { encoding: 'utf8' });
    assert.equal(unzip.status, 0, unzip.stderr);
    const v1 = path.join(extensions, 'shared-pty.shared-pty-0.1.0');
    fs.mkdirSync(extensions, { recursive: true });
    fs.renameSync(path.join(unpacked, 'extension'), v1);
    assert.match(fs.readFileSync(path.join(v1, 'LICENSE.txt'), 'utf8'), /^MIT License/, 'the license ships with it (vsce names it LICENSE.txt)');

    // What the editor command does, with the Node that runs the extension host.
    const file = launcherPath(home);
    const installed = installLauncher({ extensionPath: v1, execPath: process.execPath }, { file, pathEnv: env.PATH });
    assert.equal(installed.path, file);
    assert.equal(installed.onPath, true);
    assert.equal(fs.statSync(file).mode & 0o777, 0o755);
    const which = await run('sh', ['-c', 'command -v shared-pty'], { env, cwd });
    assert.equal(which.stdout.trim(), file);
    // Copy MCP Configuration names the launcher by its absolute path once it is installed.
    const mcp = stdioLaunch(v1, home);
    assert.deepEqual(mcp, { command: file, args: ['mcp'], viaLauncher: true });
    await useAsAUser('shared-pty', env, cwd, v1, mcp);

    // An update: the new version in its own folder, the old one removed, before any window activates it.
    const v2 = path.join(extensions, 'shared-pty.shared-pty-0.1.1');
    fs.cpSync(v1, v2, { recursive: true });
    fs.rmSync(v1, { recursive: true });
    const list = await run('shared-pty', ['list'], { env, cwd });
    assert.equal(list.code, 0, `list after the update: ${list.stderr}`);
    const help = await run('shared-pty', ['--version'], { env, cwd });
    assert.equal(help.code, 0, help.stderr);
    // The new version's first activation points it there (and a launcher not ours is never touched).
    assert.equal(refreshLauncher({ extensionPath: v2, execPath: process.execPath }, file), true);
    assert.ok(fs.readFileSync(file, 'utf8').includes(v2));
    await useAsAUser('shared-pty', env, cwd, v2, mcp);
    const other = path.join(home, 'other-shared-pty');
    fs.writeFileSync(other, '#!/bin/sh\necho not ours\n');
    assert.equal(refreshLauncher({ extensionPath: v2, execPath: process.execPath }, other), false);
    assert.equal(fs.readFileSync(other, 'utf8'), '#!/bin/sh\necho not ours\n');
    assert.throws(() => installLauncher({ extensionPath: v2, execPath: process.execPath }, { file: other }), /not a Shared PTY launcher/);
    assert.ok(fs.readFileSync(file, 'utf8').split('\n').includes(LAUNCHER_MARK));
  });
});
