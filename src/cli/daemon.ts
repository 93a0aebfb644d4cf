import * as fs from 'node:fs';
import * as path from 'node:path';
import { DAEMON_LOG, findDaemon } from '../host/daemon';
import { Host } from '../host/host';
import { agentFlags, commandLogFlag, intFlag, parseArgs, strFlag } from './args';
import { startHttpFor } from './http-option';


/**
 * `daemon` (internal): the per-user host the editor and `shared-pty mcp` start detached.
 * It serves until stopped (or, with --idle-exit-ms, until it has had no session that long).
 */
export async function daemonCommand(argv: string[]): Promise<number> {
  const args = parseArgs(argv, { values: ['--http-port', '--allow-origin', '--scrollback', '--idle-exit-ms', '--command-log-mb', '--agent-approval', '--agent-deny'], booleans: ['--no-http', '--session-tcp'] });
  if (findDaemon()) return 0; // another per-user host is already up: use that one
  const host = await Host.start({
    kind: 'daemon',
    sessionTcp: args.flags.has('--session-tcp'),
    scrollbackLines: intFlag(args, '--scrollback', 100, 1000000),
    ...commandLogFlag(args),
    ...agentFlags(args),
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
  // Like a tmux server it stays up by default: the editor's MCP definition points at it.
  // --idle-exit-ms N makes it exit after N ms without a session.
  const idleMs = intFlag(args, '--idle-exit-ms', 1000);
  if (idleMs === undefined) return new Promise<number>(() => {});
  let idleSince = Date.now();
  setInterval(() => {
    const busy = host.registry.size > 0;
    if (busy) idleSince = Date.now();
    else if (Date.now() - idleSince >= idleMs) void stop();
  }, Math.min(idleMs, 30000)).unref();
  return new Promise<number>(() => {});
}
