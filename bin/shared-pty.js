#!/usr/bin/env node
// The shared-pty command: runs the bundled CLI (npm run build makes dist/cli.js).
'use strict';
const { main } = require('../dist/cli.js');
main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (e) => {
    process.stderr.write(`shared-pty: ${e && e.message ? e.message : e}\n`);
    process.exitCode = 1;
  },
);
