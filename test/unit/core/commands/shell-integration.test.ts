// Shell integration (docs/guarantees.md#shell-integration), end to end: real bash, zsh and fish started by a real host,
// each with the user's own start-up files in a temporary HOME, reporting their commands through
// OSC 633 marks; read back over the control socket as a script would.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { CommandRecord } from '../../../../src/core/commands/command-tracker';
import type { SessionInfo } from '../../../../src/core/methods/types';
import type { RpcClient } from '../../../../src/transport/client/rpc-client';
import { connect, startHost, until } from '../../../helpers/host';
import { CLI } from '../../../helpers/protocol';

/** Per-test bound: generous for a noisy machine, finite so a hang fails instead of blocking CI. */
const TEST_TIMEOUT = 60_000;

type Host = Awaited<ReturnType<typeof startHost>>;
interface SendResult {
  output: string;
  waitReason: string;
  exitCode?: number | null;
  command?: CommandRecord;
}

const hasShell = (name: string) => spawnSync('sh', ['-c', `command -v ${name}`]).status === 0;

/** A HOME of the user's own: start-up files with a prompt, an alias, and a PATH entry of theirs. */
function makeHome(files: Record<string, string>): string {
  const home = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'spt-home-')));
  fs.mkdirSync(path.join(home, 'bin'));
  const tool = path.join(home, 'bin', 'my-tool');
  fs.writeFileSync(tool, '#!/bin/sh\necho my-tool-ran\n');
  fs.chmodSync(tool, 0o755);
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(home, name)), { recursive: true });
    fs.writeFileSync(path.join(home, name), text);
  }
  return home;
}

const BASHRC = `PS1='my> '\nalias hi='echo hello-from-my-alias'\nexport PATH="$HOME/bin:$PATH"\n`;

let h: Host;
let c: RpcClient;
const homes: string[] = [];

before(async () => {
  h = await startHost();
  c = await connect(h.host.controlAddress);
});

after(async () => {
  c?.close();
  await h?.close();
  for (const home of homes) fs.rmSync(home, { recursive: true, force: true });
});

/** A session of `command` (no arguments: an interactive shell) in a HOME with `files`, at its first prompt. */
async function openShell(command: string, files: Record<string, string>, env: Record<string, string> = {}, args: string[] = []) {
  const home = makeHome(files);
  homes.push(home);
  const info = await c.request<SessionInfo>('session/create', { command, args, cwd: home, env: { HOME: home, XDG_CONFIG_HOME: path.join(home, '.config'), ...env }, cols: 100, rows: 30 });
  const session = info.id;
  await until(async () => (await c.request<{ screen: string }>('pty/read', { session })).screen.trimEnd().endsWith('>'), 15_000, `${command}'s first prompt`);
  const send = (text: string, timeout = 20_000) => c.request<SendResult>('pty/send', { session, text, timeout });
  const commands = async () => (await c.request<{ integration: boolean; commands: CommandRecord[] }>('pty/commands', { session, limit: 100 })).commands;
  const output = async (r: CommandRecord) =>
    (await c.request<{ data: string }>('pty/output', { session, since: r.startCursor, maxBytes: r.endCursor! - r.startCursor, strip: true })).data;
  return { info, session, home, send, commands, output };
}

describe('bash, started interactively, reports its commands', () => {
  test('exit codes: `false; true` is 0, `false` is 1, a subshell `(exit 3)` is 3; pty/send returns command_done with the record', { timeout: TEST_TIMEOUT }, async () => {
    const s = await openShell('bash', { '.bashrc': BASHRC });
    assert.equal(s.info.integration, true);
    const both = await s.send('false; true');
    assert.equal(both.waitReason, 'command_done');
    assert.equal(both.exitCode, 0);
    assert.equal(both.command?.command, 'false; true');
    const one = await s.send('false');
    assert.equal(one.waitReason, 'command_done');
    assert.equal(one.exitCode, 1);
    const sub = await s.send('(exit 3)');
    assert.equal(sub.exitCode, 3);
    assert.equal(sub.command?.command, '(exit 3)');
    const list = await s.commands();
    assert.deepEqual(list.map((r) => [r.command, r.exitCode]), [['false; true', 0], ['false', 1], ['(exit 3)', 3]]);
    assert.deepEqual(list.map((r) => r.id), [1, 2, 3]);
    for (const r of list) {
      assert.equal(r.cwd, s.home);
      assert.equal(new Date(r.startedAt).toISOString(), r.startedAt);
      assert.ok(r.durationMs !== null && r.durationMs >= 0);
      assert.ok(r.endCursor !== null && r.endCursor >= r.startCursor);
    }
  });

  test('the output between a record\'s cursors is exactly the command\'s own output', { timeout: TEST_TIMEOUT }, async () => {
    const s = await openShell('bash', { '.bashrc': BASHRC });
    const r = await s.send(`printf 'first\\nsecond\\n'`);
    assert.equal(await s.output(r.command!), 'first\nsecond\n');
    // And reading from startCursor on, as a client that follows a command would.
    const from = await c.request<{ data: string }>('pty/output', { session: s.session, since: r.command!.startCursor, strip: true });
    assert.ok(from.data.startsWith('first\nsecond\n'), JSON.stringify(from.data));
  });

  test('a multi-line command (a loop over lines, a here-document) is one record with its whole text', { timeout: TEST_TIMEOUT }, async () => {
    const s = await openShell('bash', { '.bashrc': BASHRC });
    const loop = await s.send('for n in 1 2 3; do\n  echo "line $n"\ndone');
    assert.equal(loop.waitReason, 'command_done');
    assert.equal(loop.exitCode, 0);
    assert.match(loop.command!.command, /^for n in 1 2 3; do\s+echo "line \$n";?\s+done$/);
    assert.equal(await s.output(loop.command!), 'line 1\nline 2\nline 3\n');
    const doc = await s.send('cat <<EOF\nsemi;colon back\\slash\nEOF');
    assert.equal(doc.command!.command, 'cat <<EOF\nsemi;colon back\\slash\nEOF');
    assert.equal(await s.output(doc.command!), 'semi;colon back\\slash\n');
    assert.equal((await s.commands()).length, 2);
  });

  test('with HISTCONTROL=ignoreboth (Debian\'s default), a repeated line and a line the history skips still have their text', { timeout: TEST_TIMEOUT }, async () => {
    const s = await openShell('bash', { '.bashrc': `${BASHRC}HISTCONTROL=ignoreboth\n` });
    await s.send('echo same; echo twice');
    await s.send('echo same; echo twice');
    await s.send(' echo not-in-history');
    assert.deepEqual((await s.commands()).map((r) => r.command), ['echo same; echo twice', 'echo same; echo twice', 'echo not-in-history']);
  });

  test('Ctrl+C at the prompt and an empty line make no record', { timeout: TEST_TIMEOUT }, async () => {
    const s = await openShell('bash', { '.bashrc': BASHRC });
    await c.request('pty/write', { session: s.session, action: [{ text: 'echo never-run' }, { key: 'Ctrl+C' }] });
    const empty = await s.send('');
    assert.equal(empty.waitReason, 'stdin_read');
    assert.equal(empty.command, undefined);
    const after = await s.send('echo ran');
    assert.equal(after.exitCode, 0);
    assert.deepEqual((await s.commands()).map((r) => r.command), ['echo ran']);
  });

  test('`cd /tmp` moves the session\'s cwd and the cwd of the commands after it', { timeout: TEST_TIMEOUT }, async () => {
    const s = await openShell('bash', { '.bashrc': BASHRC });
    const tmp = fs.realpathSync(os.tmpdir());
    await s.send(`cd ${tmp}`);
    const info = await c.request<SessionInfo>('pty/info', { session: s.session });
    assert.equal(info.cwd, tmp);
    await s.send('pwd');
    assert.deepEqual((await s.commands()).map((r) => r.cwd), [s.home, tmp]);
    const listed = (await c.request<{ sessions: SessionInfo[] }>('session/list', {})).sessions.find((x) => x.id === s.session);
    assert.equal(listed?.cwd, tmp);
  });

  test('a nested bash is not integrated; the outer record for `bash` ends, with its status, when it exits', { timeout: TEST_TIMEOUT }, async () => {
    const s = await openShell('bash', { '.bashrc': BASHRC });
    const inner = await s.send('bash');
    // The inner shell waits at its prompt: the command is running and waits for input.
    assert.equal(inner.waitReason, 'stdin_read');
    assert.equal(inner.command?.command, 'bash');
    assert.equal(inner.command?.exitCode, null);
    assert.equal(inner.exitCode, undefined);
    const typed = await s.send('echo in-the-inner-shell');
    assert.equal(typed.waitReason, 'stdin_read');
    assert.match(typed.output, /in-the-inner-shell/);
    const out = await s.send('exit 4');
    assert.equal(out.waitReason, 'command_done');
    assert.equal(out.exitCode, 4);
    const list = await s.commands();
    assert.deepEqual(list.map((r) => [r.command, r.exitCode]), [['bash', 4]]);
  });

  test('the user\'s .bashrc is still read: their prompt, alias and PATH work', { timeout: TEST_TIMEOUT }, async () => {
    const s = await openShell('bash', { '.bashrc': BASHRC });
    const alias = await s.send('hi');
    assert.match(alias.output, /hello-from-my-alias/);
    assert.equal(alias.command?.command, 'hi');
    const tool = await s.send('my-tool');
    assert.match(tool.output, /my-tool-ran/);
    assert.equal(tool.exitCode, 0);
    const screen = (await c.request<{ screen: string }>('pty/read', { session: s.session })).screen;
    assert.match(screen, /^my>$/m);
  });

  test('the user\'s PROMPT_COMMAND still runs and sees the command\'s status; a prompt it makes anew is marked each time', { timeout: TEST_TIMEOUT }, async () => {
    const s = await openShell('bash', { '.bashrc': `${BASHRC}PROMPT_COMMAND='LAST_STATUS=$?; PS1="n$((n++))> "'\n` });
    await s.send('false');
    const shown = await s.send('echo "status-was-$LAST_STATUS"');
    assert.match(shown.output, /^status-was-1$/m);
    assert.equal(shown.exitCode, 0);
    const raw = (await c.request<{ data: string }>('pty/output', { session: s.session, since: shown.command!.endCursor! })).data;
    assert.match(raw, /\x1b\]633;A\x07n\d+> \x1b\]633;B\x07/);
  });

  test('a login bash (-l) reads the login files the user has', { timeout: TEST_TIMEOUT }, async () => {
    const s = await openShell('bash', { '.bash_profile': `PS1='login> '\nalias hi='echo hello-from-profile'\n` }, {}, ['-l']);
    assert.equal(s.info.integration, true);
    assert.deepEqual(s.info.args, ['-l']);
    const r = await s.send('hi');
    assert.match(r.output, /hello-from-profile/);
    assert.equal(r.exitCode, 0);
    assert.equal((await s.send('shopt -q login_shell; echo $?')).waitReason, 'command_done');
  });

  test('the marks reach the output stream untouched (the editor\'s terminal gets them)', { timeout: TEST_TIMEOUT }, async () => {
    const s = await openShell('bash', { '.bashrc': BASHRC });
    await s.send('true');
    const raw = (await c.request<{ data: string }>('pty/output', { session: s.session, since: 0 })).data;
    for (const mark of ['\x1b]633;A\x07', '\x1b]633;B\x07', '\x1b]633;E;true\x07', '\x1b]633;C\x07', '\x1b]633;D;0\x07', `\x1b]633;P;Cwd=${s.home}\x07`]) {
      assert.ok(raw.includes(mark), `${JSON.stringify(mark)} in ${JSON.stringify(raw)}`);
    }
  });

  test('SHARED_PTY_SHELL_INTEGRATION=0 turns it off: no marks, no records, send as before', { timeout: TEST_TIMEOUT }, async () => {
    const s = await openShell('bash', { '.bashrc': BASHRC }, { SHARED_PTY_SHELL_INTEGRATION: '0' });
    assert.equal(s.info.integration, false);
    const r = await s.send('false');
    assert.equal(r.waitReason, 'stdin_read');
    assert.equal(r.exitCode, undefined);
    assert.deepEqual(await c.request('pty/commands', { session: s.session }), { integration: false, commands: [] });
    const raw = (await c.request<{ data: string }>('pty/output', { session: s.session, since: 0 })).data;
    assert.ok(!raw.includes('\x1b]633;'), raw);
    // The user's files are read as ever.
    assert.match((await s.send('hi')).output, /hello-from-my-alias/);
  });

  test('a shell run with other arguments (a script, --norc) is left alone', { timeout: TEST_TIMEOUT }, async () => {
    const s = await openShell('bash', {}, { PS1: 'plain> ' }, ['--norc', '-i']);
    assert.equal(s.info.integration, false);
    assert.equal((await s.send('false')).waitReason, 'stdin_read');
  });
});

const noZsh = !hasShell('zsh') && 'zsh is not installed (apt-get install zsh)';
describe('zsh reports its commands', () => {
  const ZSHRC = `PS1='z> '\nalias hi='echo hello-from-zsh-alias'\n`;

  test('exit codes and cwd; the user\'s .zshenv and .zshrc are read, and ZDOTDIR is theirs again', { skip: noZsh, timeout: TEST_TIMEOUT }, async () => {
    const s = await openShell('zsh', { '.zshenv': 'export FROM_ZSHENV=yes\n', '.zshrc': ZSHRC });
    assert.equal(s.info.integration, true);
    assert.equal((await s.send('false')).exitCode, 1);
    assert.equal((await s.send('(exit 3)')).exitCode, 3);
    const both = await s.send('false; true');
    assert.equal(both.exitCode, 0);
    assert.equal(both.command?.command, 'false; true');
    const tmp = fs.realpathSync(os.tmpdir());
    await s.send(`cd ${tmp}`);
    assert.equal((await c.request<SessionInfo>('pty/info', { session: s.session })).cwd, tmp);
    const env = await s.send('hi; echo "env=$FROM_ZSHENV zdotdir=${ZDOTDIR-unset}"');
    assert.match(env.output, /hello-from-zsh-alias/);
    assert.match(env.output, /env=yes zdotdir=unset/);
    assert.deepEqual((await s.commands()).map((r) => r.exitCode), [1, 3, 0, 0, 0]);
  });

  test('Ctrl+C at the prompt makes no record', { skip: noZsh, timeout: TEST_TIMEOUT }, async () => {
    const s = await openShell('zsh', { '.zshrc': ZSHRC });
    await c.request('pty/write', { session: s.session, action: [{ text: 'echo never-run' }, { key: 'Ctrl+C' }] });
    assert.equal((await s.send('true')).exitCode, 0);
    assert.deepEqual((await s.commands()).map((r) => r.command), ['true']);
  });
});

const noFish = !hasShell('fish') && 'fish is not installed (apt-get install fish)';
describe('fish reports its commands', () => {
  const CONFIG = `function fish_prompt; printf 'f> '; end\nset -g fish_greeting\nalias hi 'echo hello-from-fish-alias'\n`;
  // A fish that has run before: on a first run (no universal variables) fish starts generating
  // completions from every man page in the background, 20 s of CPU that starved the machine.
  const FISH_VARIABLES = 'SETUVAR __fish_initialized:3400\n';

  test('exit codes and cwd; the user\'s config.fish is read', { skip: noFish, timeout: TEST_TIMEOUT }, async () => {
    const s = await openShell('fish', { '.config/fish/config.fish': CONFIG, '.config/fish/fish_variables': FISH_VARIABLES });
    assert.equal(s.info.integration, true);
    assert.equal((await s.send('false')).exitCode, 1);
    const three = await s.send("sh -c 'exit 3'");
    assert.equal(three.exitCode, 3);
    assert.equal(three.command?.command, "sh -c 'exit 3'");
    const tmp = fs.realpathSync(os.tmpdir());
    await s.send(`cd ${tmp}`);
    assert.equal((await c.request<SessionInfo>('pty/info', { session: s.session })).cwd, tmp);
    assert.match((await s.send('hi')).output, /hello-from-fish-alias/);
    const loop = await s.send('for n in 1 2\n  echo "line $n"\nend');
    assert.equal(loop.exitCode, 0);
    assert.equal(await s.output(loop.command!), 'line 1\nline 2\n');
  });
});

describe('only the injected integration makes commands: what a program prints is output (bash, zsh, fish)', () => {
  const SHELLS: Array<{ shell: string; files: Record<string, string> }> = [
    { shell: 'bash', files: { '.bashrc': BASHRC } },
    { shell: 'zsh', files: { '.zshrc': `PS1='z> '\n` } },
    {
      shell: 'fish',
      files: { '.config/fish/config.fish': `function fish_prompt; printf 'f> '; end\nset -g fish_greeting\n`, '.config/fish/fish_variables': 'SETUVAR __fish_initialized:3400\n' },
    },
  ];
  // Marks as VS Code's integration prints them: a command's end, a whole command, a cwd.
  const FORGED = '\x1b]633;D;0\x07\x1b]633;E;git push --force origin main\x07\x1b]633;C\x07\x1b]633;D;0\x07\x1b]633;P;Cwd=/etc\x07';
  /** One of our marks with a nonce still in it: 32 hex digits before the terminator. */
  const WITH_NONCE = /\x1b\]633;[^\x07\x1b]*;[0-9a-f]{32}(\x07|\x1b\\)/;

  for (const { shell, files } of SHELLS) {
    test(`${shell}: a forged end does not end the command, a file of marks adds no command and moves no cwd, the nonce reaches no program`, { timeout: TEST_TIMEOUT, skip: !hasShell(shell) && `${shell} is not installed` }, async () => {
      const s = await openShell(shell, { ...files, 'marks.txt': FORGED });
      assert.equal(s.info.integration, true);
      // The command goes on after its forged end, and ends with its own status.
      const early = await s.send("printf 'done\\n\\x1b]633;D;0\\x07\\x1b]633;A\\x07'; sleep 1; false");
      assert.equal(early.waitReason, 'command_done');
      assert.equal(early.exitCode, 1);
      assert.match(early.output, /done/);
      const cat = await s.send('cat marks.txt');
      assert.equal(cat.exitCode, 0);
      assert.equal(cat.command?.command, 'cat marks.txt');
      assert.deepEqual((await s.commands()).map((r) => [r.command.replace(/\s+/g, ' ').slice(0, 12), r.exitCode]), [["printf 'done", 1], ['cat marks.tx', 0]]);
      assert.equal((await c.request<SessionInfo>('pty/info', { session: s.session })).cwd, s.home);
      // Not in the environment of the programs the shell starts, nor in a shell variable they could see.
      const env = await s.send(`sh -c 'echo "nonce=[\${SHARED_PTY_NONCE-}\${__spty_nonce-}]"'`);
      assert.match(env.output, /nonce=\[\]/);
      // Nowhere in the output: the marks reach the stream (and the editor) as VS Code's, without it.
      const raw = (await c.request<{ data: string }>('pty/output', { session: s.session, since: 0 })).data;
      assert.ok(raw.includes('\x1b]633;D;1\x07') && raw.includes('\x1b]633;E;cat marks.txt\x07'), JSON.stringify(raw));
      assert.doesNotMatch(raw, WITH_NONCE);
    });
  }

  test('`shared-pty play` of a recording inside a session adds no command to it', { timeout: TEST_TIMEOUT }, async () => {
    const s = await openShell('bash', { '.bashrc': BASHRC });
    const cast = path.join(s.home, 'demo.cast');
    await c.request('pty/record', { session: s.session, path: cast });
    await s.send('echo recorded; false');
    await s.send('cd /');
    await c.request('pty/record', { session: s.session, stop: true });
    await s.send(`cd ${s.home}`);
    const before = (await s.commands()).length;
    const play = await s.send(`${process.execPath} ${CLI} play demo.cast --speed 100`);
    assert.equal(play.exitCode, 0);
    assert.match(play.output, /recorded/);
    const after = await s.commands();
    assert.deepEqual(after.slice(before).map((r) => r.command.startsWith(process.execPath)), [true]);
    assert.equal((await c.request<SessionInfo>('pty/info', { session: s.session })).cwd, s.home);
  });
});
