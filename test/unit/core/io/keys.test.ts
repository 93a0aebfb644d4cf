import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as pty from 'node-pty';
import { KeyNameError, keyToBytes } from '../../../../src/core/io/keys';
import { ensureNoDisposablesAreLeakedInTestSuite } from '../../../helpers/leak-tracker';

// Every disposable a test makes is disposed by its end (docs/testing.md).
ensureNoDisposablesAreLeakedInTestSuite();

function expectBytes(table: Record<string, string>): void {
  for (const [name, bytes] of Object.entries(table)) {
    assert.equal(keyToBytes(name), bytes, `keyToBytes(${JSON.stringify(name)})`);
  }
}

test('arrow keys, Home and End (normal cursor-key mode)', () => {
  expectBytes({
    ArrowUp: '\x1b[A',
    ArrowDown: '\x1b[B',
    ArrowRight: '\x1b[C',
    ArrowLeft: '\x1b[D',
    Home: '\x1b[H',
    End: '\x1b[F',
  });
});

test('editing keys', () => {
  expectBytes({
    Enter: '\r',
    Tab: '\t',
    Backspace: '\x7f',
    Delete: '\x1b[3~',
    Insert: '\x1b[2~',
    PageUp: '\x1b[5~',
    PageDown: '\x1b[6~',
    Escape: '\x1b',
    Space: ' ',
  });
});

test('Del is an alias of Delete', () => {
  assert.equal(keyToBytes('Del'), keyToBytes('Delete'));
  assert.equal(keyToBytes('Ctrl+Alt+Del'), keyToBytes('Ctrl+Alt+Delete'));
});

test('function keys F1..F12', () => {
  expectBytes({
    F1: '\x1bOP',
    F2: '\x1bOQ',
    F3: '\x1bOR',
    F4: '\x1bOS',
    F5: '\x1b[15~',
    F6: '\x1b[17~',
    F7: '\x1b[18~',
    F8: '\x1b[19~',
    F9: '\x1b[20~',
    F10: '\x1b[21~',
    F11: '\x1b[23~',
    F12: '\x1b[24~',
  });
});

test('Ctrl+letter gives C0 controls, either case', () => {
  const letters = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
  for (let i = 0; i < letters.length; i++) {
    const code = String.fromCharCode(i + 1);
    assert.equal(keyToBytes(`Ctrl+${letters[i]}`), code);
    assert.equal(keyToBytes(`Ctrl+${letters[i]!.toLowerCase()}`), code);
  }
  expectBytes({ 'Ctrl+C': '\x03', 'Ctrl+D': '\x04', 'Ctrl+Z': '\x1a' });
});

test('Ctrl with punctuation, digits and Space', () => {
  expectBytes({
    'Ctrl+Space': '\x00',
    'Ctrl+@': '\x00',
    'Ctrl+[': '\x1b',
    'Ctrl+\\': '\x1c',
    'Ctrl+]': '\x1d',
    'Ctrl+^': '\x1e',
    'Ctrl+_': '\x1f',
    'Ctrl+/': '\x1f',
    'Ctrl+?': '\x7f',
    'Ctrl+2': '\x00',
    'Ctrl+8': '\x7f',
  });
});

test('Shift and Alt on characters', () => {
  expectBytes({
    'Shift+A': 'A',
    'Shift+a': 'A',
    'Shift+1': '1',
    'Shift+Space': ' ',
    'Alt+x': '\x1bx',
    'Alt+X': '\x1bX',
    'Alt+Shift+x': '\x1bX',
    'Alt+Space': '\x1b ',
    'Alt++': '\x1b+',
    'Ctrl+Alt+A': '\x1b\x01',
    'Ctrl+Shift+A': '\x01',
    'Ctrl+Alt+Space': '\x1b\x00',
  });
});

test('modifiers on Enter, Tab, Backspace, Escape', () => {
  expectBytes({
    'Alt+Enter': '\x1b\r',
    'Ctrl+Enter': '\r',
    'Shift+Enter': '\r',
    'Shift+Tab': '\x1b[Z',
    'Alt+Shift+Tab': '\x1b\x1b[Z',
    'Ctrl+Tab': '\t',
    'Alt+Tab': '\x1b\t',
    'Ctrl+Backspace': '\x08',
    'Alt+Backspace': '\x1b\x7f',
    'Alt+Escape': '\x1b\x1b',
  });
});

test('modifiers on cursor, editing and function keys use xterm parameter 1+bits', () => {
  expectBytes({
    'Shift+ArrowUp': '\x1b[1;2A',
    'Alt+ArrowDown': '\x1b[1;3B',
    'Shift+Alt+ArrowRight': '\x1b[1;4C',
    'Ctrl+ArrowUp': '\x1b[1;5A',
    'Ctrl+ArrowLeft': '\x1b[1;5D',
    'Ctrl+Shift+Home': '\x1b[1;6H',
    'Ctrl+Alt+End': '\x1b[1;7F',
    'Ctrl+Alt+Shift+ArrowUp': '\x1b[1;8A',
    'Shift+F1': '\x1b[1;2P',
    'Ctrl+F4': '\x1b[1;5S',
    'Ctrl+F5': '\x1b[15;5~',
    'Shift+F12': '\x1b[24;2~',
    'Ctrl+Alt+Del': '\x1b[3;7~',
    'Shift+Insert': '\x1b[2;2~',
    'Ctrl+PageDown': '\x1b[6;5~',
  });
});

test('modifier order does not matter', () => {
  for (const name of ['Ctrl+Alt+Del', 'Alt+Ctrl+Del']) assert.equal(keyToBytes(name), '\x1b[3;7~');
  for (const name of ['Ctrl+Shift+ArrowUp', 'Shift+Ctrl+ArrowUp']) assert.equal(keyToBytes(name), '\x1b[1;6A');
  for (const name of ['Ctrl+Alt+a', 'Alt+Ctrl+a']) assert.equal(keyToBytes(name), '\x1b\x01');
});

test('any single character is a name of its own', () => {
  for (const ch of ['q', 'Q', '1', ' ', '+', '\\', '"', 'é', '日', '😀', '\x03']) {
    assert.equal(keyToBytes(ch), ch);
  }
});

test('unknown names throw KeyNameError', () => {
  for (const name of ['Foo', '', 'F13', 'F0', 'Ctrl+', 'Ctrl+Foo', 'Hyper+A', 'Ctrl+Ctrl+A', 'Ctrl+1', 'ab', '😀😀', 'Ctrl+é']) {
    assert.throws(
      () => keyToBytes(name),
      (err: unknown) => {
        assert.ok(err instanceof KeyNameError, `${JSON.stringify(name)} should throw KeyNameError`);
        assert.ok(err instanceof Error);
        assert.equal(err.keyName, name);
        assert.match(err.message, /^Unknown key name: /);
        return true;
      },
    );
  }
  assert.throws(() => keyToBytes('Foo'), { name: 'KeyNameError', message: 'Unknown key name: "Foo"' });
});

test('names every object inherits are not keys (found by the key-name fuzzer)', () => {
  // Before: "constructor" and "toString" returned a function, "__proto__" an object (written to
  // the terminal as text), and "Ctrl+valueOf" threw a TypeError, answered as an internal error.
  for (const name of [
    'constructor',
    'toString',
    '__proto__',
    'valueOf',
    'hasOwnProperty',
    'Ctrl+constructor',
    'Ctrl+valueOf',
    'Alt+toString',
    'Shift+__proto__',
  ]) {
    assert.throws(() => keyToBytes(name), KeyNameError, name);
  }
});

test('names are case-sensitive', () => {
  for (const name of ['enter', 'ENTER', 'arrowup', 'f1', 'ctrl+c', 'CTRL+C', 'Ctrl+enter', 'del', 'space', 'tab']) {
    assert.throws(() => keyToBytes(name), KeyNameError, name);
  }
  assert.equal(keyToBytes('e'), 'e');
  assert.equal(keyToBytes('E'), 'E');
});

test('application cursor keys: the arrows, Home and End as SS3; modified ones, F1-F4 and the rest as before', () => {
  const app = (name: string) => keyToBytes(name, true);
  assert.equal(app('ArrowUp'), '\x1bOA');
  assert.equal(app('ArrowDown'), '\x1bOB');
  assert.equal(app('ArrowRight'), '\x1bOC');
  assert.equal(app('ArrowLeft'), '\x1bOD');
  assert.equal(app('Home'), '\x1bOH');
  assert.equal(app('End'), '\x1bOF');
  assert.equal(app('Ctrl+ArrowUp'), '\x1b[1;5A');
  assert.equal(app('F1'), '\x1bOP');
  assert.equal(app('PageUp'), '\x1b[5~');
  assert.equal(app('Enter'), '\r');
  assert.equal(keyToBytes('ArrowUp'), '\x1b[A', 'normal mode by default');
});

test('a real bash in a real pty receives exactly these bytes', { timeout: 20_000 }, async () => {
  const keys = ['ArrowUp', 'Ctrl+C', 'Alt+x', 'F5', 'Ctrl+ArrowUp', 'Shift+Tab', 'Ctrl+Space', 'Enter', 'Backspace', 'Ctrl+Alt+Del', '€'];
  const payload = keys.map((k) => keyToBytes(k)).join('');
  const expected = [...Buffer.from(payload, 'utf8')].map((b) => b.toString(16).padStart(2, '0')).join(' ');
  const count = Buffer.byteLength(payload, 'utf8');

  const term = pty.spawn('bash', ['--norc', '--noprofile'], {
    name: 'xterm-256color',
    cols: 200,
    rows: 30,
    cwd: process.cwd(),
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', TERM: 'xterm-256color', LANG: 'C.UTF-8', PS1: '$ ' },
  });
  let output = '';
  term.onData((d) => {
    output += d;
  });
  const waitFor = (re: RegExp, ms: number): Promise<RegExpExecArray> =>
    new Promise((resolve, reject) => {
      const started = Date.now();
      const poll = setInterval(() => {
        const m = re.exec(output);
        if (m) {
          clearInterval(poll);
          resolve(m);
        } else if (Date.now() - started > ms) {
          clearInterval(poll);
          reject(new Error(`timed out waiting for ${re}; output so far: ${JSON.stringify(output)}`));
        }
      }, 20);
    });

  try {
    // The quotes keep the markers out of the echoed command line. READY is printed after the
    // terminal is raw, so no byte of the payload is cooked (Ctrl+C would otherwise be SIGINT).
    term.write(`stty raw -echo -iexten; echo RE''ADY; od -An -tx1 -v -N${count}; stty sane; echo DO''NE\r`);
    await waitFor(/READY/, 5_000);
    term.write(payload);
    const m = await waitFor(/READY([\s\S]*?)DONE/, 5_000);
    const received = m[1]!.replace(/\s+/g, ' ').trim();
    assert.equal(received, expected);
  } finally {
    term.kill();
  }
});
