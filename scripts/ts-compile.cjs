// The TypeScript of src/, test/ and scripts/ compiled once per `npm test` (scripts/test.mjs), so
// each test file's process loads JavaScript through a small require hook (scripts/ts-require.cjs)
// instead of paying for tsx's loader: on Node 20 tsx runs its module hooks in a thread of its own,
// about 0.6 s of CPU per process (docs/testing.md#how-long-a-run-takes).
//
// Each file is compiled as tsx compiles it here (esbuild, CommonJS, tsconfig.json's options, names
// kept, an inline source map, so a stack points at the .ts line) and kept under a name made of the
// file's path, its text and the options: an edited file is compiled again, never served stale.
'use strict';
const { createHash } = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');
/** The environment variable that names the folder of compiled files (scripts/test.mjs sets it for the suites). */
const COMPILED_ENV = 'SHARED_PTY_COMPILED_TS';
/** The folders whose TypeScript the suites load (node_modules is never compiled). */
const SOURCE_DIRS = ['src', 'test', 'scripts'];

/** tsconfig.json's compiler options, which decide strict mode and class fields for esbuild as for tsx. */
const compilerOptions = JSON.parse(fs.readFileSync(path.join(ROOT, 'tsconfig.json'), 'utf8')).compilerOptions;

/**
 * A dynamic `import()` of a relative path in esbuild's output (`import("./mcp")`): Node's ES module
 * loader finds no file without its extension, and none it can run with `.ts`. tsx resolves those
 * in its hook thread; here such a file is compiled with `import()` turned into `require()`, as the
 * bundle (esbuild.mjs) does. An `import()` of a package stays one: some export only to `import`.
 */
const RELATIVE_IMPORT = /(?<![\w$.])import\(\s*["'`]\.\.?\//g;
const ANY_IMPORT = /(?<![\w$.])import\(/g;

/** esbuild's options for one file; `requireRelative`: its dynamic imports name relative paths only. */
function options(filename, requireRelative) {
  return {
    loader: 'ts',
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    sourcefile: filename,
    sourcemap: 'inline',
    sourcesContent: false,
    keepNames: true,
    tsconfigRaw: { compilerOptions },
    ...(requireRelative ? { supported: { 'dynamic-import': false } } : {}),
  };
}

/** The second pass a file needs, if any, from its first output; throws for a file that mixes both kinds of import(). */
function needsRequire(filename, code) {
  const relative = code.match(RELATIVE_IMPORT)?.length ?? 0;
  if (relative === 0) return false;
  if (relative !== code.match(ANY_IMPORT).length)
    throw new Error(`${filename}: import() of relative paths and of packages in one file cannot both be compiled for Node 20; split the file`);
  return true;
}

/** What besides a file's path and text decides its compiled code: esbuild's version and the options. */
const HOW = JSON.stringify([require('esbuild/package.json').version, options('', false), options('', true)]);

/** Where a file's compiled code is kept in `dir`: named by HOW, the file's path and its text. */
function compiledPath(dir, filename, source) {
  const key = createHash('sha256').update(HOW).update('\0').update(filename).update('\0').update(source).digest('hex');
  return path.join(dir, `${key}.js`);
}

/** Writes a compiled file so that a reader never sees half of it. */
function keep(file, code) {
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, code, { mode: 0o600 });
  fs.renameSync(tmp, file);
}

/** Compiles one file now (a file the run did not compile beforehand, or edited since), keeps it, returns its code. */
function compileSync(dir, filename, source) {
  const esbuild = require('esbuild');
  let { code } = esbuild.transformSync(source, options(filename, false));
  if (needsRequire(filename, code)) code = esbuild.transformSync(source, options(filename, true)).code;
  keep(compiledPath(dir, filename, source), code);
  return code;
}

/** Every .ts file of SOURCE_DIRS (declaration files aside), absolute. */
function sourceFiles() {
  const out = [];
  const walk = (dir) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.ts') && !e.name.endsWith('.d.ts')) out.push(p);
    }
  };
  for (const d of SOURCE_DIRS) if (fs.existsSync(path.join(ROOT, d))) walk(path.join(ROOT, d));
  return out;
}

/**
 * Compiles into `dir` every file of SOURCE_DIRS not compiled there yet, and removes what no file
 * needs any more (an older text of a file). Resolves to how many files were compiled of how many.
 */
async function compileAll(dir) {
  const esbuild = require('esbuild');
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const files = sourceFiles();
  const wanted = new Set();
  let compiled = 0;
  await Promise.all(
    files.map(async (filename) => {
      const source = fs.readFileSync(filename, 'utf8');
      const file = compiledPath(dir, filename, source);
      wanted.add(path.basename(file));
      if (fs.existsSync(file)) return;
      let { code } = await esbuild.transform(source, options(filename, false));
      if (needsRequire(filename, code)) code = (await esbuild.transform(source, options(filename, true))).code;
      keep(file, code);
      compiled++;
    }),
  );
  for (const name of fs.readdirSync(dir)) if (!wanted.has(name)) fs.rmSync(path.join(dir, name), { force: true });
  return { compiled, files: files.length };
}

module.exports = { COMPILED_ENV, compiledPath, compileSync, compileAll };
