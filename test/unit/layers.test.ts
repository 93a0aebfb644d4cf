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
