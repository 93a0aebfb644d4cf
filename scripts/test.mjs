// Runs every test with Node's test runner: unit/integration tests (real node-pty, bash and
// sockets) first, then the end-to-end suites in a real browser and a real VS Code when present.
// Usage: node scripts/test.mjs [unit|e2e]
import { readdirSync, existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const which = process.argv[2] ?? 'all';
const files = [];
const collect = (dir) => {
  if (!existsSync(dir)) return;
  for (const f of readdirSync(dir).sort()) if (f.endsWith('.test.ts')) files.push(join(dir, f));
};
if (which === 'all' || which === 'unit') collect('test/unit');
if (which === 'all' || which === 'e2e') collect('test/e2e');
if (files.length === 0) {
  console.error('no test files found');
  process.exit(1);
}
const r = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-concurrency=2', '--test-reporter=spec', ...files],
  { stdio: 'inherit', env: { ...process.env, SHARED_PTY_TEST: '1' } },
);
process.exit(r.status ?? 1);
