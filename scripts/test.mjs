// Runs every test with Node's test runner: unit/integration tests (real node-pty, bash and
// sockets) and the end-to-end suites in a real browser and a real VS Code.
// Usage: node scripts/test.mjs [unit|e2e|<test files>…] [--update-counts] (the whole run also lints, checks the format and type-checks)
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
//
// Time (docs/testing.md#how-long-a-run-takes): the checks that need no built code (doc links, the
// protocol tables, and in a whole run the linter, the formatter and the type checker, each with
// its cache) run beside the suites at a lower priority, so they use the CPU the suites leave idle;
// their output follows the suites'. The files run longest first, by how long each took last time.
import { readdirSync, existsSync, readFileSync, writeFileSync, mkdtempSync, rmSync, renameSync } from 'node:fs';
import { spawn, spawnSync } from 'node:child_process';
import { join, relative, resolve, sep } from 'node:path';
import { setPriority, tmpdir } from 'node:os';
import { randomInt } from 'node:crypto';
import { testCacheDir, versioned } from './test-cache.mjs';
import tsCompile from './ts-compile.cjs';

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
// The end-to-end suites first: with no timings yet (a first run), the longest files still start early.
if (which === 'all' || which === 'e2e') collect('test/e2e');
if (which === 'all' || which === 'unit') collect('test/unit');
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

/**
 * How much lower the checks beside the suites run (nice): when both cores are busy with suites
 * the checks wait, so no test waits longer for the CPU than it did when they ran before it.
 */
const CHECK_NICENESS = 10;
const cache = testCacheDir();

/** Starts a check in the background at CHECK_NICENESS; resolves to how it ended, with its output. */
function check({ what, cmd, args, fix }) {
  const started = Date.now();
  return new Promise((done) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], env: compiledEnv });
    try {
      setPriority(child.pid, CHECK_NICENESS);
    } catch {
      // It ran at the suites' priority: slower suites, the same result.
    }
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const end = (status) => done({ what, status, output, fix, seconds: (Date.now() - started) / 1000 });
    child.on('error', (e) => end(e.message));
    child.on('close', (status, signal) => end(status ?? signal));
  });
}
/** Runs checks one after another (each starts when the one before it ended). */
async function inTurn(steps) {
  const results = [];
  for (const step of steps) results.push(await check(step));
  return results;
}
const bin = (name) => join('node_modules', '.bin', name);
const node = process.execPath;

// The TypeScript compiled once for the whole run (scripts/ts-compile.cjs): the suites' processes
// and the protocol tables' load it through scripts/ts-require.cjs, not tsx (a file edited since is
// compiled when loaded). Source maps on, so a failure points at the .ts line.
const compiledDir = join(cache, versioned('ts', ['esbuild']));
const compiledTs = await tsCompile.compileAll(compiledDir);
console.log(`[test] TypeScript: ${compiledTs.compiled} of ${compiledTs.files} files compiled (the others unchanged since an earlier run)`);
const loadCompiled = ['--require', join(import.meta.dirname, 'ts-require.cjs'), '--enable-source-maps'];
const compiledEnv = { ...process.env, [tsCompile.COMPILED_ENV]: compiledDir };
// Two lines of checks, so both cores have one when the suites leave them idle.
const checks = Promise.all([
  inTurn([
    // Every pointer into the handbook resolves, and no comment cites a document outside the
    // repository (docs/README.md).
    { what: 'doc links', cmd: node, args: ['scripts/check-doc-links.mjs'], fix: 'see above' },
    // The linter (eslint.config.mjs: no `any`, nothing unused, the layering) and the formatter's
    // check (.prettierrc.json) over the whole tree, each skipping files it passed unchanged before.
    ...(which === 'all'
      ? [
          {
            what: 'lint',
            cmd: bin('eslint'),
            args: [
              '--cache',
              '--cache-strategy',
              'content',
              '--cache-location',
              join(cache, versioned('eslint', ['eslint', 'typescript-eslint', '@eslint/js'])),
              '.',
            ],
            fix: 'see above, or npm run lint',
          },
          {
            what: 'format',
            cmd: bin('prettier'),
            args: ['--check', '--cache', '--cache-strategy', 'content', '--cache-location', join(cache, versioned('prettier', ['prettier'])), '.'],
            fix: 'see above, or npm run format',
          },
        ]
      : []),
  ]),
  inTurn([
    // The protocol reference's tables are the method table's (scripts/protocol-tables.ts): a change
    // to a method, a param's bounds or default, a notification or an error code that was not
    // regenerated into docs/protocol.md fails the run, with the command that regenerates it.
    { what: 'protocol tables', cmd: node, args: [...loadCompiled, 'scripts/protocol-tables.ts'], fix: 'see above' },
    // The four programs type-check (incremental: what changed since the last run is checked again).
    ...(which === 'all' ? [{ what: 'typecheck', cmd: node, args: ['scripts/typecheck.mjs'], fix: 'see above, or npm run typecheck' }] : []),
  ]),
]).then((lines) => lines.flat());

// What the end-to-end suites need (Debian's chromium, the code-server sandbox) is prepared before
// any suite loads: a suite that looks for Chromium when its file loads would otherwise find none on
// a fresh machine. If it cannot be had the run fails (and those suites' skips say why).
if (files.some(NEEDS_SANDBOX)) {
  const { ensureSandbox } = await import('./sandbox.mjs');
  await ensureSandbox().catch((e) =>
    problems.push(`prerequisite missing: the end-to-end sandbox (code-server, Chromium, Node 24) cannot be had: ${e.message.split('\n')[0]}`),
  );
}

// One build before any suite loads: suites then never rebuild dist/ while others read it.
const built = spawnSync(process.execPath, ['esbuild.mjs'], { stdio: 'inherit' });
if (built.status !== 0) process.exit(built.status ?? 1);

// A fresh seed every run, so the fuzzers try new cases each time; the same for every file, so one
// number replays the run.
const seed = process.env.FUZZ_SEED || String(randomInt(2 ** 31));
console.log(`[test] fuzz seed ${seed} (replay: FUZZ_SEED=${seed} node scripts/test.mjs <file>)`);

// Longest first, by each file's time in earlier runs, so the run does not end with one long file
// running alone; a file without a time yet counts as long. Ties keep the order above.
const DURATIONS_FILE = join(cache, 'test-durations.json');
/** @type {Record<string, number>} seconds each file's process ran, last time it ran */
const durations = readJson(DURATIONS_FILE, {});
const ordered = files
  .map((f, i) => ({ f, i, s: durations[f] ?? Infinity }))
  .sort((a, b) => b.s - a.s || a.i - b.i)
  .map((x) => x.f);

// The spec report goes to the console; the events (scripts/test-events.mjs) give the counts.
const eventsDir = mkdtempSync(join(tmpdir(), 'shared-pty-test-events-'));
const eventsFile = join(eventsDir, 'events.jsonl');
const suitesStarted = Date.now();
const r = await new Promise((done) => {
  const child = spawn(process.execPath, [...loadCompiled, 'scripts/test-files.mjs', eventsFile, ...ordered], {
    stdio: 'inherit',
    env: { ...compiledEnv, SHARED_PTY_TEST: '1', SHARED_PTY_TEST_BUILT: '1', FUZZ_SEED: seed },
  });
  child.on('error', (e) => done({ status: null, signal: e.message }));
  child.on('close', (status, signal) => done({ status, signal }));
});
const suitesSeconds = (Date.now() - suitesStarted) / 1000;
const allEvents = existsSync(eventsFile)
  ? readFileSync(eventsFile, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l))
  : [];
rmSync(eventsDir, { recursive: true, force: true });
const events = allEvents.filter((e) => e.fileMs === undefined);
for (const e of allEvents) if (e.fileMs !== undefined) durations[key(e.file)] = Math.round(e.fileMs / 100) / 10;
for (const f of Object.keys(durations)) if (!existsSync(f)) delete durations[f];
const durationsTmp = `${DURATIONS_FILE}.${process.pid}`;
writeFileSync(durationsTmp, `${JSON.stringify(durations, null, 1)}\n`, { mode: 0o600 });
renameSync(durationsTmp, DURATIONS_FILE);

// The checks beside the suites: their output when they found something, and what each took.
const checked = await checks;
for (const c of checked) {
  if (c.status === 0) continue;
  console.log(`\n[test] ${c.what} (exit status ${c.status}):\n${c.output.trimEnd()}`);
  problems.push(`${c.what}: the check found something (exit status ${c.status}; ${c.fix})`);
}
console.log(
  `\n[test] the suites took ${suitesSeconds.toFixed(0)} s; beside them (nice ${CHECK_NICENESS}): ${checked.map((c) => `${c.what} ${c.seconds.toFixed(1)} s`).join(', ')}`,
);
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
