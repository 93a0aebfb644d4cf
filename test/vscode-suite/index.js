// @ts-check
// In-editor tests: run by the editor's extension host through `extensionTestsPath` (recipe §6;
// test/e2e/editor.test.ts starts code-server with the smoke-test driver and passes the path in the
// page's payload; @vscode/test-electron passes it on the command line).
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const Mocha = require('mocha');

/** Called by the extension host; settles when every test has run. */
exports.run = function run() {
  const mocha = new Mocha({ ui: 'tdd', color: false, timeout: 60000 });
  mocha.addFile(path.join(__dirname, 'extension.test.js'));
  return new Promise((resolve, reject) => {
    const runner = mocha.run((failures) => (failures ? reject(new Error(`${failures} in-editor test(s) failed`)) : resolve(undefined)));
    // The page console loses the reporter's failure details, and the runner counts each in-editor
    // test as a test of its own: it may ask for a report file, one JSON line per test.
    const report = process.env.SHARED_PTY_SUITE_REPORT;
    if (report) {
      const line = (test, state, error) => fs.appendFileSync(report, `${JSON.stringify({ title: test.fullTitle(), state, error, ms: test.duration })}\n`);
      runner.on('pass', (test) => line(test, 'passed'));
      runner.on('fail', (test, err) => line(test, 'failed', err && err.stack ? err.stack : String(err)));
      runner.on('pending', (test) => line(test, 'skipped'));
    }
  });
};
