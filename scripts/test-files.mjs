// Runs test files with Node's test runner, each in a process of its own, two at a time, in the
// order given: scripts/test.mjs gives the longest first (docs/testing.md#how-long-a-run-takes),
// which `node --test` cannot do (it sorts the files by name). The spec report goes to stdout,
// scripts/test-events.mjs's lines to the events file. Started with the TypeScript loader
// (scripts/test.mjs: `--require scripts/ts-require.cjs --enable-source-maps`, or `--import tsx`),
// which the runner passes on to each file's process.
// Usage: node --import tsx scripts/test-files.mjs <events file> <test files…>
// Exit status 1 when a test or a file failed.
import { createWriteStream } from 'node:fs';
import { PassThrough } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { run } from 'node:test';
import { spec } from 'node:test/reporters';
import events from './test-events.mjs';

/**
 * Files at a time: the 2 cores the suites are sized for (docs/testing.md#how-long-a-run-takes);
 * SHARED_PTY_TEST_LANES sets another number (a machine with more cores, or to measure).
 */
const lanes = Number.parseInt(process.env.SHARED_PTY_TEST_LANES ?? '', 10);
const FILES_AT_ONCE = lanes > 0 ? lanes : 2;

const [eventsFile, ...files] = process.argv.slice(2);
if (!eventsFile || files.length === 0) {
  console.error('usage: node --import tsx scripts/test-files.mjs <events file> <test files…>');
  process.exit(2);
}

// One stream of events, two reporters: each gets every event.
const toSpec = new PassThrough({ objectMode: true });
const toEvents = new PassThrough({ objectMode: true });
let failed = false;
const source = run({ files, concurrency: FILES_AT_ONCE });
source.on('data', (event) => {
  if (event.type === 'test:fail') failed = true;
  toSpec.write(event);
  toEvents.write(event);
});
source.on('end', () => {
  toSpec.end();
  toEvents.end();
});
await Promise.all([pipeline(toSpec, spec(), process.stdout, { end: false }), pipeline(toEvents, events, createWriteStream(eventsFile))]);
process.exitCode = failed ? 1 : 0;
