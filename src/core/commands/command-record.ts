import { z } from 'zod';

// A command record declared once, as a schema: the type is inferred from it, and the method table's
// results use it. Nothing of Node here, so the browser views can import the type too.

/** One command the shell ran, as its shell integration reported it (docs/protocol.md#ptycommands). */
export const commandRecord = z
  .object({
    id: z.number().describe("1 for the session's first command, then one more for each."),
    command: z.string().describe('The command line as typed (several lines for a loop or a here-document).'),
    cwd: z.string().describe("The shell's working directory when the command started."),
    exitCode: z.number().nullable().describe('null while it runs.'),
    startCursor: z.number().describe("Output cursor where its output begins: pty/output since this cursor is the command's own output."),
    endCursor: z.number().nullable().describe('Output cursor where its output ends; null while it runs.'),
    startedAt: z.string().describe('ISO 8601.'),
    durationMs: z.number().nullable().describe('null while it runs.'),
    log: z
      .string()
      .nullable()
      .describe(
        "The file holding its whole output (read it with pty/commandOutput); null when dropped for the session's log budget, or when the session keeps no logs.",
      ),
  })
  .meta({ title: 'CommandRecord' });
/** One command the shell ran, as its shell integration reported it. */
export type CommandRecord = z.infer<typeof commandRecord>;
