// Property-based fuzzing of the line editor's model (what deny rules judge, docs/protocol.md "Agent
// guards"): any keys typed into a real bash through a host (text, the cursor keys, deletes, kills,
// yanks, Ctrl+T, case changes, Ctrl+V, writes cut anywhere, escape sequences included) leave bash's
// readline holding the line the model says, its cursor where the model says. bash tells what it holds
// through a `bind -x` key that prints READLINE_LINE and READLINE_POINT.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { lineEdit, type EditorState } from '../../../../../src/core/session/input/line-editor';
import { fuzz } from '../../../../helpers/fuzz';
import { BASH, connect, startHost, until, clientsClosed } from '../../../../helpers/host';
import type { RpcClient } from '../../../../../src/transport/client/rpc-client';
import { ensureNoDisposablesAreLeakedBySuite } from '../../../../helpers/leak-tracker';

/** Keys bash's emacs mode reads the same with Debian's /etc/inputrc as without (no Tab, no history: what they bring is not typed). */
const KEYS = [
  'a', 'b', 'Z', '9', ' ', '-', '/', 'é', 'x y', 'ab cd',
  '\x1b[D', '\x1bOD', '\x02', '\x1b[C', '\x1bOC', '\x06', '\x1b[H', '\x1bOH', '\x01', '\x1b[1~', '\x1b[F', '\x1bOF', '\x05', '\x1b[4~',
  '\x7f', '\b', '\x1b[3~', '\x04', '\x0b', '\x15', '\x17', '\x19', '\x14',
  '\x1bb', '\x1bf', '\x1b[1;5D', '\x1b[1;5C', '\x1bd', '\x1b\x7f', '\x1bu', '\x1bl', '\x1bc', '\x16Q', '\x1b[2~',
]; // prettier-ignore

/** A bash probe key (Ctrl+X Ctrl+P) that prints what readline holds, between \x1e markers. */
const PROBE = '\x18\x10';

// Once the shared host is closed, nothing the suite made is left (docs/testing.md#leaks).
ensureNoDisposablesAreLeakedBySuite(clientsClosed);

describe('fuzz: the line editor model against bash', () => {
  let h: Awaited<ReturnType<typeof startHost>>;
  let ctl: RpcClient;
  let id: string;
  /** The model's state; bash's kill buffer lives on from case to case, and so does the model's. */
  let model: EditorState = { line: '', cursor: 0, overflow: false, killed: '', lastWasKill: false };
  const type = (state: EditorState, text: string) => lineEdit(state, text, { secret: false, editor: 'readline' }).state;
  before(async () => {
    h = await startHost();
    ctl = await connect(h.host.controlAddress);
    id = (await ctl.call('session/create', { ...BASH, env: { ...BASH.env, LANG: 'C.UTF-8' }, cols: 200, rows: 24 })).id;
    await until(async () => (await ctl.call('pty/read', { session: id })).screen.includes('$'), 10_000, 'a prompt');
    await ctl.call('pty/write', { session: id, action: { text: `bind -x '"\\C-x\\C-p": printf "\\036%s\\037%s\\036" "$READLINE_LINE" "$READLINE_POINT"'\r` } });
    await holds('', 0);
  });
  after(async () => {
    ctl?.close();
    await h?.close();
  });

  /**
   * Ctrl+C, and the wait for bash's new prompt: keys that come while bash still handles the
   * interrupt are read into the old line's redisplay.
   */
  async function fresh(): Promise<void> {
    const since = (await ctl.call('pty/output', { session: id })).cursor;
    await ctl.call('pty/write', { session: id, action: { text: '\x03' } });
    await until(async () => /\n(?:\x1b\[\?2004h)?\$ $/.test((await ctl.call('pty/output', { session: id, since, waitMs: 200 })).data), 10_000, 'a new prompt');
  }

  /** Asks bash what it holds and checks it against `line` and `cursor` (in characters, as READLINE_POINT counts them). */
  async function holds(line: string, cursor: number): Promise<void> {
    const since = (await ctl.call('pty/output', { session: id })).cursor;
    await ctl.call('pty/write', { session: id, action: { text: PROBE } });
    const got = await until(
      async () => /\x1e([^\x1e]*)\x1f(\d+)\x1e/.exec((await ctl.call('pty/output', { session: id, since, waitMs: 200 })).data),
      10_000,
      "bash's line",
    );
    assert.deepEqual([got[1], Number(got[2])], [line, cursor]);
  }

  test('any keys, in writes cut anywhere, leave bash holding the line the model holds', { timeout: 300_000 }, async () => {
    await fuzz(
      [fc.array(fc.constantFrom(...KEYS), { minLength: 1, maxLength: 16 }), fc.array(fc.nat(), { maxLength: 3 })],
      async (drawn, cuts) => {
        // Ctrl+D on an empty line would end bash: the model says when the line is empty.
        const keys: string[] = [];
        let state = model;
        for (const k of drawn) {
          if (k === '\x04' && state.line === '') continue;
          keys.push(k);
          state = type(state, k);
        }
        // Insert last would quote the probe's first key.
        while (keys.at(-1) === '\x1b[2~') keys.pop();
        const typed = keys.join('');
        const points = [...new Set(cuts.map((c) => c % (typed.length + 1)))].sort((a, b) => a - b);
        const writes = [0, ...points].map((p, i, all) => typed.slice(p, all[i + 1] ?? typed.length)).filter((w) => w !== '');
        let after = model;
        for (const text of writes) after = type(after, text);
        if (process.env.LE_DEBUG) console.log('CASE', JSON.stringify(writes), JSON.stringify(after.line), JSON.stringify(model.killed));
        try {
          for (const text of writes) await ctl.call('pty/write', { session: id, action: { text } });
          await holds(after.line, [...after.line.slice(0, after.cursor)].length);
        } finally {
          // Ctrl+C ends the line in both, and each keeps its kill buffer.
          model = type(after, '\x03');
          await fresh();
        }
      },
      25,
    );
  });
});
