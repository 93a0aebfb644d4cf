// A host's error message as a line of the CLI: the host words its errors for every transport, with
// the JSON-RPC method they came from; a CLI user typed a command, not a method (docs/cli.md#errors).

/** The method a host's invalid-params message opens with (`Invalid params for pty/read: …`). */
const METHOD_PREFIX = /^Invalid params for [\w/]+: /;

/** A host's pointer at the method that lists commands, said as the CLI command that does. */
const COMMANDS_POINTER = /\(see pty\/commands\)/g;

/**
 * The message of an error a host answered a CLI call with, naming no JSON-RPC method: the opening
 * `Invalid params for <method>: ` is left out (what follows says what was wrong), and a pointer at
 * `pty/commands` becomes `shared-pty commands`.
 */
export function cliMessage(hostMessage: string): string {
  return hostMessage.replace(METHOD_PREFIX, '').replace(COMMANDS_POINTER, '(see shared-pty commands)');
}
