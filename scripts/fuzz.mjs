// The long fuzz run (`npm run fuzz`): the property-based fuzzers (test/unit/**/*.fuzz.test.ts, each
// beside the suites of the part of src it attacks) with many cases each and a fresh seed, printed
// first so a failure can be replayed.
// Usage: npm run fuzz [-- <files>]   env: FUZZ_RUNS (cases per property, default 1000),
// FUZZ_SEED (replay a seed), FUZZ_PATH (replay one case: the path a failure reports).
import { readdirSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

/** Every fuzzer below `dir`: test/unit mirrors src, so they live beside the suites of what they attack. */
const fuzzers = (dir) =>
  readdirSync(dir, { withFileTypes: true })
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((e) => (e.isDirectory() ? fuzzers(join(dir, e.name)) : e.name.endsWith('.fuzz.test.ts') ? [join(dir, e.name)] : []));
const files = process.argv.slice(2).length ? process.argv.slice(2) : fuzzers('test/unit');
const runs = process.env.FUZZ_RUNS || '1000';
const seed = process.env.FUZZ_SEED || String(Math.floor(Math.random() * 2 ** 31));
console.log(`[fuzz] FUZZ_RUNS=${runs} FUZZ_SEED=${seed}${process.env.FUZZ_PATH ? ` FUZZ_PATH=${process.env.FUZZ_PATH}` : ''}`);
console.log(`[fuzz] replay with: FUZZ_SEED=${seed} FUZZ_RUNS=${runs} npm run fuzz -- <file>`);
const r = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=1', '--test-reporter=spec', ...files], {
  stdio: 'inherit',
  env: { ...process.env, SHARED_PTY_TEST: '1', FUZZ_RUNS: runs, FUZZ_SEED: seed },
});
console.log(`[fuzz] seed ${seed}: ${r.status === 0 ? 'no failure' : 'FAILED (replay with the seed and path above)'}`);
process.exit(r.status ?? 1);
