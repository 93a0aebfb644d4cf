import * as fs from 'node:fs';
import * as path from 'node:path';
import { adoptStartLog, claimDaemonLock, DAEMON_LOG, discardStartLog, findDaemon, takeStartLog } from '../host/daemon';
import { readLiveRecords } from '../host/discovery';
import { exitWhenEmpty, exitWhenOutdated, idleExitMs } from '../host/exit-empty';
import type { Host } from '../host/host';
import { keepYoungGenerationSmall } from '../host/young-generation';
import { compileBaselineCodeFromNowOn } from '../host/baseline-code';
import { markInheritedCloseOnExec } from '../core/process/close-on-exec';
import { ensureRuntimeDir } from '../host/runtime-dir';
import { VERSION } from '../version';
import { intFlag, parseArgs, UsageError } from './args';
import { agentFlags, commandLogFlag, httpFlags } from './host-flags';
import { COMMAND_FLAGS } from './command-flags';
import { oneLine } from './one-line';

/**
 * `daemon` (internal): the per-user host the editor and `shared-pty mcp` start detached. Like a
 * tmux server with `exit-empty`, it exits once it has had no session and no client for a while
 * (10 min; `--idle-exit-ms N` or SHARED_PTY_IDLE_EXIT_MS=N; `--stay` or 0 keeps it up).
 */
export async function daemonCommand(argv: string[]): Promise<number> {
  const args = parseArgs(argv, COMMAND_FLAGS.daemon);
  // Every flag is checked before anything starts: a bad one must not leave a host or its lock behind.
  const { httpPort, allowedOrigins } = httpFlags(args);
  const scrollbackLines = intFlag(args, '--scrollback', 100, 1000000);
  if (args.flags.has('--stay') && args.flags.has('--idle-exit-ms')) throw new UsageError('--idle-exit-ms and --stay cannot be given together');
  const idleMs = idleExitMs(intFlag(args, '--idle-exit-ms', 0), args.flags.has('--stay'));
  const hostFlags = { ...commandLogFlag(args), ...agentFlags(args) };
  const dir = ensureRuntimeDir();
  const startLog = takeStartLog();
  // Another per-user host of this version is already up (use that one), or one started at the
  // same moment took the lock (two editor windows, an editor and an agent): this one leaves.
  const release = findDaemon(dir) ? undefined : claimDaemonLock(dir);
  if (!release) {
    discardStartLog(dir, startLog);
    return 0;
  }
  adoptStartLog(dir, startLog);
  // Our own files: when an update removes them, new sessions go to a host of the new files.
  const entry = path.resolve(process.argv[1] ?? '');
  let host: Host;
  keepYoungGenerationSmall();
  // What this process was started with stays here: no session's program inherits it.
  markInheritedCloseOnExec();
  try {
    // The engine loads only here: a daemon that finds another one running exits without it (docs/architecture.md#the-cli).
    const { Host } = await import('../host/host');
    host = await Host.start({
      kind: 'daemon',
      entry,
      sessionTcp: args.flags.has('--session-tcp'),
      scrollbackLines,
      ...hostFlags,
    });
  } catch (e) {
    release();
    throw e;
  }
  if (!args.flags.has('--no-http')) {
    const { startHttpFor } = await import('./http-option');
    await startHttpFor(host, httpPort, allowedOrigins);
  }
  compileBaselineCodeFromNowOn();
  const stop = async () => {
    try {
      await host.close();
    } catch (e) {
      // Its files are gone all the same (Host.close); the failure is said, not left unhandled.
      process.stderr.write(`shared-pty: while ending: ${oneLine((e as Error).message)}\n`);
    }
    // A clean stop leaves nothing behind; after a crash the log stays for the next start to report.
    // A runtime directory taken over is not ours: nothing in it is touched.
    if (host.runtimeDirLost === undefined) {
      release();
      fs.rmSync(path.join(host.runtimeDir, DAEMON_LOG), { force: true });
    }
    process.exit(0);
  };
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(sig, () => void stop());
  const now = {
    get sessions() {
      return host.registry.size;
    },
    // Editor windows watch every host they see (agent approval): that alone keeps no host running.
    get connections() {
      return host.connections - host.approvals.controlWatchers;
    },
  };
  if (idleMs !== undefined) {
    exitWhenEmpty(now, idleMs, () => {
      process.stderr.write(`shared-pty: no session and no client for ${Math.round(idleMs / 1000)} s; the host exits\n`);
      void stop();
    });
  }
  // Left behind by an update, or nobody can find it any more (its runtime directory was taken
  // over): keep the sessions running here, then go.
  const newerHost = () => {
    try {
      return readLiveRecords(host.runtimeDir).some(
        (r) => r.kind === 'daemon' && r.hostId !== host.hostId && r.version !== VERSION && r.startedAt > host.startedAt,
      );
    } catch {
      // The directory is unsafe to read (taken over since our last write): a record write checks it and stops us there.
      host.writeRecordNow();
      return false;
    }
  };
  const outdated = () => host.runtimeDirLost !== undefined || !fs.existsSync(entry) || newerHost();
  const retire = exitWhenOutdated(now, outdated, () => {
    const why = host.runtimeDirLost !== undefined ? 'its runtime directory is no longer its own' : 'a newer host took over';
    process.stderr.write(`shared-pty: ${why} and the last session here ended; the host exits\n`);
    void stop();
  });
  host.registry.onDidRemove(() => setImmediate(() => retire.check()));
  host.onDidLoseRuntimeDir(() => setImmediate(() => retire.check()));
  return new Promise<number>(() => {});
}
