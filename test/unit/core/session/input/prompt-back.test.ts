// docs/protocol.md#events-ptyevents-and-ptywaitevent: `input_wait` when the shell's prompt comes
// back after a program that read was left with a key (cat + Ctrl+C, python3 -q + Ctrl+D, less + q),
// as after sleep 30 + Ctrl+C; none for keys typed at the prompt (an outside audit: they timed out).
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { connect, startHost, clientsClosed } from '../../../../helpers/host';
import { promptedShell } from '../../../../helpers/shell-home';
import { ensureNoDisposablesAreLeakedBySuite } from '../../../../helpers/leak-tracker';

const hostP = startHost();
const homes: string[] = [];
after(async () => {
  await (await hostP).close();
  for (const home of homes) fs.rmSync(home, { recursive: true, force: true });
});
ensureNoDisposablesAreLeakedBySuite(clientsClosed);

test('the prompt back after a program that read was left with a key is an input_wait', { timeout: 60_000 }, async () => {
  const h = await hostP;
  const c = await connect(h.host.controlAddress);
  const rpc = (m: string, p: Record<string, unknown>) => c.request<any>(m, p);
  const { home, ...how } = promptedShell('bash');
  homes.push(home);
  const info = await rpc('session/create', { ...how, args: [], cols: 80, rows: 24 });
  const session = info.id;
  try {
    assert.equal(info.integration, true);
    await rpc('pty/send', { session, text: 'true' });
    for (const [command, key, reason] of [
      ['cat', '\x03', 'stdin_read'],
      ['python3 -q', '\x04', 'stdin_read'],
      ['less /etc/passwd', 'q', 'stdin_read'],
      ['sleep 30', '\x03', 'timeout'],
    ] as const) {
      const sent = await rpc('pty/send', { session, text: command, timeout: 1500 });
      assert.equal(sent.waitReason, reason, `${command}: ${JSON.stringify(sent)}`);
      const waiting = rpc('pty/waitEvent', { session, types: ['input_wait'], timeoutMs: 3000 });
      await new Promise((r) => setTimeout(r, 400));
      await rpc('pty/write', { session, action: { text: key } });
      const got = await waiting;
      assert.equal(got.reason, 'matched', `${command} + ${JSON.stringify(key)}: ${JSON.stringify(got)}`);
    }
    // Keys typed at the prompt: no new wait.
    const waiting = rpc('pty/waitEvent', { session, types: ['input_wait'], timeoutMs: 1500 });
    await new Promise((r) => setTimeout(r, 200));
    await rpc('pty/write', { session, action: { text: 'echo typed' } });
    assert.equal((await waiting).reason, 'timeout');
  } finally {
    await rpc('pty/kill', { session });
    c.close();
  }
});
