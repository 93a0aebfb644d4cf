// Runs every test with Node's test runner: unit/integration tests (real node-pty, bash and
// sockets) first, then the end-to-end suites in a real browser and a real VS Code.
// Usage: node scripts/test.mjs [unit|e2e|<test files>…] [--update-counts] (the whole run also lints and checks the format)
//
// The closing line counts every test of every file that was meant to run, and the run fails when
// anything could hide a failure (docs/testing.md):
// - a file ran a different number of tests than test/expected-tests.json says (a suite that never
//   loaded, a loop that made fewer cases, a test deleted by accident);
// - a test was skipped, or marked todo, without an entry (file, test, reason) in
//   test/allowed-skips.json; a suite skipped as a whole, whose tests nobody counts, always fails;
// - a prerequisite of the end-to-end suites (the code-server sandbox, Chromium) cannot be had.
// Adding or removing tests on purpose: `node scripts/test.mjs --update-counts <files>` reruns those
// files and writes their counts (a full run with --update-counts rewrites the whole file).
//
// Fuzzing draws a fresh seed for every run (FUZZ_SEED replays one), printed first and again with a failure.
import { readdirSync, existsSync, readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join, relative, resolve, sep } from 'node:path';
import { tmpdir } from 'node:os';
import { randomInt } from 'node:crypto';

const EXPECTED_FILE = 'test/expected-tests.json';
const ALLOWED_SKIPS_FILE = 'test/allowed-skips.json';
/** Test files that need the e2e sandbox (code-server, Chromium, Node 24) prepared before they load. */
const NEEDS_SANDBOX = (f) => f.startsWith('test/e2e/') || f === 'test/unit/transport/mcp/mcp-conformance.test.ts';

const argv = process.argv.slice(2);
const update = argv.includes('--update-counts');
const words = argv.filter((a) => a !== '--update-counts');
const which = words.length === 0 ? 'all' : ['all', 'unit', 'e2e'].includes(words[0]) && words.length === 1 ? words[0] : 'files';

/** A path as the counts file keys it: relative to the repository, with forward slashes. */
const key = (p) => relative(process.cwd(), resolve(p)).split(sep).join('/');

const files = [];
// test/unit mirrors src/ (core/<room>, transport/<folder>, host, cli, view, vscode): every *.test.ts below the folder.
const collect = (dir) => {
  if (!existsSync(dir)) return;
  for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const p = join(dir, e.name);
    if (e.isDirectory()) collect(p);
    else if (e.name.endsWith('.test.ts')) files.push(key(p));
  }
};
if (which === 'all' || which === 'unit') collect('test/unit');
if (which === 'all' || which === 'e2e') collect('test/e2e');
if (which === 'files') {
  for (const w of words) {
    if (!existsSync(w)) {
      console.error(`no such test file: ${w}`);
      process.exit(1);
    }
    files.push(key(w));
  }
}
if (files.length === 0) {
  console.error('no test files found');
  process.exit(1);
}

const readJson = (file, fallback) => (existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : fallback);
/** @type {Record<string, number>} */
const expected = readJson(EXPECTED_FILE, {});
/** @type {{ skips: Array<{ file: string; test?: string; reason: string }> }} */
const allowed = readJson(ALLOWED_SKIPS_FILE, { skips: [] });
for (const s of allowed.skips) {
  if (!s.file || typeof s.reason !== 'string' || !s.reason)
    throw new Error(`${ALLOWED_SKIPS_FILE}: every entry needs a file and the reason its skip gives: ${JSON.stringify(s)}`);
}

/** What makes this run fail besides failed tests, each said in one line before the closing line. */
const problems = [];

// What the end-to-end suites need (Debian's chromium, the code-server sandbox) is prepared before
// any suite loads: a suite that looks for Chromium when its file loads would otherwise find none on
// a fresh machine. If it cannot be had the run fails (and those suites' skips say why).
if (files.some(NEEDS_SANDBOX)) {
  const { ensureSandbox } = await import('./sandbox.mjs');
  await ensureSandbox().catch((e) =>
    problems.push(`prerequisite missing: the end-to-end sandbox (code-server, Chromium, Node 24) cannot be had: ${e.message.split('\n')[0]}`),
  );
}

// Every pointer into the handbook resolves, and no comment cites a document outside the repository
// (docs/README.md); a second, so it runs before the build and the suites.
const links = spawnSync(process.execPath, ['scripts/check-doc-links.mjs'], { stdio: 'inherit' });
if (links.status !== 0) process.exit(links.status ?? 1);

// The linter (eslint.config.mjs: no `any`, nothing unused, the layering) and the formatter's check
// (.prettierrc.json) over the whole tree: a finding is a problem of the run, said in the closing line.
if (which === 'all') {
  for (const [what, bin, args, fix] of [
    ['lint', 'eslint', ['.'], 'npm run lint'],
    ['format', 'prettier', ['--check', '.'], 'npm run format'],
  ]) {
    const run = spawnSync(join('node_modules', '.bin', bin), args, { stdio: 'inherit' });
    if (run.status !== 0) problems.push(`${what}: ${bin} found what it checks for (exit status ${run.status ?? run.signal}; see above, or ${fix})`);
  }
}

// The protocol reference's tables are the method table's (scripts/protocol-tables.ts): a change to
// a method, a param's bounds or default, a notification or an error code that was not regenerated
// into docs/protocol.md fails here, with the command that regenerates it.
const reference = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/protocol-tables.ts'], { stdio: 'inherit' });
if (reference.status !== 0) process.exit(reference.status ?? 1);

// One build before any suite loads (npm test's pretest built already; test:unit did not): suites
// then never rebuild dist/ while others read it.
const built = spawnSync(process.execPath, ['esbuild.mjs'], { stdio: 'inherit' });
if (built.status !== 0) process.exit(built.status ?? 1);

// A fresh seed every run, so the fuzzers try new cases each time; the same for every file, so one
// number replays the run.
const seed = process.env.FUZZ_SEED || String(randomInt(2 ** 31));
console.log(`[test] fuzz seed ${seed} (replay: FUZZ_SEED=${seed} node scripts/test.mjs <file>)`);

// The spec report goes to the console; the events (scripts/test-events.mjs) give the counts.
const eventsDir = mkdtempSync(join(tmpdir(), 'shared-pty-test-events-'));
const eventsFile = join(eventsDir, 'events.jsonl');
const r = spawnSync(
  process.execPath,
  [
    '--import',
    'tsx',
    '--test',
    '--test-concurrency=2',
    '--test-reporter=spec',
    '--test-reporter-destination=stdout',
    '--test-reporter=./scripts/test-events.mjs',
    `--test-reporter-destination=${eventsFile}`,
    ...files,
  ],
  { stdio: 'inherit', env: { ...process.env, SHARED_PTY_TEST: '1', SHARED_PTY_TEST_BUILT: '1', FUZZ_SEED: seed } },
);
const events = existsSync(eventsFile)
  ? readFileSync(eventsFile, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l))
  : [];
rmSync(eventsDir, { recursive: true, force: true });
if (events.length === 0) problems.push(`the test runner reported nothing (exit status ${r.status ?? r.signal})`);

const isAllowed = (file, name, reason) => allowed.skips.some((s) => s.file === file && (s.test === undefined || s.test === name) && s.reason === reason);

/** Per file: tests counted, and whether anything in it failed or was skipped without leave. */
const perFile = new Map(files.map((f) => [f, { tests: 0, bad: false }]));
let passed = 0;
let failed = 0;
let skipped = 0;
let skippedAllowed = 0;
const fuzzFailed = new Set();
for (const e of events) {
  const file = e.file ? key(e.file) : '(unknown file)';
  const f = perFile.get(file) ?? perFile.set(file, { tests: 0, bad: false }).get(file);
  const why = typeof e.skip === 'string' ? e.skip : typeof e.todo === 'string' ? e.todo : '(no reason given)';
  if (e.suite) {
    if (e.failed) {
      f.bad = true;
      problems.push(`${file}: the suite "${e.name}" failed: ${e.error ?? 'see above'}`);
    } else if (e.skip !== undefined) {
      f.bad = true;
      problems.push(`${file}: the suite "${e.name}" was skipped as a whole (${why}): its tests are not counted; skip each test instead`);
    }
    continue;
  }
  f.tests++;
  if (e.failed) {
    failed++;
    f.bad = true;
    if (file.endsWith('.fuzz.test.ts')) fuzzFailed.add(file);
  } else if (e.skip !== undefined || e.todo !== undefined) {
    skipped++;
    if (isAllowed(file, e.name, why)) skippedAllowed++;
    else {
      f.bad = true;
      problems.push(`${file}: "${e.name}" was ${e.todo !== undefined ? 'marked todo' : 'skipped'} (${why}) and ${ALLOWED_SKIPS_FILE} does not allow it`);
    }
  } else passed++;
}

// The expected counts: checked, or written for the files that ran cleanly.
const changed = [];
for (const [file, f] of perFile) {
  if (update && !f.bad && f.tests > 0 && expected[file] !== f.tests) {
    changed.push(`${file}: ${expected[file] ?? 'none'} → ${f.tests}`);
    expected[file] = f.tests;
  } else if (expected[file] === undefined) {
    problems.push(`${file}: ran ${f.tests} test(s) but has no count in ${EXPECTED_FILE} (a new file? node scripts/test.mjs --update-counts ${file})`);
  } else if (expected[file] !== f.tests) {
    problems.push(
      `${file}: ran ${f.tests} test(s), ${EXPECTED_FILE} expects ${expected[file]} (tests added or removed on purpose? node scripts/test.mjs --update-counts ${file})`,
    );
  }
}
if (which === 'all') {
  for (const file of Object.keys(expected)) {
    if (perFile.has(file)) continue;
    if (update) {
      changed.push(`${file}: ${expected[file]} → removed (no such file)`);
      delete expected[file];
    } else problems.push(`${EXPECTED_FILE} counts ${file}, which did not run (removed? node scripts/test.mjs --update-counts)`);
  }
}
if (update) {
  if (changed.length) {
    const sorted = Object.fromEntries(Object.entries(expected).sort(([a], [b]) => a.localeCompare(b)));
    writeFileSync(EXPECTED_FILE, `${JSON.stringify(sorted, null, 2)}\n`);
    console.log(`\n[test] ${EXPECTED_FILE} updated:\n  ${changed.join('\n  ')}`);
  } else console.log(`\n[test] ${EXPECTED_FILE}: nothing to update`);
  if ([...perFile.values()].some((f) => f.bad || f.tests === 0))
    console.log('[test] files with a failure, an unallowed skip or no test at all keep their old count');
}

const expectedTotal = files.reduce((n, f) => n + (expected[f] ?? 0), 0);
const total = passed + failed + skipped;
if (fuzzFailed.size)
  console.log(
    `\n[test] fuzzing failed with seed ${seed}; replay: FUZZ_SEED=${seed} node scripts/test.mjs ${[...fuzzFailed].join(' ')} (each failure also names its FUZZ_PATH)`,
  );
if (problems.length) console.log(`\n${problems.map((p) => `FAILED: ${p}`).join('\n')}`);
const ok = r.status === 0 && failed === 0 && problems.length === 0;
console.log(
  `\n${total} tests of ${expectedTotal} expected, in ${perFile.size} files: ${passed} passed, ${failed} failed, ${skipped} skipped` +
    `${skipped ? ` (${skippedAllowed} allowed by ${ALLOWED_SKIPS_FILE})` : ''}` +
    (ok ? '' : ` — FAILED${problems.length ? `: ${problems.length} problem(s) above` : ''}`),
);
process.exit(ok ? 0 : 1);
