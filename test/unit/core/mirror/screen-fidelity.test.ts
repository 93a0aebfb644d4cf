// Screen fidelity: what `pty/read` returns must be what a real terminal shows. The oracle is tmux:
// the same program runs in a tmux pane and in a Shared PTY session, both 80x24, the same keys are
// typed into both, and the rows (trailing spaces removed, as `capture-pane -p` does) must match,
// and so must the cursor and whether the alternate screen is shown.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { RpcClient } from '../../../../src/transport/client/rpc-client';
import { Tmux } from '../../../helpers/cli';
import { BASH, connect, startHost, clientsClosed } from '../../../helpers/host';
import { sameScreen, screenDiff } from '../../../helpers/screen-diff';
import { ensureNoDisposablesAreLeakedBySuite } from '../../../helpers/leak-tracker';

const COLS = 80;
const ROWS = 24;
/** The same deterministic environment in both terminals (TERM differs: screen in tmux, that's fine). */
const ENV: Record<string, string> = { ...BASH.env, LANG: 'C.UTF-8', LESS: '', LESSHISTFILE: '-', EDITOR: 'vi' };
/** Longest wait for both screens to settle on the same rows. */
const SETTLE_MS = 15000;
/** Both screens must stay equal this long before they count as settled. */
const STABLE_MS = 250;

const hasTmux = spawnSync('tmux', ['-V']).status === 0;
const which = (cmd: string) => spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0;

interface Screen {
  rows: string[];
  cursor: { row: number; col: number };
  alternate: boolean;
}

/** The oracle: a private tmux server (see test/helpers/cli.ts) with the test environment. */
class Oracle {
  readonly dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spt-tmux-'));
  private readonly tmux: Tmux;

  constructor() {
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('TMUX')));
    this.tmux = new Tmux(this.dir, { historyLimit: 10000, conf: ['set -sg escape-time 0'], env: { ...env, ...ENV } });
  }

  /** A new detached session running bash with the test environment. */
  newPane(name: string, cwd: string): string {
    const envArgs = Object.entries(ENV).map(([k, v]) => `${k}=${shellQuote(v)}`);
    this.tmux.newSession(name, COLS, ROWS, ['env', ...envArgs, BASH.command, ...BASH.args].join(' '), { cwd });
    return name;
  }

  run(...args: string[]): string {
    return this.tmux.run(...args);
  }

  type(target: string, text: string, enter: boolean): void {
    if (text) this.tmux.run('send-keys', '-t', target, '-l', text);
    if (enter) this.tmux.run('send-keys', '-t', target, 'Enter');
  }

  screen(target: string): Screen {
    const rows = this.tmux.capture(target).split('\n').slice(0, ROWS);
    while (rows.length < ROWS) rows.push('');
    const [x, y, alt] = this.tmux.run('display', '-p', '-t', target, '#{cursor_x} #{cursor_y} #{alternate_on}').trim().split(' ');
    return { rows, cursor: { row: Number(y) + 1, col: Number(x) + 1 }, alternate: alt === '1' };
  }

  kill(): void {
    this.tmux.killServer();
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

/** A word for /bin/sh, quoted. */
function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** One Shared PTY session seen through the control socket, exactly as a client sees it. */
class SharedPane {
  constructor(
    private readonly client: RpcClient,
    readonly id: string,
  ) {}

  async type(text: string, enter: boolean): Promise<void> {
    const action = [];
    if (text) action.push({ text });
    if (enter) action.push({ key: 'Enter' });
    await this.client.request('pty/write', { session: this.id, action });
  }

  async screen(): Promise<Screen> {
    const r = await this.client.request<{ screen: string; cursor: { row: number; col: number } }>('pty/read', { session: this.id });
    // pty/read ends every row with \n and drops trailing empty rows (docs/guarantees.md#screen-text).
    const rows = r.screen === '' ? [] : r.screen.replace(/\n$/, '').split('\n');
    assert.ok(rows.length <= ROWS, `pty/read returned ${rows.length} rows`);
    while (rows.length < ROWS) rows.push('');
    return { rows, cursor: r.cursor, alternate: false };
  }
}

/** Each test skips (and npm test fails, test/allowed-skips.json allows no such skip) without tmux. */
const noTmux = hasTmux ? false : 'tmux is not installed (apt-get install tmux)';

// Once the shared host is closed, nothing the suite made is left (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedBySuite(clientsClosed);

describe('screen fidelity against tmux (80x24)', () => {
  let tmux: Oracle;
  let host: Awaited<ReturnType<typeof startHost>>;
  let client: RpcClient;
  let work: string;
  let counter = 0;

  before(async () => {
    if (noTmux) return;
    tmux = new Oracle();
    host = await startHost();
    client = await connect(host.host.controlAddress);
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'spt-fidelity-'));
    const lines = [];
    for (let i = 1; i <= 200; i++) lines.push(`line ${String(i).padStart(3, '0')} of the pager test file`);
    fs.writeFileSync(path.join(work, 'numbers.txt'), lines.join('\n') + '\n');
  });

  after(async () => {
    client?.close();
    await host?.close();
    tmux?.kill();
    if (work) fs.rmSync(work, { recursive: true, force: true });
  });

  /** A pair of terminals: a tmux pane and a Shared PTY session, both running the test bash. */
  async function pair() {
    const name = `p${++counter}`;
    const t = tmux.newPane(name, work);
    const info = await client.request<{ id: string }>('session/create', {
      command: BASH.command,
      args: BASH.args,
      env: ENV,
      cwd: work,
      cols: COLS,
      rows: ROWS,
      name,
    });
    const s = new SharedPane(client, info.id);
    const step = async (label: string, text: string, opts: { enter?: boolean; ready?: (tmuxRows: string) => boolean } = {}) => {
      const enter = opts.enter ?? true;
      tmux.type(t, text, enter);
      await s.type(text, enter);
      await settle(label, opts.ready);
    };
    const settle = async (label: string, ready?: (tmuxRows: string) => boolean) => {
      const end = Date.now() + SETTLE_MS;
      let equalSince = 0;
      let want = tmux.screen(t);
      let got = await s.screen();
      for (;;) {
        const ok = sameScreen(want, got) && (!ready || ready(want.rows.join('\n')));
        if (ok) {
          if (!equalSince) equalSince = Date.now();
          else if (Date.now() - equalSince >= STABLE_MS) break;
        } else equalSince = 0;
        if (Date.now() > end) break;
        await new Promise((r) => setTimeout(r, 40));
        want = tmux.screen(t);
        got = await s.screen();
      }
      if (ready) assert.ok(ready(want.rows.join('\n')), `${label}: tmux never showed the expected screen:\n${want.rows.join('\n')}`);
      assert.ok(sameScreen(want, got), screenDiff(label, want, got));
      return { tmux: want, shared: got };
    };
    // The first prompt.
    await settle('prompt', (rows) => rows.startsWith('$'));
    return {
      step,
      settle,
      tmuxScreen: () => tmux.screen(t),
      target: t,
      id: info.id,
      async close() {
        try {
          tmux.run('kill-session', '-t', t);
        } catch {
          // gone
        }
        await client.request('pty/kill', { session: info.id }).catch(() => undefined);
      },
    };
  }

  test('plain output and the prompt', { skip: noTmux }, async () => {
    const p = await pair();
    await p.step('echo', 'echo hello world; echo; echo "  indented   "', { ready: (r) => r.includes('indented') });
    await p.step('seq', 'seq 1 5', { ready: (r) => /5\n\$/.test(r) });
    await p.close();
  });

  test('more output than fits: the screen scrolls the same way', { skip: noTmux }, async () => {
    const p = await pair();
    await p.step('seq 1 100', 'seq 1 100', { ready: (r) => /100\n\$/.test(r) });
    await p.close();
  });

  test('wide characters: CJK', { skip: noTmux }, async () => {
    const p = await pair();
    await p.step('cjk', "printf '中文字符测试\\n'; printf '中\\e[4G|x\\n'; printf 'a中b文c\\n'", { ready: (r) => r.includes('a中b文c') });
    // A CJK row that wraps: 41 double-width characters do not fit in 80 columns.
    await p.step('cjk wrap', "printf '字%.0s' $(seq 1 41); echo", { ready: (r) => /字\n\$/.test(r) });
    await p.close();
  });

  test('wide characters: emoji occupy two cells', { skip: noTmux }, async () => {
    const p = await pair();
    await p.step('emoji', "printf '😀x🎉y\\n'; printf '😀\\e[4G|\\n'; printf '🚀\\e[4G|\\n'; printf '%.0s🙂' $(seq 1 41); echo", {
      ready: (r) => /🙂\n\$/.test(r),
    });
    await p.close();
  });

  test('combining marks, variation selectors and joined emoji', { skip: noTmux }, async () => {
    const p = await pair();
    await p.step('combining', "printf 'e\\xcc\\x81\\e[3G|\\n\\xe1\\x84\\x80\\xe1\\x85\\xa1\\e[4G|\\n❤️\\e[4G|\\n👍🏽\\e[6G|\\nA\\xe2\\x80\\x8bB|\\n'; echo end", {
      ready: (r) => /end\n\$/.test(r),
    });
    await p.close();
  });

  test('a long line wraps at 80 columns', { skip: noTmux }, async () => {
    const p = await pair();
    await p.step('200 chars', "printf 'x%.0s' $(seq 1 200); echo; printf '%0200d\\n' 7", { ready: (r) => /07\n\$/.test(r) });
    // A line of exactly 80 columns does not leave an empty row behind.
    await p.step('80 chars', "printf 'y%.0s' $(seq 1 80); echo", { ready: (r) => /y\n\$/.test(r) });
    await p.close();
  });

  // A full row leaves the cursor one past the edge while a wrap is pending (tmux's cursor_x is the
  // width); writing past the edge with autowrap off leaves it on the last column (xterm.js kept it past).
  test('a full row, with autowrap on and off: the cursor where tmux has it', { skip: noTmux }, async () => {
    const p = await pair();
    await p.step('80 columns, waiting', "clear; printf '%080d' 0; read x", { ready: (r) => /^0{80}$/m.test(r) });
    await p.step('end the read', '', { ready: (r) => /\$\s*$/.test(r) });
    await p.step('autowrap off, 90 columns, waiting', "clear; printf '\\e[?7l%090d' 1; read x", { ready: (r) => /^0{79}1$/m.test(r) });
    await p.step('autowrap back on', "printf '\\e[?7h'", { ready: (r) => /\$\s*$/.test(r) });
    // Autowrap back on after writing past the edge: no wrap is pending, the next character takes the last column.
    await p.step('autowrap off, past the edge, on again, then Q', "clear; printf '\\e[?7l%090d\\e[?7hQ' 2; read x", { ready: (r) => /^0{79}Q$/m.test(r) });
    await p.step('end the last read', '', { ready: (r) => /\$\s*$/.test(r) });
    await p.close();
  });

  test('colours and attributes are not text', { skip: noTmux }, async () => {
    const p = await pair();
    await p.step('sgr', "printf '\\e[31mred\\e[0m \\e[1;32mbold green\\e[0m \\e[7minverse\\e[0m \\e[38;5;208mc256\\e[0m \\e[38;2;1;2;3mtrue\\e[0m\\n'", {
      ready: (r) => r.includes('red bold green inverse c256 true'),
    });
    await p.close();
  });

  test('cursor movement, erasing and clear', { skip: noTmux }, async () => {
    const p = await pair();
    await p.step('fill', 'seq 1 30', { ready: (r) => /30\n\$/.test(r) });
    await p.step('clear', 'clear', { ready: (r) => r.startsWith('$') });
    await p.step('moves', "printf 'abcdef\\e[2;10HXY\\e[5;3Hz\\e[1;1H\\e[3Bq\\e[10;1Hlong line here\\e[10;5H\\e[K\\e[12;1Hkeep\\e[1K\\e[20;1H'", {
      ready: (r) => r.includes('long'),
    });
    await p.step('erase display below', "printf '\\e[6;1Hrow6\\e[8;1Hrow8\\e[7;1H\\e[J'", { ready: (r) => r.includes('row6') });
    await p.close();
  });

  test('erase above (ED 1) from the last cell of a screen that has not scrolled yet: every row goes, as in tmux', { skip: noTmux }, async () => {
    // The first thing a fresh session shows: xterm.js's parser threw here and stopped the mirror
    // (src/core/mirror/erase-above.ts).
    const p = await pair();
    await p.step('erase above from the last cell', "printf 'top\\e[12;1Hmiddle\\e[24;80H\\e[1J'", {
      ready: (r) => !r.includes('middle') && r.includes('$'),
    });
    await p.step('the shell goes on', 'echo after', { ready: (r) => /after\n\$/.test(r) });
    await p.close();
  });

  test('the scrollback reads like tmux history, wrapped rows and wide characters included', { skip: noTmux }, async () => {
    const p = await pair();
    await p.step(
      'mixed lines',
      'for i in $(seq 1 300); do if [ $((i % 7)) = 0 ]; then printf \'%d:%s\\n\' $i "$(printf \'中%.0s\' $(seq 1 $((i % 90))))"; else printf "%d:%0${i}d\\n" $i 0; fi; done; echo end',
      { ready: (r) => /end\n\$/.test(r) },
    );
    const history = tmux.run('capture-pane', '-p', '-t', p.target, '-S', '-', '-E', '-').split('\n');
    while (history.length && history[history.length - 1] === '') history.pop();
    const page = await client.request<{ text: string; totalLines: number }>('pty/scrollback', { session: p.id, lines: 10000 });
    const rows = page.text.split('\n');
    assert.ok(history.length > 500, `tmux history has ${history.length} rows`);
    assert.equal(rows.length, history.length, 'as many retained rows as tmux has history and screen rows');
    for (let i = 0; i < rows.length; i++) assert.equal(rows[i], history[i], `row ${i + 1} of ${rows.length}`);
    await p.close();
  });

  test('a progress bar drawn with carriage returns', { skip: noTmux }, async () => {
    const p = await pair();
    await p.step(
      'progress',
      "for i in $(seq 0 10 100); do printf '\\r[%-10s] %3d%%' \"$(head -c $((i/10)) /dev/zero | tr '\\0' '#')\" $i; sleep 0.02; done; echo; echo done",
      { ready: (r) => /done\n\$/.test(r) },
    );
    await p.close();
  });

  test('the alternate screen: less, then quit restores the normal screen', { skip: noTmux || (which('less') ? false : 'less is not installed') }, async () => {
    const p = await pair();
    await p.step('before', 'seq 1 5', { ready: (r) => /5\n\$/.test(r) });
    await p.step('less shown', 'less numbers.txt', { ready: (r) => r.includes('line 023') });
    assert.equal(p.tmuxScreen().alternate, true, 'tmux shows less on the alternate screen');
    await p.step('less page down', ' ', { enter: false, ready: (r) => r.includes('line 046') });
    await p.step('less quit', 'q', { enter: false, ready: (r) => /5\n\$ less numbers.txt\n\$/.test(r) });
    assert.equal(p.tmuxScreen().alternate, false);
    await p.close();
  });

  test(
    'the alternate screen: vim, then quit restores the normal screen',
    { skip: noTmux || (which('vim') || which('vi') ? false : 'vim is not installed') },
    async () => {
      const p = await pair();
      const vim = which('vim') ? 'vim' : 'vi';
      await p.step('before', 'echo before vim', { ready: (r) => /before vim\n\$/.test(r) });
      await p.step('vim shown', `${vim} -u NONE -i NONE -N -n numbers.txt`, { ready: (r) => r.includes('line 023') && r.includes('numbers.txt') });
      assert.equal(p.tmuxScreen().alternate, true, 'tmux shows vim on the alternate screen');
      await p.step('vim move', '10Gdd', { enter: false, ready: (r) => r.includes('line 011') && !r.includes('line 010') });
      await p.step('vim quit', ':q!', { ready: (r) => /before vim\n\$ .*numbers\.txt\n\$/.test(r) });
      assert.equal(p.tmuxScreen().alternate, false);
      await p.close();
    },
  );
});
