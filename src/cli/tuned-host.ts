import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { withHugePageMalloc } from '../core/session/malloc-env';
import { wantsHelp } from './args';

/**
 * Set in the environment of a host that a relay started: that host follows its relay's lifetime.
 * Removed at once, so the host's sessions never see it.
 */
const RELAYED_VAR = 'SHARED_PTY_RELAYED';

/**
 * The signals a relay passes to its host: the ones that end a host (it stops cleanly on INT, TERM
 * and HUP) or that a user may send to end it some other way. A relay killed outright (SIGKILL)
 * cannot pass anything on; its host notices the IPC channel closing instead (see followRelay).
 */
const FORWARDED_SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT', 'SIGUSR2'];

/** The commands that run a host in their own process: they need its malloc tuning. */
const HOST_COMMANDS = new Set(['serve', 'daemon']);

/**
 * For the CLI's arguments: re-executes a host command (serve, daemon) tuned when it is not yet
 * (relaunchTuned). Undefined for every other command, and for a host command asked for its help:
 * those run in this process and never pay a re-exec.
 */
export function relaunchTunedFor(argv: string[]): Promise<number> | undefined {
  const [name, ...rest] = argv;
  return HOST_COMMANDS.has(name) && !wantsHelp(rest) ? relaunchTuned() : undefined;
}

/**
 * Makes sure the host about to run in this process has malloc on huge pages (malloc-env.ts).
 * glibc reads its tunables only at process start, so a process started without them (a user's
 * `shared-pty serve`) runs this same command again, once, as a child with them: same executable,
 * flags, arguments, working directory and stdio; signals forwarded. The promise resolves to the
 * child's exit status, or this process dies of the child's signal, so a caller sees no difference.
 * Returns undefined when this process should go on as the host itself: already tuned (the
 * per-user host is spawned tuned), a user's own hugetlb choice, or no glibc that knows the tunable.
 */
function relaunchTuned(): Promise<number> | undefined {
  if (process.env[RELAYED_VAR]) {
    followRelay();
    return undefined;
  }
  const env = withHugePageMalloc(process.env);
  if (env === process.env) return undefined;
  return relay({ ...env, [RELAYED_VAR]: '1' });
}

/** Runs this command again with `env` and mirrors how it ends. */
function relay(env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    // The IPC channel is only a lifeline: the host sees it close when this process dies, however.
    const child = spawn(process.execPath, [...process.execArgv, ...process.argv.slice(1)], { stdio: ['inherit', 'inherit', 'inherit', 'ipc'], env });
    const forward = (signal: NodeJS.Signals) => void child.kill(signal);
    for (const s of FORWARDED_SIGNALS) process.on(s, forward);
    const done = () => {
      for (const s of FORWARDED_SIGNALS) process.off(s, forward);
    };
    child.once('error', (e) => {
      done();
      reject(e);
    });
    child.once('exit', (code, signal) => {
      done();
      if (signal) {
        // With our listeners gone the default action applies: this process ends as the child did.
        process.kill(process.pid, signal);
        // Only a signal whose default is to carry on (none that ends a host) gets here.
        resolve(128 + (constants.signals[signal] ?? 0));
      } else resolve(code ?? 1);
    });
  });
}

/**
 * In a host a relay started: the relay dying (even by SIGKILL, which it cannot forward) closes the
 * IPC channel, and the host then stops as on a hang-up rather than outlive the process the user
 * started. The channel holds no reference, so it never keeps the host alive by itself.
 */
function followRelay(): void {
  delete process.env[RELAYED_VAR];
  if (!process.channel) return;
  process.channel.unref();
  process.once('disconnect', () => process.kill(process.pid, 'SIGHUP'));
}
