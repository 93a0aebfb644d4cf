// The TypeScript loader of the suites under `npm test` (`node --require ./scripts/ts-require.cjs
// --enable-source-maps`, started by scripts/test.mjs, which compiled every file beforehand with
// scripts/ts-compile.cjs): `require` of a .ts file runs its compiled code under the .ts file's own
// name, so __dirname, relative imports, the node_modules it finds and a stack's file are what they
// are under tsx. A file the run did not compile (or edited since) is compiled when loaded.
// A test file alone still runs with `node --import tsx --test <file>` (docs/testing.md).
'use strict';
const fs = require('node:fs');
const Module = require('node:module');
const { COMPILED_ENV, compiledPath, compileSync } = require('./ts-compile.cjs');

const dir = process.env[COMPILED_ENV];
if (!dir)
  throw new Error(
    `scripts/ts-require.cjs loads what scripts/test.mjs compiled (${COMPILED_ENV} is not set): run one file with node --import tsx --test <file>`,
  );

// Node 20 has no in-thread module hook (module.registerHooks came with Node 22): the extension
// table is the one CommonJS hook, and what tsx's own CommonJS loader uses too.
Module._extensions['.ts'] = function loadCompiled(module, filename) {
  const source = fs.readFileSync(filename, 'utf8');
  let code;
  try {
    code = fs.readFileSync(compiledPath(dir, filename, source), 'utf8');
  } catch {
    code = compileSync(dir, filename, source);
  }
  module._compile(code, filename);
};
