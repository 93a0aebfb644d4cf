// Which lines at the cursor ask for a secret (src/core/process/secret-prompt.ts): the prompts of
// real programs that read keys with echo off, as a terminal showed them left of the cursor (read
// off @xterm/headless while the program waited), against lines that only mention the words.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { asksForSecret } from '../../../../src/core/process/secret-prompt';
import { ensureNoDisposablesAreLeakedInTestSuite } from '../../../helpers/leak-tracker';

// Every disposable a test makes is disposed by its end (docs/testing.md).
ensureNoDisposablesAreLeakedInTestSuite();

test('password prompts of real programs, before and after keys were typed', () => {
  for (const line of [
    'Password: ', // npm login --auth-type=legacy (npm's `read`, silent)
    'PIN: **', // read({ silent: true, replace: '*' }) after two keys
    '? Enter your token [input is masked]', // @inquirer/password, no mask
    '? Password', // @inquirer/password with mask: '*', nothing typed yet
    '? Password **', // …after two keys
    '? Password › ', // prompts, type password
    '? Password › **',
    '? Passphrase › ', // prompts, type invisible
    "alice@example.org's password: ", // ssh
    "Enter passphrase for key '/home/alice/.ssh/id_ed25519': ", // ssh-add, ssh
    '[sudo] password for alice: ', // sudo (canonical mode, judged by the mode first; the line agrees)
    'Enter secret: ',
    'Passcode: ',
    'API token? ',
    "Password for 'https://alice@git.example.com': ", // git's credential prompt (a quoted URL, with its own colon)
    'Password for "alice@example.org": ',
    // Secrets by other names (found by an outside audit: each was typed into by an agent's send).
    'pw: ',
    '? Enter your API key: ',
    'API key: ',
    'AWS access key: ',
    '2FA code: ',
    'Verification code: ',
    'Enter OTP: ',
    'Vault unseal key: ',
    'Credentials: ',
    'Password for https://alice@github.com: ', // git's credential prompt, unquoted
    'Passphrase for ssh://git@host: ',
    'Password for a:b: ',
    'Two-factor code: ',
    'Authenticator code: ',
    'Recovery code: ',
  ]) {
    assert.equal(asksForSecret(line), true, JSON.stringify(line));
  }
});

test('lines that are not a question for a secret', () => {
  for (const line of [
    '', // nothing printed yet
    'Username: ', // npm login's first question
    'alice@host:~/secret$ ', // a shell prompt in a folder with the word
    'alice@host ~/tokens> ', // fish-like, a plural
    '>>> token = load()', // a REPL line using the word, then more
    '>>> password_file = ', // part of a longer word
    '? Email (this IS public) ', // inquirer's other questions
    'Passwordless login enabled. Continue? [y/N] ',
    'Press any key to continue: ', // a key, not a secret one
    'Enter the code: ', // a code of any kind
    'Country code? ',
    'alice@host:~/api_key$ ', // a folder, then the prompt's own mark
    'Password for alice: hunter2', // a colon then more words: a line of text, not a question
    '> o = {password: ', // node's REPL, a line being typed (raw mode, echo off)
    '> login(token: ',
    '> const pw = ',
    '>>> d = dict(secret: ',
  ]) {
    assert.equal(asksForSecret(line), false, JSON.stringify(line));
  }
});

// The hints were a regex whose every `[` scanned to the line's end: a row of 1,000 cells, each a
// `[` with combining marks, held the host's thread for seconds (a million marks: 1.5 s).
test('a line of openers or of combining marks is read in one pass', { timeout: 60_000 }, () => {
  assert.equal(asksForSecret('['.repeat(1_000_000) + 'Password: '), true);
  assert.equal(asksForSecret('(['.repeat(500_000) + 'x'), false);
  assert.equal(asksForSecret('[\u0301'.repeat(500_000) + ' Enter token: '), true);
});
