// The line being typed into a session, as the shell will receive it at Enter: what every writer
// typed since the last Enter, with the line editor's keys applied (line-editor.fuzz.test.ts holds
// them to bash's own readline).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_TYPED_LINE_CHARS, TypedLine } from '../../../../../src/core/session/input/typed-line';
import { ensureNoDisposablesAreLeakedInTestSuite } from '../../../../helpers/leak-tracker';

// Every disposable a test makes is disposed by its end (docs/testing.md).
ensureNoDisposablesAreLeakedInTestSuite();

describe('TypedLine', () => {
  test('writes add up until Enter; the preview says what a write would submit', () => {
    const t = new TypedLine();
    t.observe('r', false);
    assert.deepEqual(t.preview('m -rf x\r'), { lines: ['rm -rf x'], overflow: false, unknown: false, unfollowed: false });
    assert.deepEqual(t.preview('m -rf x').lines, ['rm -rf x'], 'the pending line counts too');
    t.observe('m -rf x\recho ', false);
    assert.equal(t.pending, 'echo ');
    assert.deepEqual(t.preview('a\rb\r').lines, ['echo a', 'b']);
  });

  test('editing keys apply; history and function keys type nothing', () => {
    const t = new TypedLine();
    t.observe('lx\x7fs -l\x1bOA\x1b[15~', false);
    assert.equal(t.pending, 'ls -l');
    t.observe(' foo bar\x17', false);
    assert.equal(t.pending, 'ls -l foo ');
    t.observe('\x15', false);
    assert.equal(t.pending, '');
    t.observe('abc\x03', false);
    assert.equal(t.pending, '', 'Ctrl+C abandons the line');
  });

  // What bash 5.2's readline (and for `zle`, zsh 5.9's line editor) held after each sequence: its
  // READLINE_LINE and READLINE_POINT from a `bind -x` key (zsh: $BUFFER and $CURSOR from a widget).
  const AS_BASH_HOLDS_IT: Array<[keys: string | string[], line: string, cursor: number]> = [
    ['-rf /x\x1b[Hrm ', 'rm -rf /x', 3],
    ['-rf /x\x01rm \x05 y', 'rm -rf /x y', 11],
    ['rf\x1b[D\x1b[D-\x1b[C\x1b[Cz', '-rfz', 4],
    ['rf\x02\x02m\x06', 'mrf', 2],
    ['a b-c\x1bbX\x1b[1;5DY\x1bfZ', 'a b-YXcZ', 8],
    ['one two three\x17\x17\x01\x19 ', 'two three one ', 10],
    ['one two\x01\x0bx\x19', 'xone two', 8],
    ['abc\x1b[D\x14', 'acb', 3],
    ['abc\x14', 'acb', 3],
    ['rm -RF x\x1bb\x1bb\x1bl', 'rm -rf x', 6],
    ['foo bar\x01\x1bc\x1bu', 'Foo BAR', 7],
    ['one two\x1b[D\x1b[D\x1b[D\x15', 'two', 0],
    ['ab\x1b[3~\x1b[D\x1b[3~', 'a', 1],
    [['x\x1b', '[Dy'], 'yx', 1],
    ['é\x1b[D\x7fa\x06b', 'aéb', 3],
    ['a\x16\x01b', 'a\x01b', 3],
    ['rm\x1b[2~\x17\x7f -rf /x', 'rm -rf /x', 9],
    // Text and a kill in one write: readline reads them together and the kills on either side add up.
    ['x y\x1bb\x1bOC\x1bb\x17-\x1bd\x19', '-x y', 4],
    [['x y\x1bb\x1bOC\x1bb\x17-', '\x1bd\x19'], '-y', 2],
  ];
  const AS_ZSH_HOLDS_IT: typeof AS_BASH_HOLDS_IT = [
    ['one two\x1b[D\x1b[D\x1b[D\x15', '', 0],
    ['abc\x01\x14', 'bac', 2],
    ['-rf /x\x01rm \x05 y', 'rm -rf /x y', 11],
  ];

  test("the cursor keys, kills, yanks and Ctrl+T leave the line as bash's readline and zsh's editor do", () => {
    for (const [table, zle] of [
      [AS_BASH_HOLDS_IT, false],
      [AS_ZSH_HOLDS_IT, true],
    ] as const) {
      for (const [keys, line, cursor] of table) {
        const t = new TypedLine(zle ? 'zle' : 'readline');
        for (const write of typeof keys === 'string' ? [keys] : keys) t.observe(write, false);
        assert.deepEqual([t.pending, t.cursor], [line, cursor], `${zle ? 'zsh' : 'bash'} ${JSON.stringify(keys)}`);
      }
    }
  });

  test('what is typed at a secret prompt is not kept; its Enter still ends the line', () => {
    const t = new TypedLine();
    t.observe('hunter2', true);
    assert.equal(t.pending, '');
    t.observe('\r', true);
    t.observe('ls', false);
    assert.equal(t.pending, 'ls');
  });

  test('a line past the limit is marked, not kept whole', () => {
    const t = new TypedLine();
    t.observe('x'.repeat(MAX_TYPED_LINE_CHARS + 1), false);
    assert.equal(t.pending.length, MAX_TYPED_LINE_CHARS);
    assert.equal(t.preview('\r').overflow, true);
    t.observe('\r', false);
    assert.equal(t.overflow, false);
  });

  test('a write that would have the editor copy the line a million times is not followed: its line cannot be judged', () => {
    const t = new TypedLine();
    t.observe('x'.repeat(60_000), false);
    assert.equal(t.preview('a\x02'.repeat(500_000)).overflow, true);
    assert.deepEqual(t.preview('a\x02'.repeat(500_000) + '\recho hi').overflow, true, 'nor the line after its Enter');
    t.observe('a\x02'.repeat(500_000), false);
    assert.equal(t.overflow, true);
    t.observe('\x03', false);
    assert.deepEqual(
      [t.overflow, t.preview('echo fine\r').lines, t.preview('echo fine\r').overflow],
      [false, ['echo fine'], false],
      'Ctrl+C starts a line that is known again',
    );
  });

  // Ctrl+W was a regex from the line's end (/\S*\s*$/), which tried every start: one Ctrl+W after a
  // 60,000-character word took ~5 s of the host's one thread, and a write of many froze it for hours.
  test('Ctrl+W after a long word takes the word, in time the host does not notice', { timeout: 60_000 }, () => {
    const t = new TypedLine();
    t.observe('x'.repeat(60_000), false);
    for (let i = 0; i < 1000; i++) t.observe(' b\x17', false);
    assert.ok(t.pending === 'x'.repeat(60_000) + ' '.repeat(1000), 'the long word and the spaces stay');
    t.observe('\x17', false);
    assert.equal(t.pending, '');
  });

  test('a key the model does not follow leaves the line unknown until Enter or Ctrl+C', () => {
    for (const key of ['\x1b[A', '\x10', '\x12', '\t', '\x18\x05', '\x1f', '\x1br', '\x1b#', '\x1b[200~', '\x1b[15~', 'e\u0301']) {
      const t = new TypedLine();
      t.observe(`echo ${key}`, false);
      assert.equal(t.unknown, true, JSON.stringify(key));
      assert.deepEqual([t.preview('\r').unknown, t.preview('x').unknown, t.preview('\x03ls\r').unknown], [true, false, false], JSON.stringify(key));
      assert.equal(new TypedLine().preview(`ls${key}`).unfollowed, true, JSON.stringify(key));
    }
    for (const key of ['\x07', '\x0c', '\x1b[D', '\x01', '\x19']) assert.equal(new TypedLine().preview(`ls${key}`).unfollowed, false, JSON.stringify(key));
    const t = new TypedLine();
    t.observe('ls\x1b[A\r', false);
    assert.equal(t.unknown, false, 'Enter ends the unknown line');
    t.observe('ls\x0f', false);
    assert.equal(t.unknown, true, 'Ctrl+O fetches the next line from history');
  });

  test('typed ahead while a command runs (canonical mode), the kernel edits the line: only Backspace, Ctrl+W and Ctrl+U', () => {
    const t = new TypedLine();
    assert.deepEqual(t.preview('rm\x01\x7f -rf x\r', true).lines, ['rm -rf x', 'rm -rf x'], 'as the shell reads it, and as the kernel hands it on');
    assert.deepEqual(t.preview('rm\x01\x7f -rf x\r', false).lines, [' -rf xrm'], "the shell's line editor: Ctrl+A goes home");
    assert.ok(t.preview('a b\x17c\x15rm\x1b[D -rf x', true).lines.includes('rm\x1b[D -rf x'));
    t.observe('vi\x7f', false, true);
    assert.equal(t.pending, 'v');
    t.commandEnded();
    assert.equal(t.unknown, true, 'what was typed ahead may reach the shell, or not');
    const clean = new TypedLine();
    clean.observe('yes\r', false, true);
    clean.commandEnded();
    assert.equal(clean.unknown, false, 'a line ended by Enter went to whoever read it');
  });

  // Found by an outside audit: the user typed `x` while `sleep 2` ran, erased it at the prompt, and
  // the line stayed unknown, a line the user had started, for good: every agent write was refused
  // as typing over it. What a command did not read of characters typed ahead is an end of the
  // line kept; Backspace and Ctrl+U at the end take both to nothing alike.
  test('a line typed ahead of a command and erased again (Backspace, Ctrl+U) is known empty; after other keys it stays unknown', () => {
    const typedAhead = (keys: string) => {
      const t = new TypedLine();
      t.observe('sleep 2\r', false);
      t.observe(keys, false, true); // while the command runs: the terminal is canonical
      t.commandEnded();
      assert.equal(t.unknown, true, `${JSON.stringify(keys)}: the command may have read it, or not`);
      return t;
    };
    const erased = typedAhead('xy\x7fz');
    erased.observe('w', false);
    erased.observe('\x7f\x7f', false);
    assert.deepEqual([erased.pending, erased.empty], ['x', false], 'some of it is left');
    erased.observe('\x7f', false);
    assert.equal(erased.empty, true, 'erased to nothing: nothing is left at the shell either');
    assert.deepEqual(erased.preview('ls\r'), { lines: ['ls'], overflow: false, unknown: false, unfollowed: false }, 'the next line is known');
    const killed = typedAhead('rm x');
    killed.observe('\x15', false);
    assert.equal(killed.empty, true, 'Ctrl+U at the end takes the line');
    // Keys that do not act at the end alike: the shell's line may be another end than this one's.
    for (const [ahead, atPrompt] of [
      ['ab\x1b[D', '\x7f\x7f\x7f\x7f\x7f'],
      ['ab', '\x1b[D\x7f\x7f'],
      ['ab cd', '\x17\x7f\x7f\x7f'],
      ['a\tb', '\x7f\x7f\x7f\x7f\x7f'],
    ]) {
      const t = typedAhead(ahead);
      t.observe(atPrompt, false);
      assert.equal(t.unknown, true, `${JSON.stringify(ahead)} then ${JSON.stringify(atPrompt)}`);
    }
    // A line already unknown before the command ended (recalled from history) stays so.
    const recalled = new TypedLine();
    recalled.observe('\x1b[Ax', false);
    recalled.commandEnded();
    recalled.observe('\x7f\x7f', false);
    assert.equal(recalled.unknown, true, 'a recalled line');
    // Ctrl+C and Enter end it as before.
    const ended = typedAhead('ab\x1b[D');
    ended.observe('\x03', false);
    assert.equal(ended.empty, true, 'Ctrl+C');
  });

  test("zsh's and fish's own keys, and bytes that are Meta keys outside UTF-8, leave the line unknown", () => {
    const unfollowed = (t: TypedLine, keys: string) => t.preview(keys).unfollowed;
    for (const editor of ['zle', 'fish'] as const) {
      for (const key of ['\x17', '\x1bb', '\x1bd', '\x1b\x7f', '\x1b[H', '\x1b[3~'])
        assert.equal(unfollowed(new TypedLine(editor), `a b${key}`), true, `${editor} ${JSON.stringify(key)}`);
      for (const key of ['\x01', '\x02', '\x15', '\x0b', '\x7f', '\x1b[D'])
        assert.equal(unfollowed(new TypedLine(editor), `a b${key}`), false, `${editor} ${JSON.stringify(key)}`);
    }
    // fish: Right or End at the line's end takes the autosuggestion; elsewhere they move.
    assert.equal(unfollowed(new TypedLine('fish'), 'ls\x1b[C'), true);
    assert.equal(unfollowed(new TypedLine('fish'), 'ls\x05'), true);
    assert.equal(unfollowed(new TypedLine('fish'), 'ls\x02\x06'), false);
    assert.equal(unfollowed(new TypedLine('readline'), 'ls\x1b[C\x05'), false);
    // Under LANG=C, readline reads U+0700 (bytes DC 80) as Meta-\\ and a key.
    assert.equal(unfollowed(new TypedLine('readline', true), 'rm - rf x\u0700'), true);
    assert.equal(unfollowed(new TypedLine('readline', false), 'rm - rf x\u0700'), false);
  });

  test('lines bash reads as one command are judged as one: a trailing backslash, an open quote', () => {
    const t = new TypedLine();
    t.observe('rm -rf /ho\\\r', false);
    assert.deepEqual(t.preview('me\r').lines, ['rm -rf /home']);
    assert.deepEqual(t.preview('me').lines, ['rm -rf /home'], 'pending, too');
    const q = new TypedLine();
    q.observe("echo '\r", false);
    assert.deepEqual(q.preview("'; rm -rf x\r").lines, ["echo '\n'; rm -rf x"]);
    q.observe('\x03', false);
    assert.deepEqual(q.preview('ls\r').lines, ['ls'], 'Ctrl+C ends the command being continued');
    assert.deepEqual(new TypedLine().preview("echo hi # it's\rls\r").lines, ["echo hi # it's", 'ls'], 'a quote in a comment opens nothing');
  });

  test("a line typed ahead is judged as the shell's line editor will read it too, and its keys must be followed", () => {
    const t = new TypedLine();
    assert.ok(t.preview('-rf x\x01rm \r', true).lines.includes('rm -rf x'), 'the kernel keeps Ctrl+A; readline goes home with it');
    assert.ok(t.preview('-rf x\x01rm \x0f', true).lines.includes('rm -rf x'), 'Ctrl+O runs it without Enter');
    for (const keys of ['echo \x1brrm -rf x\r', 'r\x13m -rf x\r', 'r\x12m\r']) assert.equal(t.preview(keys, true).unfollowed, true, JSON.stringify(keys));
    assert.equal(t.preview('plain\x7fn\r', true).unfollowed, false);
  });

  test("bash's history expansion brings back what was not typed: not followed", () => {
    for (const line of ['!!', 'echo !$', 'echo hi; !#:1-3', '^echo ^', 'echo "!x"']) assert.equal(new TypedLine().preview(`${line}\r`).unfollowed, true, line);
    for (const line of ['echo "hi!"', "echo 'hi!'", '[ ! -f x ]', 'echo ${!x}', 'git commit -m "fix!"', 'echo \\!!'])
      assert.equal(new TypedLine().preview(`${line}\r`).unfollowed, false, line);
    assert.equal(new TypedLine('zle').preview('!!\r').unfollowed, false, "zsh's own expansion is among bindings of one's own");
  });

  test('after a line that sets the locale, a character beyond ASCII is not followed (it may be a Meta key)', () => {
    const t = new TypedLine();
    assert.equal(t.preview('echo é').unfollowed, false);
    t.observe('export LC_ALL=C\r', false);
    assert.equal(t.preview('echo é').unfollowed, true);
  });
});
