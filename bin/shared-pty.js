#!/usr/bin/env node
// The shared-pty command: runs the bundled CLI (npm run build makes dist/). Its client bundle,
// which starts fast, runs the commands scripts and agents call often and hands the others
// (serve, daemon, mcp, attach, events, record) to the whole CLI, dist/cli.js.
'use strict';
const { main } = require('../dist/cli-client.js');
main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (e) => {
    process.stderr.write(`shared-pty: ${e && e.message ? e.message : e}\n`);
    process.exitCode = 1;
  },
);
