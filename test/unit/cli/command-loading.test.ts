// docs/architecture.md#the-cli: each `shared-pty` command loads only what it runs. `list`, `send`,
// `read` and the other client commands are started by scripts and agents many times a minute; the
// engine (the method table and its schemas, the host, its HTTP and MCP servers) is for `serve`,
// `daemon` and `mcp`. Checked on the bundles' own module graphs: esbuild builds the CLI as
// esbuild.mjs does, and its metafile says which module imports which, and how. A module reached
// by static imports from the entry runs when the CLI starts; one reached only through `import()`
// runs when that call is made. The client bundle (what bin/shared-pty.js runs) holds no engine at
// all: it hands the engine's commands to the whole CLI.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as esbuild from 'esbuild';
import { REPO_ROOT } from '../../helpers/protocol';

/** What only the commands that run a host (or the MCP server) may load: the engine and its libraries. */
const ENGINE: ReadonlyArray<[RegExp, string]> = [
  [/(^|\/)src\/core\/methods\/table\.ts$/, 'the method table'],
  [/(^|\/)src\/host\/host\.ts$/, 'the host'],
  [/(^|\/)src\/core\/session\/session\.ts$/, 'the session engine'],
  [/(^|\/)node_modules\/zod\//, 'zod'],
  [/(^|\/)node_modules\/ws\//, 'ws'],
  [/(^|\/)node_modules\/@modelcontextprotocol\//, 'the MCP SDK'],
];

/** The client commands' modules (src/cli/main.ts maps each command to one). */
const CLIENT_MODULES = ['commands', 'session-commands', 'token-commands', 'play', 'bridge'];
/** Every command module main.ts loads (the client ones, those with notifications, and the host's). */
const COMMAND_MODULES = [...CLIENT_MODULES, 'attach', 'events', 'record', 'serve', 'mcp', 'daemon'];

type Inputs = esbuild.Metafile['inputs'];
/** The whole CLI's modules (dist/cli.js), and the client bundle's (dist/cli-client.js). */
let inputs: Inputs;
let clientInputs: Inputs;

/** The CLI's module graph, built as esbuild.mjs builds it (`define`: the client bundle's). */
async function moduleGraph(define: Record<string, string> = {}): Promise<Inputs> {
  const built = await esbuild.build({
    absWorkingDir: REPO_ROOT,
    entryPoints: ['src/cli/main.ts'],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['vscode', 'node-pty', 'koffi'],
    define: { __SHARED_PTY_VERSION__: '"0.0.0-test"', ...define },
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
  return built.metafile.inputs;
}

/** The input path of `src/cli/<name>.ts` in the metafile. */
function cliModule(name: string): string {
  const found = Object.keys(inputs).find((p) => p === `src/cli/${name}.ts`);
  assert.ok(found, `the bundle has src/cli/${name}.ts`);
  return found;
}

/** Every module run when `entry` is: the static imports (and requires) from it, transitively, each with how it was reached. */
function loadedWith(entry: string): Map<string, string[]> {
  const chains = new Map<string, string[]>([[entry, [entry]]]);
  const queue = [entry];
  while (queue.length) {
    const from = queue.shift()!;
    for (const i of inputs[from]?.imports ?? []) {
      if (i.external || i.kind === 'dynamic-import' || chains.has(i.path)) continue;
      chains.set(i.path, [...chains.get(from)!, i.path]);
      queue.push(i.path);
    }
  }
  return chains;
}

/** The engine's modules among those run with `entry`, each said with the chain that reaches it. */
function engineIn(entry: string): string[] {
  const found: string[] = [];
  for (const [path, chain] of loadedWith(entry)) {
    const hit = ENGINE.find(([re]) => re.test(path));
    if (hit) found.push(`${hit[1]}: ${chain.join(' → ')}`);
  }
  return found;
}

before(async () => {
  [inputs, clientInputs] = await Promise.all([moduleGraph(), moduleGraph({ __SHARED_PTY_CLIENT_BUNDLE__: 'true' })]);
});

test('the CLI starts without the engine: main.ts loads each command module only when that command runs', () => {
  const main = cliModule('main');
  assert.deepEqual(engineIn(main), [], 'the engine is not run when the whole CLI starts');
  const atStart = loadedWith(main);
  for (const name of COMMAND_MODULES) {
    const mod = cliModule(name);
    assert.ok(!atStart.has(mod), `src/cli/${name}.ts is not loaded at start: ${atStart.get(mod)?.join(' → ')}`);
    assert.ok(
      inputs[main].imports.some((i) => i.path === mod && i.kind === 'dynamic-import'),
      `main.ts loads src/cli/${name}.ts when its command runs (import())`,
    );
  }
});

test('the client bundle, which bin/shared-pty.js runs, holds none of the engine nor the commands that need it', () => {
  const engine = Object.keys(clientInputs).flatMap((p) => ENGINE.filter(([re]) => re.test(p)).map(([, what]) => `${what}: ${p}`));
  assert.deepEqual(engine, [], 'the client bundle holds none of the engine');
  for (const name of ['attach', 'events', 'record', 'serve', 'mcp', 'daemon']) {
    assert.ok(!(`src/cli/${name}.ts` in clientInputs), `src/cli/${name}.ts is left to the whole CLI`);
  }
  for (const name of CLIENT_MODULES) assert.ok(`src/cli/${name}.ts` in clientInputs, `src/cli/${name}.ts is in the client bundle`);
  const bin = fs.readFileSync(path.join(REPO_ROOT, 'bin', 'shared-pty.js'), 'utf8');
  assert.match(bin, /require\('\.\.\/dist\/cli-client\.js'\)/, 'bin/shared-pty.js runs the client bundle');
});

test('list, read, send, keys, wait, view, open, kill, commands, share, tokens, revoke, play and bridge load none of the engine', () => {
  for (const name of CLIENT_MODULES) assert.deepEqual(engineIn(cliModule(name)), [], `src/cli/${name}.ts`);
});

test('serve checks its flags, and daemon looks for a running per-user host, before the host loads', () => {
  for (const name of ['serve', 'daemon']) {
    const loaded = loadedWith(cliModule(name));
    for (const path of loaded.keys()) {
      assert.ok(
        !/(^|\/)src\/(host\/host|core\/methods\/table|transport\/http\/http-server)\.ts$/.test(path),
        `src/cli/${name}.ts: ${loaded.get(path)!.join(' → ')}`,
      );
    }
  }
});
