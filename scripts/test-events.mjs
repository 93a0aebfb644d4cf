// A reporter for Node's test runner (`--test-reporter=./scripts/test-events.mjs`): one JSON line
// per finished test or suite, with its file, so scripts/test.mjs can count every test per file
// and see every skip with its reason (the built-in TAP summary counts neither a skipped suite's
// tests nor which file a test came from). A file's own end gives one more line, with how long its
// process ran ({ file, fileMs }), which scripts/test.mjs keeps to start the longest files first.
import { resolve } from 'node:path';

/** The fields scripts/test.mjs reads, from a `test:pass` or `test:fail` event. */
function line(type, data) {
  const error = data.details?.error;
  return JSON.stringify({
    file: data.file,
    name: data.name,
    nesting: data.nesting,
    suite: data.details?.type === 'suite',
    failed: type === 'test:fail',
    skip: data.skip,
    todo: data.todo,
    error: error
      ? String(error.cause?.message ?? error.message ?? error)
          .split('\n')[0]
          .slice(0, 300)
      : undefined,
  });
}

export default async function* events(source) {
  for await (const event of source) {
    if (event.type === 'test:pass' || event.type === 'test:fail') yield `${line(event.type, event.data)}\n`;
    // The runner's test for a whole file is named by the file's path; a test inside it is not.
    else if (event.type === 'test:complete' && event.data.nesting === 0 && event.data.file && resolve(event.data.name) === event.data.file)
      yield `${JSON.stringify({ file: event.data.file, fileMs: event.data.details?.duration_ms })}\n`;
  }
}
