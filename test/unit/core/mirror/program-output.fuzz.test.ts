// Property-based fuzzing of what programs print, with tmux as the oracle: the same bytes are
// printed in a tmux pane and in a Shared PTY session (both 80x24), and what `pty/read` and
// `pty/snapshot` give must be what tmux shows. Each property says in its name what it proves:
// - well-formed output (text, wide characters, colours and attributes, cursor movement, erasing,
//   scroll regions, 2,000-column lines, alternate-screen switches) gives tmux's screen: the same
//   rows, the same cursor, and the same colours and attributes on every character;
// - hostile output (every OSC/DCS/APC/CSI sequence cut short, invalid UTF-8) neither crashes nor
//   hangs the mirror, nor leaves a state a reset does not clear: after a reset (RIS) both agree
//   again, colours included. (Before the reset the two may legitimately differ: terminals do not
//   agree on how to end a broken sequence.)
// - a 10 MiB line without a newline gives tmux's screen.
// Each run of `npm test` draws a new seed (test/helpers/fuzz.ts; FUZZ_SEED replays one).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import type { RpcClient } from '../../../../src/transport/client/rpc-client';
import { Terminal } from '@xterm/headless';
import { Unicode11Addon } from '@xterm/addon-unicode11';
import { haveTmux, Tmux } from '../../../helpers/cli';
import { FUZZ_RUNS, fuzz, LONG_FUZZ } from '../../../helpers/fuzz';
import { connect, startHost, clientsClosed } from '../../../helpers/host';
import { sleep } from '../../../helpers/protocol';
import { sameScreen, screenDiff, styleDiff, styleRows } from '../../../helpers/screen-diff';
import { writeAll } from '../../../helpers/xterm-screen';
import { ensureNoDisposablesAreLeakedBySuite } from '../../../helpers/leak-tracker';

const COLS = 80;
const ROWS = 24;
/**
 * Cases per property in `npm test`. Measured per case (docs/testing.md#fuzzing): about 0.8 s
 * (well-formed) and 0.5 s (hostile) on a quiet 2-core machine, 2-2.5 s at load 19; 16 of each add
 * about 13 s to this file over 6, some 7 s to `npm test` (two files run at once).
 */
const SHORT_RUNS = 16;
/** Bound on a fuzzing test: its short run in `npm test`, or as many cases as `npm run fuzz` asks for. */
const FUZZ_TEST_TIMEOUT_MS = LONG_FUZZ ? FUZZ_RUNS * 60_000 : 600_000;
/** Longest wait for both screens to show the end of a case. */
const SETTLE_MS = 30_000;
/** How often both screens are looked at while a case is printed (tmux's capture is a process). */
const POLL_MS = 40;
/** Longest wait for the 10 MiB line: parsing it takes seconds, and minutes on a loaded machine. */
const LONG_LINE_SETTLE_MS = 150_000;
/** Full reset, after which both terminals must agree again whatever came before. */
const RIS = '\x1bc';

interface Screen {
  rows: string[];
  cursor: { row: number; col: number };
}

let dir: string;
let tmux: Tmux;
let host: Awaited<ReturnType<typeof startHost>>;
let client: RpcClient;
let counter = 0;

/** Each test skips without tmux (and npm test then fails: test/allowed-skips.json allows no such skip). */
const noTmux = haveTmux() ? false : 'tmux is not installed (apt-get install tmux)';

before(async () => {
  if (noTmux) return;
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spt-fuzz-out-'));
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('TMUX')));
  tmux = new Tmux(dir, { conf: ['set -sg escape-time 0'], env: { ...env, LANG: 'C.UTF-8' } });
  host = await startHost();
  client = await connect(host.host.controlAddress);
});

after(async () => {
  client?.close();
  await host?.close();
  tmux?.killServer();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});
// Once the shared host is closed, nothing the suite made is left (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedBySuite(clientsClosed);

function tmuxScreen(target: string): Screen {
  const rows = tmux.capture(target).split('\n').slice(0, ROWS);
  while (rows.length < ROWS) rows.push('');
  const [x, y] = tmux.run('display', '-p', '-t', target, '#{cursor_x} #{cursor_y}').trim().split(' ');
  return { rows, cursor: { row: Number(y) + 1, col: Number(x) + 1 } };
}

async function sessionScreen(id: string): Promise<Screen> {
  const r = await client.request<{ screen: string; cursor: { row: number; col: number } }>('pty/read', { session: id });
  const rows = r.screen === '' ? [] : r.screen.replace(/\n$/, '').split('\n');
  while (rows.length < ROWS) rows.push('');
  return { rows, cursor: r.cursor };
}

/** A fresh terminal of the pane's size, with the mirror's character widths (Unicode 11). */
async function replayed(data: string): Promise<Terminal> {
  const term = new Terminal({ cols: COLS, rows: ROWS, scrollback: 0, allowProposedApi: true, logLevel: 'off' });
  term.loadAddon(new Unicode11Addon());
  term.unicode.activeVersion = '11';
  await writeAll(term, data);
  return term;
}

/** Per row, the columns up to the last character that is not a space, in either terminal. */
function textWidths(terms: Terminal[]): number[] {
  const widths: number[] = [];
  for (let y = 0; y < ROWS; y++) {
    let w = 0;
    for (const term of terms) {
      const line = term.buffer.active.getLine(term.buffer.active.baseY + y);
      const cell = term.buffer.active.getNullCell();
      for (let x = COLS - 1; x >= w; x--) {
        const chars = line?.getCell(x, cell)?.getChars() ?? '';
        if (chars !== '' && chars !== ' ') {
          w = x + Math.max(1, cell.getWidth());
          break;
        }
      }
    }
    widths.push(Math.min(w, COLS));
  }
  return widths;
}

/**
 * The colours and attributes of both screens, over their text: tmux's from `capture-pane -e`,
 * the session's from `pty/snapshot`, each drawn into a fresh terminal. (tmux leaves out cells that
 * hold only a background after the last character: those are not compared.)
 */
async function styleMismatch(label: string, target: string, id: string): Promise<string> {
  const captured = tmux.run('capture-pane', '-p', '-e', '-t', target).split('\n').slice(0, ROWS).join('\r\n');
  const snap = await client.request<{ data: string }>('pty/snapshot', { session: id, scrollback: 0 });
  const want = await replayed(captured);
  const got = await replayed(snap.data);
  try {
    const widths = textWidths([want, got]);
    return styleDiff(label, styleRows(want, widths), styleRows(got, widths));
  } finally {
    want.dispose();
    got.dispose();
  }
}

/**
 * Prints `bytes` (then `marker`, which ends every case) in a tmux pane and in a session, and
 * asserts both show the same screen and cursor once the marker is on both, and the same colours
 * and attributes.
 */
async function printBoth(label: string, bytes: Buffer, marker: string, settleMs = SETTLE_MS): Promise<void> {
  const name = `o${++counter}`;
  const file = path.join(dir, `${name}.out`);
  fs.writeFileSync(file, Buffer.concat([bytes, Buffer.from(marker)]));
  // The program prints the file, then waits for input without printing anything more. Echo off:
  // the terminal's answers to queries in the output (Shared PTY answers `OSC 10 ;?`, tmux does not)
  // reach the program's input, and the tty would echo them onto the screen after the output, even
  // after its reset; what the screens are compared on is what the program printed.
  const script = `stty -echo; cat '${file}'; exec cat >/dev/null`;
  tmux.newSession(name, COLS, ROWS, `sh -c "${script}"`);
  const info = await client.request<{ id: string }>('session/create', {
    command: '/bin/sh',
    args: ['-c', script],
    cols: COLS,
    rows: ROWS,
    env: { LANG: 'C.UTF-8' },
  });
  try {
    // The marker is the last thing printed and both terminals draw in the order bytes come, and a
    // read reflects everything the host had read (docs/guarantees.md): once both show it, both
    // screens are final. No quiet window is needed, and none could prove more.
    const end = Date.now() + settleMs;
    let want = tmuxScreen(name);
    let got = await sessionScreen(info.id);
    while (!(want.rows.join('\n').includes(marker) && got.rows.join('\n').includes(marker)) && Date.now() < end) {
      await sleep(POLL_MS);
      want = tmuxScreen(name);
      got = await sessionScreen(info.id);
    }
    assert.ok(want.rows.join('\n').includes(marker), `${label}: tmux did not show the end marker in ${settleMs} ms:\n${want.rows.join('\n')}`);
    assert.ok(got.rows.join('\n').includes(marker), `${label}: the session did not show the end marker in ${settleMs} ms\n${screenDiff(label, want, got)}`);
    assert.ok(sameScreen(want, got), screenDiff(label, want, got));
    const styles = await styleMismatch(label, name, info.id);
    assert.equal(styles, '', `${styles}\n${screenDiff(label, want, got)}`);
  } finally {
    tmux.run('kill-session', '-t', name);
    await client.request('pty/kill', { session: info.id }).catch(() => undefined);
    fs.rmSync(file, { force: true });
  }
}

/** Sequences a program may print, each to be cut short at a random place. */
const SEQUENCES = [
  '\x1b]0;a window title\x07',
  '\x1b]2;title\x1b\\',
  '\x1b]8;;https://example.com/\x1b\\link\x1b]8;;\x1b\\',
  '\x1b]52;c;aGVsbG8=\x07',
  '\x1b]633;E;ls -la\x07',
  '\x1b]633;P;Cwd=/tmp\x07',
  '\x1b]4;1;rgb:ff/00/00\x1b\\',
  '\x1b]10;?\x07',
  '\x1b]1337;File=inline=1:AAAA\x07',
  '\x1bP$qm\x1b\\',
  '\x1bP1$r0m\x1b\\',
  '\x1bPq#0;2;0;0;0#0~~@@vv@@~~$-\x1b\\',
  '\x1bP+q544e\x1b\\',
  '\x1b_Gf=100;AAAA\x1b\\',
  '\x1b^privacy\x1b\\',
  '\x1bXsos\x1b\\',
  '\x1b[38;2;255;0;0mred\x1b[0m',
  '\x1b[?1049h',
  '\x1b[?2004h',
  '\x1b[5;10r',
  '\x1b[?1;3;1000;1006h',
  '\x1b[>c',
  '\x1b#8',
  '\x1b(0lqk\x1b(B',
  '\x9b31m',
  '\x9d0;c1 title\x9c',
];

/** A sequence cut after its first byte and before its last: what a program killed mid-write leaves. */
const cutSequence = fc.tuple(fc.constantFrom(...SEQUENCES), fc.nat()).map(([s, k]) => Buffer.from(s.slice(0, 1 + (k % Math.max(1, s.length - 1))), 'latin1'));

/** Bytes that are not UTF-8: stray continuation bytes, truncated and overlong forms, surrogates, 0xfe/0xff. */
const invalidUtf8 = fc.oneof(
  fc.constantFrom(
    ...['80', 'bf', 'c3', 'e2 82', 'f0 9f 98', 'c0 af', 'e0 80 af', 'ed a0 80', 'f8 88 80 80 80', 'fe', 'ff', 'c3 28'].map((h) =>
      Buffer.from(h.replace(/ /g, ''), 'hex'),
    ),
  ),
  fc.uint8Array({ minLength: 1, maxLength: 16 }).map((b) => Buffer.from(b.map((x) => x | 0x80))),
);

/** Switches to the alternate screen and back, a thousand times a second and more. */
const altSwitches = (max: number) => fc.integer({ min: 1, max }).map((n) => Buffer.from(`\x1b[?1049hALT${n}\x1b[?1049l`.repeat(n)));

/** A line of 1 to 2,500 columns (printable ASCII), with or without its newline. */
const wideLine = fc
  .tuple(fc.integer({ min: 1, max: 2500 }), fc.constantFrom('w', '-', '0123456789'), fc.boolean())
  .map(([n, unit, nl]) => Buffer.from(unit.repeat(Math.ceil(n / unit.length)).slice(0, n) + (nl ? '\n' : '')));

const plainText = fc.string({ unit: fc.constantFrom('a', 'b', ' ', '\n', '\r', '\t', 'é', '中', '😀'), maxLength: 60 }).map((s) => Buffer.from(s));

/** SGR parameters a program sets: attributes on and off, 16, 256 and RGB colours, resets. */
const sgrParam = fc.oneof(
  fc.constantFrom('0', '1', '2', '3', '4', '5', '7', '8', '9', '22', '23', '24', '25', '27', '28', '29', '39', '49', ''),
  fc.integer({ min: 30, max: 37 }).map(String),
  fc.integer({ min: 40, max: 47 }).map(String),
  fc.integer({ min: 90, max: 97 }).map(String),
  fc.integer({ min: 100, max: 107 }).map(String),
  fc.tuple(fc.constantFrom('38', '48'), fc.integer({ min: 0, max: 255 })).map(([k, n]) => `${k};5;${n}`),
  fc
    .tuple(fc.constantFrom('38', '48'), fc.integer({ min: 0, max: 255 }), fc.integer({ min: 0, max: 255 }), fc.integer({ min: 0, max: 255 }))
    .map(([k, r, g, b]) => `${k};2;${r};${g};${b}`),
);
/** Colours and attributes (SGR), one to three at once. */
const sgr = fc.array(sgrParam, { minLength: 1, maxLength: 3 }).map((ps) => Buffer.from(`\x1b[${ps.join(';')}m`));

/** A count for a CSI sequence: absent (1), 0 (also 1), small, or past the edge of the screen. */
const count = fc.oneof(fc.constant(''), fc.integer({ min: 0, max: 5 }).map(String), fc.integer({ min: 6, max: 100 }).map(String));
/**
 * Cursor movement: absolute, relative, to a column or row, CR, BS, TAB, index and reverse index.
 * BS is sent away from the first column: there tmux and xterm disagree by design. tmux moves to
 * the end of the row above when that row wrapped into this one; xterm and xterm.js (what the editor
 * shows, and so what the mirror keeps) move only with reverse wraparound (DECSET 45) on.
 */
const cursorMove = fc
  .oneof(
    fc.tuple(fc.integer({ min: 1, max: ROWS + 2 }), fc.integer({ min: 1, max: COLS + 5 })).map(([r, c]) => `\x1b[${r};${c}H`),
    fc.tuple(fc.constantFrom('A', 'B', 'C', 'D', 'E', 'F', 'G', 'd', '`'), count).map(([f, n]) => `\x1b[${n}${f}`),
    fc.integer({ min: 2, max: COLS }).map((col) => `\x1b[${col}G\b`),
    fc.constantFrom('\r', '\t', '\x1bD', '\x1bM', '\x1bE', '\n'),
  )
  .map((x) => Buffer.from(x));
/**
 * Erasing and editing: in display and line, characters erased, inserted and deleted, lines inserted
 * and deleted. Where xterm (and xterm.js) and tmux disagree by design, the oracle is kept fair:
 * inserting or deleting lines puts the cursor in the first column in xterm, not in tmux (a CR
 * follows, as programs that use them print one), and xterm ignores them outside the scroll region
 * where tmux does not (they are sent with the whole screen as the region, on a row of their own).
 * Rows that lines inserted, deleted or scrolled bring in take the current background in xterm
 * (background colour erase) and not in tmux: those are sent with the default background
 * (FUZZ_SEED=22 found it).
 * Characters are erased, inserted or deleted after a step left and back right, which ends any
 * pending wrap the same way in both: right after a character printed in the last column xterm acts
 * on that column, as the VT standard says, and tmux does nothing (FUZZ_SEED=1120257084 found it).
 * Characters are inserted in the second column, at most 39: an insert longer than half of the rest
 * of the row leaves in tmux 3.3a the characters between the last one moved and the insert's end
 * where they were, where xterm blanks them as the standard says (`wwwwwwww`, `ESC[2G`, `ESC[73@`:
 * tmux keeps the w of column 8; FUZZ_SEED=767084403 found it).
 */
const erase = fc
  .oneof(
    fc.constantFrom('0', '1', '2', '').map((n) => `\x1b[${n}J`),
    fc.constantFrom('0', '1', '2', '').map((n) => `\x1b[${n}K`),
    fc.tuple(fc.constantFrom('X', 'P'), count).map(([f, n]) => `\x1b[D\x1b[C\x1b[${n}${f}`),
    fc.oneof(fc.constant(''), fc.integer({ min: 0, max: 39 }).map(String)).map((n) => `\r\x1b[C\x1b[${n}@`),
    fc.tuple(fc.integer({ min: 1, max: ROWS }), fc.constantFrom('L', 'M'), count).map(([row, f, n]) => `\x1b[49m\x1b[r\x1b[${row}H\x1b[${n}${f}\r`),
  )
  .map((x) => Buffer.from(x));
/** Scroll regions: set (sometimes empty or past the screen), scrolled up and down (default background, see `erase`), reset. */
const scrollRegion = fc
  .oneof(
    fc.tuple(fc.integer({ min: 1, max: ROWS }), fc.integer({ min: 1, max: ROWS + 2 })).map(([t, b]) => `\x1b[${t};${b}r`),
    fc.tuple(fc.constantFrom('S', 'T'), count).map(([f, n]) => `\x1b[49m\x1b[${n}${f}`),
    fc.constant('\x1b[r'),
  )
  .map((x) => Buffer.from(x));
/**
 * The cursor and colours saved (DECSC), moved and changed, then restored (DECRC). Always as a pair:
 * a restore with no save of its own after an alternate-screen switch differs by design between
 * terminals (xterm and xterm.js share the slot with ?1049, tmux keeps them apart).
 */
const saveRestore = fc
  .array(fc.oneof(plainText, sgr, cursorMove, erase), { maxLength: 4 })
  .map((inner) => Buffer.concat([Buffer.from('\x1b7'), ...inner, Buffer.from('\x1b8')]));
/**
 * A case that erases or moves the cursor sideways or up and down prints no wide characters: a cursor
 * can then land on the right half of one, or an erase take one half. There xterm and xterm.js blank
 * the other half; tmux keeps the character (written on its right half, it shows "😀w" where xterm
 * shows " w": FUZZ_SEED=976220117, a scroll down then a print; the same with a cursor move there),
 * and an erase that takes one half leaves a cell of no width, so the rest of the row moves left by
 * one (FUZZ_SEED=128242591). Wide characters still meet text, wrapping, colours, long lines and the
 * alternate screen, and the screen after a reset has them too.
 */
const MOVES_OR_ERASES = /\x1b\[[\d;]*[@A-HJKLMPSTXd`]|\x1b[78DEM]|[\b\t]/;
function fairWide(chunks: Buffer[]): Buffer[] {
  if (!chunks.some((c) => MOVES_OR_ERASES.test(c.toString('latin1')))) return chunks;
  return chunks.map((c) => Buffer.from(c.toString('utf8').replace(/[中😀]/gu, 'ww')));
}

/** Short text lines, so cursor moves and scrolling have something to move. */
const someLines = fc.integer({ min: 1, max: 30 }).map((n) => Buffer.from(Array.from({ length: n }, (_, i) => `line ${i} ${'#'.repeat(i % 7)}`).join('\r\n')));

/** After the reset, text both terminals must draw the same: wide characters, wrapping, colours, a cursor move. */
const CLEAN = 'after reset: é 中文 😀\n\x1b[1;31mline two\x1b[0m\n' + 'x'.repeat(100) + '\n\x1b[5;20H\x1b[7mmoved\x1b[27m';

describe('fuzz: what programs print, against tmux', () => {
  test(
    'well-formed output (text, colours and attributes, cursor moves, erasing, scroll regions, long lines, alternate screen): the same rows, cursor, colours and attributes as tmux',
    { skip: noTmux, timeout: FUZZ_TEST_TIMEOUT_MS },
    async () => {
      await fuzz(
        [
          fc
            .array(
              fc.oneof(
                { weight: 3, arbitrary: plainText },
                { weight: 3, arbitrary: sgr },
                { weight: 3, arbitrary: cursorMove },
                { weight: 1, arbitrary: saveRestore },
                { weight: 2, arbitrary: erase },
                { weight: 2, arbitrary: scrollRegion },
                { weight: 2, arbitrary: someLines },
                { weight: 1, arbitrary: wideLine },
                { weight: 1, arbitrary: altSwitches(3000) },
              ),
              { minLength: 1, maxLength: 24 },
            )
            .map(fairWide),
        ],
        async (chunks) => {
          const marker = `end-${counter + 1}`;
          // At the start of a line, so it never wraps: the case ends when both show it.
          await printBoth('well-formed', Buffer.concat([...chunks, Buffer.from('\r\n')]), marker);
        },
        SHORT_RUNS,
        SETTLE_MS + 10_000,
      );
    },
  );

  test(
    'hostile output (cut sequences, invalid UTF-8) neither crashes nor hangs the mirror, and a reset clears what it left: after RIS the same screen, colours included, as tmux',
    { skip: noTmux, timeout: FUZZ_TEST_TIMEOUT_MS },
    async () => {
      await fuzz(
        [fc.array(fc.oneof(cutSequence, invalidUtf8, altSwitches(50), wideLine, plainText, sgr), { minLength: 1, maxLength: 10 })],
        async (chunks) => {
          const marker = `end-${counter + 1}`;
          // CAN, ST, CAN end whatever sequence is still open (tmux needs the ST for a DCS, and the
          // first CAN for a DCS cut after its ESC), and RIS resets both terminals to the same state.
          await printBoth('hostile then reset', Buffer.concat([...chunks, Buffer.from(`\x18\x1b\\\x18${RIS}${CLEAN}`)]), ` ${marker}`);
        },
        SHORT_RUNS,
        SETTLE_MS + 10_000,
      );
    },
  );

  test('a 10 MiB line without a newline: the same screen as tmux', { skip: noTmux, timeout: LONG_LINE_SETTLE_MS + 30_000 }, async () => {
    const size = 10 * 1024 * 1024;
    const line = Buffer.alloc(size);
    for (let i = 0; i < size; i++) line[i] = 0x61 + (Math.floor(i / COLS) % 26); // each row its own letter
    await printBoth('10 MiB line', line, 'end-of-long-line', LONG_LINE_SETTLE_MS);
  });
});
