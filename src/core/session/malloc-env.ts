/**
 * Huge pages for every host. A burst of output is held in fresh memory until the screen parses
 * it, and on these VMs every fresh 4 KiB page costs a fault of ~14 µs (~3.5 ms per MB held).
 * glibc's `hugetlb=1` tunable makes malloc ask for transparent huge pages (the kernel's "madvise"
 * mode), one fault per 2 MiB: measured, the host's main thread spent about a fifth less CPU on a
 * 50 MB `cat`, with per-session memory unchanged (bench/README.md). A tunable is read once, at
 * process start, so it goes into the environment of the host process: the per-user host gets it
 * where it is spawned (src/host/daemon.ts), any other host re-executes itself once with it
 * (src/cli/tuned-host.ts).
 */
const HUGE_PAGES = 'glibc.malloc.hugetlb=1';

/** The first glibc that knows `glibc.malloc.hugetlb` (2.35); older ones and musl lack it. */
const FIRST_GLIBC_WITH_HUGETLB = [2, 35] as const;

/**
 * The user's own GLIBC_TUNABLES ('' when unset), kept so sessions get exactly theirs back. glibc
 * rewrites GLIBC_TUNABLES at start (it drops what it does not accept), so the host cannot read the
 * user's value back from its own environment. Its presence also marks a process as already tuned.
 */
export const USER_TUNABLES_VAR = 'SHARED_PTY_USER_GLIBC_TUNABLES';

let supported: boolean | undefined;

/** True where malloc can take the tunable: Linux with glibc ≥ 2.35 (asked once: a report costs ~30 ms). */
export function hugePageMallocSupported(): boolean {
  if (supported === undefined) supported = process.platform === 'linux' && glibcAtLeast(glibcVersion(), FIRST_GLIBC_WITH_HUGETLB);
  return supported;
}

/** The running glibc's version ('2.36'), or undefined on musl and other libcs. */
function glibcVersion(): string | undefined {
  try {
    const header = (process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined)?.header;
    return header?.glibcVersionRuntime;
  } catch {
    return undefined;
  }
}

/** `version` ('2.36') is at least `[major, minor]`. */
export function glibcAtLeast(version: string | undefined, [major, minor]: readonly [number, number]): boolean {
  const m = /^(\d+)\.(\d+)/.exec(version ?? '');
  if (!m) return false;
  return Number(m[1]) > major || (Number(m[1]) === major && Number(m[2]) >= minor);
}

/**
 * `env` for a host process: malloc on huge pages where supported. Returns `env` itself (nothing to
 * do) when unsupported, when the user chose a hugetlb setting, or when `env` is already tuned.
 */
export function withHugePageMalloc(env: NodeJS.ProcessEnv, canTune?: boolean): NodeJS.ProcessEnv {
  const user = env.GLIBC_TUNABLES ?? '';
  // The cheap checks first: a tuned host asks nothing of glibc.
  if (/(^|:)glibc\.malloc\.hugetlb=/.test(user) || USER_TUNABLES_VAR in env || !(canTune ?? hugePageMallocSupported())) return env;
  return { ...env, GLIBC_TUNABLES: user ? `${user}:${HUGE_PAGES}` : HUGE_PAGES, [USER_TUNABLES_VAR]: user };
}

/** Gives a session's environment back the user's GLIBC_TUNABLES: the host's tuning is not the program's. */
export function restoreUserTunables(env: Record<string, string>): void {
  if (!(USER_TUNABLES_VAR in env)) return;
  const user = env[USER_TUNABLES_VAR];
  delete env[USER_TUNABLES_VAR];
  if (user) env.GLIBC_TUNABLES = user;
  else delete env.GLIBC_TUNABLES;
}
