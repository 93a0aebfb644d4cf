import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';

// A host process keeps its young generation at its starting size (docs/architecture.md#memory):
// opening many sessions at once must not leave V8's new space grown for good. Checked in a fresh
// process, as `serve` and `daemon` run it, with a burst of objects that live on, as sessions do.
const MODULE = path.join(__dirname, '..', '..', '..', 'src', 'host', 'young-generation.ts');

/**
 * New space sizes (MiB) of a fresh node process when the call is made (or not) and after the
 * burst, which comes once a worker thread (as the mirror thread) started after the call runs.
 */
function newSpace(keepSmall: boolean): { before: number; after: number } {
  const code = `
    const v8 = require('node:v8');
    const { Worker } = require('node:worker_threads');
    const size = () => v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size / 1048576;
    const before = size();
    ${keepSmall ? `require(${JSON.stringify(MODULE)}).keepYoungGenerationSmall();` : ''}
    const worker = new Worker('setInterval(() => {}, 1000)', { eval: true });
    worker.once('online', () => setImmediate(() => {
      const kept = [];
      for (let i = 0; i < 300; i++) kept.push(Array.from({ length: 2000 }, (_, j) => ({ j, s: 'row ' + j, a: [j] })));
      process.stdout.write(JSON.stringify({ before, after: size(), kept: kept.length }));
      void worker.terminate();
    }));
  `;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '-e', code], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout) as { before: number; after: number };
}

test('a host process keeps its new space at the size it had through a burst of long-lived objects, after a worker started', () => {
  const grown = newSpace(false);
  const kept = newSpace(true);
  // Without the call V8 grows it (to 32 MiB on Node 20): the burst is one that grows it.
  assert.ok(grown.after >= 4 * grown.before, `the burst grew the new space ${grown.before} -> ${grown.after} MiB only: it proves nothing`);
  assert.ok(kept.after <= kept.before, `new space ${kept.before} -> ${kept.after} MiB through the burst (${grown.after} MiB without the call)`);
});
