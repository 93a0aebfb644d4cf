/**
 * A message as one line of stderr: control characters a user's argument may carry (a newline in
 * a session name or a text to wait for) are shown escaped (`\n`), so an error stays one line.
 */
export function oneLine(message: string): string {
  return message.replace(/[\u0000-\u001f\u007f]/g, (c) => JSON.stringify(c).slice(1, -1));
}
