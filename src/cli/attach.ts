import { RpcCallError, type RpcClient } from '../transport/rpc-client';
import { parseArgs, UsageError } from './args';
import { CliError, connectHost, findSession } from './find-session';

/** Ctrl+] detaches, as in telnet: rarely needed by programs, easy to type. */
const DETACH_BYTE = 0x1d;
const DETACH_NAME = 'Ctrl+]';

/**
 * `attach <session>`: an interactive terminal on a shared session from any terminal. The screen is
 * drawn first, then output streams live; keys go to the program; the session follows our size.
 */
export async function attachCommand(argv: string[]): Promise<number> {
  const args = parseArgs(argv, { booleans: ['--no-resize'] });
  const selector = args.positional[0];
  if (!selector) throw new UsageError('missing <session>; usage: shared-pty attach <session>');
  const found = findSession(selector);
  const client = await connectHost(found);
  const session = found.session.id;
  const call = <T>(method: string, params: Record<string, unknown> = {}) => client.request<T>(method, { session, ...params });
  const stdin = process.stdin;
  const stdout = process.stdout;

  let resolveDone!: (code: number) => void;
  const done = new Promise<number>((r) => (resolveDone = r));
  let finished = false;
  const finish = (message: string, code: number) => {
    if (finished) return;
    finished = true;
    if (stdin.isTTY) stdin.setRawMode(false);
    stdin.pause();
    stdout.write(`\r\n[shared-pty] ${message}\r\n`);
    client.close();
    resolveDone(code);
  };

  client.onNotification((n) => {
    if (n.params.session !== session) return;
    if (n.method === 'pty/output') stdout.write(String(n.params.data ?? ''));
    else if (n.method === 'pty/exit') finish(`process exited with code ${n.params.exitCode}`, 0);
  });
  client.onClose(() => finish('connection to the host closed', 1));

  try {
    await drawScreen(call);
    await call('pty/subscribe');
  } catch (e) {
    client.close();
    if (e instanceof RpcCallError) throw new CliError(e.message);
    throw e;
  }
  const resize = () => {
    if (!args.flags.has('--no-resize') && stdout.columns && stdout.rows) {
      call('pty/resize', { cols: stdout.columns, rows: stdout.rows }).catch(() => {});
    }
  };
  resize();
  stdout.on('resize', resize);
  process.stderr.write(`[shared-pty] attached to ${found.session.name} (${session}); detach with ${DETACH_NAME}\r\n`);

  if (stdin.isTTY) stdin.setRawMode(true);
  stdin.on('data', (chunk: Buffer) => {
    const i = chunk.indexOf(DETACH_BYTE);
    const data = i === -1 ? chunk : chunk.subarray(0, i);
    if (data.length) call('pty/write', { action: { text: data.toString('utf8') } }).catch(() => {});
    if (i !== -1) finish('detached; the session keeps running', 0);
  });
  stdin.on('end', () => finish('input closed; detached', 0));
  stdin.resume();
  const code = await done;
  stdout.off('resize', resize);
  return code;
}

/** Paints the session's current screen so the user sees what everyone else sees. */
async function drawScreen(call: <T>(m: string, p?: Record<string, unknown>) => Promise<T>): Promise<void> {
  const r = await call<{ screen: string; cursor: { row: number; col: number } }>('pty/read');
  const rows = r.screen.split('\n');
  if (rows[rows.length - 1] === '') rows.pop();
  process.stdout.write('\x1b[H\x1b[2J' + rows.join('\r\n') + `\x1b[${r.cursor.row};${r.cursor.col}H`);
}
