import { z } from 'zod';

// Nothing of Node is imported here: the method table's shapes (and through them the browser views) use it.

/** A session's status as a send (and a write that waits) answers it (docs/protocol.md#ptysend). */
export const sessionStatus = z.union([
  z.object({ kind: z.literal('running') }),
  z.object({ kind: z.literal('exited'), exitCode: z.number().nullable(), signal: z.string().nullable() }),
]);
/** A send's view of the session status (see `sessionStatus`). */
export type SessionStatus = z.infer<typeof sessionStatus>;
