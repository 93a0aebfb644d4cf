// Runs every test with Node's test runner: unit/integration tests (real node-pty, bash and
// sockets) first, then the end-to-end suites in a real browser and a real VS Code when present.
// Usage: node scripts/test.mjs [unit|e2e]
import { readdirSync, existsSync, readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { tmpdir } from 'node:os';

const which = process.argv[2] ?? 'all';
const files = [];
// test/unit mirrors src/ (core/<room>, transport, host, cli): every *.test.ts below the folder.
const collect = (dir) => {
  if (!existsSync(dir)) return;
  for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const p = join(dir, e.name);
    if (e.isDirectory()) collect(p);
    else if (e.name.endsWith('.test.ts')) files.push(p);
  }
};
if (which === 'all' || which === 'unit') collect('test/unit');
if (which === 'all' || which === 'e2e') collect('test/e2e');
if (files.length === 0) {
  console.error('no test files found');
  process.exit(1);
}
// What the end-to-end suites need (Debian's chromium, the code-server sandbox) is prepared before
// any suite loads: a suite that looks for Chromium when its file loads would otherwise find none on
// a fresh machine and be skipped. If it cannot be had, those suites say so and count as skipped.
if (which === 'all' || which === 'e2e') {
  const { ensureSandbox } = await import('./sandbox.mjs');
  await ensureSandbox().catch((e) => console.log(`[test] end-to-end prerequisites missing: ${e.message}`));
}

// Every pointer into the handbook resolves, and no comment cites a document outside the repository
// (docs/README.md); a second, so it runs before the build and the suites.
const links = spawnSync(process.execPath, ['scripts/check-doc-links.mjs'], { stdio: 'inherit' });
if (links.status !== 0) process.exit(links.status ?? 1);

// One build before any suite loads (npm test's pretest built already; test:unit did not): suites
// then never rebuild dist/ while others read it.
const built = spawnSync(process.execPath, ['esbuild.mjs'], { stdio: 'inherit' });
if (built.status !== 0) process.exit(built.status ?? 1);

// The spec report goes to the console; a TAP copy gives the closing "N passed, N failed" line.
const tapDir = mkdtempSync(join(tmpdir(), 'shared-pty-tap-'));
const tap = join(tapDir, 'report.tap');
const r = spawnSync(
  process.execPath,
  [
    '--import', 'tsx', '--test', '--test-concurrency=2',
    '--test-reporter=spec', '--test-reporter-destination=stdout',
    '--test-reporter=tap', `--test-reporter-destination=${tap}`,
    ...files,
  ],
  { stdio: 'inherit', env: { ...process.env, SHARED_PTY_TEST: '1', SHARED_PTY_TEST_BUILT: '1' } },
);
let summary = '';
try {
  const text = readFileSync(tap, 'utf8');
  const count = (name) => Number(text.match(new RegExp(`^# ${name} (\\d+)$`, 'm'))?.[1] ?? 0);
  const skipped = count('skipped');
  summary = `${count('pass')} passed, ${count('fail') + count('cancelled')} failed${skipped ? `, ${skipped} skipped` : ''}`;
} catch {
  // no TAP report: the runner itself failed to start; its exit status says so
}
rmSync(tapDir, { recursive: true, force: true });
if (summary) console.log(`\n${summary}`);
process.exit(r.status ?? 1);
