import { findDaemon } from '../host/daemon';
import { Host } from '../host/host';
import { intFlag, parseArgs, strFlag } from './args';
import { startHttpFor } from './http-option';

/** With no session and no client for this long, the per-user host exits (nothing to keep alive). */
const IDLE_EXIT_MS = 10 * 60 * 1000;

/**
 * `daemon` (internal): the per-user host the editor and `shared-pty mcp` start detached.
 * It serves until stopped, or until it has been idle for IDLE_EXIT_MS.
 */
export async function daemonCommand(argv: string[]): Promise<number> {
  const args = parseArgs(argv, { values: ['--http-port', '--allow-origin', '--scrollback', '--idle-exit-ms'], booleans: ['--no-http', '--session-tcp'] });
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
    process.exit(0);
  };
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(sig, () => void stop());
  const idleMs = intFlag(args, '--idle-exit-ms', 1000) ?? IDLE_EXIT_MS;
  let idleSince = Date.now();
  setInterval(() => {
    const busy = host.registry.size > 0;
    if (busy) idleSince = Date.now();
    else if (Date.now() - idleSince >= idleMs) void stop();
  }, Math.min(idleMs, 30000)).unref();
  return new Promise<number>(() => {});
}
