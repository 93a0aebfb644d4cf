// Type-checks the four programs of the repository (npm run typecheck; npm test runs it beside the
// suites): the Node code with its tests, the end-to-end tests (with the DOM, for page.evaluate),
// the extension (with vscode's types) and the browser pages. Incremental: the checker keeps its
// state per program in the test cache (scripts/test-cache.mjs), so a run after a small change
// re-checks what the change reaches, not every file.
// Usage: node scripts/typecheck.mjs   (exit 1 when any program has an error; the errors above)
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { testCacheDir, versioned } from './test-cache.mjs';

/** Each program: its tsconfig and the name of its incremental state. */
const PROGRAMS = [
  ['tsconfig.json', 'node'],
  ['tsconfig.e2e.json', 'e2e'],
  ['tsconfig.vscode.json', 'vscode'],
  ['src/view/tsconfig.json', 'view'],
];

const cache = join(testCacheDir(), versioned('tsc', ['typescript']));
mkdirSync(cache, { recursive: true, mode: 0o700 });
let failed = 0;
for (const [project, name] of PROGRAMS) {
  const r = spawnSync(
    process.execPath,
    [
      join(import.meta.dirname, '..', 'node_modules', 'typescript', 'bin', 'tsc'),
      '--noEmit',
      '--incremental',
      '--tsBuildInfoFile',
      join(cache, `${name}.tsbuildinfo`),
      '-p',
      project,
    ],
    { stdio: 'inherit', cwd: join(import.meta.dirname, '..') },
  );
  if (r.status !== 0) {
    failed++;
    console.error(`typecheck: ${project} has errors (above)`);
  }
}
process.exit(failed ? 1 : 0);
