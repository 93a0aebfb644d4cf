// The host is the terminal for a program's queries: each one gets exactly one answer, from the
// host, with no view attached and with two (`shared-pty attach` in real PTYs, inside terminals
// that answer by themselves as the editor's does); the views' own answers never reach the program.
// Proved with a probe that asks and reads, and with real programs: vim and prompt_toolkit.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { CommandRecord } from '../../../../../src/core/commands/command-tracker';
import type { SessionInfo } from '../../../../../src/core/methods/types';
import type { RpcClient } from '../../../../../src/transport/client/rpc-client';
import { VERSION } from '../../../../../src/version';
import { connect, startHost, until } from '../../../../helpers/host';
import { buildCli, REPO_ROOT } from '../../../../helpers/protocol';
import { AttachView, VIEW_COLORS } from '../../../../helpers/attach-view';
import { ViewAnswers } from '../../../../../src/core/session/input/view-answers';
import { ensureNoDisposablesAreLeakedBySuite } from '../../../../helpers/leak-tracker';

/** Per-test bound: generous for a noisy machine, finite so a hang fails instead of blocking. */
const TEST_TIMEOUT = 90_000;
/** Debian's Python: the one prompt_toolkit is installed for (`python3-prompt-toolkit`). */
const PYTHON = '/usr/bin/python3';
const PROBE = path.join(REPO_ROOT, 'test', 'fixtures', 'query-probe.py');

const hasPython = fs.existsSync(PYTHON);
const hasPromptToolkit = hasPython && spawnSync(PYTHON, ['-c', 'import prompt_toolkit']).status === 0;
const hasVim = spawnSync('sh', ['-c', 'command -v vim']).status === 0;

/** The queries docs/guarantees.md#agents-are-told-the-truth names, each with the one answer the host gives with no view having reported colours. */
const QUERIES: Array<[query: string, answer: string]> = [
  ['\\x1b[c', '\x1b[?1;2c'],
  ['\\x1b[>c', '\x1b[>0;276;0c'],
  ['\\x1b[5n', '\x1b[0n'],
  // The cursor as of the query: moved there just before it, and away again right after.
  ['\\x1b[5;10H\\x1b[6n\\x1b[H', '\x1b[5;10R'],
  ['\\x1b[>q', `\x1bP>|shared-pty(${VERSION})\x1b\\`],
  ['\\x1b[?7$p', '\x1b[?7;1$y'],
  ['\\x1b[4$p', '\x1b[4;2$y'],
  ['\\x1b]10;?\\x07', '\x1b]10;rgb:ffff/ffff/ffff\x1b\\'],
  ['\\x1b]11;?\\x1b\\\\', '\x1b]11;rgb:0000/0000/0000\x1b\\'],
  ['\\x1b]12;?\\x07', '\x1b]12;rgb:ffff/ffff/ffff\x1b\\'],
];

type Host = Awaited<ReturnType<typeof startHost>>;
let h: Host;
let c: RpcClient;
const homes: string[] = [];

before(async () => {
  buildCli();
  h = await startHost();
  c = await connect(h.host.controlAddress);
});

after(async () => {
  c?.close();
  await h?.close();
  for (const home of homes) fs.rmSync(home, { recursive: true, force: true });
});
// Once the shared host is closed, nothing the suite made is left (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedBySuite();

interface SendResult {
  output: string;
  waitReason: string;
  exitCode?: number | null;
  command?: CommandRecord;
}

/** An integrated bash (so `send` knows when a command is done) in a HOME of its own, with `views` attached. */
async function openSession(views: number) {
  const home = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'spt-queries-')));
  homes.push(home);
  fs.writeFileSync(path.join(home, '.bashrc'), "PS1='p> '\nHISTFILE=/dev/null\n");
  const info = await c.request<SessionInfo>('session/create', { command: 'bash', args: [], cwd: home, env: { HOME: home }, cols: 100, rows: 30 });
  const session = info.id;
  assert.equal((await c.request<{ matched: boolean }>('pty/wait', { session, match: 'p>', timeout: 15_000 })).matched, true, 'the first prompt');
  const attached: AttachView[] = [];
  for (let i = 0; i < views; i++) attached.push(await AttachView.open(c, h.dir, session));
  const send = (text: string, timeout = 20_000) => c.request<SendResult>('pty/send', { session, text, timeout });
  const close = async () => {
    for (const v of attached) await v.close();
    await c.request('pty/kill', { session }).catch(() => undefined);
  };
  return { session, home, views: attached, send, close };
}

type Session = Awaited<ReturnType<typeof openSession>>;

/**
 * Runs the probe with `queries` and returns what it read: one answer per query, and anything else
 * that reached it before every view's "END" (typed after that view had answered every query, so
 * any answer of the view's that got through would be there).
 */
async function probe(s: Session, queries: string[]): Promise<{ answers: string[]; extra: string }> {
  const from = (await c.request<{ cursor: number }>('pty/output', { session: s.session, since: Number.MAX_SAFE_INTEGER })).cursor;
  const args = queries.map((q) => `'${q}'`).join(' ');
  const seen = s.views.map((v) => v.answers.length);
  await c.request('pty/write', { session: s.session, action: { text: `${PYTHON} ${PROBE} ${Math.max(1, s.views.length)} ${args}\r` } });
  assert.equal(
    (await c.request<{ matched: boolean }>('pty/wait', { session: s.session, match: 'FENCE?', timeout: 30_000 })).matched,
    true,
    'the probe has its answers',
  );
  if (s.views.length === 0) await c.request('pty/write', { session: s.session, action: { text: 'END' } });
  for (const [i, v] of s.views.entries()) {
    await until(() => v.answers.length >= seen[i] + queries.length, 15_000, `view ${i} answered every query`);
    v.type('END');
  }
  const done = await c.request<{ matched: boolean }>('pty/wait', { session: s.session, regex: 'PROBE \\{.*\\}', since: from, timeout: 30_000 });
  assert.equal(done.matched, true, 'the probe reported');
  const out = (await c.request<{ data: string }>('pty/output', { session: s.session, since: from })).data;
  const line = out.slice(out.indexOf('PROBE ') + 6);
  return JSON.parse(line.slice(0, line.indexOf('\n')).trim()) as { answers: string[]; extra: string };
}

describe('what a view writes: its own answers out, keys in', () => {
  test('device attributes, status, DEC cursor reports, mode reports, XTVERSION, status strings and colours are answers; keys and text are kept', () => {
    const v = new ViewAnswers();
    const answers =
      '\x1b[?1;2c\x1b[>0;276;0c\x1b[0n\x1b[?5;10R\x1b[?2004;2$y\x1b[4;2$y\x1bP>|xterm(390)\x1b\\\x1bP1$r0m\x1b\\\x1b]11;rgb:1e1e/1e1e/1e1e\x1b\\\x1b]10;rgb:cc/cc/cc\x07';
    const keys = 'ls\x1b[A\x1b[1;5C\x1bOP\x1b[15~\r';
    assert.deepEqual(v.take(`l${answers}${keys}`), { text: `l${keys}`, colors: { 11: 'rgb:1e1e/1e1e/1e1e', 10: 'rgb:cc/cc/cc' } });
    assert.deepEqual(v.take('plain text'), { text: 'plain text' });
  });

  test('a cursor report is an answer only after the program asked for one: Ctrl+F3 (CSI 1;5R) is a key otherwise', () => {
    const v = new ViewAnswers();
    assert.equal(v.take('\x1b[1;5R').text, '\x1b[1;5R');
    // Asked in output cut between two reads.
    v.sawOutput(Buffer.from('prompt\x1b['));
    v.sawOutput(Buffer.from('6nmore'));
    assert.equal(v.take('\x1b[1;5R').text, '');
    assert.equal(v.take('x\x1b[12;40Ry').text, 'xy');
  });

  test('a cursor query is noticed wherever two reads cut it, amid coloured output; coloured output with none is not one', () => {
    const coloured = '\x1b[32mok\x1b[0m 16 files, 6n\x1b[1;34m[6n]\x1b[0m ';
    for (const query of ['\x1b[6n', '\x1b[?6n', '\x1b\x1b[6n']) {
      const output = `${coloured}${query}${coloured}`;
      for (let cut = coloured.length; cut <= coloured.length + query.length; cut++) {
        const v = new ViewAnswers();
        v.sawOutput(Buffer.from(output.slice(0, cut)));
        v.sawOutput(Buffer.from(output.slice(cut)));
        assert.equal(v.take('\x1b[1;5R').text, '', `${JSON.stringify(query)} cut after ${cut - coloured.length} bytes`);
      }
    }
    const v = new ViewAnswers();
    for (let i = 0; i < 3; i++) v.sawOutput(Buffer.from(coloured));
    assert.equal(v.take('\x1b[1;5R').text, '\x1b[1;5R', 'no query: Ctrl+F3 stays a key');
  });

  test('a cursor query written a byte or two at a time (three reads or more) is noticed too', () => {
    for (const query of ['\x1b[6n', '\x1b[?6n']) {
      for (const step of [1, 2]) {
        const v = new ViewAnswers();
        v.sawOutput(Buffer.from('before '));
        for (let i = 0; i < query.length; i += step) v.sawOutput(Buffer.from(query.slice(i, i + step)));
        assert.equal(v.take('\x1b[7;9R').text, '', `${JSON.stringify(query)} in reads of ${step} byte(s): the view's report is its answer`);
      }
    }
    // Bytes of one read each that make no query: a key stays a key.
    const v = new ViewAnswers();
    for (const b of ['\x1b', '[', '6', 'x', 'n']) v.sawOutput(Buffer.from(b));
    assert.equal(v.take('\x1b[1;5R').text, '\x1b[1;5R');
  });
});

const noPython = !hasPython && `${PYTHON} is not installed`;
describe('every terminal query gets exactly one answer, from the host', () => {
  for (const views of [0, 2]) {
    test(
      `with ${views} views: device attributes, status, cursor position, XTVERSION, DECRQM and colours`,
      { timeout: TEST_TIMEOUT, skip: noPython },
      async () => {
        const s = await openSession(views);
        try {
          const r = await probe(
            s,
            QUERIES.map(([q]) => q),
          );
          // A view may answer a colour query (and so report its colours) before the host has parsed
          // it: then the host's answer has the view's colour, which is the user's real one.
          const expected = QUERIES.map(([, a]) => {
            const slot = /^\x1b\](1[012]);/.exec(a)?.[1] as '10' | '11' | '12' | undefined;
            return slot && views > 0 && r.answers.includes(`\x1b]${slot};${VIEW_COLORS[slot]}\x1b\\`) ? `\x1b]${slot};${VIEW_COLORS[slot]}\x1b\\` : a;
          });
          assert.deepEqual(r.answers, expected);
          assert.equal(r.extra, '', "no second answer, and nothing of the views' own answers");
          if (views > 0) {
            // The views reported their colours (answers the program never saw): later colour queries get them.
            const again = await probe(s, ['\\x1b]11;?\\x07', '\\x1b]10;?\\x07', '\\x1b]12;?\\x07']);
            assert.deepEqual(
              again.answers,
              [11, 10, 12].map((slot) => `\x1b]${slot};${VIEW_COLORS[slot as 10 | 11 | 12]}\x1b\\`),
            );
            assert.equal(again.extra, '');
          }
        } finally {
          await s.close();
        }
      },
    );
  }
});

describe("a view's answers to the queries of a replay", () => {
  test(
    'a view that joins later is sent the old cursor query in its replay and answers it: that answer never reaches the program',
    { timeout: TEST_TIMEOUT },
    async () => {
      const s = await openSession(0);
      const view = await connect(h.host.controlAddress);
      try {
        // The program asks; the host answers it (once); the answer is read.
        const asked = await s.send("printf '\\033[6n'; read -rs -d R; echo answered-once");
        assert.match(asked.output, /answered-once/);
        // Past the time a live view's late answer is awaited, a view joins with the whole replay (a stream's `since: 0`).
        await new Promise((r) => setTimeout(r, 5200));
        let replayedQuery = false;
        const listener = view.onNotification((n) => {
          if (n.method === 'pty/output' && String((n.params as { data?: string }).data).includes('\x1b[6n')) replayedQuery = true;
        });
        try {
          await view.request('pty/subscribe', { session: s.session, since: 0 });
          await until(() => replayedQuery, 10_000, 'the replay with the old query');
          // As xterm.js does: it answers the query it was shown.
          await view.request('pty/write', { session: s.session, action: { text: '\x1b[55;55R' }, client: { origin: 'user' } });
        } finally {
          listener.dispose();
        }
        const after = await s.send('echo clean-line');
        assert.match(after.output, /^clean-line$/m);
        assert.equal(after.exitCode, 0, after.output);
        assert.doesNotMatch((await c.request<{ screen: string }>('pty/read', { session: s.session })).screen, /55R/);
      } finally {
        view.close();
        await s.close();
      }
    },
  );
});

describe('real programs that ask their terminal', () => {
  // vim asks for the terminal's version (t_RV), its colours and the cursor's blinking when it
  // starts, and on exit waits for any answer still missing before it ends.
  const VIM_SCRIPT = [
    'function! s:Check(timer) abort',
    "  if v:termresponse != '' && v:termrbgresp != '' && v:termrfgresp != '' && v:termblinkresp != ''",
    // Written whole, then renamed: the test reads it as soon as it exists.
    "    call writefile([v:termresponse, v:termrbgresp, v:termrfgresp, v:termblinkresp], 'answers.tmp')",
    "    call rename('answers.tmp', 'answers.txt')",
    '    call timer_stop(a:timer)',
    '  endif',
    'endfunction',
    "call timer_start(10, function('s:Check'), {'repeat': -1})",
  ].join('\n');

  test(
    'vim gets every answer it asks for, so :q ends it at once (send returns command_done for the vim command), with no view and with two',
    { timeout: 2 * TEST_TIMEOUT, skip: !hasVim && 'vim is not installed' },
    async () => {
      for (const views of [0, 2]) {
        const s = await openSession(views);
        try {
          fs.writeFileSync(path.join(s.home, 'answers.vim'), VIM_SCRIPT + '\n');
          const answers = path.join(s.home, 'answers.txt');
          await c.request('pty/write', { session: s.session, action: { text: 'vim -N -u NONE -i NONE -n -S answers.vim notes.txt\r' } });
          await until(() => fs.existsSync(answers), 20_000, `vim has the answers to all its queries (${views} views)`);
          const [version, background, foreground, blink] = fs.readFileSync(answers, 'utf8').split('\n');
          assert.equal(version, '\x1b[>0;276;0c');
          assert.match(background, /^\x1b\]11;rgb:[0-9a-f]{4}\/[0-9a-f]{4}\/[0-9a-f]{4}\x1b\\$/);
          assert.match(foreground, /^\x1b\]10;rgb:/);
          assert.match(blink, /^\x1b\[\?12;[12]\$y$/);
          const quit = await s.send(':q');
          assert.equal(quit.waitReason, 'command_done');
          assert.equal(quit.exitCode, 0);
          assert.match(quit.command?.command ?? '', /^vim /);
          // Nothing of any answer was left for the shell to read as typed text.
          const next = await s.send('echo after');
          assert.equal(next.command?.command, 'echo after');
          assert.equal(next.exitCode, 0);
          assert.doesNotMatch(next.output, /\$y|276|rgb:/);
        } finally {
          await s.close();
        }
      }
    },
  );

  test(
    'a prompt_toolkit prompt gets its cursor position answered (no "terminal doesn\'t support CPR" warning), with no view and with two',
    { timeout: 2 * TEST_TIMEOUT, skip: !hasPromptToolkit && 'python3-prompt-toolkit is not installed' },
    async () => {
      for (const views of [0, 2]) {
        const s = await openSession(views);
        try {
          const script = path.join(s.home, 'ask.py');
          fs.writeFileSync(
            script,
            [
              'from prompt_toolkit import PromptSession',
              's = PromptSession()',
              "line = s.prompt('pt> ')",
              "print('GOT', repr(line), s.app.renderer.cpr_support.name)",
            ].join('\n') + '\n',
          );
          await c.request('pty/write', { session: s.session, action: { text: `${PYTHON} ask.py\r` } });
          assert.equal((await c.request<{ matched: boolean }>('pty/wait', { session: s.session, match: 'pt>', timeout: 20_000 })).matched, true, 'the prompt');
          // Typed by a person in a view when there is one, else by a script.
          if (s.views.length > 0) s.views[0].type('hello\r');
          else await c.request('pty/write', { session: s.session, action: { text: 'hello\r' } });
          // The whole line: Python may write its words apart, and a match on "GOT" alone can see the line half printed.
          const r = await c.request<{ matched: boolean; screen: string }>('pty/wait', {
            session: s.session,
            regex: 'GOT .*(SUPPORTED|UNKNOWN)',
            timeout: 20_000,
          });
          assert.equal(r.matched, true);
          assert.match(r.screen, /GOT 'hello' SUPPORTED/, `${views} views`);
          assert.doesNotMatch(r.screen, /WARNING|CPR\)/);
          await until(
            async () => (await c.request<{ commands: CommandRecord[] }>('pty/commands', { session: s.session })).commands.at(-1)?.exitCode === 0,
            20_000,
            'the script ended',
          );
          const next = await s.send('echo after');
          assert.equal(next.command?.command, 'echo after');
        } finally {
          await s.close();
        }
      }
    },
  );
});
