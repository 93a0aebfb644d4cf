// docs/protocol.md#ptysend: a send right after a Ctrl+C types once the program has handled it. A
// shell at its prompt throws away what it read of the next line while it handles the interrupt
// (bash's readline did, under load: `echo after` ran as `cho after`, and with `set -e` that ended
// the shell). The program here does the same on purpose, and takes its time over it.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, startHost, clientsClosed } from '../../../helpers/host';
import { ensureNoDisposablesAreLeakedBySuite } from '../../../helpers/leak-tracker';

const hostP = startHost();
after(async () => (await hostP).close());
ensureNoDisposablesAreLeakedBySuite(clientsClosed);

/** Reads lines at `> `; on SIGINT takes 300 ms, then discards whatever was typed meanwhile, as a line editor does. */
const PROGRAM = `
import os, signal, sys, termios, time
def interrupted(*_):
    time.sleep(0.3)
    termios.tcflush(0, termios.TCIFLUSH)
    os.write(1, b'^C\\r\\n')
signal.signal(signal.SIGINT, interrupted)
while True:
    os.write(1, b'> ')
    line = sys.stdin.readline()
    if not line: break
    os.write(1, ('got: ' + line.strip() + '\\r\\n').encode())
`;

test('a send right after a Ctrl+C is typed once the program has handled it, and arrives whole', { timeout: 60_000 }, async () => {
  const h = await hostP;
  const c = await connect(h.host.controlAddress);
  const rpc = (m: string, p: Record<string, unknown>) => c.request<any>(m, p);
  const info = await rpc('session/create', { command: 'python3', args: ['-u', '-c', PROGRAM], cols: 80, rows: 24 });
  const session = info.id;
  try {
    assert.equal((await rpc('pty/send', { session, text: 'first', timeout: 5000 })).waitReason, 'stdin_read');
    await rpc('pty/write', { session, action: [{ text: 'partial' }, { key: 'Ctrl+C' }] });
    const sent = await rpc('pty/send', { session, text: 'echo after', timeout: 5000 });
    assert.equal(sent.waitReason, 'stdin_read', JSON.stringify(sent));
    const screen: string = (await rpc('pty/read', { session })).screen;
    assert.match(screen, /^got: echo after$/m, screen);
  } finally {
    await rpc('pty/kill', { session });
    c.close();
  }
});
