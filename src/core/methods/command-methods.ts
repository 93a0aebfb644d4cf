import { z } from 'zod';
import { MAX_COMMAND_RECORDS, type CommandRecord } from '../commands/command-tracker';
import { commandRecord, int } from './schemas';
import { method } from './spec';
import { requireSession } from './context';

/** Commands `pty/commands` returns when the caller does not say (CONTRACT §9.2). */
export const DEFAULT_COMMANDS_LIMIT = 20;

export const commandsMethod = method({
  name: 'pty/commands',
  target: 'session',
  scope: 'read',
  summary:
    'The commands the shell ran, oldest first, from its shell integration: command line, cwd, exit code, and the output cursors of each command\'s own output.',
  params: z.object({
    limit: int()
      .min(1)
      .max(MAX_COMMAND_RECORDS)
      .optional()
      .describe(`The newest this many commands (default ${DEFAULT_COMMANDS_LIMIT}; the session keeps ${MAX_COMMAND_RECORDS}).`),
  }),
  result: z.object({
    integration: z.boolean().describe('Whether the shell reports its commands; without it the list stays empty.'),
    commands: z.array(commandRecord),
  }),
  handler(ctx, p) {
    const tracker = requireSession(ctx).commands;
    return { integration: tracker.integration, commands: tracker.list(p.limit ?? DEFAULT_COMMANDS_LIMIT) };
  },
  mcp: {
    tool: 'list_commands',
    title: 'List the commands run',
    description:
      'List the commands the shell in a session ran (newest last): each with its command line, working directory, exit code (null while it runs), duration, and startCursor/endCursor. To read one command\'s own output, call read_output with since=startCursor (and maxBytes=endCursor-startCursor). Needs shell integration (bash, zsh or fish started by Shared PTY); integration=false means the shell does not report commands.',
    text: (r) => {
      if (!r.integration) return 'This session has no shell integration: its commands are not known. Use read_screen or read_output instead.';
      if (r.commands.length === 0) return 'No command has run yet.';
      return r.commands.map(commandLine).join('\n');
    },
  },
  rest: { verb: 'GET', path: '/sessions/:id/commands', from: 'query' },
});

/** One command as a line a model reads: id, status, duration, cwd, the command, its cursors. */
function commandLine(c: CommandRecord): string {
  const status = c.exitCode === null ? (c.endCursor === null ? 'running' : 'ended') : `exit ${c.exitCode}`;
  const took = c.durationMs === null ? '' : ` ${c.durationMs}ms`;
  const cursors = `output ${c.startCursor}..${c.endCursor ?? ''}`;
  return `#${c.id} [${status}${took}] ${c.cwd}$ ${c.command.replace(/\n/g, '\n    ')}  (${cursors})`;
}
