/** Environment for a new session: the caller's, a colour-capable TERM, and a UTF-8 locale if none is set. */
export function buildEnv(extra?: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
  Object.assign(env, extra ?? {});
  env.TERM = 'xterm-256color';
  env.COLORTERM ??= 'truecolor';
  if (!env.LC_ALL && !env.LC_CTYPE && !env.LANG) env.LANG = 'C.UTF-8';
  // Never leak our own host's secrets into the shell's environment.
  delete env.SHARED_PTY_TOKEN;
  // The editor starts the host with these; a user's shell must not inherit them (Electron apps break).
  delete env.ELECTRON_RUN_AS_NODE;
  delete env.SHARED_PTY_NODE_PTY_FALLBACK;
  return env;
}
