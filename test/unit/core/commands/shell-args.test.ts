// Which arguments leave bash, zsh and fish interactive with no script, so that they get shell
// integration (docs/protocol.md#ptycommands), and what the launch keeps of them. The shells
// themselves are run with these arguments in shell-integration.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bashArgs, fishArgs, zshArgs } from '../../../../src/core/commands/shell-args';
import { ensureNoDisposablesAreLeakedInTestSuite } from '../../../helpers/leak-tracker';

// Every disposable a test makes is disposed by its end (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedInTestSuite();

test('bash: set options, shopt options, one-letter flags, -s with its parameters and --rcfile keep it interactive; a script, -c, --posix, -r or a long option after a short one do not', () => {
  const read = (args: string[]) => {
    const b = bashArgs(args);
    return b && { rest: b.rest, login: b.login, norc: b.norc, noprofile: b.noprofile, rcfile: b.rcfile };
  };
  const plain = { login: false, norc: false, noprofile: false, rcfile: undefined };
  assert.deepEqual(read([]), { rest: [], ...plain });
  assert.deepEqual(read(['-i']), { rest: ['-i'], ...plain });
  assert.deepEqual(read(['-o', 'vi']), { rest: ['-o', 'vi'], ...plain });
  assert.deepEqual(read(['-O', 'extglob', '+o', 'histexpand', '-i']), { rest: ['-O', 'extglob', '+o', 'histexpand', '-i'], ...plain });
  assert.deepEqual(read(['-il']), { rest: ['-i'], ...plain, login: true });
  assert.deepEqual(read(['--login', '-x']), { rest: ['-x'], ...plain, login: true });
  assert.deepEqual(read(['--rcfile', 'my rc', '-i']), { rest: ['-i'], ...plain, rcfile: 'my rc' });
  assert.deepEqual(read(['--norc', '--noprofile', '-i']), { rest: ['-i'], ...plain, norc: true, noprofile: true });
  assert.deepEqual(read(['-s', 'one', 'two']), { rest: ['-s', 'one', 'two'], ...plain });
  assert.deepEqual(read(['-is', '--', 'one']), { rest: ['-is', '--', 'one'], ...plain });
  for (const args of [
    ['script.sh'],
    ['-c', 'echo'],
    ['-ic', 'echo'],
    ['--posix'],
    ['-r'],
    ['--restricted'],
    ['-D'],
    ['--', 'script.sh'],
    ['--rcfile'],
    ['--help'],
    ['-l', '--noprofile'],
    ['-o'],
  ]) {
    assert.equal(bashArgs(args), undefined, JSON.stringify(args));
  }
});

test('zsh: options by letter or name (-o, +o, --long), -s with its parameters keep it interactive, -f is taken out; a script, -c or --emulate do not', () => {
  assert.deepEqual(zshArgs([]), { rest: [], norcs: false });
  assert.deepEqual(zshArgs(['-o', 'vi', '-y', '+o', 'beep', '-i']), { rest: ['-o', 'vi', '-y', '+o', 'beep', '-i'], norcs: false });
  assert.deepEqual(zshArgs(['-f']), { rest: [], norcs: true });
  assert.deepEqual(zshArgs(['-fi', '--no-rcs', '--hist-ignore-dups']), { rest: ['-i', '--hist-ignore-dups'], norcs: true });
  assert.deepEqual(zshArgs(['-s', 'one']), { rest: ['-s', 'one'], norcs: false });
  for (const args of [['script.zsh'], ['-c', 'echo'], ['-ic', 'echo'], ['--emulate', 'sh'], ['-b', 'script.zsh'], ['--', 'script.zsh'], ['--version']]) {
    assert.equal(zshArgs(args), undefined, JSON.stringify(args));
  }
});

test('fish: -C / --init-command, debugging and features flags keep it interactive; a script, -c, -n, profiling its start or a missing value do not', () => {
  for (const args of [
    [],
    ['-i', '-N'],
    ['-C', 'set -g X 1'],
    ['-Cset -g X 1'],
    ['--init-command=set -g X 1'],
    ['--init-command', 'set -g X 1', '-l'],
    ['-d', 'all', '--features', 'qmark-noglob'],
    ['--private'],
  ]) {
    assert.deepEqual(fishArgs(args), args, JSON.stringify(args));
  }
  for (const args of [
    ['script.fish'],
    ['-c', 'echo'],
    ['-n'],
    ['--no-execute'],
    ['--profile-startup', 'out'],
    ['-p', 'out'],
    ['-C'],
    ['--init-command'],
    ['-v'],
  ]) {
    assert.equal(fishArgs(args), undefined, JSON.stringify(args));
  }
});
