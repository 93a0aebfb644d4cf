/** Receives an error that no caller can handle (a listener that threw). */
export type UnexpectedErrorHandler = (err: unknown) => void;

let handler: UnexpectedErrorHandler = logToStderr;

/**
 * Reports an error that has nobody to return to, and carries on: one faulty listener must not end
 * the host and every session in it. As VS Code's `onUnexpectedError`.
 */
export function onUnexpectedError(err: unknown): void {
  try {
    handler(err);
  } catch {
    // A failing log must not end the host either.
  }
}

/** Replaces where unexpected errors go (tests, an embedder with its own log); returns the previous handler. */
export function setUnexpectedErrorHandler(next: UnexpectedErrorHandler): UnexpectedErrorHandler {
  const previous = handler;
  handler = next;
  return previous;
}

/** The error's message and stack on one line, so a log (the per-user host's daemon.log) keeps one entry per line. */
function formatUnexpectedError(err: unknown): string {
  const text = err instanceof Error ? (err.stack ?? `${err.name}: ${err.message}`) : String(err);
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .join(' | ');
}

/** The default: one line on stderr (the per-user host's stderr is its daemon.log). */
function logToStderr(err: unknown): void {
  process.stderr.write(`shared-pty: unexpected error (the host goes on): ${formatUnexpectedError(err)}\n`);
}
