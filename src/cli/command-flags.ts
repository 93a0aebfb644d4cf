// Every command's flags, as its parser takes them: each command parses its arguments against its
// entry here, and test/unit/cli/usage.test.ts holds each command's --help to naming exactly these.
// Data only (no engine), so the client commands load it as they are (docs/architecture.md#the-cli).
import type { HostLimits } from '../core/base/limits';
import type { FlagSpec } from './args';

/**
 * The commands that act on a remote host too (`--host NAME`, SHARED_PTY_HOST, `NAME:SELECTOR`):
 * main.ts takes `--host` out of their arguments before they are parsed.
 */
export const HOST_COMMANDS: ReadonlySet<string> = new Set(['list', 'open', 'kill', 'commands', 'read', 'send', 'keys', 'wait', 'attach', 'events']);

/**
 * The host's limits `serve` can change (README "Reliability"), each a whole number from 1 to a
 * ceiling: high enough for any real use, finite so a typo (a digit too many) cannot lift a limit
 * out of sight. No flag keeps the default of src/core/base/limits.ts.
 */
export const LIMIT_FLAGS: ReadonlyArray<{ flag: string; option: keyof HostLimits; ceiling: number }> = [
  // Linux's default kernel.pty.max: no host gets more PTYs than that anyway.
  { flag: '--max-sessions', option: 'maxSessions', ceiling: 4096 },
  // Each connection holds a file descriptor: far past one user's tools, well below a raised fd limit.
  { flag: '--max-session-connections', option: 'maxConnectionsPerSessionSocket', ceiling: 16384 },
  { flag: '--max-control-connections', option: 'maxControlConnections', ceiling: 16384 },
  { flag: '--max-http-connections', option: 'maxHttpConnections', ceiling: 16384 },
  // Each request in flight holds a little memory (an MCP server over /mcp): 64 times the default.
  { flag: '--max-in-flight', option: 'maxInFlightRequests', ceiling: 65536 },
];

/** Host flags that may be given more than once, each value kept: a deny rule each, origins each. */
export const REPEATABLE_HOST_FLAGS = ['--agent-deny', '--allow-origin'];

/** The flags of both commands that run a host, `serve` and `daemon`. */
const HOST_VALUES = ['--http-port', '--allow-origin', '--command-log-mb', '--agent-approval', '--agent-deny'];
const HOST_BOOLEANS = ['--no-http', '--session-tcp'];

/** Each command's flags, by command name. */
export const COMMAND_FLAGS = {
  list: { booleans: ['--json'], maxPositional: 0 },
  open: { values: ['--name', '--cwd', '--cols', '--rows'], booleans: ['--json'], rest: true },
  kill: { maxPositional: 1 },
  commands: { values: ['--limit'], booleans: ['--json'], maxPositional: 1 },
  read: { values: ['--top', '--bottom', '--start', '--end', '--offset', '--lines'], booleans: ['--scrollback', '--json'], maxPositional: 1 },
  send: { values: ['--timeout', '--idle'], booleans: ['--no-submit', '--json'], maxPositional: 2 },
  keys: {},
  wait: { values: ['--timeout'], booleans: ['--regex', '--json'], maxPositional: 2 },
  attach: { booleans: ['--no-resize'], maxPositional: 1 },
  view: { values: ['--expires'], booleans: ['--read-only', '--input'], maxPositional: 1 },
  share: { values: ['--scope', '--expires'], booleans: ['--json', '--reusable'], maxPositional: 1 },
  tokens: { booleans: ['--json'], maxPositional: 0 },
  revoke: { maxPositional: 1 },
  events: { values: ['--since'], booleans: ['--json'] },
  record: { booleans: ['--detach', '--stop', '--input'] },
  play: { values: ['--speed', '--idle-limit'], booleans: ['--browser'] },
  serve: {
    values: ['--cmd', '--socket', '--port', '--cols', '--rows', '--cwd', '--name', '--max-line-bytes', ...HOST_VALUES, ...LIMIT_FLAGS.map((l) => l.flag)],
    booleans: ['--quiet', ...HOST_BOOLEANS],
    repeatable: REPEATABLE_HOST_FLAGS,
    rest: true,
  },
  mcp: { maxPositional: 0 },
  bridge: { maxPositional: 0 },
  daemon: {
    values: ['--scrollback', '--idle-exit-ms', ...HOST_VALUES],
    booleans: ['--stay', ...HOST_BOOLEANS],
    repeatable: REPEATABLE_HOST_FLAGS,
    maxPositional: 0,
  },
} satisfies Record<string, FlagSpec>;
