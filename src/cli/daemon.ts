import * as fs from 'node:fs';
import * as path from 'node:path';
import { DAEMON_LOG, findDaemon } from '../host/daemon';
import { exitWhenEmpty, idleExitMs } from '../host/exit-empty';
import { Host } from '../host/host';
import { intFlag, parseArgs, strFlag } from './args';
import { startHttpFor } from './http-option';


/**
 * `daemon` (internal): the per-user host the editor and `shared-pty mcp` start detached. Like a
 * tmux server with `exit-empty`, it exits once it has had no session and no client for a while
 * (10 min; `--idle-exit-ms N` or SHARED_PTY_IDLE_EXIT_MS=N; `--stay` or 0 keeps it up).
 */
export async function daemonCommand(argv: string[]): Promise<number> {
  const args = parseArgs(argv, { values: ['--http-port', '--allow-origin', '--scrollback', '--idle-exit-ms'], booleans: ['--no-http', '--session-tcp', '--stay'] });
  if (findDaemon()) return 0; // another per-user host is already up: use that one
  const host = await Host.start({
    kind: 'daemon',
    sessionTcp: args.flags.has('--session-tcp'),
    scrollbackLines: intFlag(args, '--scrollback', 100, 1000000),
  });
  if (!args.flags.has('--no-http')) {
    const origins = strFlag(args, '--allow-origin')?.split(',').filter(Boolean);
    await startHttpFor(host, intFlag(args, '--http-port', 0, 65535), origins);
  }
  const stop = async () => {
    await host.close();
    // A clean stop leaves nothing behind; after a crash the log stays for the next start to report.
    fs.rmSync(path.join(host.runtimeDir, DAEMON_LOG), { force: true });
    process.exit(0);
  };
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(sig, () => void stop());
  const idleMs = idleExitMs(intFlag(args, '--idle-exit-ms', 0), args.flags.has('--stay'));
  if (idleMs !== undefined) {
    const empty = {
      get sessions() {
        return host.registry.size;
      },
      get connections() {
        return host.connections;
      },
    };
    exitWhenEmpty(empty, idleMs, () => {
      process.stderr.write(`shared-pty: no session and no client for ${Math.round(idleMs / 1000)} s; the host exits\n`);
      void stop();
    });
  }
  return new Promise<number>(() => {});
}
