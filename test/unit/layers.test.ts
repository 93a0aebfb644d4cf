import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';

// The architecture, checked: dependencies point one way (vscode and cli → host → transport → core),
// and only the editor layer may import `vscode` (the engine runs headless too).

const SRC = path.join(__dirname, '..', '..', 'src');
const LAYERS = ['core', 'transport', 'host', 'cli', 'vscode'] as const;
/** What each layer may import from the others. */
const ALLOWED: Record<(typeof LAYERS)[number], string[]> = {
  core: [],
  transport: ['core'],
  host: ['core', 'transport'],
  cli: ['core', 'transport', 'host'],
  vscode: ['core', 'transport', 'host'],
};

function filesOf(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? filesOf(p) : e.name.endsWith('.ts') ? [p] : [];
  });
}

function importsOf(file: string): string[] {
  const text = fs.readFileSync(file, 'utf8');
  return [...text.matchAll(/(?:from|import)\s*\(?\s*'([^']+)'/g)].map((m) => m[1]);
}

for (const layer of LAYERS) {
  test(`src/${layer} imports only ${ALLOWED[layer].length ? ALLOWED[layer].join(', ') : 'itself'}${layer === 'vscode' ? '' : ', never vscode'}`, () => {
    for (const file of filesOf(path.join(SRC, layer))) {
      for (const spec of importsOf(file)) {
        const where = path.relative(SRC, file);
        if (spec === 'vscode') {
          assert.equal(layer, 'vscode', `${where} imports vscode`);
          continue;
        }
        if (!spec.startsWith('.')) continue;
        const target = path.relative(SRC, path.resolve(path.dirname(file), spec)).split(path.sep)[0];
        if (target === layer || !(LAYERS as readonly string[]).includes(target)) continue;
        assert.ok(ALLOWED[layer].includes(target), `${where} imports ${spec} (${target})`);
      }
    }
  });
}

// Inside the engine, the rooms point one way too: each may use only the rooms listed before it
// (the method table sits on top; base, the lifecycle and errors, under everything).
const ROOMS = ['base', 'process', 'mirror', 'commands', 'session', 'io', 'agent', 'methods'] as const;

test(`src/core's rooms import only the rooms below them (${ROOMS.join(' ← ')})`, () => {
  const CORE = path.join(SRC, 'core');
  const loose = fs.readdirSync(CORE).filter((f) => f.endsWith('.ts'));
  assert.deepEqual(loose, [], 'every file of src/core lives in a room');
  for (const [i, room] of ROOMS.entries()) {
    for (const file of filesOf(path.join(CORE, room))) {
      for (const spec of importsOf(file)) {
        if (!spec.startsWith('.')) continue;
        const target = path.relative(CORE, path.resolve(path.dirname(file), spec)).split(path.sep)[0];
        if (!(ROOMS as readonly string[]).includes(target)) continue;
        assert.ok(ROOMS.indexOf(target as (typeof ROOMS)[number]) <= i, `${path.relative(SRC, file)} imports ${spec} (${target} is above ${room})`);
      }
    }
  }
});

// The transport's folders: each kind of surface stands beside the others, and what several share
// (HTTP answers, credentials, line framing, addresses) lives in `base`; the JSON-RPC peer that the
// sockets, the WebSocket and the client share lives in `rpc`.
// Only the HTTP server, which routes every request, reaches into the pages, the WebSocket and MCP endpoints.
const TRANSPORT_ALLOWED: Record<string, readonly string[]> = {
  base: [],
  rpc: ['base'],
  socket: ['base', 'rpc'],
  client: ['base', 'rpc'],
  ws: ['base', 'rpc'],
  pages: ['base'],
  mcp: ['base'],
  http: ['base', 'pages', 'ws', 'mcp'],
};

test(`src/transport's folders import only what they may (${Object.entries(TRANSPORT_ALLOWED)
  .map(([f, a]) => `${f} → ${a.join(', ') || 'core'}`)
  .join('; ')})`, () => {
  const TRANSPORT = path.join(SRC, 'transport');
  const loose = fs.readdirSync(TRANSPORT).filter((f) => f.endsWith('.ts'));
  assert.deepEqual(loose, [], 'every file of src/transport lives in a folder');
  assert.deepEqual(fs.readdirSync(TRANSPORT).sort(), Object.keys(TRANSPORT_ALLOWED).sort(), 'every folder of src/transport has its allowed imports here');
  for (const [folder, allowed] of Object.entries(TRANSPORT_ALLOWED)) {
    for (const file of filesOf(path.join(TRANSPORT, folder))) {
      for (const spec of importsOf(file)) {
        if (!spec.startsWith('.')) continue;
        const target = path.relative(TRANSPORT, path.resolve(path.dirname(file), spec)).split(path.sep)[0];
        if (target === folder || target === '..' || !(target in TRANSPORT_ALLOWED)) continue;
        assert.ok(allowed.includes(target), `${path.relative(SRC, file)} imports ${spec} (${target})`);
      }
    }
  }
});

// The browser's pages (src/view) are bundled for the browser: they import nothing of the host's
// code but the engine's types (the method table's), and never Node's modules.
test('src/view imports only itself and type-only from src/core, never node:', () => {
  const VIEW = path.join(SRC, 'view');
  for (const file of filesOf(VIEW)) {
    const text = fs.readFileSync(file, 'utf8');
    for (const m of text.matchAll(/^\s*(import|export)\s+(type\s+)?[^;]*?from\s*'([^']+)'/gms)) {
      const [, , typeOnly, spec] = m;
      const where = path.relative(SRC, file);
      assert.ok(!spec.startsWith('node:'), `${where} imports ${spec}`);
      if (!spec.startsWith('.')) continue;
      const target = path.relative(SRC, path.resolve(path.dirname(file), spec)).split(path.sep)[0];
      if (target === 'view') continue;
      assert.ok(target === 'core' && typeOnly !== undefined, `${where} imports ${spec} (${target}${typeOnly ? '' : ', not type-only'})`);
    }
  }
});

/** The files a file imports (type-only imports too: a circle of types is a circle of design). */
function edgesOf(file: string): string[] {
  return importsOf(file).flatMap((spec) => {
    if (!spec.startsWith('.')) return [];
    const base = path.resolve(path.dirname(file), spec);
    const found = [`${base}.ts`, path.join(base, 'index.ts'), base].find((p) => fs.existsSync(p) && fs.statSync(p).isFile());
    return found ? [found] : [];
  });
}

test('src has no import circles', () => {
  const graph = new Map(filesOf(SRC).map((f) => [f, edgesOf(f)]));
  // Depth-first, colouring files: grey while on the path, black once every import below is done.
  const colour = new Map<string, 'grey' | 'black'>();
  const circles: string[] = [];
  const visit = (file: string, trail: string[]): void => {
    colour.set(file, 'grey');
    for (const next of graph.get(file) ?? []) {
      if (colour.get(next) === 'grey') circles.push([...trail.slice(trail.indexOf(next)), file, next].map((f) => path.relative(SRC, f)).join(' → '));
      else if (!colour.has(next)) visit(next, [...trail, file]);
    }
    colour.set(file, 'black');
  };
  for (const file of graph.keys()) if (!colour.has(file)) visit(file, []);
  assert.deepEqual(circles, []);
});
