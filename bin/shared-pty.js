#!/usr/bin/env node
// The shared-pty command: runs the bundled CLI (npm run build makes dist/cli.js).
'use strict';
const argv = process.argv.slice(2);
// A host command without its malloc tuning re-executes itself first (src/cli/tuned-host.ts); this
// process then only relays, so it does not load the CLI bundle at all (~17 MB less memory).
const relayed = require('../dist/tuned-host.js').relaunchTunedFor(argv);
(relayed || require('../dist/cli.js').main(argv)).then(
  (code) => {
    process.exitCode = code;
  },
  (e) => {
    process.stderr.write(`shared-pty: ${e && e.message ? e.message : e}\n`);
    process.exitCode = 1;
  },
);
