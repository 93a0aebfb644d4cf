// Where `npm test` and `npm run typecheck` keep what lets a run skip work an earlier run did: the
// type checker's incremental state, the linter's and formatter's caches, how long each test file
// took. Outside the repository and outside node_modules (npm ci empties it), one folder per
// checkout, so worktrees of one repository do not overwrite each other's state.
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..');

/** The cache folder of this checkout (created, private); SHARED_PTY_TEST_CACHE moves it. */
export function testCacheDir() {
  const base = process.env.SHARED_PTY_TEST_CACHE || join(homedir(), '.cache', 'shared-pty', 'test');
  const dir = join(base, createHash('sha256').update(ROOT).digest('hex').slice(0, 16));
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return dir;
}

/**
 * A cache's name with the versions of the tools whose results it holds: ESLint's cache, for one,
 * is checked against ESLint's version and the config, not its plugins', so an upgraded plugin
 * starts a new cache instead of trusting results the old one gave.
 */
export function versioned(name, packages) {
  const versions = packages.map((p) => `${p}@${JSON.parse(readFileSync(join(ROOT, 'node_modules', p, 'package.json'), 'utf8')).version}`);
  return `${name}-${createHash('sha256').update(versions.join(' ')).digest('hex').slice(0, 12)}`;
}
