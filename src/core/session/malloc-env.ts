/**
 * Huge pages for the hosts we start. A burst of output is held in fresh memory until the screen
 * parses it, and on these VMs every fresh 4 KiB page costs a fault of ~14 µs (~3.5 ms per MB
 * held). glibc's `hugetlb=1` tunable makes malloc ask for transparent huge pages (the kernel's
 * "madvise" mode), one fault per 2 MiB: measured, the host's main thread spent about a fifth less
 * CPU on a 50 MB `cat`, with per-session memory unchanged (bench/README.md). A tunable is read
 * once, at process start, so it goes into the environment of the process we spawn.
 */
const HUGE_PAGES = 'glibc.malloc.hugetlb=1';

/** The user's own GLIBC_TUNABLES ('' when unset), kept so sessions get exactly theirs back. */
export const USER_TUNABLES_VAR = 'SHARED_PTY_USER_GLIBC_TUNABLES';

/** `env` for a host process we start: malloc on huge pages (Linux; a no-op elsewhere). */
export function withHugePageMalloc(env: NodeJS.ProcessEnv, platform = process.platform): NodeJS.ProcessEnv {
  const user = env.GLIBC_TUNABLES ?? '';
  if (platform !== 'linux' || /(^|:)glibc\.malloc\.hugetlb=/.test(user) || USER_TUNABLES_VAR in env) return env;
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
