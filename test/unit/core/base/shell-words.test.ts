import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { splitShellWords } from '../../../../src/core/base/shell-words';
import { ensureNoDisposablesAreLeakedInTestSuite } from '../../../helpers/leak-tracker';

// Every disposable a test makes is disposed by its end (docs/testing.md).
ensureNoDisposablesAreLeakedInTestSuite();

test('whitespace separates words; runs of whitespace and edges are ignored', () => {
  assert.deepEqual(splitShellWords('python3 -i'), ['python3', '-i']);
  assert.deepEqual(splitShellWords('  a \t b\n c  '), ['a', 'b', 'c']);
  assert.deepEqual(splitShellWords(''), []);
  assert.deepEqual(splitShellWords('   '), []);
});

test('single quotes are literal', () => {
  assert.deepEqual(splitShellWords(`echo 'a b' 'c\\d' '"x"' '$HOME'`), ['echo', 'a b', 'c\\d', '"x"', '$HOME']);
});

test('double quotes: backslash escapes " \\ $ ` only', () => {
  assert.deepEqual(splitShellWords(`"a b"`), ['a b']);
  assert.deepEqual(splitShellWords(`"say \\"hi\\""`), ['say "hi"']);
  assert.deepEqual(splitShellWords(`"a\\\\b"`), ['a\\b']);
  assert.deepEqual(splitShellWords(`"\\$x \\\`y\\\`"`), ['$x `y`']);
  assert.deepEqual(splitShellWords(`"a\\nb"`), ['a\\nb']);
  assert.deepEqual(splitShellWords(`"it's"`), ["it's"]);
});

test('backslash outside quotes escapes the next character', () => {
  assert.deepEqual(splitShellWords('a\\ b c'), ['a b', 'c']);
  assert.deepEqual(splitShellWords(`\\'x\\"`), [`'x"`]);
  assert.deepEqual(splitShellWords('a\\\\b'), ['a\\b']);
  assert.deepEqual(splitShellWords('a \\\nb'), ['a', 'b']);
  assert.deepEqual(splitShellWords('a\\'), ['a\\']);
});

test('adjacent quoted and unquoted parts join', () => {
  assert.deepEqual(splitShellWords('a"b c"d'), ['ab cd']);
  assert.deepEqual(splitShellWords(`x'y'"z" w`), ['xyz', 'w']);
  assert.deepEqual(splitShellWords(`--name="John Smith"`), ['--name=John Smith']);
});

test('empty quotes make an empty word', () => {
  assert.deepEqual(splitShellWords(`a '' "" b`), ['a', '', '', 'b']);
});

test('non-ASCII text passes through', () => {
  assert.deepEqual(splitShellWords('echo "héllo 😀" 日本'), ['echo', 'héllo 😀', '日本']);
});

test('unterminated quotes throw', () => {
  assert.throws(() => splitShellWords(`echo 'abc`), /unterminated quote in command line/);
  assert.throws(() => splitShellWords(`echo "abc`), /unterminated quote in command line/);
  assert.throws(() => splitShellWords(`echo "abc\\"`), /unterminated quote in command line/);
  assert.throws(() => splitShellWords(`'a'"`), Error);
});

test('agrees with /bin/sh on expansion-free lines', () => {
  const lines = ['python3 -i', `a"b c"d 'e f'g`, `"x\\"y" 'p\\q' r\\ s`, `a '' b "" c`, `"back\\\\slash" \\\\ "\\a"`, `it\\'s "tab\there"`, 'a \\\nb'];
  for (const line of lines) {
    const r = spawnSync('/bin/sh', ['-c', `printf '%s\\0' ${line}`], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    const expected = r.stdout.split('\0').slice(0, -1);
    assert.deepEqual(splitShellWords(line), expected, `line: ${JSON.stringify(line)}`);
  }
});
