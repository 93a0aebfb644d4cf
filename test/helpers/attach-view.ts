// A human's view of a session, as real as a test can make it: the built `shared-pty attach` in a
// PTY of its own, shown in a terminal emulator (xterm.js, as the editor's terminal is) that answers
// the program's queries by itself, as every real terminal does, and reports colours of its own.
import { Terminal } from '@xterm/headless';
import type { IPty } from 'node-pty';
import type { SessionInfo } from '../../src/core/methods/types';
import { loadNodePty } from '../../src/core/session/pty-loader';
import type { RpcClient } from '../../src/transport/client/rpc-client';
import { CLI, pidAlive } from './protocol';
import { until } from './host';

/** The colours the view's terminal reports (OSC 10/11/12), unlike the mirror's defaults. */
export const VIEW_COLORS = { 10: 'rgb:cccc/cccc/cccc', 11: 'rgb:1e1e/1e1e/1e1e', 12: 'rgb:aeae/afaf/adad' } as const;

/** What the view's terminal says it is (XTVERSION): a real terminal answers this too. */
export const VIEW_XTVERSION = '\x1bP>|view-terminal(1.0)\x1b\\';

async function clientsOf(control: RpcClient, session: string): Promise<number> {
  const { sessions } = await control.request<{ sessions: SessionInfo[] }>('session/list', {});
  return sessions.find((s) => s.id === session)?.clients ?? 0;
}

/** `shared-pty attach <session>` in a PTY, inside a terminal that answers queries. */
export class AttachView {
  /** Every answer the view's terminal gave by itself, in order. */
  readonly answers: string[] = [];

  private constructor(
    readonly pty: IPty,
    readonly term: Terminal,
  ) {}

  /** Starts the view and resolves once it is subscribed to the session. */
  static async open(control: RpcClient, hostDir: string, session: string): Promise<AttachView> {
    const before = await clientsOf(control, session);
    const pty = loadNodePty().spawn(process.execPath, [CLI, 'attach', session, '--no-resize'], {
      name: 'xterm-256color',
      cols: 100,
      rows: 30,
      cwd: hostDir,
      env: { ...process.env, SHARED_PTY_DIR: hostDir } as Record<string, string>,
    });
    const term = new Terminal({ cols: 100, rows: 30, allowProposedApi: true, logLevel: 'off' });
    const view = new AttachView(pty, term);
    // The terminal's own answers go back to attach's input, as keys do.
    term.onData((answer) => {
      view.answers.push(answer);
      pty.write(answer);
    });
    for (const slot of [10, 11, 12] as const) {
      term.parser.registerOscHandler(slot, (data) => {
        if (data === '?') term.input(`\x1b]${slot};${VIEW_COLORS[slot]}\x1b\\`, false);
        return true;
      });
    }
    term.parser.registerCsiHandler({ prefix: '>', final: 'q' }, () => {
      term.input(VIEW_XTVERSION, false);
      return true;
    });
    pty.onData((d) => term.write(d));
    await until(async () => (await clientsOf(control, session)) > before, 15_000, 'attach subscribed');
    return view;
  }

  /** Keys typed in the view (they reach the session after any answer the view gave before). */
  type(text: string): void {
    this.pty.write(text);
  }

  /** Detaches (Ctrl+]) and waits for attach to end. */
  async close(): Promise<void> {
    this.pty.write('\x1d');
    await until(() => !pidAlive(this.pty.pid), 5000, 'attach ended').catch(() => this.pty.kill());
    this.term.dispose();
  }
}
