/** What a program's start takes from its caller: checked before node-pty sees any of it. */
export interface SpawnInput {
  command: unknown;
  args: unknown;
  cwd?: unknown;
  env?: unknown;
}

/**
 * What is wrong with a command line for node-pty, or undefined when nothing is. node-pty's native
 * spawn reads each argument as a C string without checking its type: an `undefined` (or any value
 * that is not a string) there ends the whole host with SIGSEGV, every session with it. The
 * JSON-RPC edge validates `session/create` by its schema; this guards every other way in (the host's
 * own callers, the editor, tests) at the spawn itself. A NUL byte would cut a C string short, so
 * the program would run with another argument than asked: refused too.
 */
export function spawnProblem(input: SpawnInput): string | undefined {
  if (typeof input.command !== 'string' || input.command === '') return `command must be a non-empty string (got ${kindOf(input.command)})`;
  if (input.command.includes('\0')) return 'command must not contain a NUL byte';
  if (!Array.isArray(input.args)) return `args must be an array of strings (got ${kindOf(input.args)})`;
  for (const [i, arg] of input.args.entries()) {
    if (typeof arg !== 'string') return `args[${i}] must be a string (got ${kindOf(arg)})`;
    if (arg.includes('\0')) return `args[${i}] must not contain a NUL byte`;
  }
  if (input.cwd !== undefined && (typeof input.cwd !== 'string' || input.cwd.includes('\0')))
    return `cwd must be a string without NUL bytes (got ${kindOf(input.cwd)})`;
  if (input.env !== undefined) {
    if (typeof input.env !== 'object' || input.env === null || Array.isArray(input.env)) return `env must be an object of strings (got ${kindOf(input.env)})`;
    for (const [key, value] of Object.entries(input.env)) {
      if (typeof value !== 'string') return `env.${key} must be a string (got ${kindOf(value)})`;
      if (key.includes('\0') || value.includes('\0')) return `env.${key} must not contain a NUL byte`;
    }
  }
  return undefined;
}

/** How a bad value is named in the message: its type, never its content (it may be a secret). */
function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'string' ? 'a string' : typeof value;
}
