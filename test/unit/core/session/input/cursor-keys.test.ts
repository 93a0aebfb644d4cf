// Application cursor keys (src/core/session/input/cursor-keys.ts): the arrows, Home and End a client
// names reach a program that turned the mode on as that program reads them. The mode followed
// through output cut anywhere; a real curses program in keypad mode, driven through pty/write.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import fc from 'fast-check';
import { CursorKeysMode } from '../../../../../src/core/session/input/cursor-keys';
import type { SessionInfo } from '../../../../../src/core/methods/types';
import type { RpcClient } from '../../../../../src/transport/client/rpc-client';
import { connect, startHost } from '../../../../helpers/host';
import { REPO_ROOT } from '../../../../helpers/protocol';
import { fuzzSync } from '../../../../helpers/fuzz';
import { ensureNoDisposablesAreLeakedBySuite } from '../../../../helpers/leak-tracker';

const PROGRAM = path.join(REPO_ROOT, 'test', 'fixtures', 'curses-keys.py');
const hasCurses = spawnSync('python3', ['-c', 'import curses']).status === 0;

let h: Awaited<ReturnType<typeof startHost>>;
let c: RpcClient;
before(async () => {
  h = await startHost();
  c = await connect(h.host.controlAddress);
});
after(async () => {
  c?.close();
  await h?.close();
});
// Once the shared host is closed, nothing the suite made is left (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedBySuite();

/** The mode after `chunks`, fed one after another. */
function modeAfter(chunks: string[]): boolean {
  const m = new CursorKeysMode();
  for (const chunk of chunks) m.sawOutput(Buffer.from(chunk, 'latin1'));
  return m.application;
}

test('set and reset, in a list of modes too; a soft reset ends it; the last change stands', () => {
  assert.equal(modeAfter(['\x1b[?1h']), true);
  assert.equal(modeAfter(['\x1b[?1049;1h']), true, 'in a list');
  assert.equal(modeAfter(['\x1b[?1h', 'text \x1b[?1l']), false);
  assert.equal(modeAfter(['\x1b[?1h\x1b[!p']), false, 'DECSTR');
  assert.equal(modeAfter(['\x1b[!p\x1b[?1h']), true, 'set after a reset');
  assert.equal(modeAfter(['\x1b[?1h', 'what? a question!', 'p']), true, 'a ? or ! in text is no sequence');
  for (const other of ['\x1b[?12h', '\x1b[?10h', '\x1b[?1000h', '\x1b[1h', '\x1b[?1$p', '[?1h']) assert.equal(modeAfter([other]), false, JSON.stringify(other));
});

test('the same mode whatever reads cut the output into', () => {
  const piece = fc.constantFrom(
    '\x1b[?1h',
    '\x1b[?1l',
    '\x1b[?25l\x1b[?1;1049h',
    '\x1bc',
    '\x1b[!p',
    '\x1b[31mred\x1b[0m',
    'plain text\r\n',
    '\x1b[?1000h',
    '\x1b',
  );
  fuzzSync(
    [fc.array(piece, { maxLength: 12 }), fc.array(fc.nat(), { maxLength: 6 })],
    (pieces, cutsAt) => {
      const whole = pieces.join('');
      const cuts = [...new Set(cutsAt.map((n) => n % (whole.length + 1)))].sort((a, b) => a - b);
      const chunks = [0, ...cuts, whole.length].slice(1).map((end, i, ends) => whole.slice(i === 0 ? 0 : ends[i - 1], end));
      assert.equal(modeAfter(chunks), modeAfter([whole]), JSON.stringify(chunks));
    },
    300,
  );
});

test(
  'a curses program in keypad mode reads the arrows, Home and End a client presses by name',
  { timeout: 60_000, skip: !hasCurses && 'python3 has no curses' },
  async () => {
    const s = await c.request<SessionInfo>('session/create', { command: 'python3', args: [PROGRAM], env: { TERM: 'xterm-256color' } });
    const ready = await c.request<{ matched: boolean }>('pty/wait', { session: s.id, match: 'ready>', timeout: 20_000 });
    assert.equal(ready.matched, true);
    await c.request('pty/write', { session: s.id, action: ['ArrowUp', 'ArrowDown', 'Home', 'End'].map((key) => ({ key })) });
    const got = await c.request<{ matched: boolean; screen: string }>('pty/wait', { session: s.id, match: ':end', timeout: 20_000 });
    assert.match(got.screen, /got:KEY_UP,KEY_DOWN,KEY_HOME,KEY_END:end/, got.screen);
    await c.request('pty/kill', { session: s.id });
  },
);
