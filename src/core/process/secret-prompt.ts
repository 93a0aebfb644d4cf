/**
 * Does the line at the cursor ask for a secret? A program that reads keys with echo off (raw or
 * cbreak mode: `npm login`, inquirer's and prompts' password questions, getpass in raw mode) cannot
 * be told from readline or a REPL by its terminal's mode alone, only by what it asks: its prompt
 * ends in password, passphrase, passcode, PIN, token, secret, credentials, an API (access, private,
 * unseal…) key or a one-time (2FA, verification…) code, perhaps with "for <whom>", a hint
 * in brackets, a `:`/`?`/`›`/`>` and the mask characters it shows for each key. Checked against the
 * prompts of the real programs in test/unit/core/process/secret-prompt.test.ts.
 */

/**
 * Hints in brackets or parentheses ("[input is masked]", "(hidden)"), read as spaces. A bracket
 * opened inside one starts it again, so a line of openers is read once, not once from each.
 */
const HINTS = /\[[^\][]*\]|\([^()]*\)/g;
/** A character a prompt shows after its question: a space or the mask of what was typed. */
const MASK_CHAR = /[\s*•●·∙⋅]/u;
/**
 * The end of the line a question is read from: a prompt's question is short, and a row of 1,000
 * cells can hold far more text than that (any number of combining marks on a cell).
 */
const READ_CHARS = 1024;
/**
 * The question at the end of the line: the word, then perhaps "for/of/to <whom>" (no prompt
 * punctuation in it, but in quotes: `ssh`'s "for key '~/.ssh/id_ed25519'", sudo's "for alice",
 * git's "for 'https://alice@host'"), then perhaps one prompt mark. A path or a sentence in which
 * the word is followed by more words does not ask. A colon inside "for <whom>" is part of it when no
 * space follows it (`Password for https://alice@github.com: `).
 */
const ASKS =
  /\b(?:password|passwd|passphrase|passcode|pw|pin|token|secret|credentials?|(?:api|access|secret|private|unseal|encryption|recovery|master|license|auth)[ _-]?key|(?:2fa|mfa|otp|totp|verification|one[ -]time|authentication|auth|authenticator|two[ -]factor|2[ -]factor|security|sms|login|recovery|backup)\s+code|otp|totp|2fa|mfa)\b(?:\s+(?:for|of|to)\s(?:'[^']{0,160}'|"[^"]{0,160}"|[^:?›>»'"]|:(?=\S)){0,160})?\s*[:?›>»]?$/iu;
/**
 * Code before the question's word: a REPL's line being typed (`o = {password: ` in node's,
 * which reads keys with echo off too), not a program asking.
 */
const CODE_BEFORE = /[{}()=;`"]/;

/** True when `textBeforeCursor` (the cursor's row, left of the cursor) asks for a secret (and is not code being typed). */
export function asksForSecret(textBeforeCursor: string): boolean {
  const text = textBeforeCursor.slice(-READ_CHARS).replace(HINTS, ' ');
  let end = text.length;
  while (end > 0 && MASK_CHAR.test(text[end - 1]!)) end--;
  const question = ASKS.exec(text.slice(0, end));
  return question !== null && !CODE_BEFORE.test(text.slice(0, question.index));
}
