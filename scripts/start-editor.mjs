// Opens the extension (this folder, built) in a real editor:
//  - desktop VS Code (`code --extensionDevelopmentPath`) when `code` is on PATH;
//  - else code-server from the e2e sandbox (scripts/sandbox.mjs; installed on first use), serving
//    the editor on 127.0.0.1 until Ctrl+C.
//
//   node scripts/start-editor.mjs [FOLDER] [--sandbox] [--port N]
//
// FOLDER (default: the current directory) is opened as the workspace. --sandbox uses code-server
// even when `code` exists. Run `npm run build` first.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

function parseArgs(argv) {
  const opts = { folder: process.cwd(), sandbox: false, port: undefined };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--sandbox') opts.sandbox = true;
    else if (a === '--port') opts.port = Number(argv[++i]);
    else if (a === '-h' || a === '--help') {
      process.stdout.write('usage: node scripts/start-editor.mjs [FOLDER] [--sandbox] [--port N]\n');
      process.exit(0);
    } else if (a.startsWith('-')) throw new Error(`unknown option ${a}`);
    else opts.folder = path.resolve(a);
  }
  if (opts.port !== undefined && !(Number.isInteger(opts.port) && opts.port > 0 && opts.port < 65536)) {
    throw new Error('--port needs a port number');
  }
  return opts;
}

function onPath(cmd) {
  return spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
}

async function desktop(folder) {
  console.log(`Opening ${folder} in VS Code with the extension from ${ROOT} (development mode).`);
  const child = spawn('code', ['--new-window', `--extensionDevelopmentPath=${ROOT}`, folder], { stdio: 'inherit' });
  return new Promise((resolve) => child.on('exit', (code) => resolve(code ?? 1)));
}

async function sandboxEditor(folder, port) {
  const { startCodeServer } = await import('./sandbox.mjs');
  console.log('Starting code-server from the sandbox (the first run installs it; that takes minutes)…');
  const server = await startCodeServer({ extensionDir: ROOT, workspace: folder, port, keepAlive: true });
  console.log(`\nShared PTY in code-server: ${server.url}/?folder=${encodeURIComponent(server.workspace)}`);
  console.log('Open that address in a browser on this machine. Ctrl+C stops the editor.');
  console.log('(Shared sessions live in the per-user host; `shared-pty list` shows them, and it outlives the editor.)\n');
  await new Promise((resolve) => {
    for (const sig of ['SIGINT', 'SIGTERM']) process.once(sig, resolve);
  });
  console.log('\nStopping code-server…');
  await server.stop();
  return 0;
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  for (const f of ['dist/extension.js', 'dist/cli.js']) {
    if (!fs.existsSync(path.join(ROOT, f))) throw new Error(`${f} is missing: run \`npm run build\` first`);
  }
  if (!fs.existsSync(opts.folder)) throw new Error(`${opts.folder} does not exist`);
  if (!opts.sandbox && onPath('code')) return desktop(opts.folder);
  return sandboxEditor(opts.folder, opts.port);
}

main().then(
  (code) => process.exit(code),
  (e) => {
    process.stderr.write(`start-editor: ${e.message}\n`);
    process.exit(1);
  },
);
