// What a deny rule is matched against (docs/protocol.md "Agent guards"): every command of a line,
// each with its wrappers taken off, and the script of `sh -c`; and a program's command line.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { argvToJudge, commandsToJudge, splitCommands } from '../../../../src/core/agent/command-line';
import { rerunsHistory } from '../../../../src/core/session/input/typed-line';
import { ensureNoDisposablesAreLeakedInTestSuite } from '../../../helpers/leak-tracker';

// Every disposable a test makes is disposed by its end (docs/testing.md).
ensureNoDisposablesAreLeakedInTestSuite();

const RULE = /^rm -rf/;
const caught = (texts: string[]) => texts.some((t) => RULE.test(t));

describe('commands of a line, as deny rules see them', () => {
  test('lists and pipelines are split at their operators, quotes respected', () => {
    assert.deepEqual(splitCommands('a; b && c || d | e & f'), ['a', 'b', 'c', 'd', 'e', 'f']);
    assert.deepEqual(splitCommands(`echo 'a; b' "c && d"`), [`echo 'a; b' "c && d"`]);
    assert.deepEqual(splitCommands('echo "$(rm -rf x)"').slice(1), ['rm -rf x)"']);
  });

  test('a denied command is found wherever the shell would run it', () => {
    for (const line of [
      'rm -rf /tmp/x',
      'echo hi; rm -rf /tmp/x',
      'true && rm -rf /tmp/x',
      'false || rm -rf /tmp/x',
      'yes | rm -rf /tmp/x',
      'sleep 1 & rm -rf /tmp/x',
      'sudo rm -rf /tmp/x',
      'sudo -u root -n rm -rf /tmp/x',
      'env rm -rf /tmp/x',
      'env -i FOO=1 rm -rf /tmp/x',
      'command rm -rf /tmp/x',
      'command -p rm -rf /tmp/x',
      'FOO=1 BAR=2 rm -rf /tmp/x',
      '/bin/rm -rf /tmp/x',
      "'rm' -rf /tmp/x",
      '\\rm -rf /tmp/x',
      'rm  -rf /tmp/x',
      'nohup nice -n 5 rm -rf /tmp/x',
      'echo `rm -rf /tmp/x`',
      'echo "$(rm -rf /tmp/x)"',
      "bash -c 'rm -rf /tmp/x'",
      "sh -ec 'echo a; rm -rf /tmp/x'",
      'sudo bash -lc \'sh -c "rm -rf /tmp/x"\'',
      "eval 'rm -rf /tmp/x'",
      '( rm -rf /tmp/x )',
      '{ rm -rf /tmp/x; }',
      'if true; then rm -rf /tmp/x; fi',
      // Found by an outside audit: redirections first, ANSI-C quoting, a function's body, coproc,
      // a shell's options with values and `--`, and a brace list bash spreads into words.
      '>/dev/null rm -rf /tmp/x',
      '2>/dev/null rm -rf /tmp/x',
      '<<<x rm -rf /tmp/x',
      'rm >/dev/null -rf /tmp/x',
      'rm 2> err -rf /tmp/x',
      '{ >/dev/null rm -rf /tmp/x; }',
      "$'rm' -rf /tmp/x",
      "$'\\x72m' -rf /tmp/x",
      "$'\\162m' -rf /tmp/x",
      'function g { rm -rf /tmp/x; }; g',
      'function g() { rm -rf /tmp/x; }',
      'g() { rm -rf /tmp/x; }',
      'coproc rm -rf /tmp/x',
      "bash -O extglob -c 'rm -rf /tmp/x'",
      "bash -o pipefail -c 'rm -rf /tmp/x'",
      "sh -c -- 'rm -rf /tmp/x'",
      '{rm,-rf,/tmp/x}',
      // Found by an outside audit: more programs that run the command they are given.
      'setsid rm -rf /tmp/x',
      'setsid -f rm -rf /tmp/x',
      'watch rm -rf /tmp/x',
      'watch -n 1 rm -rf /tmp/x',
      'busybox rm -rf /tmp/x',
      "busybox sh -c 'rm -rf /tmp/x'",
      "su -c 'rm -rf /tmp/x'",
      "su root -c 'rm -rf /tmp/x'",
      "su - root --command='rm -rf /tmp/x'",
      "runuser -u nobody -c 'rm -rf /tmp/x'",
      'ionice -c 3 rm -rf /tmp/x',
      'chrt 10 rm -rf /tmp/x',
      'taskset 0x1 rm -rf /tmp/x',
      'unbuffer rm -rf /tmp/x',
      // …and the forms a checking audit found they still missed.
      'runuser -u root -- rm -rf /tmp/x',
      'runuser -u root rm -rf /tmp/x',
      'runuser --user=root -- rm -rf /tmp/x',
      "su -lc 'rm -rf /tmp/x'",
      "su -pc 'rm -rf /tmp/x'",
      "su root -lc 'rm -rf /tmp/x'",
      'watch -d rm -rf /tmp/x',
      'timeout -s KILL 5 rm -rf /tmp/x',
      'timeout -k 2 5 rm -rf /tmp/x',
      'stdbuf -o L rm -rf /tmp/x',
      'stdbuf -oL rm -rf /tmp/x',
      'setpriv --reuid=0 rm -rf /tmp/x',
      'chroot / rm -rf /tmp/x',
      "script -qc 'rm -rf /tmp/x' /dev/null",
      'flock /tmp/lock rm -rf /tmp/x',
      "flock -w 5 /tmp/lock -c 'rm -rf /tmp/x'",
      // …and those a second checking audit found (one of them ran: `sudo -Hu root rm -rf …`).
      'sudo -Hu root rm -rf /tmp/x',
      'sudo -iu root rm -rf /tmp/x',
      "env -S 'rm -rf /tmp/x'",
      "env --split-string='rm -rf /tmp/x'",
      'env -iu HOME rm -rf /tmp/x',
      'chroot --userspec root:root / rm -rf /tmp/x',
      'xargs -n 1 rm -rf /tmp/x',
      'xargs -I {} rm -rf {}',
      'xargs -P 4 rm -rf /tmp/x',
      'timeout .5 rm -rf /tmp/x',
      '/usr/bin/time -f %e rm -rf /tmp/x',
      "fish --command 'rm -rf /tmp/x'",
    ]) {
      assert.ok(caught(commandsToJudge(line)), `${line}: ${JSON.stringify(commandsToJudge(line))}`);
    }
  });

  test('fc runs history lines again (what it runs was not typed); fc -l only lists them', () => {
    for (const line of ['fc -s', "fc -s ': '=", 'fc -e - 12', 'echo a; fc', 'true && fc -s rm']) assert.ok(rerunsHistory(line), line);
    for (const line of ['fc -l', 'fc -ln -5', 'echo fc -s', 'fcx -s']) assert.ok(!rerunsHistory(line), line);
  });

  test('ordinary lines are not caught', () => {
    for (const line of [
      'echo rm -rf',
      'ls -la',
      "grep 'rm -rf' notes.txt",
      'git rm -r --cached x',
      'echo "a; rm -rf x"',
      "echo $'rm -rf x'",
      'echo {rm,-rf,x} > out',
      // Only saying what would run (found by a checking audit: refused).
      'command -v rm -rf',
      'command -V rm',
      'sudo -l rm -rf /tmp/x',
      'tar -czf x.tgz dir',
      'grep -c rm file',
    ]) {
      assert.ok(!caught(commandsToJudge(line)), `${line}: ${JSON.stringify(commandsToJudge(line))}`);
    }
  });

  test("a program's command line: its words, and the script of a shell it runs", () => {
    assert.ok(caught(argvToJudge(['/bin/sh', '-c', 'rm -rf /tmp/x'])));
    assert.ok(caught(argvToJudge(['bash', '-lc', 'cd /; rm -rf /tmp/x'])));
    assert.ok(caught(argvToJudge(['/usr/bin/env', 'rm', '-rf', '/tmp/x'])));
    assert.ok(!caught(argvToJudge(['bash', '--norc', '-i'])));
    assert.deepEqual(argvToJudge([]), []);
  });

  // `-[letters]c[letters]` was one regex, which tried every letter as the `c`: a word of 100,000
  // letters after `bash` took 5.7 s of the host's thread, a 1 MiB write about ten minutes.
  test("a shell's long option word is read in one pass", { timeout: 60_000 }, () => {
    const many = 'c'.repeat(1_000_000);
    assert.ok(commandsToJudge(`bash -${many} 'rm -rf x'`).includes('rm -rf x'), 'the script after a long -ccc… is judged');
    // Not an option of letters (the `1`): what follows is no script, and the line is judged as typed.
    const line = `bash -${many}1 'rm -rf x'`;
    assert.ok(commandsToJudge(line).includes(line));
    assert.ok(argvToJudge(['bash', `-${many}`, 'rm -rf x']).includes('rm -rf x'));
  });
});
