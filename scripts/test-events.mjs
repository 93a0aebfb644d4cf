// A reporter for Node's test runner (`--test-reporter=./scripts/test-events.mjs`): one JSON line
// per finished test or suite, with its file, so scripts/test.mjs can count every test per file
// and see every skip with its reason (the built-in TAP summary counts neither a skipped suite's
// tests nor which file a test came from).

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
  }
}
